/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band handshake against clients that are not a peer: garbage,
 * truncated or mismatched hellos, silence, port probes. Each is refused and
 * logged, accept never blocks, and the listener keeps serving. Runs on
 * loopback with no RDMA device: nothing here reaches the verbs layer.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_connect.h"
#include "conn/gdx_handshake.h"
#include "conn/gdx_listen.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define VERSION_STR_(v) "version " #v
#define VERSION_STR(v)	VERSION_STR_(v)
/* "version N" as the plugin writes its own in a refusal */
#define THIS_VERSION VERSION_STR(GDX_WIRE_VERSION)

struct listener {
	struct gdx_handle handle;
	struct gdx_listen_comm *lc;
	struct sockaddr_in addr;
};

static void listener_open(struct listener *l)
{
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	gdx_log_set(gdx_test_logger);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_listen(NULL, 0, &l->handle, &l->lc), 0);
	memset(&l->addr, 0, sizeof(l->addr));
	l->addr.sin_family = AF_INET;
	l->addr.sin_port = l->handle.port;
	memcpy(&l->addr.sin_addr, l->handle.addr, 4);
	ASSERT_EQ(l->addr.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
}

static int client_connect(const struct listener *l)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ASSERT(fd >= 0);
	ASSERT_EQ(connect(fd, (const struct sockaddr *)&l->addr, sizeof(l->addr)), 0);
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Calls accept until a WARN appears or the time is up; every call must return
 * at once and give no comm. */
static void accept_until_warned(struct listener *l, double limit_s)
{
	double start = now_s();

	while (gdx_test_warning_count() == 0 && now_s() - start < limit_s) {
		struct gdx_recv_comm *rc = (void *)1;
		double t0 = now_s();

		ASSERT_EQ(gdx_accept(l->lc, &rc), 0);
		ASSERT(rc == NULL);
		ASSERT(now_s() - t0 < 0.05);
		usleep(1000);
	}
}

/* The listener closed the connection: the client sees EOF (after whatever the
 * listener said). */
static ssize_t client_read_all(int fd, void *buf, size_t len)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t got = 0;

	while (got < len && poll(&p, 1, 2000) > 0) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Whether buf holds the 8 bytes of nonce anywhere, in either byte order. */
static bool holds_nonce(const void *buf, size_t len, uint64_t nonce)
{
	uint64_t le = htole64(nonce), be = htobe64(nonce);

	for (size_t i = 0; i + 8 <= len; i++)
		if (!memcmp((const char *)buf + i, &le, 8) ||
		    !memcmp((const char *)buf + i, &be, 8))
			return true;
	return false;
}

/* Nothing the plugin logged names the nonce, in any form printf gives it. */
static void assert_logs_hide(uint64_t nonce)
{
	unsigned long long v = (unsigned long long)nonce;
	char s[5][32];

	snprintf(s[0], sizeof(s[0]), "%016llx", v);
	snprintf(s[1], sizeof(s[1]), "%llx", v);
	snprintf(s[2], sizeof(s[2]), "%016llX", v);
	snprintf(s[3], sizeof(s[3]), "%llX", v);
	snprintf(s[4], sizeof(s[4]), "%llu", v);
	for (int i = 0; i < 5; i++) {
		ASSERT(!strstr(gdx_test_warnings(), s[i]));
		ASSERT(!strstr(gdx_test_infos(), s[i]));
	}
}

/*
 * A client that knows nothing of the handle: whatever it sends, what it
 * reads back and what the listener logs hold no trace of the nonce, and a
 * second connection with what it learned is refused like the first.
 */
