/* Logging: one line per event on stderr, as key=value pairs:
 *
 *   ts=2026-11-29T20:00:00.123Z level=info event=broker_started version=0.1.0 listener=...
 *
 * `event` is a snake_case name; `fmt` gives the remaining "key=value ..." pairs. Values that may
 * contain spaces or quotes must be passed through log_quote(). Thread-safe (one write(2) a line).
 */
#ifndef SP_BASE_LOG_H
#define SP_BASE_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level lvl);
bool log_enabled(enum log_level lvl);
/* Parses "debug", "info", "warn", "error"; returns -1 if unknown. */
int log_level_parse(const char *s);

void log_emit(enum log_level lvl, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Quote s for a log value ("..." with \" and \\ escaped, control bytes as \xNN) into buf.
 * Returns buf. Output is cut (ending in ...") if it does not fit. */
const char *log_quote(char *buf, size_t cap, const char *s, size_t len);

#define log_debug(event, ...)                                                                      \
    do {                                                                                           \
        if (log_enabled(LOG_DEBUG))                                                                \
            log_emit(LOG_DEBUG, event, __VA_ARGS__);                                               \
    } while (0)
#define log_info(event, ...) log_emit(LOG_INFO, event, __VA_ARGS__)
#define log_warn(event, ...) log_emit(LOG_WARN, event, __VA_ARGS__)
#define log_error(event, ...) log_emit(LOG_ERROR, event, __VA_ARGS__)

#endif
