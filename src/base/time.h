/* Clocks. Monotonic time for timeouts and latency, wall time (ms since the epoch) for record
 * timestamps and retention. */
#ifndef SP_BASE_TIME_H
#define SP_BASE_TIME_H

#include <stdint.h>

int64_t time_mono_ns(void);
int64_t time_mono_ms(void);
int64_t time_wall_ms(void);

#endif