static void test_nobody_learns_the_nonce(void)
{
	struct listener l;
	struct gdx_wire_hello h;
	uint8_t junk[64], reply[256];
	uint64_t nonce, learned[4];
	int n = 0;

	listener_open(&l);
	nonce = le64toh(l.handle.nonce);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	for (int kind = 0; kind < 4; kind++) {
		const void *msg = &h;
		size_t len = sizeof(h);
		ssize_t got;
		int fd;

		gdx_wire_hello_pack(&h, kind == 3 ? nonce ^ 1 : 0, 1);
		if (kind == 0) {
			msg = junk; /* garbage */
			len = sizeof(junk);
		} else if (kind == 2) {
			h.version = htole32(GDX_WIRE_VERSION + 1); /* another version, no nonce */
		}
		gdx_test_log_clear();
		fd = client_connect(&l);
		ASSERT_EQ(write(fd, msg, len), (ssize_t)len);
		accept_until_warned(&l, 2);
		ASSERT_EQ(gdx_test_warning_count(), 1);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused connection from 127.0.0.1");
		got = client_read_all(fd, reply, sizeof(reply));
		ASSERT(!holds_nonce(reply, (size_t)got, nonce));
		assert_logs_hide(nonce);
		/* the answer is a refusal that says why, and carries no nonce */
		ASSERT_EQ(got, (ssize_t)sizeof(h));
		memcpy(&h, reply, sizeof(h));
		learned[n++] = le64toh(h.nonce);
		ASSERT_EQ(le64toh(h.nonce), 0);
		ASSERT_NE(le32toh(h.refused), 0);
		close(fd);
	}
	/* what the clients learned gets a second connection nowhere */
	for (int i = 0; i < n; i++) {
		int fd = client_connect(&l);

		gdx_test_log_clear();
		gdx_wire_hello_pack(&h, learned[i], 1);
		ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
		accept_until_warned(&l, 2);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused connection from 127.0.0.1");
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "nonce");
		assert_logs_hide(nonce);
		ASSERT_EQ(client_read_all(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
		ASSERT_EQ(le32toh(h.refused), GDX_REFUSED_NONCE);
		close(fd);
	}
	ASSERT_EQ(gdx_listen_held(l.lc), 0);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_garbage_is_refused(void)
{
	struct listener l;
	uint8_t junk[64];
	int fd;

	listener_open(&l);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	accept_until_warned(&l, 2);
	ASSERT_EQ(gdx_test_warning_count(), 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused connection from 127.0.0.1");
	ASSERT_EQ(gdx_listen_held(l.lc), 0);
	close(fd);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_wrong_version_names_both(void)
{
	struct listener l;
	struct gdx_wire_hello h, reply;
	int fd;

	listener_open(&l);
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce), 1);
	h.version = htole32(7);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	accept_until_warned(&l, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "version 7");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), THIS_VERSION);
	/* The listener said who it is before closing, so the peer can name
	 * both; and that is all it said. */
	ASSERT_EQ(client_read_all(fd, &reply, sizeof(reply)), (ssize_t)sizeof(reply));
	ASSERT_EQ(le32toh(reply.version), GDX_WIRE_VERSION);
	ASSERT_EQ(le64toh(reply.magic), GDX_WIRE_MAGIC);
	ASSERT_EQ(le32toh(reply.refused), GDX_REFUSED_VERSION);
	ASSERT_EQ(reply.nonce, 0);
	close(fd);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

/* Ends with different rail counts connect (max of both, as net_ib); a rail
 * count no device can have is refused, naming it. */
static void test_hello_rail_count_out_of_range(void)
{
	struct listener l;
	struct gdx_wire_hello h, reply;
	int fd;

	listener_open(&l);
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce), GDX_MAX_RAILS + 1);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	accept_until_warned(&l, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "hello announces 9 rails (1-8 allowed)");
	ASSERT_EQ(client_read_all(fd, &reply, sizeof(reply)), (ssize_t)sizeof(reply));
	ASSERT_EQ(le32toh(reply.refused), GDX_REFUSED_HELLO);
	ASSERT_EQ(reply.nonce, 0);
	close(fd);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_truncated_hello(void)
{
	struct listener l;
	struct gdx_wire_hello h;
	int fd;

	listener_open(&l);
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce), 1);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, &h, 10), 10);
	close(fd);
	accept_until_warned(&l, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "after 10 of 32 bytes");
	ASSERT_EQ(gdx_listen_held(l.lc), 0);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_oversized_length_and_wrong_nonce(void)
{
	struct listener l;
	struct gdx_wire_hello h;
	int fd;

	listener_open(&l);
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce), 1);
	h.meta_len = htole32(0xfffffff0u);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	accept_until_warned(&l, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "4294967280 bytes of metadata");
	close(fd);
	gdx_test_log_clear();
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce) + 1, 1);
	fd = client_connect(&l);
	ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	accept_until_warned(&l, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "stale handle");
	close(fd);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_port_probe_is_quiet(void)
{
	struct listener l;

	listener_open(&l);
	for (int i = 0; i < 100; i++)
		close(client_connect(&l));
	for (int i = 0; i < 50; i++) {
		struct gdx_recv_comm *rc;

		ASSERT_EQ(gdx_accept(l.lc, &rc), 0);
		if (i > 2 && gdx_listen_held(l.lc) == 0)
			break;
		usleep(2000);
	}
	ASSERT_EQ(gdx_listen_held(l.lc), 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "closed before any byte");
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

/* ---- silent clients: what they can hold is bounded ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A client from another loopback address (all of 127/8 is this host's). */
static int client_connect_from(const struct listener *l, const char *src)
{
	struct sockaddr_in from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ASSERT(fd >= 0);
	ASSERT_EQ(inet_pton(AF_INET, src, &from.sin_addr), 1);
	ASSERT_EQ(bind(fd, (const struct sockaddr *)&from, sizeof(from)), 0);
	ASSERT_EQ(connect(fd, (const struct sockaddr *)&l->addr, sizeof(l->addr)), 0);
	return fd;
}

/* What a real connector sends first: the hello with the handle's nonce, and
 * its rails. With no device here the listener stops at making its end, and
 * says so: a refusal GDX_REFUSED_LOCAL shows the peer got that far. */
static void real_peer_send(int fd, const struct listener *l)
{
	struct {
		struct gdx_wire_hello hello;
		struct gdx_wire_meta meta;
	} out;
	struct gdx_wire_meta m;

	memset(&m, 0, sizeof(m));
	m.nrails = 1;
	m.qps_per_rail = 1;
	m.max_recvs = 1;
	m.rails[0].link_layer = 2;
	m.rails[0].mtu = 3;
	m.qpn[0] = 0x11;
	snprintf(m.dev_name, sizeof(m.dev_name), "rxe1");
	gdx_wire_hello_pack(&out.hello, le64toh(l->handle.nonce), 1);
	gdx_wire_meta_pack(&out.meta, &m);
	ASSERT_EQ(write(fd, &out, sizeof(out)), (ssize_t)sizeof(out));
}

/* The reason of the refusal the listener sent fd, -1 when it sent none. */
static int refusal_of(int fd)
{
	struct gdx_wire_hello h;

	if (client_read_all(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		return -1;
	ASSERT_EQ(h.nonce, 0);
	return (int)le32toh(h.refused);
}

/* Calls accept (never a comm, never blocking) until fd has an answer. */
static void accept_until_answered(struct listener *l, int fd, double limit_s)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	double start = now_s();

	while (poll(&p, 1, 0) == 0) {
		struct gdx_recv_comm *rc = (void *)1;

		ASSERT(now_s() - start < limit_s);
		ASSERT_EQ(gdx_accept(l->lc, &rc), 0);
		ASSERT(rc == NULL);
		usleep(1000);
	}
}

static void accept_a_few(struct listener *l)
{
	for (int i = 0; i < 3; i++) {
		struct gdx_recv_comm *rc = (void *)1;

		ASSERT_EQ(gdx_accept(l->lc, &rc), 0);
		ASSERT(rc == NULL);
	}
}

/* Everything closes: the listener drops what its clients left, and closing
 * it frees the rest; no descriptor stays. */
static void close_all(struct listener *l, int *fds, int n, int fds_before)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < 200 && gdx_listen_held(l->lc); i++) {
		accept_a_few(l);
		usleep(1000);
	}
	ASSERT_EQ(gdx_listen_held(l->lc), 0);
	ASSERT_EQ(gdx_close_listen(l->lc), 0);
	ASSERT_EQ(count_fds(), fds_before - 1); /* the listener's own socket too */
}

