/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the connector against hostile listeners: the answer a
 * listener sends (its hello, then its metadata; or a refusal), arriving in
 * pieces of every size, cut short, of wrong lengths, or garbage.
 *
 * - Always: the connector's own recv-hello and recv-meta states
 *   (gdx_conn_reply_hello and gdx_conn_reply_meta, what gdx_connect() runs
 *   in those states) read the answer from a socket pair, a call after every
 *   piece: no RDMA device is needed.
 * - With FUZZ_REAL in the input: gdx_connect() itself, called again and again
 *   as NCCL calls it, against a fake listener on loopback that takes the
 *   connection and sends the answer. Without a device the connect stops
 *   where it makes its comm; with FUZZ_CONNECT_DEVICES=1 (in the VM, over
 *   rxe) it sends its hello and rails, and the fake listener checks that the
 *   hello carries the handle's nonce before it answers with the fuzzed bytes:
 *   slow, but it reaches every state, QPs connected to fuzzed rails included.
 *
 *   make fuzz && build/tests/fuzz/connect -max_total_time=60 -print_funcs=0 \
 *           NEW_DIR tests/fuzz/corpus/connect
 *   FUZZ_CONNECT_SEEDS=tests/fuzz/corpus/connect build/tests/fuzz/connect   # rewrites the seeds
 *
 * Input: byte 0 flags (FUZZ_*; its top three bits: the listener's rails - 1),
 * byte 1 the size of the pieces (0: all at once), then the listener's bytes.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_connect.h"
#include "dev/gdx_dev.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "wire/gdx_wire.h"
#include "check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NONCE 0x01 /* put the handle's nonce into the answer's hello */
#define FUZZ_RAILS 0x02 /* and the rail count the handle announces */
#define FUZZ_CLOSE 0x04 /* the listener closes once it has sent the stream */
#define FUZZ_RST   0x08 /* ... by a reset */
#define FUZZ_REAL  0x10 /* gdx_connect() itself against a fake listener too */

#define FUZZ_MAX_STREAM	  4096
#define FUZZ_HANDLE_NONCE 0x0123456789abcdefULL

static int fuzz_warns;
static bool fuzz_echo; /* the input holds the nonce where a line may quote it */
static bool fuzz_devices;
static int fuzz_lfd; /* the fake listener */
static struct sockaddr_in fuzz_addr;
static int fuzz_free_fd; /* lowest free descriptor between inputs */

/* Formats every line (the logged values go through vsnprintf too), counts
 * the WARNs, and checks that no line holds the handle's nonce. */
__attribute__((format(printf, 5, 6))) static void fuzz_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024], hex[32];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	fuzz_log_format(msg, sizeof(msg), "FUZZ_CONNECT_VERBOSE", level == NCCL_LOG_WARN, file,
			line, fmt, ap);
	va_end(ap);
	if (level == NCCL_LOG_WARN)
		fuzz_warns++;
	snprintf(hex, sizeof(hex), "%llx", (unsigned long long)FUZZ_HANDLE_NONCE);
	FUZZ_CHECK(fuzz_echo || !strstr(msg, hex));
}

static int fuzz_lowest_free_fd(void)
{
	int fd = dup(0);

	FUZZ_CHECK(fd >= 0);
	close(fd);
	return fd;
}

static size_t fuzz_unread(int fd)
{
	int n = 0;

	FUZZ_CHECK(ioctl(fd, FIONREAD, &n) == 0);
	return (size_t)n;
}

