/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for every parser of bytes that come from the network: the
 * listen handle, the hello, the metadata, and the acceptor's handshake state
 * machine itself, fed through a real loopback TCP connection to a listen comm
 * made by gdx_listen() and driven by gdx_accept(). No RDMA device is needed:
 * a handshake that gets through every check stops at the missing device.
 *
 *   make fuzz && build/tests/fuzz/wire -max_total_time=60 -print_funcs=0 \
 *           NEW_DIR tests/fuzz/corpus/wire
 *   FUZZ_WIRE_SEEDS=tests/fuzz/corpus/wire build/tests/fuzz/wire   # rewrites the seeds
 *
 * With FUZZ_WIRE_DEVICES=1 (in the VM, over rxe) the listener has a real
 * device, so a handshake that passes the checks goes on to create and connect
 * QPs from the fuzzed rails, answer, and wait for the ready word: slow, but it
 * reaches the states no device-less run can.
 *
 * Input: byte 0 flags (FUZZ_*), byte 1 the size of the pieces the client
 * writes with an accept between them (0: all at once), then the stream.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "conn/gdx_listen.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "wire/gdx_wire.h"
#include "check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NONCE	  0x01 /* put the listener's nonce into the hello */
#define FUZZ_CLOSE_LISTEN 0x02 /* close the listen comm with the handshake pending */
#define FUZZ_RST	  0x04 /* the client resets instead of closing cleanly */

#define FUZZ_MAX_STREAM 2048

static struct gdx_listen_comm *fuzz_lc;
static struct gdx_handle fuzz_handle;
static struct sockaddr_in fuzz_addr;
static int fuzz_free_fd; /* lowest free descriptor once the listener is open */
static int fuzz_warns;

/* Formats every line (so the logged values go through vsnprintf too) and
 * counts the WARNs; prints them only when asked. */
__attribute__((format(printf, 5, 6))) static void fuzz_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	fuzz_log_format(msg, sizeof(msg), "FUZZ_WIRE_VERBOSE", level == NCCL_LOG_WARN, file, line,
			fmt, ap);
	va_end(ap);
	if (level == NCCL_LOG_WARN)
		fuzz_warns++;
}

static void fuzz_listen(void)
{
	FUZZ_CHECK(gdx_listen(NULL, 0, &fuzz_handle, &fuzz_lc) == 0);
	memset(&fuzz_addr, 0, sizeof(fuzz_addr));
	fuzz_addr.sin_family = AF_INET;
	fuzz_addr.sin_port = fuzz_handle.port;
	memcpy(&fuzz_addr.sin_addr, fuzz_handle.addr, 4);
}

static int fuzz_lowest_free_fd(void)
{
	int fd = dup(0);

	FUZZ_CHECK(fd >= 0);
	close(fd);
	return fd;
}

/* A refusal explains itself in a terminated, non-empty sentence. */
static void fuzz_check_why(int ret, const char *why, size_t why_len)
{
	if (ret && why_len) {
		FUZZ_CHECK(memchr(why, '\0', why_len) != NULL);
		FUZZ_CHECK(why[0] != '\0' || why_len == 1);
	}
}

static void fuzz_handle_check(const uint8_t *s, size_t len, size_t why_len)
{
	union {
		struct gdx_handle h;
		char raw[NCCL_NET_HANDLE_MAXSIZE];
	} u;
	char why[256];
	int ret;

	memset(&u, 0, sizeof(u));
	memcpy(u.raw, s, len < sizeof(u.raw) ? len : sizeof(u.raw));
	memset(why, 0x7f, sizeof(why));
	ret = gdx_handle_check(&u.h, why, why_len);
	FUZZ_CHECK(ret == 0 || ret == -EPROTONOSUPPORT || ret == -EINVAL);
	fuzz_check_why(ret, why, why_len);
	if (!ret) {
		uint16_t family = le16toh(u.h.family);

		FUZZ_CHECK(family == AF_INET || family == AF_INET6);
		FUZZ_CHECK(u.h.port != 0);
	}
}

