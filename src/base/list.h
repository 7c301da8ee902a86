/* Intrusive circular doubly-linked lists (embed a struct list_node; recover the container with
 * LIST_ENTRY). An empty list's head points to itself. */
#ifndef SP_BASE_LIST_H
#define SP_BASE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
    struct list_node *prev;
    struct list_node *next;
};

#define LIST_ENTRY(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))

static inline void list_init(struct list_node *head)
{
    head->prev = head->next = head;
}

static inline bool list_empty(const struct list_node *head)
{
    return head->next == head;
}

/* Whether n is linked into some list (nodes are initialised unlinked with list_init). */
static inline bool list_linked(const struct list_node *n)
{
    return n->next != n;
}

static inline void list_insert_before(struct list_node *pos, struct list_node *n)
{
    n->prev = pos->prev;
    n->next = pos;
    pos->prev->next = n;
    pos->prev = n;
}

static inline void list_push_back(struct list_node *head, struct list_node *n)
{
    list_insert_before(head, n);
}

static inline void list_remove(struct list_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

/* Iterate; safe against removal of the current node. */
#define LIST_FOREACH_SAFE(n, tmp, head)                                                            \
    for ((n) = (head)->next, (tmp) = (n)->next; (n) != (head); (n) = (tmp), (tmp) = (n)->next)

#endif
