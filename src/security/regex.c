/* Java-syntax regular expressions: a parser to a syntax tree, a compiler to a small program, and
 * a backtracking machine that runs it (see regex.h for what is supported).
 *
 * Program: BYTE c, SET i, ANY, BOL, EOL, SPLIT x y (try x, then y), JMP x, SAVE k (slot k = the
 * position), MARK r (register r = the position), EMPTY r x (jump to x if the position equals
 * register r), MATCH. A pattern compiles to SAVE 0, the body, SAVE 1, MATCH.
 *   x|y      SPLIT L1 L2; L1: x; JMP L3; L2: y; L3:
 *   x*       L1: SPLIT L2 L3; L2: MARK r; x; EMPTY r L3; JMP L1; L3:   (lazy: SPLIT L3 L2)
 *   x{n,m}   x n times, then m-n nested optional copies (x{n,}: x n times, then x*)
 * EMPTY ends a loop whose last iteration matched nothing, as Java's loops do, so `(a*)*` cannot
 * loop forever.
 *
 * Machine. Backtracking in priority order: SPLIT pushes a choice point (its second branch, the
 * position, the length of the undo log); a failure pops the latest one and rewinds every slot
 * and register written since (the undo log holds their old values). The first MATCH reached is
 * the match Java reports.
 *
 * Invariants:
 *  1. Every jump target of a compiled program is inside it; the program ends with MATCH.
 *  2. Slots 0 .. 2*groups+1 are capture bounds, then one register per star loop; the undo log
 *     and the choice stack never hold more than CHOICES_MAX entries.
 *  3. A run performs at most REGEX_STEPS_MAX instructions before giving up (REGEX_TOO_COMPLEX). */
#include "security/regex.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/mem.h"

#define NESTING_MAX 64      /* parentheses inside parentheses */
#define REPEAT_MAX 1000     /* the largest n or m of {n,m} */
#define CHOICES_MAX 50000   /* choice points and undo entries held at once */

enum op { OP_BYTE, OP_SET, OP_ANY, OP_BOL, OP_EOL, OP_SPLIT, OP_JMP, OP_SAVE, OP_MARK, OP_EMPTY,
          OP_MATCH };

struct inst {
    uint8_t op;
    uint8_t byte; /* OP_BYTE */
    int x;        /* SPLIT/JMP/EMPTY target; SET index; SAVE/MARK/EMPTY slot */
    int y;        /* SPLIT second target; EMPTY target */
};

struct byteset {
    uint8_t bits[32];
};

struct regex {
    struct inst *prog;
    int n_prog;
    struct byteset *sets;
    int n_sets;
    int groups; /* capturing groups */
    int slots;  /* 2 * (groups + 1) + registers */
};

/* ---- syntax tree ---- */

enum node_type { N_EMPTY, N_BYTE, N_SET, N_ANY, N_BOL, N_EOL, N_CAT, N_ALT, N_GROUP, N_REPEAT };

struct node {
    enum node_type type;
    int value;         /* N_BYTE: the byte; N_SET: set index; N_GROUP: group (0: non-capturing) */
    int min, max;      /* N_REPEAT; max -1: no bound */
    bool lazy;         /* N_REPEAT */
    struct node *kids; /* N_CAT, N_ALT: the parts; N_GROUP, N_REPEAT: the one child */
    struct node *next; /* the next sibling */
};

struct parser {
    const char *pat;
    size_t len;
    size_t pos;
    char *err;
    size_t errcap;
    bool failed;
    struct node **nodes; /* every node, for freeing */
    size_t n_nodes, cap_nodes;
    struct byteset *sets;
    size_t n_sets, cap_sets;
    int groups;
    int depth;
};

static void perr(struct parser *p, const char *what)
{
    if (p->failed)
        return;
    p->failed = true;
    snprintf(p->err, p->errcap, "%s at offset %zu of the pattern", what, p->pos);
}

static struct node *node_new(struct parser *p, enum node_type t)
{
    struct node *n = mem_calloc(1, sizeof(*n));
    n->type = t;
    MEM_GROW(p->nodes, p->cap_nodes, p->n_nodes + 1);
    p->nodes[p->n_nodes++] = n;
    return n;
}

static int set_new(struct parser *p)
{
    MEM_GROW(p->sets, p->cap_sets, p->n_sets + 1);
    memset(&p->sets[p->n_sets], 0, sizeof(struct byteset));
    return (int)p->n_sets++;
}

