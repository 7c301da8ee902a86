/* The schema registry's listener (schema.registry.listener, default 127.0.0.1:8081): HTTP in
 * front of broker/schemas.h, speaking Confluent Schema Registry's REST API (registry/rest.h
 * has the routes and errors).
 *
 * Requests are HTTP/1.1 as server/httpd.h takes them (one per connection, bodies of at most
 * SCHEMAS_BODY_MAX bytes framed by Content-Length; a larger one gets 413). The path's segments
 * and the query's parameters are percent-decoded here; a path of more than REG_SEGS_MAX
 * segments or an undecodable one gets 404, a query of more than REG_PARAMS_MAX parameters 400.
 * A body must be JSON: Content-Type application/vnd.schemaregistry.v1+json,
 * application/vnd.schemaregistry+json, application/json or application/octet-stream (what
 * Confluent's clients send), or none; another gets 415. Answers that wait for a commit are
 * deferred (httpd_defer) and sent when the broker's service answers, at the latest after
 * the listener's timeout (then 500, 50002).
 *
 * Runs on the broker's reactor thread. */
#ifndef SP_SERVER_REGISTRY_HTTP_H
#define SP_SERVER_REGISTRY_HTTP_H

#include <stdbool.h>

struct reactor;
struct broker;
struct listener_tls;
struct registry_http;

/* Binds host:port (0: any free port); HTTPS with tls (borrowed, must outlive the listener;
 * NULL: plain HTTP); with basic, every request needs a SCRAM user's HTTP Basic credentials
 * (broker_registry_authenticate), else 401 (error_code 401, and WWW-Authenticate). With the
 * broker's authorizer on, each request is authorized as registry/rest_authz.h says, for the
 * Basic user (User:NAME; without basic User:ANONYMOUS) from the client's address. Returns 0
 * or -errno. */
int registry_http_start(struct reactor *r, const char *host, int port,
                        const struct listener_tls *tls, bool basic, struct broker *b,
                        struct registry_http **out);
int registry_http_port(const struct registry_http *h);
/* Closes the listener and its connections (NULL is fine). */
void registry_http_stop(struct registry_http *h);

#endif
