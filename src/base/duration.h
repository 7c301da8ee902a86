/* Durations written for people: "250ms", "1.5s", "5m", "2h", "1d".
 *
 * Used by command-line options (worker --timeout, --grace, --backoff). Pure: no clock, no
 * allocation.
 */
#ifndef SP_BASE_DURATION_H
#define SP_BASE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The largest duration accepted: 365 days, in milliseconds. */
#define DURATION_MAX_MS (365LL * 24 * 3600 * 1000)

/* Parses the len bytes at s as a decimal number (digits, optionally '.' and more digits)
 * followed by a unit: ms, s, m, h or d. A number without a unit takes bare_unit ("s", "ms", ...)
 * when bare_unit is not NULL and is an error otherwise. The result is rounded to whole
 * milliseconds. Returns 0 with *out_ms in [0, DURATION_MAX_MS], or -1 if the text is not such a
 * duration or is out of range. */
int duration_parse_ms(const char *s, size_t len, const char *bare_unit, int64_t *out_ms);

/* Writes ms as the shortest exact form among "1d", "2h", "5m", "30s", "1.5s", "250ms" into buf
 * (always NUL-terminated). Returns buf. */
const char *duration_format(int64_t ms, char *buf, size_t cap);

#endif