static void set_add(struct byteset *s, int lo, int hi)
{
    for (int c = lo; c <= hi; c++)
        s->bits[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static void set_invert(struct byteset *s)
{
    for (size_t i = 0; i < sizeof(s->bits); i++)
        s->bits[i] = (uint8_t)~s->bits[i];
}

static bool set_has(const struct byteset *s, uint8_t c)
{
    return (s->bits[c >> 3] >> (c & 7)) & 1;
}

static bool at_end(const struct parser *p)
{
    return p->pos >= p->len;
}

static int peek(const struct parser *p)
{
    return at_end(p) ? -1 : (unsigned char)p->pat[p->pos];
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_alnum(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A class escape's members into s: \d \D \w \W \s \S. Returns false if c is not one. */
static bool class_escape(int c, struct byteset *s)
{
    struct byteset t = {{0}};
    switch (c | 0x20) {
    case 'd':
        set_add(&t, '0', '9');
        break;
    case 'w':
        set_add(&t, 'a', 'z');
        set_add(&t, 'A', 'Z');
        set_add(&t, '0', '9');
        set_add(&t, '_', '_');
        break;
    case 's':
        set_add(&t, ' ', ' ');
        set_add(&t, '\t', '\r'); /* \t \n \v \f \r */
        break;
    default:
        return false;
    }
    if (c >= 'A' && c <= 'Z')
        set_invert(&t);
    for (size_t i = 0; i < sizeof(t.bits); i++)
        s->bits[i] |= t.bits[i];
    return true;
}

/* After a backslash (p->pos at the escaped byte): a literal byte (>= 0), or -2 with *cls set
 * for a class escape, or -1 on error. */
static int parse_escape(struct parser *p, struct byteset *cls)
{
    if (at_end(p)) {
        perr(p, "a backslash ends the pattern");
        return -1;
    }
    int c = peek(p);
    p->pos++;
    if (cls && class_escape(c, cls))
        return -2;
    switch (c) {
    case 't':
        return '\t';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 'f':
        return '\f';
    case 'a':
        return 7;
    case 'e':
        return 27;
    case 'x': {
        int h = p->pos + 1 < p->len ? hexval((unsigned char)p->pat[p->pos]) : -1;
        int l = h >= 0 ? hexval((unsigned char)p->pat[p->pos + 1]) : -1;
        if (l < 0) {
            perr(p, "\\x needs two hexadecimal digits");
            return -1;
        }
        p->pos += 2;
        return h * 16 + l;
    }
    }
    if (is_alnum(c)) {
        char what[64];
        snprintf(what, sizeof(what), "unsupported escape \\%c", c);
        p->pos--;
        perr(p, what);
        return -1;
    }
    return c; /* a quoted metacharacter or any other symbol */
}

/* One literal of a class (for ranges): a byte, or -2 for a class escape (merged into cls). */
static int class_item(struct parser *p, struct byteset *cls)
{
    int c = peek(p);
    p->pos++;
    if (c != '\\')
        return c;
    return parse_escape(p, cls);
}

static struct node *parse_class(struct parser *p)
{
    size_t open = p->pos - 1;
    bool neg = false;
    if (peek(p) == '^') {
        neg = true;
        p->pos++;
    }
    int idx = set_new(p);
    bool first = true;
    for (;;) {
        if (at_end(p)) {
            p->pos = open;
            perr(p, "unclosed character class");
            return NULL;
        }
        int c = peek(p);
        if (c == ']' && !first) {
            p->pos++;
            break;
        }
        if (c == '[') {
            perr(p, "nested character classes are not supported");
            return NULL;
        }
        if (c == '&' && p->pos + 1 < p->len && p->pat[p->pos + 1] == '&') {
            perr(p, "character class intersections (&&) are not supported");
            return NULL;
        }
        first = false;
        int lo = class_item(p, &p->sets[idx]);
        if (lo == -1)
            return NULL;
        if (lo == -2)
            continue;
        if (peek(p) == '-' && p->pos + 1 < p->len && p->pat[p->pos + 1] != ']') {
            p->pos++;
            struct byteset dummy = {{0}};
            int hi = class_item(p, &dummy);
            if (hi == -1)
                return NULL;
            if (hi == -2 || hi < lo) {
                perr(p, "illegal character range");
                return NULL;
            }
            set_add(&p->sets[idx], lo, hi);
        } else {
            set_add(&p->sets[idx], lo, lo);
        }
    }
    if (neg)
        set_invert(&p->sets[idx]);
    struct node *n = node_new(p, N_SET);
    n->value = idx;
    return n;
}

static struct node *parse_alt(struct parser *p);

static struct node *parse_group(struct parser *p)
{
    size_t open = p->pos - 1;
    int group = 0;
    if (peek(p) == '?') {
        if (p->pos + 1 < p->len && p->pat[p->pos + 1] == ':') {
            p->pos += 2;
        } else {
            perr(p, "(? constructs other than (?: are not supported");
            return NULL;
        }
    } else {
        if (p->groups == REGEX_GROUPS_MAX) {
            perr(p, "too many capturing groups");
            return NULL;
        }
        group = ++p->groups;
    }
    if (++p->depth > NESTING_MAX) {
        perr(p, "groups nested too deeply");
        return NULL;
    }
    struct node *body = parse_alt(p);
    p->depth--;
    if (!body)
        return NULL;
    if (peek(p) != ')') {
        p->pos = open;
        perr(p, "unclosed group");
        return NULL;
    }
    p->pos++;
    struct node *n = node_new(p, N_GROUP);
    n->value = group;
    n->kids = body;
    return n;
}

static struct node *parse_atom(struct parser *p)
{
    int c = peek(p);
    p->pos++;
    struct node *n;
    switch (c) {
    case '(':
        return parse_group(p);
    case '[':
        return parse_class(p);
    case '.':
        return node_new(p, N_ANY);
    case '^':
        return node_new(p, N_BOL);
    case '$':
        return node_new(p, N_EOL);
    case '*':
    case '+':
    case '?':
    case '{':
        p->pos--;
        perr(p, c == '{' ? "illegal repetition" : "dangling quantifier");
        return NULL;
    case '\\': {
        int idx = set_new(p);
        int b = parse_escape(p, &p->sets[idx]);
        if (b == -1)
            return NULL;
        if (b == -2) {
            n = node_new(p, N_SET);
            n->value = idx;
            return n;
        }
        p->n_sets--; /* not needed: a literal */
        n = node_new(p, N_BYTE);
        n->value = b;
        return n;
    }
    }
    n = node_new(p, N_BYTE);
    n->value = c;
    return n;
}

/* Parses a decimal number of at most 4 digits. Returns it, or -1. */
static int parse_count(struct parser *p)
{
    int v = 0, digits = 0;
    while (peek(p) >= '0' && peek(p) <= '9') {
        if (++digits > 4)
            return -1;
        v = v * 10 + (peek(p) - '0');
        p->pos++;
    }
    return digits ? v : -1;
}

/* A quantifier after an atom, if one follows: sets *min, *max. Returns 1 (found), 0 (none), -1. */
static int parse_quant(struct parser *p, int *min, int *max)
{
    int c = peek(p);
    if (c == '*' || c == '+' || c == '?') {
        p->pos++;
        *min = c == '+' ? 1 : 0;
        *max = c == '?' ? 1 : -1;
        return 1;
    }
    if (c != '{')
        return 0;
    size_t open = p->pos++;
    int lo = parse_count(p), hi = lo;
    if (lo >= 0 && peek(p) == ',') {
        p->pos++;
        hi = peek(p) == '}' ? -1 : parse_count(p);
        if (hi == -1 && peek(p) != '}')
            lo = -1;
    }
    if (lo < 0 || peek(p) != '}' || lo > REPEAT_MAX || hi > REPEAT_MAX || (hi >= 0 && hi < lo)) {
        p->pos = open;
        perr(p, "illegal repetition (expected {n}, {n,} or {n,m} with n <= m <= 1000)");
        return -1;
    }
    p->pos++;
    *min = lo;
    *max = hi;
    return 1;
}

static struct node *parse_repeat(struct parser *p)
{
    struct node *atom = parse_atom(p);
    if (!atom)
        return NULL;
    int min, max;
    int q = parse_quant(p, &min, &max);
    if (q <= 0)
        return q < 0 ? NULL : atom;
    struct node *n = node_new(p, N_REPEAT);
    n->min = min;
    n->max = max;
    n->kids = atom;
    if (peek(p) == '?') {
        n->lazy = true;
        p->pos++;
    } else if (peek(p) == '+') {
        perr(p, "possessive quantifiers are not supported");
        return NULL;
    }
    int c = peek(p);
    if (c == '*' || c == '+' || c == '?' || c == '{') {
        perr(p, "dangling quantifier");
        return NULL;
    }
    return n;
}

static struct node *parse_cat(struct parser *p)
{
    struct node *cat = node_new(p, N_CAT);
    struct node **tail = &cat->kids;
    while (!at_end(p) && peek(p) != '|' && peek(p) != ')') {
        struct node *n = parse_repeat(p);
        if (!n)
            return NULL;
        *tail = n;
        tail = &n->next;
    }
    return cat;
}

static struct node *parse_alt(struct parser *p)
{
    struct node *first = parse_cat(p);
    if (!first || peek(p) != '|')
        return first;
    struct node *alt = node_new(p, N_ALT);
    alt->kids = first;
    struct node *last = first;
    while (peek(p) == '|') {
        p->pos++;
        struct node *n = parse_cat(p);
        if (!n)
            return NULL;
        last->next = n;
        last = n;
    }
    return alt;
}

/* ---- compiler ---- */

struct compiler {
    struct inst *prog;
    size_t n, cap;
    int regs; /* registers used so far */
    bool overflow;
};

static int emit(struct compiler *c, uint8_t op, int x, int y)
{
    if (c->n >= REGEX_PROGRAM_MAX) {
        c->overflow = true;
        return (int)c->n;
    }
    MEM_GROW(c->prog, c->cap, c->n + 1);
    c->prog[c->n] = (struct inst){.op = op, .x = x, .y = y};
    return (int)c->n++;
}

static int here(const struct compiler *c)
{
    return (int)c->n;
}

static void patch_x(struct compiler *c, int at, int target)
{
    if (at >= 0 && at < (int)c->n)
        c->prog[at].x = target;
}

static void patch_y(struct compiler *c, int at, int target)
{
    if (at >= 0 && at < (int)c->n)
        c->prog[at].y = target;
}

static void compile_node(struct compiler *c, const struct node *n, int reg_base);

static void compile_star(struct compiler *c, const struct node *body, bool lazy, int reg_base)
{
    int reg = reg_base + c->regs++;
    int split = emit(c, OP_SPLIT, 0, 0);
    int start = emit(c, OP_MARK, reg, 0);
    compile_node(c, body, reg_base);
    int empty = emit(c, OP_EMPTY, reg, 0);
    emit(c, OP_JMP, split, 0);
    int end = here(c);
    patch_x(c, split, lazy ? end : start);
    patch_y(c, split, lazy ? start : end);
    patch_y(c, empty, end);
}

/* Points every instruction of a chain (linked through the field that `which` names, -1 ends
 * it) at target. */
static void patch_chain(struct compiler *c, int chain, bool which_x, int target)
{
    while (!c->overflow && chain >= 0) {
        struct inst *in = &c->prog[chain];
        int next = which_x ? in->x : in->y;
        if (which_x)
            in->x = target;
        else
            in->y = target;
        chain = next;
    }
}

static void compile_repeat(struct compiler *c, const struct node *n, int reg_base)
{
    for (int i = 0; i < n->min && !c->overflow; i++)
        compile_node(c, n->kids, reg_base);
    if (n->max < 0) {
        compile_star(c, n->kids, n->lazy, reg_base);
        return;
    }
    /* m-n nested optional copies; every SPLIT's skip branch goes to the end (chained there
     * until the end is known) */
    int chain = -1;
    for (int i = n->min; i < n->max && !c->overflow; i++) {
        int split = emit(c, OP_SPLIT, 0, 0);
        int body = here(c);
        if (n->lazy) {
            patch_x(c, split, chain);
            patch_y(c, split, body);
        } else {
            patch_x(c, split, body);
            patch_y(c, split, chain);
        }
        chain = split;
        compile_node(c, n->kids, reg_base);
    }
    patch_chain(c, chain, n->lazy, here(c));
}

static void compile_node(struct compiler *c, const struct node *n, int reg_base)
{
    if (c->overflow)
        return;
    switch (n->type) {
    case N_EMPTY:
        return;
    case N_BYTE: {
        int at = emit(c, OP_BYTE, 0, 0);
        if (at < (int)c->n)
            c->prog[at].byte = (uint8_t)n->value;
        return;
    }
    case N_SET:
        emit(c, OP_SET, n->value, 0);
        return;
    case N_ANY:
        emit(c, OP_ANY, 0, 0);
        return;
    case N_BOL:
        emit(c, OP_BOL, 0, 0);
        return;
    case N_EOL:
        emit(c, OP_EOL, 0, 0);
        return;
    case N_CAT:
        for (const struct node *k = n->kids; k && !c->overflow; k = k->next)
            compile_node(c, k, reg_base);
        return;
    case N_ALT: {
        int chain = -1; /* the JMPs to the end, linked through x */
        for (const struct node *k = n->kids; k && !c->overflow; k = k->next) {
            int split = -1;
            if (k->next)
                split = emit(c, OP_SPLIT, 0, 0);
            patch_x(c, split, here(c));
            compile_node(c, k, reg_base);
            if (k->next) {
                chain = emit(c, OP_JMP, chain, 0);
                patch_y(c, split, here(c));
            }
        }
        patch_chain(c, chain, true, here(c));
        return;
    }
    case N_GROUP:
        if (n->value > 0)
            emit(c, OP_SAVE, 2 * n->value, 0);
        compile_node(c, n->kids, reg_base);
        if (n->value > 0)
            emit(c, OP_SAVE, 2 * n->value + 1, 0);
        return;
    case N_REPEAT:
        compile_repeat(c, n, reg_base);
        return;
    }
}

int regex_compile(const char *pattern, size_t len, struct regex **out, char *err, size_t errcap)
{
    struct parser p = {.pat = pattern, .len = len, .err = err, .errcap = errcap};
    struct node *root = parse_alt(&p);
    if (root && !at_end(&p))
        perr(&p, "unmatched closing parenthesis");
    int rc = -1;
    if (!root || p.failed)
        goto out_free_nodes;

    struct compiler c = {0};
    int reg_base = 2 * (p.groups + 1);
    emit(&c, OP_SAVE, 0, 0);
    compile_node(&c, root, reg_base);
    emit(&c, OP_SAVE, 1, 0);
    emit(&c, OP_MATCH, 0, 0);
    if (c.overflow) {
        snprintf(err, errcap, "the pattern is too large once its repetitions are expanded "
                 "(more than %d instructions)", REGEX_PROGRAM_MAX);
        mem_free(c.prog);
        goto out_free_nodes;
    }
    struct regex *re = mem_calloc(1, sizeof(*re));
    re->prog = c.prog;
    re->n_prog = (int)c.n;
    re->sets = p.sets;
    re->n_sets = (int)p.n_sets;
    p.sets = NULL;
    re->groups = p.groups;
    re->slots = reg_base + c.regs;
    for (int i = 0; i < re->n_prog; i++) {
        const struct inst *in = &re->prog[i];
        if (in->op == OP_SPLIT || in->op == OP_JMP)
            CHECK(in->x >= 0 && in->x <= re->n_prog);
        if (in->op == OP_SPLIT || in->op == OP_EMPTY)
            CHECK(in->y >= 0 && in->y <= re->n_prog);
    }
    *out = re;
    rc = 0;

out_free_nodes:
    for (size_t i = 0; i < p.n_nodes; i++)
        mem_free(p.nodes[i]);
    mem_free(p.nodes);
    mem_free(p.sets);
    return rc;
}

void regex_free(struct regex *re)
{
    if (!re)
        return;
    mem_free(re->prog);
    mem_free(re->sets);
    mem_free(re);
}

int regex_groups(const struct regex *re)
{
    return re->groups;
}

/* ---- machine ---- */

struct choice {
    int pc;
    size_t pos;
    size_t undo_len;
};

struct undo {
    int slot;
    long old;
};

struct vm {
    const struct regex *re;
    const char *s;
    size_t len;
    long *slots;
    struct choice *choices;
    size_t n_choices, cap_choices;
    struct undo *undo;
    size_t n_undo, cap_undo;
    long steps;
};

static bool eol_at(const char *s, size_t len, size_t pos)
{
    if (pos == len)
        return true;
    if (pos + 1 == len && (s[pos] == '\n' || s[pos] == '\r'))
        return true;
    return pos + 2 == len && s[pos] == '\r' && s[pos + 1] == '\n';
}

static bool slot_set(struct vm *vm, int slot, long value)
{
    if (vm->n_undo >= CHOICES_MAX)
        return false;
    MEM_GROW(vm->undo, vm->cap_undo, vm->n_undo + 1);
    vm->undo[vm->n_undo++] = (struct undo){slot, vm->slots[slot]};
    vm->slots[slot] = value;
    return true;
}

/* Runs the program anchored at start. */
static enum regex_result vm_run(struct vm *vm, size_t start, bool full)
{
    const struct inst *prog = vm->re->prog;
    for (int i = 0; i < vm->re->slots; i++)
        vm->slots[i] = -1;
    vm->n_choices = 0;
    vm->n_undo = 0;
    int pc = 0;
    size_t pos = start;
    for (;;) {
        if (++vm->steps > REGEX_STEPS_MAX)
            return REGEX_TOO_COMPLEX;
        const struct inst *in = &prog[pc];
        bool ok = true;
        switch (in->op) {
        case OP_BYTE:
            ok = pos < vm->len && (uint8_t)vm->s[pos] == in->byte;
            pos += ok;
            pc++;
            break;
        case OP_SET:
            ok = pos < vm->len && set_has(&vm->re->sets[in->x], (uint8_t)vm->s[pos]);
            pos += ok;
            pc++;
            break;
        case OP_ANY:
            ok = pos < vm->len && vm->s[pos] != '\n' && vm->s[pos] != '\r';
            pos += ok;
            pc++;
            break;
        case OP_BOL:
            ok = pos == 0;
            pc++;
            break;
        case OP_EOL:
            ok = eol_at(vm->s, vm->len, pos);
            pc++;
            break;
        case OP_SPLIT:
            if (vm->n_choices >= CHOICES_MAX)
                return REGEX_TOO_COMPLEX;
            MEM_GROW(vm->choices, vm->cap_choices, vm->n_choices + 1);
            vm->choices[vm->n_choices++] = (struct choice){in->y, pos, vm->n_undo};
            pc = in->x;
            break;
        case OP_JMP:
            pc = in->x;
            break;
        case OP_SAVE:
        case OP_MARK:
            if (!slot_set(vm, in->x, (long)pos))
                return REGEX_TOO_COMPLEX;
            pc++;
            break;
        case OP_EMPTY:
            pc = vm->slots[in->x] == (long)pos ? in->y : pc + 1;
            break;
        case OP_MATCH:
            if (!full || pos == vm->len)
                return REGEX_MATCH;
            ok = false;
            break;
        }
        if (ok)
            continue;
        if (vm->n_choices == 0)
            return REGEX_NOMATCH;
        struct choice ch = vm->choices[--vm->n_choices];
        while (vm->n_undo > ch.undo_len) {
            struct undo *u = &vm->undo[--vm->n_undo];
            vm->slots[u->slot] = u->old;
        }
        pc = ch.pc;
        pos = ch.pos;
    }
}

static enum regex_result run(const struct regex *re, const char *s, size_t len, size_t from,
                             bool full, struct regex_match *m)
{
    struct vm vm = {.re = re, .s = s, .len = len};
    vm.slots = mem_alloc((size_t)re->slots * sizeof(long));
    enum regex_result r = REGEX_NOMATCH;
    size_t last = full ? from : len;
    for (size_t start = from; start <= last; start++) {
        r = vm_run(&vm, start, full);
        if (r != REGEX_NOMATCH)
            break;
    }
    if (r == REGEX_MATCH && m) {
        for (int i = 0; i <= REGEX_GROUPS_MAX; i++) {
            bool in = i <= re->groups && vm.slots[2 * i] >= 0 && vm.slots[2 * i + 1] >= 0;
            m->start[i] = in ? vm.slots[2 * i] : -1;
            m->end[i] = in ? vm.slots[2 * i + 1] : -1;
        }
    }
    mem_free(vm.slots);
    mem_free(vm.choices);
    mem_free(vm.undo);
    return r;
}

enum regex_result regex_full_match(const struct regex *re, const char *s, size_t len,
                                   struct regex_match *m)
{
    return run(re, s, len, 0, true, m);
}

enum regex_result regex_search(const struct regex *re, const char *s, size_t len, size_t from,
                               struct regex_match *m)
{
    if (from > len)
        return REGEX_NOMATCH;
    return run(re, s, len, from, false, m);
}