/*
 * 100 connections from one address that send nothing: the listener keeps
 * the newest GDX_MAX_UNPROVEN_PER_ADDR, closes the others (each told why,
 * no nonce) with one log line, and a real peer that connects while 50 more
 * silent ones arrive gets through its hello.
 */
static void test_silent_flood_from_one_address(void)
{
	enum { FLOOD = 100, LATE = 50 };
	struct listener l;
	int fds[FLOOD + LATE + 1], n = 0, before, real;
	char line[128];

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "60000", 1);
	listener_open(&l);
	before = count_fds();
	for (int i = 0; i < FLOOD; i++)
		fds[n++] = client_connect(&l);
	accept_a_few(&l);
	ASSERT_EQ(gdx_listen_held(l.lc), GDX_MAX_UNPROVEN_PER_ADDR);
	ASSERT_EQ(gdx_test_warning_count(), 1);
	snprintf(line, sizeof(line), "closed %d incoming connection(s) that sent no hello",
		 FLOOD - GDX_MAX_UNPROVEN_PER_ADDR);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), line);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "the last from 127.0.0.1");
	/* the oldest went, each with a refusal that says why */
	for (int i = 0; i < FLOOD - GDX_MAX_UNPROVEN_PER_ADDR; i++)
		ASSERT_EQ(refusal_of(fds[i]), GDX_REFUSED_BUSY);
	/* the real peer, amid more of them */
	real = client_connect(&l);
	real_peer_send(real, &l);
	fds[n++] = real;
	for (int i = 0; i < LATE; i++)
		fds[n++] = client_connect(&l);
	accept_until_answered(&l, real, 2);
	ASSERT_EQ(refusal_of(real), GDX_REFUSED_LOCAL);
	ASSERT(gdx_listen_held(l.lc) <= GDX_MAX_UNPROVEN_PER_ADDR);
	close_all(&l, fds, n, before);
}

