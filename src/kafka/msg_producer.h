/* Producer-id messages: InitProducerId (key 22), versions 0-5; v2+ flexible
 * (InitProducerIdRequest/Response.json). Same conventions as kafka/msg.h: decoders fill *out
 * from the body after the request header (strings are slices into the request buffer) and
 * return 0, -ERR_CORRUPT or -ERR_UNSUPPORTED; encoders append the response body of a version
 * in range (CHECKed). */
#ifndef SP_KAFKA_MSG_PRODUCER_H
#define SP_KAFKA_MSG_PRODUCER_H

#include <stdint.h>

#include "base/arena.h"
#include "kafka/wire.h"

/* ---- InitProducerId (22) ---- */

struct init_producer_id_req {
    struct kstr transactional_id; /* nullable: null for idempotent-only producers */
    int32_t transaction_timeout_ms;
    int64_t producer_id;    /* v3+ (KIP-360); -1 before or when not known */
    int16_t producer_epoch; /* v3+; -1 before or when not known */
};

struct init_producer_id_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    int64_t producer_id;    /* -1 on error */
    int16_t producer_epoch; /* -1 on error */
};

int kmsg_decode_init_producer_id(struct kreader *r, int16_t v, struct arena *a,
                                 struct init_producer_id_req *out);
void kmsg_encode_init_producer_id(struct kwriter *w, int16_t v,
                                  const struct init_producer_id_resp *resp);

#endif
