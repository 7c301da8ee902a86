/* Randomized property test of the controller: random command sequences (fixed seeds, bounded
 * steps) whose records are applied to the leader's image and, through their encoded bytes, to
 * a second independent image. After every step:
 *   - every record a command produced is accepted by both images;
 *   - both images' snapshots are byte-identical (compared every 10 steps and at the end), and
 *     every 50 steps a snapshot rebuilds an identical image;
 *   - every partition's replicas are distinct; its leader is one of them, is live, and is -1
 *     only when no replica is live;
 *   - producer-id blocks handed out never overlap;
 *   - while the live broker set is the initial one and nothing was deleted ("fresh"), per-broker
 *     replica counts differ by at most 1 and preferred-leader counts by at most
 *     LEADER_SPREAD_MAX.
 * A failure names its seed; CTL_PROP_SEED=<n> replays one seed. */
#include "base/check.h"
#include "controller/commands.h"
#include "controller/placement.h"
#include "controller_util.h"
#include "kafka/errors.h"
#include "test.h"

#define SEEDS 16
#define STEPS 250
#define BROKERS_MAX 8
#define LEADER_SPREAD_MAX 3 /* observed bound of the greedy rule, see placement.h */
#define SESSION_MS 100

struct prop {
    uint64_t seed;
    uint64_t rng;
    struct ctl_image img;   /* the controller leader's */
    struct ctl_image other; /* a follower's, fed with bytes */
    struct ctl_sessions sessions;
    struct ctl_recs out;
    int64_t now_ms;
    uint32_t next_topic_id;
    uint32_t incarnation[BROKERS_MAX];
    bool fresh;
    struct ctl_rec_pids blocks[STEPS + 1];
    size_t n_blocks;
};

static uint64_t rnd(struct prop *p)
{
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 7;
    p->rng ^= p->rng << 17;
    return p->rng;
}

static int32_t rnd_in(struct prop *p, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rnd(p) % (uint64_t)(hi - lo + 1));
}

#define PASSERT(p, c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            test_fail(__FILE__, __LINE__, "seed %" PRIu64 ": %s", (p)->seed, #c);                  \
    } while (0)

static struct kuuid inc_of(struct prop *p, int32_t id)
{
    return ctu_uuid(((uint32_t)id << 16) | p->incarnation[id]);
}

/* Applies the command's records to both images (the second through bytes). */
static void commit(struct prop *p)
{
    for (size_t i = 0; i < p->out.n; i++)
        if (p->out.v[i].type == CTL_REC_PRODUCER_IDS)
            p->blocks[p->n_blocks++] = p->out.v[i].pids;
    PASSERT(p, ctl_image_apply_all(&p->img, &p->out) == 0);
    struct iobuf b;
    iobuf_init(&b);
    ctl_recs_encode(&p->out, &b);
    size_t len;
    uint8_t *bytes = iobuf_flatten(&b, &len);
    struct ctl_recs back;
    ctl_recs_init(&back);
    PASSERT(p, ctl_recs_decode(bytes, len, p->out.n, &back) == 0);
    PASSERT(p, back.n == p->out.n);
    PASSERT(p, ctl_image_apply_all(&p->other, &back) == 0);
    ctl_recs_free(&back);
    mem_free(bytes);
    iobuf_destroy(&b);
    p->out.n = 0;
}

static void check_same(struct prop *p, const struct ctl_image *a, const struct ctl_image *b)
{
    size_t la, lb;
    uint8_t *sa = ctu_snapshot(a, &la);
    uint8_t *sb = ctu_snapshot(b, &lb);
    PASSERT(p, la == lb && memcmp(sa, sb, la) == 0);
    mem_free(sa);
    mem_free(sb);
}