/* Many addresses, each within its bound: the total is bounded too. */
static void test_silent_flood_from_many_addresses(void)
{
	enum { ADDRS = 6, EACH = GDX_MAX_UNPROVEN_PER_ADDR };
	struct listener l;
	int fds[ADDRS * EACH + 1], n = 0, before, real;
	char src[32], line[128];

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "60000", 1);
	listener_open(&l);
	before = count_fds();
	for (int a = 0; a < ADDRS; a++)
		for (int i = 0; i < EACH; i++) {
			snprintf(src, sizeof(src), "127.0.0.%d", 2 + a);
			fds[n++] = client_connect_from(&l, src);
		}
	accept_a_few(&l);
	ASSERT_EQ(gdx_listen_held(l.lc), GDX_MAX_PENDING_ACCEPTS);
	ASSERT_EQ(gdx_test_warning_count(), 1);
	snprintf(line, sizeof(line), "closed %d incoming connection(s)",
		 ADDRS * EACH - GDX_MAX_PENDING_ACCEPTS);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), line);
	real = client_connect_from(&l, "127.0.0.9");
	real_peer_send(real, &l);
	fds[n++] = real;
	accept_until_answered(&l, real, 2);
	ASSERT_EQ(refusal_of(real), GDX_REFUSED_LOCAL);
	close_all(&l, fds, n, before);
}

/*
 * 65 connectors that each hold the nonce, all in the backlog before the
 * first accept: the listener takes 64 handshakes, each of which shows the
 * nonce as it is read, so none can be shed for the 65th; the 65th is
 * refused as busy and closed, unread, and the log line says so (not that it
 * "sent no hello"). Nothing is stored past the 64 pending handshakes: the
 * count of connections taken stays a count (it sat where a 65th would have
 * gone, and once held a freed pointer). Under ASan and UBSan (make test) an
 * index of 64 fails the test as it happens.
 */
