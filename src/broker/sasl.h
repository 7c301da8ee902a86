/* SASL authentication of client connections (broker/sasl.c). The dispatcher (broker.c) asks
 * sasl_allows before it runs a request, hands raw-token frames of the legacy flow to
 * sasl_raw_token, and opens and closes each connection's SASL state with its session. */
#ifndef SP_BROKER_SASL_H
#define SP_BROKER_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/sasl_mech.h"

struct session;

struct broker;

/* Kafka's name of a BROKER_SASL_* bit ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), NULL for
 * any other value; and the bit named s[0, len) exactly, 0 for none. */
const char *sasl_mech_name(unsigned mechanism);
unsigned sasl_mech_parse(const char *s, size_t len);

/* The broker stops (after its listener closed): frees the answers still held back for failed
 * exchanges. */
void sasl_stop(struct broker *b);
/* A connection opened: on a SASL listener it must authenticate first (session->sasl set). */
void sasl_session_open(struct session *s);
/* The connection closed: frees its SASL state (wiping the mechanism's secrets). */
void sasl_session_close(struct session *s);
/* Whether the connection may run a request of api_key now: always off SASL listeners; before
 * authentication only ApiVersions, SaslHandshake and SaslAuthenticate (answered
 * ILLEGAL_SASL_STATE before a handshake); after it every
 * API, until the session ends (connections.max.reauth.ms), when only the SASL APIs and
 * ApiVersions are. */
bool sasl_allows(const struct session *s, int16_t api_key);
/* The next frame is a raw SASL token (after SaslHandshake v0), not a Kafka request. */
bool sasl_raw_pending(const struct session *s);
/* Takes one raw token and answers it with a raw size-prefixed token; a failure closes the
 * connection after the failure delay. */
void sasl_raw_token(struct session *s, const uint8_t *frame, size_t len);
/* The exchange failed: nothing more is served on this connection. */
bool sasl_failed(const struct session *s);
/* Counts a failed authentication from addr (an address without its port; the admin
 * listener's failures count here too) and returns how long to hold its answer:
 * connection.failed.authentication.delay.ms times the failures from addr in the last minute
 * (at most 32). The table keeps the 256 most recent addresses. */
int64_t sasl_failure_delay(const struct broker *b, const char *addr);
/* The connection's principal: "User:NAME" once SASL authenticated it, else its TLS principal
 * (net/conn.h: the certificate's, or "User:ANONYMOUS"). */
const char *session_principal(const struct session *s);

#endif
