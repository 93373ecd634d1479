/* SPDX-License-Identifier: MIT */
/*
 * The two ends in separate processes, as in a real job: a verified stream, a
 * peer that dies mid-stream on either side, and a hostile client on the
 * listening port while the real peer connects. Runs inside the VM.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire/gdx_wire.h"

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define MAX_MSG (8 << 20)
#define NMSG	24

static const ncclNet_v7_t *net_up(void)
{
	static struct gdx_plugin plugin;

	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	return plugin.v7;
}

static size_t msg_size(int i)
{
	/* A spread from 0 to 8 MiB, odd sizes included. */
	return i == 0 ? 0 : ((size_t)i * 2654435761u) % MAX_MSG;
}

struct peer {
	pid_t pid;
	int to_child[2], from_child[2];
};

static void xwrite(int fd, const void *buf, size_t len)
{
	ASSERT_EQ(write(fd, buf, len), (ssize_t)len);
}

static void xread(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			gdx_test_fail(__FILE__, __LINE__, "peer pipe closed");
		got += (size_t)n;
	}
}

static void peer_start(struct peer *pr, void (*body)(int in, int out))
{
	ASSERT_EQ(pipe(pr->to_child), 0);
	ASSERT_EQ(pipe(pr->from_child), 0);
	pr->pid = fork();
	ASSERT(pr->pid >= 0);
	if (pr->pid == 0) {
		close(pr->to_child[1]);
		close(pr->from_child[0]);
		body(pr->to_child[0], pr->from_child[1]);
		_exit(0);
	}
	close(pr->to_child[0]);
	close(pr->from_child[1]);
}