static void test_full_queue_of_proven_refuses_the_next(void)
{
	enum { N = GDX_MAX_PENDING_ACCEPTS + 1 };
	struct listener l;
	int fds[N], before, refused_busy = 0, refused_local = 0;

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "60000", 1);
	listener_open(&l);
	before = count_fds();
	for (int i = 0; i < N; i++) {
		fds[i] = client_connect(&l);
		real_peer_send(fds[i], &l);
	}
	usleep(100000); /* every hello in the listener's socket buffers */
	accept_a_few(&l);
	ASSERT_EQ(l.lc->door.taken, N);
	ASSERT(gdx_listen_held(l.lc) <= GDX_MAX_PENDING_ACCEPTS);
	for (int i = 0; i < N; i++) {
		int why = refusal_of(fds[i]);

		refused_busy += why == GDX_REFUSED_BUSY;
		refused_local += why == GDX_REFUSED_LOCAL;
	}
	/* the 65th refused unread; every other reached its rails (no device here) */
	ASSERT_EQ(refused_busy, 1);
	ASSERT_EQ(refusal_of(fds[N - 1]), -1); /* told once, then closed */
	ASSERT_EQ(refused_local, N - 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "refused 1 incoming connection(s) unread: the 64 handshakes held had "
			    "all shown the nonce");
	ASSERT(!strstr(gdx_test_warnings(), "sent no hello"));
	assert_logs_hide(le64toh(l.handle.nonce));
	close_all(&l, fds, N, before);
}

/*
 * A connection that has sent no hello by the hello deadline is closed, told
 * why; one that sent its hello (the nonce) is held to the whole handshake's
 * timeout instead.
 */
static void test_hello_deadline(void)
{
	struct listener l;
	struct gdx_wire_hello h;
	int fds[2], before;
	double t0;

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "200", 1);
	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", "800", 1);
	listener_open(&l);
	before = count_fds();
	t0 = now_s();
	fds[0] = client_connect(&l);
	fds[1] = client_connect(&l);
	gdx_wire_hello_pack(&h, le64toh(l.handle.nonce), 1);
	ASSERT_EQ(write(fds[1], &h, sizeof(h)), (ssize_t)sizeof(h));
	accept_until_warned(&l, 0.1);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_EQ(gdx_listen_held(l.lc), 2);
	accept_until_warned(&l, 3);
	ASSERT(now_s() - t0 < 0.6);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "closed 1 incoming connection(s) that sent no hello: 1 past the 200 ms "
			    "hello deadline");
	ASSERT_EQ(refusal_of(fds[0]), GDX_REFUSED_SILENT);
	ASSERT_EQ(gdx_listen_held(l.lc), 1);
	gdx_test_log_clear();
	accept_until_warned(&l, 3);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "no handshake within 800 ms");
	ASSERT_EQ(gdx_listen_held(l.lc), 0);
	close_all(&l, fds, 2, before);
}

/* Closed at a sustained rate, they cost one log line a second, not one each;
 * what is left unsaid when the listener closes is said then. */
static void test_shed_lines_are_rate_limited(void)
{
	struct listener l;
	int fds[3 * (GDX_MAX_UNPROVEN_PER_ADDR + 4)], n = 0, before;

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "60000", 1);
	listener_open(&l);
	before = count_fds();
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < GDX_MAX_UNPROVEN_PER_ADDR + 4; i++)
			fds[n++] = client_connect(&l);
		accept_a_few(&l);
		usleep(100000);
	}
	ASSERT_EQ(gdx_test_warning_count(), 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed 4 incoming");
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < 200 && gdx_listen_held(l.lc); i++) {
		accept_a_few(&l);
		usleep(1000);
	}
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
	ASSERT_EQ(gdx_test_warning_count(), 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed 40 incoming");
	ASSERT_EQ(count_fds(), before - 1);
}

/* ---- the connector's side: the listener's answer ---- */

struct reply_pipe {
	int rd, wr; /* the connector reads rd; the "listener" writes wr */
	struct gdx_conn_reply r;
};

static void reply_pipe_open(struct reply_pipe *p)
{
	int sv[2];

	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	p->rd = sv[0];
	p->wr = sv[1];
	gdx_conn_reply_start(&p->r);
}

static void reply_pipe_close(struct reply_pipe *p)
{
	close(p->rd);
	close(p->wr);
}

#define LISTENER_NONCE 0x5eed5eed1234abcdULL

/* Writes buf a byte at a time, reading the hello between: each call returns
 * at once, -EAGAIN until the last byte. */
