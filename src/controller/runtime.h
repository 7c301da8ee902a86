/* The controller of one node: the Raft group of __cluster_metadata-0 (replication/replica.h over a
 * plog in its own directory) and the metadata image its committed records build.
 *
 * Log contract. Every DATA entry of the group is one magic-2 record batch (uncompressed, as
 * kbatch_build makes it) holding the records of ONE command: each Kafka record's value is one
 * controller record (controller/records.h), its key null. Control batches (Raft's NOOP and
 * CONFIG entries) carry no records and are skipped. Replay is deterministic: a batch that does
 * not validate, a record value that does not decode and a record the image refuses are skipped
 * (logged: ctl_record_skipped), identically on every node, since all nodes hold the same bytes.
 *
 * Images. The committed image holds every committed record (applied in log order by every node,
 * leader and followers alike; on_image_change(before, after) runs after each commit advance that
 * applied records). The leader validates commands against a working image = committed image +
 * every record in its log above the commit index (its own pending proposals and entries of
 * earlier terms it will commit), as controller/commands.h requires. The working image is
 * rebuilt from the committed image and the log tail whenever this node becomes leader (or its
 * term changes) and dropped when it stops leading.
 *
 * Commands (ctl_runtime_submit). At the leader: validated (commands.h), then proposed as one
 * batch; answered when replica_proposal_state decides: COMMITTED -> the command's outcome,
 * LOST -> KERR_NOT_CONTROLLER (retriable). A command with no records (a repeated registration)
 * is answered at once. At a follower: forwarded to the known leader in a CONTROLLER_REQUEST
 * frame (replication/rpc.h, body controller/request.h) and answered by its CONTROLLER_RESPONSE.
 * A forward rides out a change of controller, as Kafka's brokers forward to theirs: while no
 * leader is known, when the frame cannot be sent, when its target stops being the leader
 * before answering, or when the target answers KERR_NOT_CONTROLLER, it waits and is sent
 * again to the next leader this node learns of (taken over as its own proposal if that is
 * this node). Never left hanging: after request_timeout_ms from the submit (proposal or
 * forward, however often sent) the answer is KERR_REQUEST_TIMED_OUT; at close,
 * KERR_NOT_CONTROLLER. Both are retriable. A command sent again after its first target died
 * may have been carried out by it, as with Kafka's brokers, which resend too: a create then
 * finds TOPIC_ALREADY_EXISTS, a delete UNKNOWN_TOPIC_OR_PARTITION, a partition increase
 * INVALID_PARTITIONS, a producer-id block is allocated twice (one goes unused); the other
 * commands set a state, and a second run sets the same one.
 *
 * Broker sessions. The leader keeps struct ctl_sessions (soft state, reset when leadership is
 * gained) and on every tick proposes ctl_cmd_fence_expired's records (session_timeout_ms) for
 * brokers whose heartbeats stopped: their partitions' leaders move as commands.h does it.
 *
 * Cost: with on_image_change set, each commit advance that applies records copies the image
 * (ctl_image_copy) to hand over `before`: O(image) per commit, fine for metadata rates.
 *
 * Serving observers. Any voter answers RPC_METADATA_FETCH frames (controller/mfetch.h): the
 * leader with the committed batches from the asked offset on (read from its log, up to its
 * commit index, bounded in bytes), the others with KERR_NOT_CONTROLLER and the leader they know.
 * A fetch for more than the leader has committed is held until its commit moves (a long poll,
 * at most CTL_FETCH_PARK_MS, then answered empty), so observers see each change at once.
 *
 * Observers (ctl_runtime_open_observer): a broker that is not a voter runs the runtime without
 * a replica or a log. Every tick it polls (one fetch in flight; at once after an answer with
 * batches or one the leader held, CTL_OBSERVE_POLL_MS after an empty answer that came at once,
 * as a leader of an older release gives) the leader that answered last, else a voter in
 * turn, following a "not the leader, the leader is X" hint. The batches are applied to the
 * committed image with the same replay code the voters use (control batches skipped, bad
 * records skipped and logged), in log order and each once: a batch must start right after the
 * applied index and end at or below the reported commit, else the answer's rest is dropped and
 * fetched again. on_image_change runs as for a voter. Commands are forwarded to the leader
 * that answered the last fetch, as a follower does (below). The image is kept in memory only:
 * an observer refetches the log from offset 0 at every start. ctl_runtime_step refuses Raft
 * messages (-ERR_INVALID); the role is RAFT_FOLLOWER; term and leader are the last answer's.
 *
 * Voter changes (`cluster voters add|remove`, Kafka's AddRaftVoter / RemoveRaftVoter). A VOTERS
 * record (controller/records.h) names the voters the quorum is to have; CTL_REQ_VOTERS writes
 * it (ctl_cmd_voters) and is answered once the group's committed configuration is that set,
 * or KERR_REQUEST_TIMED_OUT after request_timeout_ms (the change goes on: ask again to wait
 * more). The leader drives the group there on its ticks: new voters become learners, are
 * promoted (with any removal) in one joint change once within CTL_VOTER_CATCH_UP_SLACK of the
 * commit. Every node follows the committed image: an observer named in it opens an empty
 * metadata log in opt.meta_dir with no configuration (so it cannot campaign) and becomes a
 * replica the leader adds; a voter left out, once its group no longer needs its vote and it
 * does not lead, closes and deletes its log and observes the voters to be. A leader that
 * removes itself leads the joint change and steps down once the new configuration commits.
 *
 * Not yet: metadata snapshots. The whole log is replayed at open and never truncated; a log
 * whose start is above 0 is refused (-ERR_UNSUPPORTED).
 *
 * Threading: the reactor thread. Callbacks must not call ctl_runtime_close; done callbacks may
 * submit. */