static void fuzz_hello_check(const uint8_t *s, size_t len, uint64_t nonce, size_t why_len)
{
	struct gdx_wire_hello h;
	char why[256];
	int ret;

	/* Any length, then exactly a hello's worth. */
	ret = gdx_wire_hello_check(s, len, nonce, why, why_len);
	FUZZ_CHECK(ret == 0 || ret == -EPROTO || ret == -EPROTONOSUPPORT || ret == -EACCES ||
		   ret == -ECONNREFUSED);
	FUZZ_CHECK(ret != 0 || len == sizeof(h));
	fuzz_check_why(ret, why, why_len);
	if (len < sizeof(h))
		return;
	memcpy(&h, s, sizeof(h));
	ret = gdx_wire_hello_check(&h, sizeof(h), nonce, why, why_len);
	fuzz_check_why(ret, why, why_len);
	if (!ret) {
		struct gdx_wire_hello again;
		uint32_t rails = gdx_wire_hello_rails(&h);

		FUZZ_CHECK(rails == le32toh(h.nrails));
		/* What passed the check packs back into a hello that passes. */
		gdx_wire_hello_pack(&again, nonce, rails);
		FUZZ_CHECK(gdx_wire_hello_check(&again, sizeof(again), nonce, why, sizeof(why)) ==
			   0);
		FUZZ_CHECK(gdx_wire_hello_rails(&again) == rails);
	}
}

static void fuzz_meta_check(const uint8_t *s, size_t len, size_t why_len)
{
	struct gdx_wire_meta out, raw, again;
	char why[256];
	int ret;

	ret = gdx_wire_meta_unpack(s, len, &out, why, why_len);
	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	FUZZ_CHECK(ret != 0 || len == sizeof(out));
	fuzz_check_why(ret, why, why_len);
	if (ret)
		return;
	FUZZ_CHECK(out.nrails >= 1 && out.nrails <= GDX_MAX_RAILS);
	FUZZ_CHECK(out.max_recvs >= 1 && out.max_recvs <= NCCL_NET_MAX_REQUESTS);
	FUZZ_CHECK(memchr(out.dev_name, '\0', sizeof(out.dev_name)) != NULL);
	/* the peer's name reaches log lines: printable only (gdx_log_sanitize) */
	for (const char *p = out.dev_name; *p; p++)
		FUZZ_CHECK(*p >= 0x20 && *p < 0x7f);
	for (uint32_t i = 0; i < out.nrails; i++) {
		FUZZ_CHECK(out.rails[i].link_layer == 1 || out.rails[i].link_layer == 2);
		FUZZ_CHECK(out.rails[i].mtu >= 1 && out.rails[i].mtu <= 5);
		FUZZ_CHECK(out.rails[i].ece.supported <= 1);
	}
	FUZZ_CHECK(out.qps_per_rail >= 1 && out.nrails * out.qps_per_rail <= GDX_MAX_QPS);
	for (uint32_t i = 0; i < out.nrails * out.qps_per_rail; i++)
		FUZZ_CHECK(out.qpn[i] != 0 && out.qpn[i] <= 0xffffff);
	/* pack and unpack are inverses on everything unpack accepts. */
	gdx_wire_meta_pack(&raw, &out);
	FUZZ_CHECK(gdx_wire_meta_unpack(&raw, sizeof(raw), &again, why, sizeof(why)) == 0);
	FUZZ_CHECK(memcmp(&again, &out, sizeof(out)) == 0);
}

/* One gdx_accept() call: no device, so it never hands back a comm. */
static void fuzz_accept_once(void)
{
	struct gdx_recv_comm *rc = (void *)1;
	int ret = gdx_accept(fuzz_lc, &rc);

	FUZZ_CHECK(ret == 0);
	if (rc) {
		/* Only reachable with a device: then it must close cleanly. */
		FUZZ_CHECK(gdx_close_recv(rc) == 0);
	}
	FUZZ_CHECK(gdx_listen_held(fuzz_lc) >= 0 &&
		   gdx_listen_held(fuzz_lc) <= GDX_MAX_PENDING_ACCEPTS);
}

/* The client's end: written with an accept after every piece, so the state
 * machine sees the bytes arrive in pieces of every size. */