/* What unpack accepted: within the limits, the name printable. */
static void fuzz_check_meta(const struct gdx_wire_meta *m)
{
	FUZZ_CHECK(m->nrails >= 1 && m->nrails <= GDX_MAX_RAILS);
	FUZZ_CHECK(m->max_recvs >= 1 && m->max_recvs <= NCCL_NET_MAX_REQUESTS);
	FUZZ_CHECK(m->qps_per_rail >= 1 && m->nrails * m->qps_per_rail <= GDX_MAX_QPS);
	for (uint32_t i = 0; i < m->nrails; i++) {
		FUZZ_CHECK(m->rails[i].link_layer == 1 || m->rails[i].link_layer == 2);
		FUZZ_CHECK(m->rails[i].mtu >= 1 && m->rails[i].mtu <= 5);
	}
	FUZZ_CHECK(memchr(m->dev_name, '\0', sizeof(m->dev_name)) != NULL);
	for (const char *p = m->dev_name; *p; p++)
		FUZZ_CHECK(*p >= 0x20 && *p < 0x7f);
}

/* The stream as the fuzzer gave it, with the nonce and rails put in when
 * the flags ask, so that inputs reach past those checks. */
static size_t fuzz_stream(uint8_t flags, uint32_t rails, const uint8_t *in, size_t len,
			  uint8_t *out)
{
	if (len > FUZZ_MAX_STREAM)
		len = FUZZ_MAX_STREAM;
	memcpy(out, in, len);
	if ((flags & FUZZ_NONCE) && len >= offsetof(struct gdx_wire_hello, nonce) + 8) {
		uint64_t nonce = htole64(FUZZ_HANDLE_NONCE);

		memcpy(out + offsetof(struct gdx_wire_hello, nonce), &nonce, sizeof(nonce));
	}
	if ((flags & FUZZ_RAILS) && len >= offsetof(struct gdx_wire_hello, nrails) + 4) {
		uint32_t r = htole32(rails);

		memcpy(out + offsetof(struct gdx_wire_hello, nrails), &r, sizeof(r));
	}
	return len;
}

/*
 * The connector's reading of the answer over a socket pair: a call after
 * every piece, as the connector's states run once per connect() call. It
 * never reads past what it needs, fails at most once with one WARN (none
 * when the listener closed it unread: the connector connects again), and
 * what it accepts is the listener's hello and valid rails.
 */
static void fuzz_reply(uint8_t flags, size_t piece, uint32_t rails, const uint8_t *s, size_t len)
{
	struct gdx_conn_reply r;
	int sv[2], warns = fuzz_warns, ret = -EAGAIN, phase = 0;
	size_t off = 0, done = 0;

	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
	gdx_conn_reply_start(&r);
	for (;;) {
		if (off < len) {
			size_t n = piece && piece < len - off ? piece : len - off;
			ssize_t w = send(sv[1], s + off, n, MSG_NOSIGNAL);

			FUZZ_CHECK(w > 0);
			off += (size_t)w;
		} else if (sv[1] >= 0 && (flags & (FUZZ_CLOSE | FUZZ_RST))) {
			close(sv[1]); /* the listener goes */
			sv[1] = -1;
		}
		if (phase == 0)
			ret = gdx_conn_reply_hello(&r, sv[0], FUZZ_HANDLE_NONCE, rails, "fuzz");
		else
			ret = gdx_conn_reply_meta(&r, sv[0], "fuzz");
		FUZZ_CHECK(ret == 0 || ret == -EAGAIN || ret == -ECONNRESET ||
			   ret == -ECONNREFUSED || ret == -ECONNABORTED ||
			   ret == -EPROTONOSUPPORT || ret == -EACCES || ret == -EPROTO);
		if (ret == 0 && phase == 0) {
			/* the listener's hello, read to its last byte and no further */
			FUZZ_CHECK(le64toh(r.hello.magic) == GDX_WIRE_MAGIC);
			FUZZ_CHECK(le32toh(r.hello.version) == GDX_WIRE_VERSION);
			FUZZ_CHECK(le64toh(r.hello.nonce) == FUZZ_HANDLE_NONCE);
			FUZZ_CHECK(gdx_wire_hello_rails(&r.hello) == rails);
			FUZZ_CHECK(r.hello.refused == 0);
			FUZZ_CHECK(off - fuzz_unread(sv[0]) == sizeof(r.hello));
			FUZZ_CHECK(r.xfer.buf == &r.meta && r.xfer.off == 0);
			phase = 1;
			continue;
		}
		if (ret == 0) {
			FUZZ_CHECK(off - fuzz_unread(sv[0]) == sizeof(r.hello) + sizeof(r.meta));
			fuzz_check_meta(&r.meta);
			done = 1;
			break;
		}
		if (ret != -EAGAIN)
			break;
		/* not yet: everything sent so far was read, up to what it needs */
		FUZZ_CHECK(off - fuzz_unread(sv[0]) == (phase ? sizeof(r.hello) : 0) + r.xfer.off);
		if (off == len && sv[1] >= 0)
			break; /* the listener stays silent: the connect waits */
	}
	FUZZ_CHECK(ret != 0 || done);
	FUZZ_CHECK(fuzz_warns - warns <=
		   (ret == 0 || ret == -EAGAIN || ret == -ECONNABORTED ? 0 : 1));
	if (ret == -ECONNABORTED) {
		uint32_t why = le32toh(r.hello.refused);

		FUZZ_CHECK(why == GDX_REFUSED_BUSY || why == GDX_REFUSED_SILENT);
	}
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
}