#ifndef SP_CONTROLLER_RUNTIME_H
#define SP_CONTROLLER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/commands.h"
#include "controller/image.h"
#include "controller/request.h"
#include "raft/raft.h"

struct ctl_runtime;
struct flusher;
struct replica;

/* One entry of controller.quorum.voters. host is informational here (the owner configures the
 * transport); only ids enter the Raft configuration. */
struct ctl_voter {
    int32_t id;
    const char *host;
    int port;
};

/* A Raft message of the controller group for node m->to (valid during the call: copy it). */
typedef void (*ctl_send_raft_fn)(struct ctl_runtime *rt, const struct raft_msg *m, void *data);
/* A controller frame (type RPC_CONTROLLER_REQUEST / RPC_CONTROLLER_RESPONSE, and
 * RPC_METADATA_FETCH / RPC_METADATA_RESPONSE for observers) for node to. Returns 0 if queued;
 * nonzero if it cannot be sent (a request is then answered at once; a fetch is retried). */
typedef int (*ctl_send_frame_fn)(struct ctl_runtime *rt, int32_t to, uint8_t type,
                                 uint64_t request_id, const uint8_t *body, size_t len,
                                 void *data);
/* The committed image changed from before to after (both valid during the call only). */
typedef void (*ctl_image_change_fn)(struct ctl_runtime *rt, const struct ctl_image *before,
                                    const struct ctl_image *after, void *data);
/* This node turns into a voter replica of the metadata group (voter true: before its log is
 * created; a nonzero return keeps it an observer, tried again next tick) or back into an
 * observer (voter false: after its log is deleted). The owner records it durably, so that a
 * restart comes back in the same role (broker/cluster.c: quorum.state). */
typedef int (*ctl_member_change_fn)(struct ctl_runtime *rt, bool voter, void *data);
/* A submitted command's outcome (exactly once per submit). */
typedef void (*ctl_done_fn)(struct ctl_runtime *rt, const struct ctl_answer *a, void *data);

struct ctl_runtime_options {
    struct raft_options raft;      /* id and seed are set by open */
    struct flusher *flusher;       /* NULL: the log syncs inline (tests, tools); else the owner
                                      runs flusher_poll, whose completions drive the group */
    int64_t request_timeout_ms;    /* proposals and forwards: 5000 */
    int64_t session_timeout_ms;    /* broker sessions: 9000 (broker.session.timeout.ms) */
    ctl_config_check_fn config_check; /* may be NULL (accept all) */
    void *config_check_data;
    ctl_send_raft_fn send_raft;       /* required */
    ctl_send_frame_fn send_frame;     /* required */
    ctl_image_change_fn on_image_change; /* may be NULL */
    void *data;                       /* for send_raft, send_frame, on_image_change */
    uint64_t seed;                    /* election jitter and topic ids */
    /* Voter changes (see "Voter changes" above). meta_dir NULL: this node never changes role. */
    const char *meta_dir;             /* where this node's metadata log is, or would be */
    const char *host;                 /* this node's cluster address, sent with the fetches */
    int port;                         /* of an observer (ctl_runtime_open_observer's) */
    ctl_member_change_fn on_member_change; /* may be NULL */
    bool joined; /* open: the log's configuration is learnt from the leader (a node that became
                    a voter by a voter change; also implied by ctl_runtime_dir_joined): the
                    voters given are not a bootstrap one */
};