static void fuzz_handshake(uint8_t flags, size_t piece, const uint8_t *stream, size_t len)
{
	uint8_t buf[FUZZ_MAX_STREAM];
	struct linger rst = {1, 0};
	int warns_before = fuzz_warns;
	size_t off = 0;
	int fd, tries;

	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, stream, len);
	if ((flags & FUZZ_NONCE) && len >= offsetof(struct gdx_wire_hello, nonce) + 8) {
		uint64_t nonce = htole64(fuzz_lc->nonce);

		memcpy(buf + offsetof(struct gdx_wire_hello, nonce), &nonce, sizeof(nonce));
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(connect(fd, (const struct sockaddr *)&fuzz_addr, sizeof(fuzz_addr)) == 0);
	while (off < len) {
		size_t n = piece && piece < len - off ? piece : len - off;
		ssize_t w = send(fd, buf + off, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w <= 0)
			break; /* the listener refused and closed: the rest is moot */
		off += (size_t)w;
		fuzz_accept_once();
	}
	if (flags & FUZZ_CLOSE_LISTEN) {
		/* Closing with the handshake in any state frees it. */
		fuzz_accept_once();
		FUZZ_CHECK(gdx_close_listen(fuzz_lc) == 0);
		fuzz_lc = NULL;
		fuzz_listen();
	} else {
		/* The client is done: whatever state the handshake is in, the
		 * listener must drop it within a few calls and never block. */
		if (flags & FUZZ_RST) {
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
			close(fd);
			fd = -1;
		} else {
			shutdown(fd, SHUT_WR);
		}
		for (tries = 0; tries < 4000; tries++) {
			fuzz_accept_once();
			if (gdx_listen_held(fuzz_lc) == 0 && tries > 0)
				break;
			if (tries > 10)
				usleep(100); /* a loaded machine: loopback is not instant */
		}
		if (gdx_listen_held(fuzz_lc) != 0)
			fprintf(stderr, "handshake still pending %d calls after the client left\n",
				tries);
		FUZZ_CHECK(gdx_listen_held(fuzz_lc) == 0);
	}
	if (fd >= 0) {
		/* A reset leaves no TIME_WAIT behind: millions of inputs, one port range. */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
		close(fd);
	}
	/* Each refused connection is logged at most once, and leaves no descriptor. */
	FUZZ_CHECK(fuzz_warns - warns_before <= 1);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fuzz_free_fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t why_lens[] = {256, 1, 0, 17, 64, 255, 8, 100};
	const uint8_t *stream;
	uint64_t nonce = 0x0123456789abcdefULL;
	size_t len, why_len;
	uint8_t flags;

	if (size < 2)
		return 0;
	flags = data[0];
	stream = data + 2;
	len = size - 2;
	why_len = why_lens[(flags >> 5) & 7];
	if (len >= offsetof(struct gdx_wire_hello, nonce) + 8)
		memcpy(&nonce, stream + offsetof(struct gdx_wire_hello, nonce), 8);
	nonce = le64toh(nonce);

	fuzz_handle_check(stream, len, why_len);
	fuzz_hello_check(stream, len, nonce, why_len);
	if (len >= sizeof(struct gdx_wire_hello))
		fuzz_meta_check(stream + sizeof(struct gdx_wire_hello),
				len - sizeof(struct gdx_wire_hello), why_len);
	fuzz_meta_check(stream, len, why_len);
	fuzz_handshake(flags, data[1], stream, len);
	return 0;
}

/* Seeds, written from the real pack functions so that they follow the wire
 * format: FUZZ_WIRE_SEEDS=DIR build/tests/fuzz/wire */
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

struct seed_stream {
	struct gdx_wire_hello hello;
	struct gdx_wire_meta meta;
	uint32_t ready;
};

static void seed_valid(struct seed_stream *s)
{
	struct gdx_wire_meta m;

	memset(s, 0, sizeof(*s));
	memset(&m, 0, sizeof(m));
	m.nrails = 1;
	m.qps_per_rail = 1;
	m.max_recvs = 1;
	m.ctrl_addr = 0x7f0000001000ULL;
	m.rails[0].ctrl_rkey = 0x1234;
	snprintf(m.dev_name, sizeof(m.dev_name), "rxe1");
	m.rails[0].gid[10] = 0xff;
	m.rails[0].gid[11] = 0xff;
	m.rails[0].gid[12] = 198;
	m.rails[0].gid[13] = 18;
	m.rails[0].gid[15] = 2;
	m.qpn[0] = 0x11;
	m.rails[0].psn = 0xabcde;
	m.rails[0].link_layer = 2;
	m.rails[0].mtu = 3;
	gdx_wire_hello_pack(&s->hello, 0, 1);
	gdx_wire_meta_pack(&s->meta, &m);
	s->ready = htole32(GDX_WIRE_READY);
}

