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
 *
 * And the input's first bytes (up to a device name's 64) as a peer's words
 * in the plugin's lines that show them (issue 47): its device name in the
 * peer-gone, stall, async-event, completion, every-rail and taken-out
 * WARNs, its note and its refusal in a restore's INFO, each quoted as the
 * plugin quotes them, after a genuine log's lines. The report and the exit
 * status must be those of the same log with the words "x": a peer's words
 * add no byte count (none saturates a sum the summary cannot undo) and add
 * or hide no rail event, whatever they say.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/common/gdx_escape.h"
#include "sys/gdx_log.h"
#include "check.h"

/* A genuine log: a GPUDirect NIC's verdict and bytes, a rail taken out
 * and back; then the lines that hold the peer's words (PEER_WORDS, quoted). */
#define PEER_WORDS "@WORDS@"
static const char base_log[] =
	"h:1:1 [0] NCCL INFO NET/GDX plugin: mlx5_0: GPUDirect RDMA via nvidia_peermem\n"
	"h:1:1 [0] NCCL INFO NET/GDX plugin: mlx5_0: receive comm with 10.0.0.6:1 closed: 1000 "
	"bytes GPU-direct, 0 bytes through host memory\n"
	"h:1:1 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: send comm with 10.0.0.6:2 closed: 0 bytes "
	"GPU-direct, 5 bytes through host memory\n"
	"h:1:1 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1) back in the connection with "
	"10.0.0.6:2 at 11:13:20.333 after 2.5 s down (1 attempt(s)); traffic returns to it\n";
static const char *const peer_lines[] = {
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: mlx5_0: peer 10.0.0.6:1 (" PEER_WORDS
	") closed its "
	"connection with requests pending: the peer process exited or closed its comm\n",
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: mlx5_0: QP 0x11 on mlx5_0 port 1 (rail 0) to "
	"10.0.0.6:1 (" PEER_WORDS ") has had no completion for 600 ms with 1 work request(s) out\n",
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: mlx5_0: async event QP fatal on the comm with "
	"peer 10.0.0.6:1 (" PEER_WORDS "): the QP is in error\n",
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: mlx5_0 rail 0 (mlx5_0), peer 10.0.0.6:1 (" PEER_WORDS
	"): "
	"completion failed: transport retry counter exceeded\n",
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: rxe1+rxe3: every rail of the connection with "
	"10.0.0.6:2 (" PEER_WORDS ") is down: rail 0 (rxe1): down\n",
	"h:1:1 [0] f.c:1 NCCL WARN NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1 port 1, peer " PEER_WORDS
	") taken "
	"out of the connection with 10.0.0.6:2 at 11:13:18.209: rxe1 port 1 is down; 1 rail(s) "
	"carry its traffic until it is back\n",
	"h:1:1 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1): restore attempt 1 failed: "
	"the receiver refused: " PEER_WORDS "; next in 2 ms\n",
	"h:1:1 [0] NCCL INFO NET/GDX plugin: rxe1+rxe3: rail 0 (rxe1): restore attempt 2 failed: "
	"the receiver saw: " PEER_WORDS "; next in 4 ms\n",
};

/* gdx-doctor log's report of base_log and peer_lines with words quoted in
 * them: its exit status, the report in *out (the caller frees it). */
static int report_with_peer_words(const char *words, char **out, size_t *len)
{
	char quoted[GDX_LOG_QUOTE_MAX], *log = NULL;
	size_t log_len = 0;
	FILE *in = open_memstream(&log, &log_len), *o;
	int ret;

	FUZZ_CHECK(in != NULL);
	gdx_log_quote(quoted, sizeof(quoted), words);
	fputs(base_log, in);
	for (size_t i = 0; i < sizeof(peer_lines) / sizeof(peer_lines[0]); i++) {
		const char *at = strstr(peer_lines[i], PEER_WORDS);

		fwrite(peer_lines[i], 1, (size_t)(at - peer_lines[i]), in);
		fputs(quoted, in);
		fputs(at + strlen(PEER_WORDS), in);
	}
	FUZZ_CHECK(fclose(in) == 0);
	in = fmemopen(log, log_len, "r");
	o = open_memstream(out, len);
	FUZZ_CHECK(in && o);
	ret = doctor_log_stream(in, o);
	FUZZ_CHECK(fclose(in) == 0 && fclose(o) == 0);
	free(log);
	return ret;
}

/* The invariant of issue 47 on the input's first bytes as the words. */
static void check_peer_words(const uint8_t *data, size_t size)
{
	char words[65], *got, *want;
	size_t got_len, want_len, n = size < 64 ? size : 64;
	int got_ret, want_ret;

	memcpy(words, data, n);
	words[n] = '\0'; /* a name ends at its NUL, as the peer's does */
	got_ret = report_with_peer_words(words, &got, &got_len);
	want_ret = report_with_peer_words("x", &want, &want_len);
	FUZZ_CHECK(got_ret == want_ret);
	FUZZ_CHECK(got_len == want_len && !memcmp(got, want, got_len));
	free(got);
	free(want);
}

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
	check_peer_words(data, size);
	return 0;
}
