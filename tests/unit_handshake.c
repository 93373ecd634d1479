/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band handshake against clients that are not a peer: garbage,
 * truncated or mismatched hellos, silence, port probes. Each is refused and
 * logged, accept never blocks, and the listener keeps serving. Runs on
 * loopback with no RDMA device: nothing here reaches the verbs layer.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_conn.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>

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
	ASSERT_EQ(l.lc->npending, 0);
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
	ASSERT_EQ(l.lc->npending, 0);
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
	ASSERT_EQ(l.lc->npending, 0);
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

static void test_silent_connection_times_out(void)
{
	struct listener l;
	int fd;

	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", "300", 1);
	listener_open(&l);
	fd = client_connect(&l);
	accept_until_warned(&l, 0.1);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_EQ(l.lc->npending, 1);
	accept_until_warned(&l, 3);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "no handshake within 300 ms");
	ASSERT_EQ(l.lc->npending, 0);
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
		if (i > 2 && l.lc->npending == 0)
			break;
		usleep(2000);
	}
	ASSERT_EQ(l.lc->npending, 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "closed before any byte");
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
}

static void test_flood_is_bounded(void)
{
	enum { N = GDX_MAX_PENDING_ACCEPTS + 8 };
	struct listener l;
	struct gdx_recv_comm *rc;
	int fds[N];

	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", "200", 1);
	listener_open(&l);
	for (int i = 0; i < N; i++)
		fds[i] = client_connect(&l);
	usleep(20000);
	ASSERT_EQ(gdx_accept(l.lc, &rc), 0);
	/* At most GDX_MAX_PENDING_ACCEPTS are held; the rest wait in the backlog. */
	ASSERT_EQ(l.lc->npending, GDX_MAX_PENDING_ACCEPTS);
	usleep(300000);
	ASSERT_EQ(gdx_accept(l.lc, &rc), 0);
	ASSERT_EQ(l.lc->npending, 8);
	ASSERT_EQ(gdx_test_warning_count(), GDX_MAX_PENDING_ACCEPTS);
	/* Closing with handshakes pending frees them. */
	ASSERT_EQ(gdx_close_listen(l.lc), 0);
	for (int i = 0; i < N; i++)
		close(fds[i]);
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
	       TEST(test_oversized_length_and_wrong_nonce, 10),
	       TEST(test_silent_connection_times_out, 10), TEST(test_port_probe_is_quiet, 10),
	       TEST(test_flood_is_bounded, 10), TEST(test_connect_refuses_foreign_handle, 10),
	       TEST(test_connect_to_closed_port, 10), TEST(test_double_close, 10),
	       TEST(test_state_steps, 5))