void ctl_runtime_options_default(struct ctl_runtime_options *o);

/* Opens (creating if needed) the metadata log in dir (the partition directory of
 * __cluster_metadata-0), binds a replica to it with the voters as bootstrap configuration
 * (node_id must be one of them; with opt->joined none is, the configuration is the log's), and rebuilds the committed image by replaying the log up to
 * the restored commit index. Returns 0 and *out (release with ctl_runtime_close),
 * -ERR_INVALID (options, voters), -ERR_UNSUPPORTED (the log starts above 0: snapshots are not
 * there yet), or an error of plog_open / replica_open. */
int ctl_runtime_open(const char *dir, int32_t node_id, const struct ctl_voter *voters,
                     size_t n_voters, const struct ctl_runtime_options *opt, int64_t now_ms,
                     struct ctl_runtime **out);
/* dir holds the metadata log of a node that became a voter by a voter change (it opens with
 * the log's configuration only, whatever voters are given). */
bool ctl_runtime_dir_joined(const char *dir);
/* Opens an observer runtime (see "Observers" above) for node_id, which must not be one of the
 * voters; host:port is this node's cluster address (sent with each fetch, so the leader can
 * answer). send_raft is not used. Returns 0 and *out (release with ctl_runtime_close) or
 * -ERR_INVALID. */
int ctl_runtime_open_observer(int32_t node_id, const struct ctl_voter *voters, size_t n_voters,
                              const char *host, int port, const struct ctl_runtime_options *opt,
                              int64_t now_ms, struct ctl_runtime **out);
/* Answers every pending command with KERR_NOT_CONTROLLER (forwarded requests of other nodes:
 * through send_frame, so close the runtime before the transport), closes the replica and the
 * log. */
void ctl_runtime_close(struct ctl_runtime *rt);

/* Inputs. */
void ctl_runtime_tick(struct ctl_runtime *rt, int64_t now_ms);
/* A Raft message of the controller group (the transport's on_msg). Returns replica_step's. */
int ctl_runtime_step(struct ctl_runtime *rt, const struct raft_msg *m);
/* A controller frame from node from (the transport's controller callback). Malformed bodies
 * are answered with KERR_INVALID_REQUEST (requests) or dropped (responses, metadata fetches
 * and their answers; logged). */
void ctl_runtime_deliver(struct ctl_runtime *rt, int32_t from, uint8_t type, uint64_t request_id,
                         const uint8_t *body, size_t len);

/* Runs a command (see above). req is used during the call only; one that is not
 * ctl_request_well_formed is answered KERR_INVALID_REQUEST (as is one whose encoding exceeds
 * RPC_CONTROLLER_BODY_MAX when it must be forwarded). done is called exactly once, possibly
 * before this returns (validation errors, no leader). */
void ctl_runtime_submit(struct ctl_runtime *rt, const struct ctl_request *req, ctl_done_fn done,
                        void *data);

/* The quorum's voters as this node knows them (a voter: its configuration's, the new side while
 * joint; an observer: those it polls) into ids[0..cap); returns how many. */
size_t ctl_runtime_voters(const struct ctl_runtime *rt, int32_t *ids, size_t cap);

/* Queries. */
const struct ctl_image *ctl_runtime_image(const struct ctl_runtime *rt); /* committed */
int32_t ctl_runtime_leader(const struct ctl_runtime *rt); /* RAFT_NONE if unknown */
int64_t ctl_runtime_term(const struct ctl_runtime *rt);
enum raft_role ctl_runtime_role(const struct ctl_runtime *rt);
int32_t ctl_runtime_node(const struct ctl_runtime *rt);
int64_t ctl_runtime_applied(const struct ctl_runtime *rt); /* last index applied to the image */
size_t ctl_runtime_pending(const struct ctl_runtime *rt);  /* commands not answered yet */
uint64_t ctl_runtime_skipped(const struct ctl_runtime *rt); /* batches/records skipped */
struct replica *ctl_runtime_replica(const struct ctl_runtime *rt); /* NULL for an observer */
bool ctl_runtime_is_observer(const struct ctl_runtime *rt);
/* A leader is known and the image holds everything it reported committed (a voter: its
 * replica's commit index; an observer: the last fetch answer's). */
bool ctl_runtime_caught_up(const struct ctl_runtime *rt);

#endif
