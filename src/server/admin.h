/* The admin listener (admin.listener, default 127.0.0.1:9644): HTTP endpoints for operators.
 *
 *   GET /metrics     Prometheus text format: the broker's metrics (broker/metrics.h) plus
 *                    process and admin-listener metrics
 *   GET /healthz     200 "ok" while serving; 503 with one reason per line otherwise
 *   GET /v1/topics   JSON: topics, partitions (offsets, HW, size), config overrides
 *   GET /v1/groups   JSON: groups, members and assignments, committed offsets and lag
 *   GET /v1/cluster  JSON: brokers, controller, Raft replicas
 *   GET /v1/users    JSON: SCRAM users, their mechanisms, iterations and salts (never keys)
 *   POST /v1/users   sets one credential (JSON body, Content-Type: application/json): 202
 *   DELETE /v1/users/NAME[?mechanism=M]   deletes NAME's credentials (NAME percent-encoded):
 *                    202, or 404 for a user without one
 *   GET /            a plain-text list of the above
 * broker/admin_users.h has the users' JSON shapes and rules; a change is answered once
 * submitted to the controller (202) and shows in GET /v1/users once committed. Their errors
 * are JSON ({"error": "..."}): 400 for a bad body, name or mechanism, 415 for a POST that is
 * not application/json, 503 while the broker stops. Unknown paths get 404; a method a path
 * does not take 405 with Allow; bad requests 4xx (server/httpd.h for the limits and the
 * body's framing). Every response closes the connection.
 *
 * Without HTTPS nothing is asked, so every local process may change users: on loopback that is
 * the trust the broker's files already have. A browser is kept out: a POST or DELETE must name
 * the listener by an IP address or localhost in Host (else 403: DNS rebinding), and a POST
 * must be application/json (which a cross-origin page cannot send without a CORS preflight,
 * never granted).
 *
 * With HTTPS (admin.listener.ssl.keystore.location: a tls hook) every path but /healthz needs
 * `Authorization: Basic base64(user:password)` of a SCRAM user (either mechanism) whose
 * principal User:NAME is in super.users, checked by broker_admin_authenticate
 * (broker/admin_auth.h). No, malformed or wrong credentials get 401 with
 * `WWW-Authenticate: Basic realm="streampulse"` (a wrong password's answer is held back, longer
 * after each failure from that address); a valid user who is not a super user gets 403. The
 * check runs before the path is looked at, so an unknown path is 401 too. Without HTTPS (a
 * loopback address only: server/config.c) nothing is asked, as before.
 *
 * Runs on the broker's reactor thread: a scrape costs O(partitions + groups + offsets) there,
 * once per request. */
#ifndef SP_SERVER_ADMIN_H
#define SP_SERVER_ADMIN_H

#include <stdint.h>

#include "net/reactor.h"

struct admin;
struct broker;

struct listener_tls;

/* Serves the endpoints for b on host:port (port 0: any free port); with tls (borrowed; it
 * must outlive the admin listener) over HTTPS with authentication, else plain HTTP without.
 * start_wall_ms is when the process started (process_start_time_seconds). b must outlive the
 * admin listener. Returns 0 or -errno. */
int admin_start(struct reactor *r, const char *host, int port, const struct listener_tls *tls,
                struct broker *b, int64_t start_wall_ms, struct admin **out);
int admin_port(const struct admin *a);
/* Closes the listener and its connections. NULL is fine. */
void admin_stop(struct admin *a);

#endif
