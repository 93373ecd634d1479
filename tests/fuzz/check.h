/* SPDX-License-Identifier: MIT */
#ifndef GDX_TESTS_FUZZ_CHECK_H
#define GDX_TESTS_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* Stops with a message libFuzzer keeps next to the crashing input. */
#define FUZZ_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

#endif
