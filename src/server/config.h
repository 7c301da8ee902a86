/* Broker configuration from defaults, a Java-properties file and --set overrides.
 *
 * Keys are Kafka's names (DESIGN.md §11). Every key has a default, so no file is needed. An
 * unknown key or a bad value is an error that names the key (and the file and line), and the
 * broker refuses to start. Precedence: defaults < file < --set (later --set wins). */
#ifndef SP_SERVER_CONFIG_H
#define SP_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "broker/config.h"

/* Fills *cfg. file may be NULL; sets are "key=value" strings. Returns 0, or -1 with a message
 * in err. On success, release with config_free(). */
int config_load(struct broker_config *cfg, const char *file, char *const *sets, int nsets,
                char *err, size_t errcap);
void config_free(struct broker_config *cfg);

/* Prints every key with its default and meaning (for `serve --help` and the README). */
void config_print_keys(void);
/* Writes docs/CONFIG.md: every broker key with its default and meaning, and the topic
 * settings, as markdown (streampulse serve --config-reference). */
void config_write_reference(FILE *out);

/* Parses "PLAINTEXT://host:port" (host may be empty, a name, an IPv4 or [IPv6]). Returns 0 or
 * -1 with err. */
int config_parse_listener(const char *s, char *host, size_t hostcap, int *port, char *err,
                          size_t errcap);

/* Whether host (an admin.listener host) is a loopback address: 127.0.0.0/8, ::1 (also as
 * ::ffff:127.x.y.z) or the name "localhost". Everything else, "" (every interface) and other
 * names included, is not. */
bool config_host_is_loopback(const char *host);

#endif