static int peer_wait(struct peer *pr)
{
	int status;

	ASSERT_EQ(waitpid(pr->pid, &status, 0), pr->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void *connect_from_handle(const ncclNet_v7_t *n, int dev, char *handle)
{
	void *send = NULL;

	for (double t0 = gdx_now_s(); !send;) {
		ASSERT_EQ(n->connect(dev, handle, &send, NULL), ncclSuccess);
		if (gdx_now_s() - t0 > 20)
			gdx_test_fail(__FILE__, __LINE__, "connect did not finish");
	}
	return send;
}

static void *accept_one(const ncclNet_v7_t *n, void *listen)
{
	void *recv = NULL;

	for (double t0 = gdx_now_s(); !recv;) {
		ASSERT_EQ(n->accept(listen, &recv, NULL), ncclSuccess);
		if (gdx_now_s() - t0 > 20)
			gdx_test_fail(__FILE__, __LINE__, "accept did not finish");
	}
	return recv;
}

static void *send_one(const ncclNet_v7_t *n, void *comm, struct gdx_buf *b, size_t size)
{
	void *req = NULL;

	for (double t0 = gdx_now_s(); !req;) {
		ASSERT_EQ(n->isend(comm, b->mem, (int)size, 0, b->mh, &req), ncclSuccess);
		if (gdx_now_s() - t0 > 30)
			gdx_test_fail(__FILE__, __LINE__, "no clear-to-send");
	}
	return req;
}

/* Child: connects on rxe1 with the handle it is given, sends the stream. */
static void sender_body(int in, int out)
{
	const ncclNet_v7_t *n = net_up();
	char handle[NCCL_NET_HANDLE_MAXSIZE], ok = 1;
	struct gdx_buf b;
	void *send;
	int got;

	xread(in, handle, sizeof(handle));
	send = connect_from_handle(n, 1, handle);
	gdx_buf_alloc(n, send, MAX_MSG, 0, &b);
	for (int i = 0; i < NMSG; i++) {
		gdx_fill(b.mem, msg_size(i), (uint32_t)i);
		ASSERT_EQ(gdx_wait(n, send_one(n, send, &b, msg_size(i)), &got, 60), ncclSuccess);
		ASSERT_EQ(got, (int)msg_size(i));
	}
	xwrite(out, &ok, 1);
	/* Stay until told, or be killed here with nothing on the wire. */
	xread(in, &ok, 1);
	gdx_buf_free(n, send, &b);
	ASSERT_EQ(n->closeSend(send), ncclSuccess);
}

static void *listen_and_hand_over(const ncclNet_v7_t *n, struct peer *pr)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	void *listen = NULL;

	ASSERT_EQ(n->listen(0, handle, &listen), ncclSuccess);
	xwrite(pr->to_child[1], handle, sizeof(handle));
	return listen;
}

static void receive_stream(const ncclNet_v7_t *n, void *recv, struct gdx_buf *b)
{
	for (int i = 0; i < NMSG; i++) {
		int size = MAX_MSG, tag = 0, got = -1;
		void *data = b->mem, *req = NULL;

		ASSERT_EQ(n->irecv(recv, 1, &data, &size, &tag, &b->mh, &req), ncclSuccess);
		ASSERT_EQ(gdx_wait(n, req, &got, 60), ncclSuccess);
		ASSERT_EQ(got, (int)msg_size(i));
		ASSERT_EQ(gdx_check(b->mem, msg_size(i), (uint32_t)i), -1);
	}
}

static void test_two_processes(void)
{
	struct peer pr;
	const ncclNet_v7_t *n;
	struct gdx_buf b;
	void *listen, *recv;
	char ok = 0;

	peer_start(&pr, sender_body);
	n = net_up();
	listen = listen_and_hand_over(n, &pr);
	recv = accept_one(n, listen);
	gdx_buf_alloc(n, recv, MAX_MSG, 0, &b);
	receive_stream(n, recv, &b);
	xread(pr.from_child[0], &ok, 1);
	xwrite(pr.to_child[1], &ok, 1);
	ASSERT_EQ(peer_wait(&pr), 0);
	gdx_buf_free(n, recv, &b);
	ASSERT_EQ(n->closeRecv(recv), ncclSuccess);
	ASSERT_EQ(n->closeListen(listen), ncclSuccess);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* the debug build (make DEBUG=1), or GDX_DEBUG_PLUGIN */
static const char *debug_plugin(void)
{
	const char *p = getenv("GDX_DEBUG_PLUGIN");

	return p ? p : "build-debug/libnccl-net-gdx.so";
}

/* The plugin at path, for this process from now on. */
static const ncclNet_v7_t *net_up_at(const char *path)
{
	char *was = getenv("GDX_PLUGIN") ? strdup(getenv("GDX_PLUGIN")) : NULL;
	const ncclNet_v7_t *n;

	ASSERT_EQ(setenv("GDX_PLUGIN", path, 1), 0);
	n = net_up();
	if (was)
		ASSERT_EQ(setenv("GDX_PLUGIN", was, 1), 0);
	else
		ASSERT_EQ(unsetenv("GDX_PLUGIN"), 0);
	free(was);
	return n;
}

static void debug_sender_body(int in, int out)
{
	ASSERT_EQ(setenv("GDX_PLUGIN", debug_plugin(), 1), 0);
	sender_body(in, out);
}

/* One end a debug build (which writes and checks each piece's record,
 * gdx_req.h), the other a release build: the stream of chunked messages
 * arrives whole. Nodes of one job run mixed builds while a site chases a
 * bug; 0.4.1's debug receiver aborted on a release sender's pieces, and its
 * debug sender wrote records past a release receiver's control region.
 * Each way is a test of its own: a process whose plugin is up cannot fork
 * the other end (its verbs objects do not survive a fork). */
static void debug_and_release(bool debug_sends)
{
	const char *release =
		getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so";
	struct peer pr;
	const ncclNet_v7_t *n;
	struct gdx_buf b;
	void *listen, *recv;
	char ok = 0;

	if (access(debug_plugin(), R_OK))
		gdx_test_fail(__FILE__, __LINE__, "%s is missing: make DEBUG=1 %s", debug_plugin(),
			      debug_plugin());
	/* every message over 4 QPs in pieces, each with its record */
	ASSERT_EQ(setenv("NCCL_GDX_QPS_PER_CONNECTION", "4", 1), 0);
	ASSERT_EQ(setenv("NCCL_GDX_SPLIT_DATA_ON_QPS", "1", 1), 0);
	peer_start(&pr, debug_sends ? debug_sender_body : sender_body);
	n = net_up_at(debug_sends ? release : debug_plugin());
	listen = listen_and_hand_over(n, &pr);
	recv = accept_one(n, listen);
	gdx_buf_alloc(n, recv, MAX_MSG, 0, &b);
	receive_stream(n, recv, &b);
	xread(pr.from_child[0], &ok, 1);
	xwrite(pr.to_child[1], &ok, 1);
	ASSERT_EQ(peer_wait(&pr), 0);
	gdx_buf_free(n, recv, &b);
	ASSERT_EQ(n->closeRecv(recv), ncclSuccess);
	ASSERT_EQ(n->closeListen(listen), ncclSuccess);
	printf("  %s sender, %s receiver: %d messages up to 8 MiB, each split over 4 QPs, every "
	       "byte right\n",
	       debug_sends ? "debug" : "release", debug_sends ? "release" : "debug", NMSG);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_debug_sender_release_receiver(void)
{
	debug_and_release(true);
}

static void test_release_sender_debug_receiver(void)
{
	debug_and_release(false);
}

static void test_sender_killed_while_receive_waits(void)
{
	struct peer pr;
	const ncclNet_v7_t *n;
	struct gdx_buf b;
	void *listen, *recv, *req = NULL, *data;
	int size = 4096, tag = 0, got;
	char ok = 0;
	double t0, waited;

	peer_start(&pr, sender_body);
	n = net_up();
	listen = listen_and_hand_over(n, &pr);
	recv = accept_one(n, listen);
	gdx_buf_alloc(n, recv, MAX_MSG, 0, &b);
	receive_stream(n, recv, &b);
	xread(pr.from_child[0], &ok, 1);
	/* The clear-to-send goes out and is acknowledged; no data will follow. */
	data = b.mem;
	ASSERT_EQ(n->irecv(recv, 1, &data, &size, &tag, &b.mh, &req), ncclSuccess);
	usleep(200000);
	kill(pr.pid, SIGKILL);
	ASSERT_EQ(peer_wait(&pr), 128 + SIGKILL);
	t0 = gdx_now_s();
	ASSERT_EQ(gdx_wait(n, req, &got, 30), ncclRemoteError);
	waited = gdx_now_s() - t0;
	printf("  receiver saw the dead sender after %.3f s\n", waited);
	ASSERT(waited < 5);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed its connection with requests pending");
	gdx_buf_free(n, recv, &b);
	ASSERT_EQ(n->closeRecv(recv), ncclSuccess);
	ASSERT_EQ(n->closeListen(listen), ncclSuccess);
}

/* Child: accepts on rxe0, posts one receive, reports, then waits to be killed. */
static void receiver_body(int in, int out)
{
	const ncclNet_v7_t *n = net_up();
	char handle[NCCL_NET_HANDLE_MAXSIZE], ok = 1;
	struct gdx_buf b;
	void *listen = NULL, *recv, *req = NULL, *data;
	int size = 1 << 20, tag = 0, got;

	ASSERT_EQ(n->listen(0, handle, &listen), ncclSuccess);
	xwrite(out, handle, sizeof(handle));
	recv = accept_one(n, listen);
	gdx_buf_alloc(n, recv, 1 << 20, 0, &b);
	data = b.mem;
	ASSERT_EQ(n->irecv(recv, 1, &data, &size, &tag, &b.mh, &req), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, req, &got, 60), ncclSuccess);
	xwrite(out, &ok, 1);
	xread(in, &ok, 1);
}

static void test_receiver_killed_while_send_waits(void)
{
	struct peer pr;
	const ncclNet_v7_t *n;
	char handle[NCCL_NET_HANDLE_MAXSIZE], ok;
	struct gdx_buf b;
	void *send, *req = NULL;
	ncclResult_t res = ncclSuccess;
	int got;
	double t0, waited;

	peer_start(&pr, receiver_body);
	n = net_up();
	xread(pr.from_child[0], handle, sizeof(handle));
	send = connect_from_handle(n, 1, handle);
	gdx_buf_alloc(n, send, 1 << 20, 0, &b);
	ASSERT_EQ(gdx_wait(n, send_one(n, send, &b, 1 << 20), &got, 60), ncclSuccess);
	xread(pr.from_child[0], &ok, 1);
	kill(pr.pid, SIGKILL);
	ASSERT_EQ(peer_wait(&pr), 128 + SIGKILL);
	/* No clear-to-send will ever come: isend must fail, not spin forever. */
	t0 = gdx_now_s();
	while (res == ncclSuccess && !req && gdx_now_s() - t0 < 30)
		res = n->isend(send, b.mem, 1 << 20, 0, b.mh, &req);
	waited = gdx_now_s() - t0;
	printf("  sender saw the dead receiver after %.3f s\n", waited);
	ASSERT_EQ(res, ncclRemoteError);
	ASSERT(waited < 5);
	gdx_buf_free(n, send, &b);
	ASSERT_EQ(n->closeSend(send), ncclSuccess);
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

/*
 * Hostile clients on the listening port while the real peer (another
 * process) connects: garbage, one fishing for the nonce with a hello that
 * has none, and more silent ones from this address than the listener holds.
 * The real peer connects and streams every byte; the fishing client learns
 * nothing; the silent ones over the bound are closed with one line.
 */
static void test_hostile_client_while_peer_connects(void)
{
	enum { SILENT = 40 };
	struct peer pr;
	const ncclNet_v7_t *n;
	char handle[NCCL_NET_HANDLE_MAXSIZE], ok = 0, junk[100];
	struct gdx_handle *h = (struct gdx_handle *)handle;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct gdx_wire_hello fish_hello, answer;
	struct pollfd p = {.events = POLLIN};
	struct gdx_buf b;
	void *listen = NULL, *recv;
	int fd, fish, silent[SILENT];
	ssize_t got = 0;

	/* Fork before the plugin opens any verbs device: contexts do not cross fork. */
	peer_start(&pr, sender_body);
	n = net_up();
	ASSERT_EQ(n->listen(0, handle, &listen), ncclSuccess);
	sa.sin_port = h->port;
	memcpy(&sa.sin_addr, h->addr, 4);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	memset(junk, 0xee, sizeof(junk));
	ASSERT_EQ(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	fish = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_EQ(connect(fish, (struct sockaddr *)&sa, sizeof(sa)), 0);
	gdx_wire_hello_pack(&fish_hello, 0, 1);
	ASSERT_EQ(write(fish, &fish_hello, sizeof(fish_hello)), (ssize_t)sizeof(fish_hello));
	for (int i = 0; i < SILENT; i++) {
		silent[i] = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_EQ(connect(silent[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	xwrite(pr.to_child[1], handle, sizeof(handle));
	recv = accept_one(n, listen);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused connection from");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "does not carry the nonce");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "incoming connection(s) that sent no hello");
	/* the fishing client got a refusal that says why, and no nonce */
	p.fd = fish;
	while (got < (ssize_t)sizeof(answer) && poll(&p, 1, 2000) > 0) {
		ssize_t r = read(fish, (char *)&answer + got, sizeof(answer) - (size_t)got);

		if (r <= 0)
			break;
		got += r;
	}
	ASSERT_EQ(got, (ssize_t)sizeof(answer));
	ASSERT(!holds_nonce(&answer, sizeof(answer), le64toh(h->nonce)));
	ASSERT_EQ(le32toh(answer.refused), GDX_REFUSED_NONCE);
	gdx_buf_alloc(n, recv, MAX_MSG, 0, &b);
	receive_stream(n, recv, &b);
	xread(pr.from_child[0], &ok, 1);
	xwrite(pr.to_child[1], &ok, 1);
	ASSERT_EQ(peer_wait(&pr), 0);
	gdx_buf_free(n, recv, &b);
	ASSERT_EQ(n->closeRecv(recv), ncclSuccess);
	ASSERT_EQ(n->closeListen(listen), ncclSuccess);
	close(fd);
	close(fish);
	for (int i = 0; i < SILENT; i++)
		close(silent[i]);
}

GDX_TESTS_MAIN(TEST(test_two_processes, 300), TEST(test_debug_sender_release_receiver, 300),
	       TEST(test_release_sender_debug_receiver, 300),
	       TEST(test_sender_killed_while_receive_waits, 300),
	       TEST(test_receiver_killed_while_send_waits, 120),
	       TEST(test_hostile_client_while_peer_connects, 300))
