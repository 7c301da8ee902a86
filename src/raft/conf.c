#include "raft/conf.h"

#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"

bool raft_conf_side_has(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static bool side_valid(const int32_t *ids, size_t n)
{
    if (n > RAFT_VOTERS_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0)
            return false;
        if (raft_conf_side_has(ids, i, ids[i]))
            return false;
    }
    return true;
}

bool raft_conf_valid(const struct raft_conf *c)
{
    if (!side_valid(c->voters, c->n_voters) || !side_valid(c->old, c->n_old) ||
        c->n_learners > RAFT_LEARNERS_MAX || !side_valid(c->learners, c->n_learners))
        return false;
    for (size_t i = 0; i < c->n_learners; i++)
        if (raft_conf_has(c, c->learners[i]))
            return false;
    return (c->n_old == 0 && c->n_learners == 0) || c->n_voters > 0;
}

bool raft_conf_has_learner(const struct raft_conf *c, int32_t id)
{
    return raft_conf_side_has(c->learners, c->n_learners, id);
}

bool raft_conf_has_member(const struct raft_conf *c, int32_t id)
{
    return raft_conf_has(c, id) || raft_conf_has_learner(c, id);
}

bool raft_conf_is_joint(const struct raft_conf *c)
{
    return c->n_old > 0;
}

bool raft_conf_has(const struct raft_conf *c, int32_t id)
{
    return raft_conf_side_has(c->voters, c->n_voters, id) ||
           raft_conf_side_has(c->old, c->n_old, id);
}

static bool side_equal(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!raft_conf_side_has(b, nb, a[i]))
            return false;
    return true;
}

bool raft_conf_equal(const struct raft_conf *a, const struct raft_conf *b)
{
    return side_equal(a->voters, a->n_voters, b->voters, b->n_voters) &&
           side_equal(a->old, a->n_old, b->old, b->n_old) &&
           side_equal(a->learners, a->n_learners, b->learners, b->n_learners);
}

size_t raft_conf_encode(const struct raft_conf *c, uint8_t *buf)
{
    CHECK(raft_conf_valid(c));
    buf[0] = 'R';
    buf[1] = c->n_learners ? 2 : 1;
    buf[2] = c->n_voters;
    buf[3] = c->n_old;
    size_t off = 4;
    if (c->n_learners)
        buf[off++] = c->n_learners;
    for (size_t i = 0; i < c->n_voters; i++, off += 4)
        be_put32(buf + off, (uint32_t)c->voters[i]);
    for (size_t i = 0; i < c->n_old; i++, off += 4)
        be_put32(buf + off, (uint32_t)c->old[i]);
    for (size_t i = 0; i < c->n_learners; i++, off += 4)
        be_put32(buf + off, (uint32_t)c->learners[i]);
    return off;
}

int raft_conf_decode(struct raft_conf *c, const uint8_t *p, size_t len)
{
    memset(c, 0, sizeof(*c));
    if (len < 4 || !p || p[0] != 'R' || (p[1] != 1 && p[1] != 2) || p[2] > RAFT_VOTERS_MAX ||
        p[3] > RAFT_VOTERS_MAX)
        return -ERR_CORRUPT;
    size_t off = 4;
    size_t nl = 0;
    if (p[1] == 2) { /* learners: at least one (else it is written as version 1) */
        if (len < 5 || p[4] < 1 || p[4] > RAFT_LEARNERS_MAX)
            return -ERR_CORRUPT;
        nl = p[4];
        off = 5;
    }
    if (len != off + 4 * ((size_t)p[2] + p[3] + nl))
        return -ERR_CORRUPT;
    c->n_voters = p[2];
    c->n_old = p[3];
    c->n_learners = (uint8_t)nl;
    for (size_t i = 0; i < c->n_voters; i++, off += 4)
        c->voters[i] = (int32_t)be_get32(p + off);
    for (size_t i = 0; i < c->n_old; i++, off += 4)
        c->old[i] = (int32_t)be_get32(p + off);
    for (size_t i = 0; i < nl; i++, off += 4)
        c->learners[i] = (int32_t)be_get32(p + off);
    if (!raft_conf_valid(c)) {
        memset(c, 0, sizeof(*c));
        return -ERR_CORRUPT;
    }
    return 0;
}

static size_t format_side(const int32_t *ids, size_t n, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && off < cap; i++) {
        int w = snprintf(buf + off, cap - off, "%s%d", i ? "," : "", (int)ids[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return off < cap ? off : cap - 1;
}

const char *raft_conf_format(const struct raft_conf *c, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    buf[0] = 0;
    size_t off = 0;
    if (c->n_old) {
        off = format_side(c->old, c->n_old, buf, cap);
        if (off + 3 < cap) {
            memcpy(buf + off, "->", 3);
            off += 2;
        }
    }
    off += format_side(c->voters, c->n_voters, buf + off, cap - off);
    if (c->n_learners && off + 3 < cap) {
        memcpy(buf + off, " +", 3);
        off += 2;
        format_side(c->learners, c->n_learners, buf + off, cap - off);
    }
    return buf;
}
