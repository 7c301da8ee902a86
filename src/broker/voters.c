/* AddRaftVoter and RemoveRaftVoter (KIP-853): `streampulse cluster voters add|remove NODE`.
 *
 * Each request becomes one VOTERS controller command (ctl_cmd_voters), which the controller
 * answers once the metadata quorum's committed voters are the ones asked for
 * (controller/runtime.h "Voter changes"), or with REQUEST_TIMED_OUT while the change still
 * runs: asking again waits for the same end. A broker answers for any node, forwarding to the
 * controller leader as every command does.
 *
 * State: one struct voter_op per request in flight, freed when answered. */
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "controller/request.h"
#include "kafka/errors.h"

struct voter_op {
    bool add;
    int32_t node;
    struct conn_slot *slot;
    struct kreq_header hdr;
};

static const char *error_text(bool add, int16_t ec)
{
    switch (ec) {
    case KERR_NONE:
        return NULL;
    case KERR_BROKER_NOT_AVAILABLE:
        return "No broker with this node id is registered: start it with "
               "controller.quorum.bootstrap.servers first.";
    case KERR_DUPLICATE_VOTER:
        return "The node is a voter already.";
    case KERR_VOTER_NOT_FOUND:
        return "The node is not a voter.";
    case KERR_INVALID_REQUEST:
        return add ? "The quorum cannot take this voter: it has 7 voters already, or its voters "
                     "are fixed by controller.quorum.voters."
                   : "The quorum's last voter cannot be removed, or its voters are fixed by "
                     "controller.quorum.voters.";
    case KERR_NOT_CONTROLLER:
        return "No controller available now; retry.";
    case KERR_REQUEST_TIMED_OUT:
        return "The voter change is still running; ask again to wait for it.";
    case KERR_INCONSISTENT_CLUSTER_ID:
        return "The request names another cluster.";
    default:
        return kafka_error_name(ec);
    }
}

static void answer(struct voter_op *op, int16_t ec)
{
    struct raft_voter_resp resp = {.error_code = ec,
                                   .error_message = kstr_c(error_text(op->add, ec))};
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_raft_voter(&r.w, op->add, op->hdr.api_version, &resp);
    response_send(&r, op->slot);
    mem_free(op);
}

static void voter_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct voter_op *op = data;
    (void)rt;
    log_info(a->error == KERR_NONE ? "voter_change_done" : "voter_change_refused",
             "op=%s node=%d error=%s", op->add ? "add" : "remove", op->node,
             kafka_error_name(a->error));
    answer(op, a->error);
}

static int handle(struct request *req, bool add)
{
    struct raft_voter_req vr;
    if (kmsg_decode_raft_voter(&req->body, add, req->hdr.api_version, &vr) != 0)
        return -ERR_CORRUPT;
    struct voter_op *op = mem_calloc(1, sizeof(*op));
    op->add = add;
    op->node = vr.voter_id;
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    const char *id = cluster_id(req->b->cluster);
    if (!authz_allows_cluster(req, ACL_OP_ALTER)) {
        answer(op, KERR_CLUSTER_AUTHORIZATION_FAILED);
        return 0;
    }
    if (vr.cluster_id.len >= 0 && !kstr_eq(vr.cluster_id, id)) {
        answer(op, KERR_INCONSISTENT_CLUSTER_ID);
        return 0;
    }
    if (vr.voter_id < 0) {
        answer(op, add ? KERR_BROKER_NOT_AVAILABLE : KERR_VOTER_NOT_FOUND);
        return 0;
    }
    struct ctl_request cr = {.type = CTL_REQ_VOTERS, .voter_add = add, .voter = vr.voter_id};
    cluster_submit(req->b->cluster, &cr, voter_done, op);
    return 0;
}

int handle_add_raft_voter(struct request *req)
{
    return handle(req, true);
}

int handle_remove_raft_voter(struct request *req)
{
    return handle(req, false);
}
