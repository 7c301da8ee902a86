/* Authorization of client requests: the broker's side of Kafka's StandardAuthorizer.
 *
 * With authorizer.class.name set (broker_config.authorizer_enabled) every handler asks
 * authz_allows before it does what a request asks, with the resource and the operation Kafka
 * checks for that API, and answers Kafka's error (TOPIC_, GROUP_, CLUSTER_AUTHORIZATION_FAILED,
 * ...) when it is denied. Without it every check allows and costs one branch.
 *
 * The decision is security/acl.h's: the principal is the session's (broker/sasl.h
 * session_principal: "User:NAME" after SASL, the certificate's after mTLS, else
 * "User:ANONYMOUS"), the host the client's address as inet_ntop writes it ("127.0.0.1", "::1";
 * an IPv4-mapped IPv6 address as IPv4), and the bindings those of the committed metadata image
 * (ACL records), so every node decides alike once it has applied the same records. A binding's
 * host is compared in the same canonical form, so Kafka's "0:0:0:0:0:0:0:1" matches "::1".
 *
 * Denials are counted in streampulse_authorizations_total{result="denied"} and logged (at most
 * one line a second, with the count of lines left out); checks a handler makes only to filter
 * (Metadata's topic list, ListGroups) are counted but not logged. The schema registry's
 * requests are decided here too (authz_allows_principal: its resource types REGISTRY and
 * SUBJECT, the HTTP Basic user's principal), counted and logged the same way
 * (api=SchemaRegistry). */
#ifndef SP_BROKER_AUTHZ_H
#define SP_BROKER_AUTHZ_H

#include <stdbool.h>
#include <stdint.h>

#include "kafka/wire.h"
#include "security/acl.h"

struct broker;
struct request;
struct session;

/* Parses super.users and builds the (empty) store when the authorizer is on. Returns 0 or -1
 * with err set. */
int authz_start(struct broker *b, char *err, size_t errcap);
void authz_stop(struct broker *b);
/* The committed metadata image changed: the store is rebuilt before the next check. */
void authz_image_changed(struct broker *b);

/* Whether authorizer.class.name is set. */
bool authz_on(const struct broker *b);

/* Whether the request's principal may do op on the resource of type t named name (NUL-free
 * bytes; a name with a NUL byte or over ACL_NAME_MAX is denied). Always true with the
 * authorizer off. A denial is logged; authz_allows_quiet only counts it. */
bool authz_allows(struct request *req, enum acl_operation op, enum acl_resource_type t,
                  struct kstr name);
bool authz_allows_quiet(struct request *req, enum acl_operation op, enum acl_resource_type t,
                        struct kstr name);
/* The cluster resource ("kafka-cluster"). */
bool authz_allows_cluster(struct request *req, enum acl_operation op);
/* Whether the principal may do op on at least one topic (Kafka's authorizeByResourceType, used
 * by InitProducerId without IDEMPOTENT_WRITE on the cluster): some ALLOW binding for op (or
 * ALL) on topics applies to it and the topics it names are not all denied to it. */
bool authz_allows_some_topic(struct request *req, enum acl_operation op);

/* As authz_allows, for a principal and host that are not a Kafka session's: the schema
 * registry's listener (server/registry_http.c) with its HTTP Basic user; host as inet_ntop
 * writes the client's address (IPv4-mapped IPv6 as IPv4). name is NUL-terminated; one over
 * ACL_NAME_MAX bytes is allowed to super users only. Always true with the authorizer off. */
bool authz_allows_principal(struct broker *b, const char *principal, const char *host,
                            enum acl_operation op, enum acl_resource_type t, const char *name,
                            bool audit);

/* Counters for /metrics. */
void authz_counts(const struct broker *b, uint64_t *allowed, uint64_t *denied);

/* A ctl_rec_acl's fields as an acl_binding, and back: the CreateAcls, DeleteAcls and image
 * forms of one binding. */
struct ctl_rec_acl;
void authz_binding_from_rec(struct acl_binding *out, const struct ctl_rec_acl *r);
void authz_rec_from_binding(struct ctl_rec_acl *out, const struct acl_binding *b);

#endif