static void seeds_write(const char *dir)
{
	const size_t hm = offsetof(struct seed_stream, ready);
	struct seed_stream s;
	struct gdx_handle h;
	uint8_t junk[64], ip6[16] = {0xfe, 0x80, [15] = 1};
	uint32_t lo = htonl(INADDR_LOOPBACK);

	mkdir(dir, 0755);
	seed_valid(&s);
	seed_write(dir, "valid-hello-meta", FUZZ_NONCE, 0, &s, hm);
	seed_write(dir, "valid-hello-meta-ready", FUZZ_NONCE, 0, &s, hm + sizeof(s.ready));
	seed_write(dir, "valid-in-7-byte-pieces", FUZZ_NONCE, 7, &s, hm + sizeof(s.ready));
	seed_write(dir, "valid-then-reset", FUZZ_NONCE | FUZZ_RST, 100, &s, hm);
	seed_write(dir, "valid-close-listener-pending", FUZZ_NONCE | FUZZ_CLOSE_LISTEN, 40, &s,
		   hm - 50);
	seed_write(dir, "stale-nonce", 0, 0, &s, hm);
	seed_write(dir, "truncated-hello", FUZZ_NONCE, 0, &s, 10);
	seed_write(dir, "truncated-meta", FUZZ_NONCE, 0, &s, sizeof(s.hello) + 100);
	seed_write(dir, "probe", 0, 0, "", 0);

	seed_valid(&s);
	s.hello.magic = htole64(0x3130746f6e6e6f64ULL);
	seed_write(dir, "wrong-magic", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.hello.version = htole32(7);
	seed_write(dir, "wrong-version", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.hello.meta_len = htole32(0xfffffff0u);
	seed_write(dir, "oversized-length", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.hello.nrails = htole32(2);
	seed_write(dir, "two-rails", FUZZ_NONCE, 0, &s, hm);

	seed_valid(&s);
	s.meta.nrails = htole32(9);
	seed_write(dir, "meta-nine-rails", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.max_recvs = htole32(33);
	seed_write(dir, "meta-max-recvs", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.rails[0].link_layer = 3;
	seed_write(dir, "meta-link-layer", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.rails[0].mtu = 6;
	seed_write(dir, "meta-mtu", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.qpn[0] = htole32(0x1000000);
	seed_write(dir, "meta-qpn", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.qps_per_rail = htole32(129);
	seed_write(dir, "meta-qps", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	s.meta.rails[0].ece.supported = htole32(2);
	seed_write(dir, "meta-ece", FUZZ_NONCE, 0, &s, hm);
	seed_valid(&s);
	memset(s.meta.dev_name, 'x', sizeof(s.meta.dev_name));
	seed_write(dir, "meta-unterminated-name", FUZZ_NONCE, 0, &s, hm);

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	seed_write(dir, "garbage", 0, 0, junk, sizeof(junk));

	/* Handles: the stream's first bytes are checked as one too. */
	gdx_handle_pack(&h, AF_INET, &lo, htons(4242), 0, 0x55, 1, 1);
	seed_write(dir, "handle-ipv4", 0, 0, &h, sizeof(h));
	gdx_handle_pack(&h, AF_INET6, ip6, htons(4242), 3, 0x55, 2, 4);
	seed_write(dir, "handle-ipv6", 0, 0, &h, sizeof(h));
	gdx_handle_pack(&h, AF_INET, &lo, 0, 0, 0x55, 1, 1);
	seed_write(dir, "handle-port-zero", 0, 0, &h, sizeof(h));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_WIRE_SEEDS");

	(void)argc;
	(void)argv;
	if (seeds && *seeds) {
		seeds_write(seeds);
		exit(0);
	}
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	gdx_log_set(fuzz_logger);
	FUZZ_CHECK(gdx_params_load() == 0);
	if (getenv("FUZZ_WIRE_DEVICES"))
		FUZZ_CHECK(gdx_devs_init() > 0);
	fuzz_listen();
	fuzz_free_fd = fuzz_lowest_free_fd();
	return 0;
}