/* The fake listener's end: takes the connector's connection when it comes. */
static int fuzz_take(int *fd)
{
	int c = accept4(fuzz_lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (c < 0)
		return 0;
	if (*fd >= 0)
		close(*fd); /* the connector gave up on that one and connected again */
	*fd = c;
	return 1;
}

/* Reads what the connector sent first: its hello, with the handle's nonce,
 * and its rails. Returns true once all of it is in. */
static bool fuzz_read_connector(int fd, uint8_t *buf, size_t *got, size_t want)
{
	while (*got < want) {
		ssize_t n = recv(fd, buf + *got, want - *got, MSG_DONTWAIT);

		if (n <= 0)
			return false;
		*got += (size_t)n;
	}
	return true;
}

/*
 * gdx_connect() itself against the fake listener, called as NCCL calls it
 * until it hands back a comm or fails. It never blocks, fails with an errno,
 * and once it is done no connect is left under way and no descriptor open.
 */
static void fuzz_connect_real(uint8_t flags, size_t piece, uint32_t rails, const uint8_t *s,
			      size_t len)
{
	union {
		struct gdx_handle h;
		char raw[NCCL_NET_HANDLE_MAXSIZE];
	} u;
	struct {
		struct gdx_wire_hello hello;
		struct gdx_wire_meta meta;
	} first;
	struct linger rst = {1, 0};
	size_t off = 0, got = 0;
	int fd = -1, ret = 0, warns = fuzz_warns;
	bool sent_first = false;
	struct gdx_send_comm *sc = NULL;

	memset(&u, 0, sizeof(u));
	gdx_handle_pack(&u.h, AF_INET, &fuzz_addr.sin_addr, fuzz_addr.sin_port, 0,
			FUZZ_HANDLE_NONCE, rails, 1);
	for (int call = 0; call < 4000 && !ret && !sc; call++) {
		ret = gdx_connect(NULL, 0, -1, u.raw, &sc);
		FUZZ_CHECK(ret <= 0);
		if (ret || sc)
			break;
		if (fuzz_take(&fd))
			got = 0, off = 0, sent_first = false;
		if (fd < 0)
			continue;
		if (!sent_first) {
			/* nothing is answered before the connector's hello, which
			 * must carry the handle's nonce */
			sent_first =
				fuzz_read_connector(fd, (uint8_t *)&first, &got, sizeof(first));
			if (!sent_first)
				continue;
			FUZZ_CHECK(le64toh(first.hello.magic) == GDX_WIRE_MAGIC);
			FUZZ_CHECK(le64toh(first.hello.nonce) == FUZZ_HANDLE_NONCE);
			FUZZ_CHECK(first.hello.refused == 0);
		}
		if (off < len) {
			size_t n = piece && piece < len - off ? piece : len - off;
			ssize_t w = send(fd, s + off, n, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (w > 0)
				off += (size_t)w;
		} else {
			/* the stream is out: the listener goes, so the connect ends */
			if (flags & FUZZ_RST)
				setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
			close(fd);
			fd = -1;
		}
	}
	FUZZ_CHECK(ret || sc);
	if (sc)
		FUZZ_CHECK(gdx_close_send(sc) == 0);
	FUZZ_CHECK(gdx_connects_pending() == 0);
	/* one WARN for the failure (two where a QP's connect failed in the VM) */
	FUZZ_CHECK(fuzz_warns - warns <= (fuzz_devices ? 2 : 1));
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
		close(fd);
	}
	while (fuzz_take(&fd)) /* one the connector made and dropped */
		;
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
		close(fd);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t stream[FUZZ_MAX_STREAM];
	uint32_t rails;
	size_t len;
	uint8_t flags;

	if (size < 2)
		return 0;
	flags = data[0];
	rails = 1 + (flags >> 5);
	len = fuzz_stream(flags, rails, data + 2, size - 2, stream);
	/* A line may quote what the listener sent (its magic, say): where
	 * those bytes print with the nonce's hex digits in them (the nonce
	 * itself, or a value that differs from it in a nibble at either end:
	 * 0x3123456789abcdef holds "123456789abcdef"), seeing them in a line
	 * is no leak. The nonce's own field is never quoted. */
	fuzz_echo = false;
	for (size_t i = 0; i + 8 <= len; i++) {
		uint64_t v;

		memcpy(&v, stream + i, sizeof(v));
		v = le64toh(v);
		fuzz_echo |= i != offsetof(struct gdx_wire_hello, nonce) &&
			     ((v & 0x0fffffffffffffffULL) == FUZZ_HANDLE_NONCE ||
			      v >> 4 == FUZZ_HANDLE_NONCE);
	}
	fuzz_reply(flags, data[1], rails, stream, len);
	if (flags & FUZZ_REAL)
		fuzz_connect_real(flags, data[1], rails, stream, len);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fuzz_free_fd);
	return 0;
}

