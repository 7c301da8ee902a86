/* AddRaftVoter (key 80) v0 and RemoveRaftVoter (key 81) v0, flexible from v0
 * (AddRaftVoterRequest/Response.json, RemoveRaftVoterRequest/Response.json; KIP-853). The
 * listeners of AddRaftVoter are read and checked but not kept: a StreamPulse voter is dialed at
 * the cluster address its broker registration gave. */
#include "kafka/msg_int.h"

int kmsg_decode_raft_voter(struct kreader *r, bool add, int16_t v, struct raft_voter_req *out)
{
    if (!kmsg_version_ok(add ? KAPI_ADD_RAFT_VOTER : KAPI_REMOVE_RAFT_VOTER, v))
        return -ERR_UNSUPPORTED;
    *out = (struct raft_voter_req){0};
    out->cluster_id = kr_str(r, true); /* nullable */
    if (add)
        out->timeout_ms = kr_i32(r);
    out->voter_id = kr_i32(r);
    out->voter_directory_id = kr_uuid(r);
    if (add) {
        size_t min = 2 * kmsg_min_str(true) + 2 + kmsg_min_tags(true);
        int32_t n = kmsg_rd_array(r, true, min);
        out->n_listeners = n;
        for (int32_t i = 0; i < n && kr_ok(r); i++) {
            (void)kmsg_rd_str(r, true); /* name */
            (void)kmsg_rd_str(r, true); /* host */
            (void)kr_i16(r);            /* port: uint16 */
            kr_tags(r, true);
        }
    }
    kr_tags(r, true);
    return kmsg_rd_done(r);
}

void kmsg_encode_raft_voter(struct kwriter *w, bool add, int16_t v,
                            const struct raft_voter_resp *resp)
{
    CHECK(kmsg_version_ok(add ? KAPI_ADD_RAFT_VOTER : KAPI_REMOVE_RAFT_VOTER, v));
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, true, resp->error_message);
    kw_tags(w, true);
}
