/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the RMA ring's listen socket and the door it takes
 * connections through (rma/gdx_rma_boot.h, sys/gdx_door.h): up to four
 * connections, each sending the fuzzer's bytes as its hello, in pieces of
 * every size, some closing after them, the previous side of rank 1 of 3
 * stepped after every piece on a test clock that also runs past the hello
 * deadline. No RDMA device is needed.
 *
 * What must hold: only a connection whose first bytes are the ring's hello
 * for rank 0 with this rank's nonce is ever taken, and it alone gets an
 * answer (the ring's hello back, for rank 1); two such connections refuse
 * the ring, answering neither; no other connection reads a byte; the door
 * holds no more than its bounds; nothing is left open after each input.
 *
 *   make fuzz && build/tests/fuzz/ring -max_total_time=60 -print_funcs=0 \
 *           NEW_DIR tests/fuzz/corpus/ring
 *
 * Input: byte 0 flags (FUZZ_*; bits 4-5: connections - 1), byte 1 the size
 * of the pieces (0: all at once), then the connections' bytes, cut into
 * equal parts.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "rma/gdx_rma_boot.h"
#include "sys/gdx_door.h"
#include "sys/gdx_log.h"
#include "sys/gdx_sock.h"
#include "check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAGIC 0x01 /* put the ring's magic and version in each hello */
#define FUZZ_WHO   0x02 /* and rank 0 of 3 */
#define FUZZ_NONCE 0x04 /* and this rank's nonce */
#define FUZZ_CLOSE 0x08 /* each connection closes once it has sent its bytes */

#define FUZZ_CONNS	4
#define FUZZ_RANK	1
#define FUZZ_NRANKS	3
#define FUZZ_RING_NONCE 0x0fedcba987654321ULL
#define FUZZ_HELLO_MS	50

static int fuzz_lfd;
static struct sockaddr_in fuzz_addr;
static uint64_t fuzz_now;

__attribute__((format(printf, 5, 6))) static void fuzz_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	fuzz_log_format(msg, sizeof(msg), "FUZZ_RING_VERBOSE", level == NCCL_LOG_WARN, file, line,
			fmt, ap);
	va_end(ap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct gdx_sockaddr a = {.len = sizeof(struct sockaddr_in)}, bound;

	(void)argc;
	(void)argv;
	gdx_log_set(fuzz_logger);
	a.u.in.sin_family = AF_INET;
	a.u.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FUZZ_CHECK(gdx_sock_listen(&a, &fuzz_lfd, &bound) == 0);
	fuzz_addr = bound.u.in;
	return 0;
}

static int fuzz_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	FUZZ_CHECK(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static size_t fuzz_unread(int fd)
{
	int n = 0;

	FUZZ_CHECK(ioctl(fd, FIONREAD, &n) == 0);
	return (size_t)n;
}

/* Whether these bytes begin with the hello the ring takes. */
static bool fuzz_hello_good(const uint8_t *b, size_t len)
{
	struct gdx_rma_hello h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, b, sizeof(h));
	return le64toh(h.magic) == GDX_RMA_MAGIC && le32toh(h.version) == GDX_RMA_VERSION &&
	       le32toh(h.rank) == FUZZ_RANK - 1 && le32toh(h.nranks) == FUZZ_NRANKS &&
	       le64toh(h.nonce) == FUZZ_RING_NONCE;
}

/* The connection's bytes, with the fields the flags ask for put in. */
static void fuzz_fill(uint8_t flags, uint8_t *b, size_t len)
{
	struct gdx_rma_hello h;

	if (len < sizeof(h))
		return;
	memcpy(&h, b, sizeof(h));
	if (flags & FUZZ_MAGIC) {
		h.magic = htole64(GDX_RMA_MAGIC);
		h.version = htole32(GDX_RMA_VERSION);
	}
	if (flags & FUZZ_WHO) {
		h.rank = htole32(FUZZ_RANK - 1);
		h.nranks = htole32(FUZZ_NRANKS);
	}
	if (flags & FUZZ_NONCE)
		h.nonce = htole64(FUZZ_RING_NONCE);
	memcpy(b, &h, sizeof(h));
}

/* The local port of fd, to know which client the ring took. */
static uint16_t fuzz_port(int fd, bool peer)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	FUZZ_CHECK((peer ? getpeername(fd, (struct sockaddr *)&a, &len)
			 : getsockname(fd, (struct sockaddr *)&a, &len)) == 0);
	return a.sin_port;
}