static int feed_hello(struct reply_pipe *p, const void *buf, size_t len)
{
	int ret = -EAGAIN;

	for (size_t i = 0; i < len; i++) {
		ASSERT_EQ(ret, -EAGAIN);
		ASSERT_EQ(write(p->wr, (const char *)buf + i, 1), 1);
		ret = gdx_conn_reply_hello(&p->r, p->rd, LISTENER_NONCE, 1, "198.18.0.1:4242");
	}
	return ret;
}

/* Every refusal is named from the connector's side; the two that close a
 * connection unread are left to the caller, who connects again. */
static void test_connector_reads_refusals(void)
{
	struct reply_pipe p;
	struct gdx_wire_hello h;

	reply_pipe_open(&p);
	gdx_wire_refusal_pack(&h, GDX_REFUSED_NONCE);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), -ECONNREFUSED);
	ASSERT_EQ(gdx_test_warning_count(), 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "connect to 198.18.0.1:4242 refused by the listener: our hello does "
			    "not carry the nonce");
	assert_logs_hide(LISTENER_NONCE);
	reply_pipe_close(&p);
	for (uint32_t why = GDX_REFUSED_BUSY; why <= GDX_REFUSED_SILENT; why++) {
		reply_pipe_open(&p);
		gdx_wire_refusal_pack(&h, why);
		ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), -ECONNABORTED);
		ASSERT_EQ(gdx_test_warning_count(), 0);
		reply_pipe_close(&p);
	}
	/* another version's refusal names both */
	reply_pipe_open(&p);
	gdx_wire_refusal_pack(&h, GDX_REFUSED_VERSION);
	h.version = htole32(GDX_WIRE_VERSION + 1);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), THIS_VERSION);
	reply_pipe_close(&p);
}

/* An answer that is not the listener's: another nonce, another rail count,
 * cut short, or bad rails. Each fails with one WARN, never a nonce in it. */
static void test_connector_refuses_bad_answers(void)
{
	struct reply_pipe p;
	struct gdx_wire_hello h;
	struct gdx_wire_meta m;

	reply_pipe_open(&p);
	gdx_wire_hello_pack(&h, LISTENER_NONCE ^ 0x10, 1);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), -EACCES);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused: the listener's answer: hello does not "
						 "carry the nonce");
	assert_logs_hide(LISTENER_NONCE);
	assert_logs_hide(LISTENER_NONCE ^ 0x10);
	reply_pipe_close(&p);

	reply_pipe_open(&p);
	gdx_wire_hello_pack(&h, LISTENER_NONCE, 2);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), -EPROTO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "handle said 1 rail(s), its hello says 2");
	reply_pipe_close(&p);

	reply_pipe_open(&p); /* 10 bytes, then the listener goes */
	gdx_wire_hello_pack(&h, LISTENER_NONCE, 1);
	ASSERT_EQ(write(p.wr, &h, 10), 10);
	close(p.wr);
	p.wr = -1;
	ASSERT_EQ(gdx_conn_reply_hello(&p.r, p.rd, LISTENER_NONCE, 1, "peer"), -ECONNRESET);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "after 10 of 32 bytes");
	close(p.rd);

	/* a good hello, then rails with a hostile name, a piece at a time */
	reply_pipe_open(&p);
	gdx_wire_hello_pack(&h, LISTENER_NONCE, 1);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), 0);
	memset(&m, 0, sizeof(m));
	m.nrails = 1;
	m.qps_per_rail = 1;
	m.max_recvs = 1;
	m.rails[0].link_layer = 2;
	m.rails[0].mtu = 3;
	m.qpn[0] = 0x11;
	snprintf(m.dev_name, sizeof(m.dev_name), "rxe0\n\x1b]0;owned\x07");
	gdx_wire_meta_pack(&m, &m);
	for (size_t off = 0; off < sizeof(m); off += 100) {
		size_t n = sizeof(m) - off < 100 ? sizeof(m) - off : 100;

		ASSERT_EQ(gdx_conn_reply_meta(&p.r, p.rd, "peer"), -EAGAIN);
		ASSERT_EQ(write(p.wr, (const char *)&m + off, n), (ssize_t)n);
	}
	ASSERT_EQ(gdx_conn_reply_meta(&p.r, p.rd, "peer"), 0);
	ASSERT_EQ(strcmp(p.r.meta.dev_name, "rxe0\\x0a\\x1b]0;owned\\x07"), 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	reply_pipe_close(&p);

	/* rails the listener cannot have */
	reply_pipe_open(&p);
	gdx_wire_hello_pack(&h, LISTENER_NONCE, 1);
	ASSERT_EQ(feed_hello(&p, &h, sizeof(h)), 0);
	memset(&m, 0, sizeof(m));
	m.nrails = 9;
	ASSERT_EQ(write(p.wr, &m, sizeof(m)), (ssize_t)sizeof(m));
	ASSERT_EQ(gdx_conn_reply_meta(&p.r, p.rd, "peer"), -EPROTO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "connect to peer: bad metadata");
	reply_pipe_close(&p);
}

