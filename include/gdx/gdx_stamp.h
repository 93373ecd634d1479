/* SPDX-License-Identifier: MIT */
/*
 * Time for the benchmarks' timed loops (gdx-bench, the latency floor). Round
 * trips are stamped with the cycle counter on x86, as perftest stamps its
 * iterations: clock_gettime can be a system call (in a VM whose clock source
 * is not the TSC, ~1 us), and it would sit inside every timed iteration.
 * Stamps become seconds by the wall time of the whole run. Elsewhere the
 * stamps are CLOCK_MONOTONIC nanoseconds. The plugin times its signaled
 * sends with them too (gdx_live_layout.h), its file saying their rate.
 */
#ifndef GDX_STAMP_H
#define GDX_STAMP_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static inline double gdx_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline uint64_t gdx_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return (uint64_t)(gdx_wall_s() * 1e9);
#endif
}

#endif