static void check_invariants(struct prop *p)
{
    const struct ctl_image *img = &p->img;
    ctl_image_check(img);
    int64_t replicas[BROKERS_MAX] = {0}, leaders[BROKERS_MAX] = {0};
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct ctl_topic *topic = img->topics[t];
        for (int32_t i = 0; i < topic->n_partitions; i++) {
            const struct ctl_partition *part = &topic->parts[i];
            PASSERT(p, part->n_replicas >= 1);
            bool any_live = false;
            for (int32_t r = 0; r < part->n_replicas; r++) {
                for (int32_t s = 0; s < r; s++)
                    PASSERT(p, part->replicas[r] != part->replicas[s]);
                any_live = any_live || ctl_image_broker_live(img, part->replicas[r]);
                replicas[part->replicas[r]]++;
            }
            leaders[part->replicas[0]]++;
            if (part->leader == -1) {
                PASSERT(p, !any_live);
            } else {
                PASSERT(p, ctl_partition_has_replica(part, part->leader));
                PASSERT(p, ctl_image_broker_live(img, part->leader));
            }
        }
    }
    for (size_t i = 0; i < p->n_blocks; i++)
        for (size_t j = 0; j < i; j++)
            PASSERT(p, p->blocks[j].first + p->blocks[j].size <= p->blocks[i].first ||
                           p->blocks[i].first + p->blocks[i].size <= p->blocks[j].first);
    if (!p->fresh || img->n_brokers == 0)
        return;
    int64_t rmin = INT64_MAX, rmax = 0, lmin = INT64_MAX, lmax = 0;
    for (size_t i = 0; i < img->n_brokers; i++) {
        int32_t id = img->brokers[i].id;
        rmin = MIN(rmin, replicas[id]);
        rmax = MAX(rmax, replicas[id]);
        lmin = MIN(lmin, leaders[id]);
        lmax = MAX(lmax, leaders[id]);
    }
    PASSERT(p, rmax - rmin <= 1);
    PASSERT(p, lmax - lmin <= LEADER_SPREAD_MAX);
}

static void heartbeat(struct prop *p, int32_t id, bool caught_up)
{
    int16_t err =
        ctl_cmd_heartbeat(&p->img, &p->sessions, id, inc_of(p, id), caught_up, p->now_ms, &p->out);
    PASSERT(p, err == (ctl_image_broker(&p->img, id) ? KERR_NONE : KERR_STALE_BROKER_EPOCH));
    commit(p);
}

static void register_broker(struct prop *p, int32_t id)
{
    p->incarnation[id]++;
    char host[16];
    snprintf(host, sizeof(host), "b%d", id);
    struct ctl_broker_reg reg = {id, inc_of(p, id), host, 9092, "", NULL, 0};
    PASSERT(p,
            ctl_cmd_register_broker(&p->img, &p->sessions, &reg, p->now_ms, &p->out) == KERR_NONE);
    commit(p);
}

static const char *pick_topic(struct prop *p)
{
    if (p->img.n_topics == 0)
        return "none";
    return p->img.topics[rnd(p) % p->img.n_topics]->name;
}

static void step_create(struct prop *p)
{
    char name[32];
    snprintf(name, sizeof(name), "t%d", rnd_in(p, 0, 40));
    int32_t live = (int32_t)ctl_image_live_brokers(&p->img);
    struct ctl_create_topic req = {
        name, ctu_uuid(++p->next_topic_id), rnd_in(p, 1, 12), rnd_in(p, 1, live + 1), NULL, 0};
    int16_t err = ctl_cmd_create_topic(&p->img, &req, NULL, NULL, &p->out);
    int16_t want = KERR_NONE;
    if (ctl_image_topic(&p->img, name) != NULL)
        want = KERR_TOPIC_ALREADY_EXISTS;
    else if (req.rf > live)
        want = KERR_INVALID_REPLICATION_FACTOR;
    PASSERT(p, err == want);
    PASSERT(p, err == KERR_NONE || p->out.n == 0);
    commit(p);
}

static void step_grow(struct prop *p)
{
    const char *name = pick_topic(p);
    const struct ctl_topic *t = ctl_image_topic(&p->img, name);
    int32_t n = t ? t->n_partitions + rnd_in(p, -1, 4) : 3;
    int16_t err = ctl_cmd_create_partitions(&p->img, name, n, &p->out);
    if (t == NULL)
        PASSERT(p, err == KERR_UNKNOWN_TOPIC_OR_PARTITION);
    else if (n <= t->n_partitions)
        PASSERT(p, err == KERR_INVALID_PARTITIONS);
    else if ((size_t)t->parts[0].n_replicas > ctl_image_live_brokers(&p->img))
        PASSERT(p, err == KERR_INVALID_REPLICATION_FACTOR);
    else
        PASSERT(p, err == KERR_NONE);
    commit(p);
}

static void step_config(struct prop *p)
{
    char value[16];
    snprintf(value, sizeof(value), "%d", rnd_in(p, 0, 1000));
    static const char *keys[] = {"retention.ms", "segment.bytes", "cleanup.policy"};
    struct ctl_config_entry op = {keys[rnd(p) % 3], rnd(p) % 4 == 0 ? NULL : value};
    bool broker = rnd(p) % 3 == 0;
    const char *res = broker ? "" : pick_topic(p);
    int16_t err = ctl_cmd_alter_configs(&p->img, broker ? CTL_RESOURCE_BROKER : CTL_RESOURCE_TOPIC,
                                        res, &op, 1, NULL, NULL, &p->out);
    PASSERT(p, err == (broker || ctl_image_topic(&p->img, res) ? KERR_NONE
                                                               : KERR_UNKNOWN_TOPIC_OR_PARTITION));
    commit(p);
    if (err == KERR_NONE) {
        const char *v = ctl_image_config(&p->img, broker ? CTL_RESOURCE_BROKER : CTL_RESOURCE_TOPIC,
                                         res, op.key);
        PASSERT(p, op.value ? v && strcmp(v, op.value) == 0 : v == NULL);
    }
}