/* ---- seeds, from the real pack functions: FUZZ_CONNECT_SEEDS=DIR ---- */

static void seed_write(const char *dir, const char *name, uint8_t flags, uint8_t piece,
		       const void *stream, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(fputc(flags, f) != EOF && fputc(piece, f) != EOF);
	FUZZ_CHECK(fwrite(stream, 1, len, f) == len);
	FUZZ_CHECK(fclose(f) == 0);
}

struct seed_answer {
	struct gdx_wire_hello hello;
	struct gdx_wire_meta meta;
};

static void seed_valid(struct seed_answer *s)
{
	struct gdx_wire_meta m;

	memset(s, 0, sizeof(*s));
	memset(&m, 0, sizeof(m));
	m.nrails = 1;
	m.qps_per_rail = 1;
	m.max_recvs = 8;
	m.sl = 0;
	m.tc = 0;
	m.ctrl_addr = 0x7f0000002000ULL;
	snprintf(m.dev_name, sizeof(m.dev_name), "rxe1");
	m.rails[0].gid[10] = 0xff;
	m.rails[0].gid[11] = 0xff;
	m.rails[0].gid[12] = 198;
	m.rails[0].gid[13] = 18;
	m.rails[0].gid[15] = 2;
	m.rails[0].psn = 0x1234;
	m.rails[0].link_layer = 2;
	m.rails[0].mtu = 3;
	m.rails[0].ctrl_rkey = 0x99;
	m.qpn[0] = 0x12;
	gdx_wire_hello_pack(&s->hello, FUZZ_HANDLE_NONCE, 1);
	gdx_wire_meta_pack(&s->meta, &m);
}

