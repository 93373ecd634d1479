/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for gdx-doctor log, the NCCL log parser
 * (gdx_doctor_log.c): a job's log may be written by anyone's process.
 *
 *   make fuzz && build/tests/fuzz/log -max_total_time=60 -timeout=10 \
 *           NEW_DIR tests/fuzz/corpus/log
 *   build/tests/fuzz/log -max_total_time=3600 -timeout=10 -jobs=2 \
 *           NEW_DIR tests/fuzz/corpus/log
 *
 * The input is the log. What must hold: an exit status of log's (0, 1, 2
 * when a process of it says the plugin did not start, 7, 8), and a report that holds no control
 * byte but the newline, no byte that is not UTF-8 and nothing that reorders a line, whatever the
 * log holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/common/gdx_escape.h"
#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char none[1];
	char *out = NULL;
	size_t len = 0;
	FILE *in = fmemopen(size ? (void *)data : (void *)none, size ? size : 1, "r");
	FILE *o = open_memstream(&out, &len);
	int ret;

	FUZZ_CHECK(in && o);
	if (!size)
		FUZZ_CHECK(fgetc(in) == 0); /* fmemopen takes no empty buffer: one NUL */
	ret = doctor_log_stream(in, o);
	FUZZ_CHECK(fclose(in) == 0 && fclose(o) == 0);
	FUZZ_CHECK(ret == DOCTOR_OK || ret == DOCTOR_DEGRADED || ret == DOCTOR_BROKEN ||
		   ret == DOCTOR_LOG_NO_PLUGIN || ret == DOCTOR_LOG_NO_DATA);
	FUZZ_CHECK(len > 0 && out[len - 1] == '\n' && !memchr(out, 0, len));
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(out + i, len - i, &cp);

		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f));
		FUZZ_CHECK(cp < 0x80 || cp > 0x9f);
		FUZZ_CHECK(cp != 0x061c && cp != 0x200e && cp != 0x200f);
		FUZZ_CHECK(!(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069));
		i += n;
	}
	free(out);
	return 0;
}
