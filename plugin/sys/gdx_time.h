/* SPDX-License-Identifier: MIT */
/* The plugin's clock: deadlines and intervals, not benchmarks (gdx_stamp.h). */
#ifndef GDX_TIME_H
#define GDX_TIME_H

#include <stdint.h>
#include <time.h>

/* Monotonic milliseconds, from the vDSO (no system call). */
static inline uint64_t gdx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif
