/* Waits of CreateTopics and CreatePartitions answers for their partitions' leaders (see
 * topic_ready.h).
 *
 * State: struct topic_ready (b->topic_ready), made by the first wait that cannot be answered at
 * once, freed by topic_ready_stop: the waits (struct ready_wait) and a timer armed every
 * TOPIC_READY_POLL_MS while any exists.
 *
 * Invariants:
 *   1. Each wait's done is called exactly once: when its partitions are ready, at its deadline,
 *      or by topic_ready_stop; the wait is unlinked and freed before the call (done may start
 *      another wait).
 *   2. [w->next, w->end) are the partitions not yet seen ready; a partition seen ready is not
 *      looked at again (one that loses its leader afterwards does not hold the answer back).
 */
#include "broker/topic_ready.h"

#include <inttypes.h>

#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "net/reactor.h"

struct ready_wait {
    struct list_node node;
    char *topic;
    int32_t next;
    int32_t end;
    int64_t start_ms;
    int64_t deadline_ms;
    topic_ready_fn done;
    void *data;
};

struct topic_ready {
    struct broker *b;
    struct list_node waits;
    struct reactor_timer timer;
};

static void on_timer(struct reactor *r, struct reactor_timer *t, void *data);

static bool partition_ready(struct broker *b, const struct ctl_topic *t, int32_t i)
{
    const struct ctl_partition *p = &t->parts[i];
    for (int32_t k = 0; k < p->n_replicas; k++)
        if (p->replicas[k] == b->cfg->node_id && !cluster_group(b->cluster, t->name, i))
            return false; /* not reconciled here yet: Metadata would name the image's guess */
    int32_t leader, epoch;
    bool leading;
    cluster_partition_leader(b->cluster, t->name, i, &leader, &epoch, &leading);
    return leader >= 0;
}

/* Moves w->next past the partitions ready now; true when none is left. */
static bool advance(struct broker *b, struct ready_wait *w)
{
    const struct ctl_topic *t = ctl_image_topic(cluster_image(b->cluster), w->topic);
    if (!t)
        return false; /* not in this broker's image yet (or deleted: the deadline answers) */
    while (w->next < w->end && w->next < t->n_partitions && partition_ready(b, t, w->next))
        w->next++;
    return w->next >= w->end;
}

static void finish(struct ready_wait *w)
{
    list_remove(&w->node);
    topic_ready_fn done = w->done;
    void *data = w->data;
    mem_free(w->topic);
    mem_free(w);
    done(data);
}

static void arm(struct topic_ready *tr)
{
    if (!reactor_timer_active(&tr->timer) && !list_empty(&tr->waits))
        reactor_timer_start(tr->b->r, &tr->timer, TOPIC_READY_POLL_MS);
}

static void on_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct topic_ready *tr = data;
    (void)r;
    (void)t;
    int64_t now = time_mono_ms();
    struct list_node *n = tr->waits.next;
    while (n != &tr->waits) {
        struct ready_wait *w = LIST_ENTRY(n, struct ready_wait, node);
        n = n->next;
        if (advance(tr->b, w) || now >= w->deadline_ms) {
            if (w->next < w->end)
                log_info("topic_ready_timeout",
                         "topic=%s partition=%" PRId32 " waited_ms=%" PRId64
                         " reason=\"no leader known here yet; answered anyway\"",
                         w->topic, w->next, now - w->start_ms);
            finish(w);
        }
    }
    arm(tr);
}

void topic_ready_wait(struct broker *b, const char *topic, int32_t first, int32_t end,
                      int64_t max_ms, topic_ready_fn done, void *data)
{
    struct ready_wait probe = {.next = first, .end = end, .topic = (char *)topic};
    if (!topic || max_ms <= 0 || b->stopping || !b->cluster || advance(b, &probe)) {
        done(data);
        return;
    }
    if (!b->topic_ready) {
        struct topic_ready *tr = mem_calloc(1, sizeof(*tr));
        tr->b = b;
        list_init(&tr->waits);
        reactor_timer_init(&tr->timer, on_timer, tr);
        b->topic_ready = tr;
    }
    struct ready_wait *w = mem_calloc(1, sizeof(*w));
    w->topic = mem_strdup(topic);
    w->next = probe.next;
    w->end = end;
    w->start_ms = time_mono_ms();
    w->deadline_ms = w->start_ms + (max_ms < TOPIC_READY_MAX_MS ? max_ms : TOPIC_READY_MAX_MS);
    w->done = done;
    w->data = data;
    list_push_back(&b->topic_ready->waits, &w->node);
    arm(b->topic_ready);
}

void topic_ready_stop(struct broker *b)
{
    struct topic_ready *tr = b->topic_ready;
    if (!tr)
        return;
    while (!list_empty(&tr->waits))
        finish(LIST_ENTRY(tr->waits.next, struct ready_wait, node));
    reactor_timer_stop(b->r, &tr->timer);
    mem_free(tr);
    b->topic_ready = NULL;
}
