/* Client quotas (broker/quotas.c): the APIs DescribeClientQuotas and AlterClientQuotas, and the
 * byte rates they set, enforced on Produce and Fetch. */
#ifndef SP_BROKER_QUOTAS_H
#define SP_BROKER_QUOTAS_H

#include <stdint.h>

#include "kafka/wire.h"

struct broker;
struct request;
struct session;

enum quota_dir {
    QUOTA_PRODUCE = 0, /* producer_byte_rate */
    QUOTA_FETCH = 1,   /* consumer_byte_rate */
};

/* Counts bytes moved by req's client in dir and returns how long its response is to be held
 * (throttle_time_ms; 0 when no quota applies or the rate is within it). */
int32_t quota_account(struct request *req, enum quota_dir dir, uint64_t bytes);
/* The same for a request answered later (a parked Fetch): its session and client id. */
int32_t quota_account_session(struct broker *b, struct session *s, struct kstr client_id,
                              enum quota_dir dir, uint64_t bytes);

/* Responses held so far, per direction (metrics). */
void quota_counts(const struct broker *b, uint64_t throttled[2]);

/* Frees the rate table (broker stop). */
void quota_stop(struct broker *b);

int handle_describe_client_quotas(struct request *req);
int handle_alter_client_quotas(struct request *req);

#endif