static void test_connect_refuses_foreign_handle(void)
{
	struct listener l;
	struct gdx_handle h;
	struct gdx_send_comm *sc = (void *)1;
	char prev[32];

	listener_open(&l);
	h = l.handle;
	h.version = htole32(GDX_WIRE_VERSION - 1); /* the previous protocol */
	ASSERT_EQ(gdx_connect(NULL, 0, -1, &h, &sc), -EPROTONOSUPPORT);
	ASSERT(sc == NULL);
	snprintf(prev, sizeof(prev), "version %d", GDX_WIRE_VERSION - 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), prev);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), THIS_VERSION);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_connect_to_closed_port(void)
{
	struct listener l;
	struct gdx_handle h;
	struct gdx_send_comm *sc;
	int ret = 0;

	listener_open(&l);
	h = l.handle;
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
	for (int i = 0; i < 1000 && ret == 0; i++) {
		ret = gdx_connect(NULL, 0, -1, &h, &sc);
		usleep(1000);
	}
	ASSERT_EQ(ret, -ECONNREFUSED);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "Connection refused");
}

static void test_double_close(void)
{
	struct listener l;

	listener_open(&l);
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
	ASSERT_EQ(gdx_close_listen(l.lc), -EBADF);
}

/* The handshakes move one state forward at a time; anything else is a bug
 * that is refused and named, never acted on. */
static void test_state_steps(void)
{
	static const char *const names[] = {"first", "second", "third"};

	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	ASSERT(gdx_conn_state_step("connect to", names, 3, 0, 1, "peer"));
	ASSERT(gdx_conn_state_step("connect to", names, 3, 1, 2, "peer"));
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT(!gdx_conn_state_step("accept from", names, 3, 2, 3, "peer")); /* past the last */
	ASSERT(!gdx_conn_state_step("accept from", names, 3, 0, 2, "peer")); /* skips one */
	ASSERT(!gdx_conn_state_step("accept from", names, 3, 1, 0, "peer")); /* backwards */
	ASSERT(!gdx_conn_state_step("accept from", names, 3, 1, 1, "peer")); /* stays */
	ASSERT_EQ(gdx_test_warning_count(), 4);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "accept from peer: state first cannot move to third");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "state third cannot move to ?");
}

GDX_TESTS_MAIN(TEST(test_nobody_learns_the_nonce, 20), TEST(test_garbage_is_refused, 10),
	       TEST(test_wrong_version_names_both, 10),
	       TEST(test_hello_rail_count_out_of_range, 10), TEST(test_truncated_hello, 10),
	       TEST(test_oversized_length_and_wrong_nonce, 10), TEST(test_port_probe_is_quiet, 10),
	       TEST(test_silent_flood_from_one_address, 20),
	       TEST(test_silent_flood_from_many_addresses, 20),
	       TEST(test_full_queue_of_proven_refuses_the_next, 20), TEST(test_hello_deadline, 10),
	       TEST(test_shed_lines_are_rate_limited, 10), TEST(test_connector_reads_refusals, 10),
	       TEST(test_connector_refuses_bad_answers, 10),
	       TEST(test_connect_refuses_foreign_handle, 10), TEST(test_connect_to_closed_port, 10),
	       TEST(test_double_close, 10), TEST(test_state_steps, 5))