static void seeds_write(const char *dir)
{
	const uint8_t ok = FUZZ_NONCE | FUZZ_RAILS;
	struct seed_answer s;
	uint8_t junk[96];

	mkdir(dir, 0755);
	seed_valid(&s);
	seed_write(dir, "valid", ok, 0, &s, sizeof(s));
	seed_write(dir, "valid-real", ok | FUZZ_REAL, 0, &s, sizeof(s));
	seed_write(dir, "valid-in-7-byte-pieces", ok | FUZZ_CLOSE, 7, &s, sizeof(s));
	seed_write(dir, "valid-then-reset", ok | FUZZ_RST, 200, &s, sizeof(s));
	seed_write(dir, "truncated-hello", ok | FUZZ_CLOSE, 0, &s, 10);
	seed_write(dir, "truncated-meta", ok | FUZZ_CLOSE, 0, &s, sizeof(s.hello) + 100);
	seed_write(dir, "silent", FUZZ_CLOSE, 0, "", 0);
	seed_write(dir, "silent-real", FUZZ_REAL, 0, "", 0);
	seed_write(dir, "wrong-nonce", FUZZ_RAILS, 0, &s, sizeof(s));
	seed_write(dir, "wrong-rails", FUZZ_NONCE | (3 << 5), 0, &s, sizeof(s));
	seed_write(dir, "two-rails-listener", ok | (1 << 5), 0, &s, sizeof(s));
	for (uint32_t why = GDX_REFUSED_VERSION; why <= GDX_REFUSED_LAST + 1; why++) {
		char name[32];

		gdx_wire_refusal_pack(&s.hello, why);
		snprintf(name, sizeof(name), "refusal-%u", why);
		seed_write(dir, name, FUZZ_CLOSE, 0, &s.hello, sizeof(s.hello));
	}
	seed_valid(&s);
	s.hello.version = htole32(GDX_WIRE_VERSION + 1);
	seed_write(dir, "wrong-version", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	s.hello.meta_len = htole32(0xfffffff0u);
	seed_write(dir, "oversized-length", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	s.meta.nrails = htole32(9);
	seed_write(dir, "meta-nine-rails", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	s.meta.qps_per_rail = htole32(200);
	seed_write(dir, "meta-qps", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	s.meta.rails[0].mtu = 9;
	seed_write(dir, "meta-mtu", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	s.meta.qpn[0] = 0;
	seed_write(dir, "meta-qpn-zero", ok, 0, &s, sizeof(s));
	seed_valid(&s);
	memset(s.meta.dev_name, '\x1b', sizeof(s.meta.dev_name));
	seed_write(dir, "meta-escape-name", ok, 0, &s, sizeof(s));
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 53 + 7);
	seed_write(dir, "garbage", FUZZ_CLOSE, 0, junk, sizeof(junk));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_CONNECT_SEEDS");
	socklen_t alen = sizeof(fuzz_addr);

	(void)argc;
	(void)argv;
	if (seeds && *seeds) {
		seeds_write(seeds);
		exit(0);
	}
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	gdx_log_set(fuzz_logger);
	FUZZ_CHECK(gdx_params_load() == 0);
	fuzz_devices = getenv("FUZZ_CONNECT_DEVICES") != NULL;
	if (fuzz_devices)
		FUZZ_CHECK(gdx_devs_init() > 0);
	fuzz_lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	FUZZ_CHECK(fuzz_lfd >= 0);
	memset(&fuzz_addr, 0, sizeof(fuzz_addr));
	fuzz_addr.sin_family = AF_INET;
	fuzz_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FUZZ_CHECK(bind(fuzz_lfd, (struct sockaddr *)&fuzz_addr, sizeof(fuzz_addr)) == 0);
	FUZZ_CHECK(getsockname(fuzz_lfd, (struct sockaddr *)&fuzz_addr, &alen) == 0);
	FUZZ_CHECK(listen(fuzz_lfd, 16) == 0);
	fuzz_free_fd = fuzz_lowest_free_fd();
	return 0;
}