static void step_pids(struct prop *p, int32_t n_ids)
{
    int32_t id = rnd_in(p, 0, n_ids - 1);
    int16_t err = ctl_cmd_alloc_producer_ids(&p->img, id, inc_of(p, id), 0, &p->out);
    PASSERT(p, err == (ctl_image_broker(&p->img, id) ? KERR_NONE : KERR_STALE_BROKER_EPOCH));
    commit(p);
}

static void step_chaos(struct prop *p, int32_t n_ids)
{
    int32_t id = rnd_in(p, 0, n_ids - 1);
    switch (rnd(p) % 6) {
    case 0: {
        const char *name = pick_topic(p);
        bool exists = ctl_image_topic(&p->img, name) != NULL;
        PASSERT(p, ctl_cmd_delete_topic(&p->img, name, &p->out) ==
                       (exists ? KERR_NONE : KERR_UNKNOWN_TOPIC_OR_PARTITION));
        commit(p);
        break;
    }
    case 1:
        register_broker(p, id);
        break;
    case 2:
    case 3:
        /* most brokers keep heartbeating; time moves on and laggards are fenced */
        p->now_ms += rnd_in(p, 0, SESSION_MS / 2);
        for (int32_t b = 0; b < n_ids; b++)
            if (rnd(p) % 4 != 0 && ctl_image_broker(&p->img, b))
                heartbeat(p, b, rnd(p) % 3 != 0);
        PASSERT(p, ctl_cmd_fence_expired(&p->img, &p->sessions, p->now_ms, SESSION_MS, &p->out) ==
                       KERR_NONE);
        commit(p);
        break;
    case 4:
        PASSERT(p, ctl_cmd_fence_brokers(&p->img, &id, 1, &p->out) == KERR_NONE);
        commit(p);
        break;
    default:
        heartbeat(p, id, true);
        break;
    }
}

static void run_seed(uint64_t seed)
{
    struct prop *p = mem_calloc(1, sizeof(*p));
    p->seed = seed;
    p->rng = seed * 0x9E3779B97F4A7C15ull + 1;
    ctl_image_init(&p->img);
    ctl_image_init(&p->other);
    ctl_sessions_init(&p->sessions);
    ctl_recs_init(&p->out);
    int32_t n_ids = rnd_in(p, 1, BROKERS_MAX - 1);
    for (int32_t id = 0; id < n_ids; id++) {
        register_broker(p, id);
        heartbeat(p, id, true);
    }
    p->fresh = true;
    int32_t fresh_steps = rnd_in(p, 20, STEPS / 2);
    for (int step = 0; step < STEPS; step++) {
        if (step == fresh_steps) {
            p->fresh = false;
            n_ids = BROKERS_MAX; /* new brokers may join */
        }
        uint64_t what = rnd(p) % (p->fresh ? 4 : 7);
        if (what == 0)
            step_create(p);
        else if (what == 1)
            step_grow(p);
        else if (what == 2)
            step_config(p);
        else if (what == 3)
            step_pids(p, n_ids);
        else
            step_chaos(p, n_ids);
        check_invariants(p);
        if (step % 10 == 9 || step == STEPS - 1)
            check_same(p, &p->img, &p->other);
        if (step % 50 == 49) {
            struct ctl_recs snap;
            ctl_recs_init(&snap);
            ctl_image_snapshot(&p->img, &snap);
            struct ctl_image rebuilt;
            ctl_image_init(&rebuilt);
            PASSERT(p, ctl_image_apply_all(&rebuilt, &snap) == 0);
            check_same(p, &p->img, &rebuilt);
            ctl_image_free(&rebuilt);
            ctl_recs_free(&snap);
        }
    }
    PASSERT(p, p->img.n_topics > 0 || p->img.records_applied > 0);
    ctl_recs_free(&p->out);
    ctl_sessions_free(&p->sessions);
    ctl_image_free(&p->other);
    ctl_image_free(&p->img);
    mem_free(p);
}

TEST_T(controller_property_random_commands, 60)
{
    const char *one = getenv("CTL_PROP_SEED");
    if (one != NULL) {
        run_seed(strtoull(one, NULL, 10));
        return;
    }
    for (uint64_t seed = 1; seed <= SEEDS; seed++)
        run_seed(seed);
}