static int fuzz_step(struct gdx_rma_prev *p)
{
	int ret = gdx_rma_prev_step(p, fuzz_now);

	FUZZ_CHECK(ret == 0 || ret == -EAGAIN || ret == -EEXIST);
	FUZZ_CHECK(p->door.n >= 0 && p->door.n <= GDX_MAX_PENDING_ACCEPTS);
	FUZZ_CHECK(p->door.n + p->door.kept <= GDX_MAX_PENDING_ACCEPTS);
	FUZZ_CHECK(p->door.kept <= 1);
	fuzz_now++;
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t bytes[FUZZ_CONNS][128]; /* the door reads 32 of them */
	struct gdx_rma_prev p;
	int fds[FUZZ_CONNS], n, before = fuzz_open_fds(), ret = -EAGAIN, good = 0;
	size_t each, piece, len[FUZZ_CONNS], sent[FUZZ_CONNS] = {0};
	uint8_t flags;
	bool more = true;

	if (size < 2)
		return 0;
	flags = data[0];
	n = 1 + ((flags >> 4) & 3);
	piece = data[1];
	data += 2;
	size -= 2;
	each = size / (size_t)n;
	if (each > sizeof(bytes[0]))
		each = sizeof(bytes[0]);
	for (int i = 0; i < n; i++) {
		len[i] = each;
		memcpy(bytes[i], data + (size_t)i * each, each);
		fuzz_fill(flags, bytes[i], each);
		good += fuzz_hello_good(bytes[i], each);
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		FUZZ_CHECK(fds[i] >= 0);
		FUZZ_CHECK(connect(fds[i], (struct sockaddr *)&fuzz_addr, sizeof(fuzz_addr)) == 0);
	}
	fuzz_now = 1000;
	gdx_rma_prev_open(&p, fuzz_lfd, FUZZ_RANK, FUZZ_NRANKS, FUZZ_RING_NONCE, FUZZ_HELLO_MS);
	while (more && ret == -EAGAIN) {
		more = false;
		for (int i = 0; i < n; i++) {
			size_t k = len[i] - sent[i];

			if (piece && k > piece)
				k = piece;
			if (k) {
				/* the peer may have been shed: its writes may fail */
				ssize_t w = send(fds[i], bytes[i] + sent[i], k,
						 MSG_NOSIGNAL | MSG_DONTWAIT);

				sent[i] += w > 0 ? (size_t)w : k;
				if (w <= 0)
					sent[i] = len[i];
			}
			if (sent[i] == len[i] && (flags & FUZZ_CLOSE))
				shutdown(fds[i], SHUT_WR);
			more |= sent[i] < len[i];
		}
		usleep(50); /* loopback carries the pieces */
		ret = fuzz_step(&p);
	}
	/* then the clock past the hello deadline: the silent ones go */
	for (int k = 0; k < 4 && ret == -EAGAIN; k++) {
		fuzz_now += FUZZ_HELLO_MS;
		ret = fuzz_step(&p);
	}
	FUZZ_CHECK(ret != 0 || good >= 1);
	FUZZ_CHECK(ret != -EEXIST || good >= 2);
	usleep(200);
	for (int i = 0; i < n; i++) {
		bool taken = p.fd >= 0 && fuzz_port(fds[i], false) == fuzz_port(p.fd, true);
		size_t unread = fuzz_unread(fds[i]);

		if (taken) {
			struct gdx_rma_hello ack;

			/* the one taken sent the ring's hello, and got the answer */
			FUZZ_CHECK(fuzz_hello_good(bytes[i], len[i]));
			if (ret == 0) {
				FUZZ_CHECK(unread == sizeof(ack));
				FUZZ_CHECK(read(fds[i], &ack, sizeof(ack)) == sizeof(ack));
				FUZZ_CHECK(le32toh(ack.rank) == FUZZ_RANK);
				FUZZ_CHECK(le64toh(ack.nonce) == FUZZ_RING_NONCE);
			} else {
				FUZZ_CHECK(unread == 0); /* two claims: neither answered */
			}
		} else {
			FUZZ_CHECK(unread == 0); /* nobody else is told anything */
		}
	}
	gdx_rma_prev_close(&p, false);
	for (int i = 0; i < n; i++) {
		/* closed by a reset: no TIME_WAIT, so that a long run does not
		 * use up loopback's ports (a connect then fails) */
		setsockopt(fds[i], SOL_SOCKET, SO_LINGER, &(struct linger){1, 0},
			   sizeof(struct linger));
		close(fds[i]);
	}
	/* connections the steps never took */
	for (int fd; gdx_sock_accept(fuzz_lfd, &fd) == 0;)
		close(fd);
	FUZZ_CHECK(fuzz_open_fds() == before);
	return 0;
}
