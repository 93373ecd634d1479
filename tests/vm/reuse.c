/* SPDX-License-Identifier: MIT */
/*
 * Reuse after completion, in every mode NCCL can turn on. NCCL refills a
 * send buffer (its FIFO slot) the moment test says the send is done, and
 * hands a receive buffer to the GPU the moment test says the receive is
 * done: a request is done only when the NIC is done with its buffer.
 *
 * The loop is NCCL's proxy (src/transport/net.cc): receives posted
 * NCCL_STEPS ahead, the oldest request of each side tested, one thread.
 * The sender scribbles over each send buffer the moment its request is
 * done; the receiver checks every byte of each message and the bytes past
 * it, scribbles over the buffer, and before posting it again checks that
 * nothing wrote into it meanwhile. Sizes from 0 to 16 MiB, aligned and odd
 * buffers, receives larger than the sends.
 *
 * One test per mode (the matrix of issue 23), each several rounds on a new
 * connection, since a race shows in some rounds only. Runs in the VM with
 * --pairs 2 (rxe0-rxe3), against $GDX_PLUGIN: scripts/run-tests.sh runs it
 * once against the release build and once against the debug build, whose
 * plugin aborts, naming the mode, when a request completes with a work
 * request still reading its buffer.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define NEWEST	      12
#define DEPTH	      8 /* NCCL_STEPS */
#define MAX_GROUP     8 /* buffers of a grouped receive, at most */
#define MAX_MSG	      (16u << 20)
#define GROUP_MAX     (2u << 20) /* largest buffer of a grouped receive here */
#define ROOM	      64	 /* past the largest message: odd offsets, canaries */
#define SEND_SCRIBBLE 0xe7
#define RECV_SCRIBBLE 0x5a

struct mode {
	const char *env; /* "VAR=value VAR=value", set before the plugin loads */
	int v;		 /* the table NCCL uses */
	bool fused;	 /* rxe1+rxe3 -> rxe0+rxe2, fused by makeVDevice */
	int group;	 /* buffers per receive: 1, or 2 to this many */
	bool flap;	 /* the wire under one rail down and up during each round */
	bool flush;	 /* iflush after each receive, as NCCL does for GPU memory */
};

/* ---- the bytes ---- */

/* A pattern by offset in the message, 8 bytes per step: fast enough to
 * fill and check 16 MiB messages in the VM, and no two (seed, offset) share
 * it in practice. */
static uint64_t pat(uint64_t seed, uint64_t word)
{
	uint64_t x = (word + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xd1b54a32d192ed03ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

static void pat_fill(char *p, size_t n, uint64_t seed)
{
	for (size_t w = 0; w * 8 < n; w++) {
		uint64_t v = pat(seed, w);

		memcpy(p + w * 8, &v, n - w * 8 < 8 ? n - w * 8 : 8);
	}
}

/* The first byte that differs from the pattern, or -1. */
static long pat_check(const char *p, size_t n, uint64_t seed)
{
	for (size_t w = 0; w * 8 < n; w++) {
		uint64_t v = pat(seed, w);
		size_t k = n - w * 8 < 8 ? n - w * 8 : 8;

		if (memcmp(p + w * 8, &v, k))
			for (size_t i = 0; i < k; i++)
				if (p[w * 8 + i] != ((const char *)&v)[i])
					return (long)(w * 8 + i);
	}
	return -1;
}

/* The first byte that is not c, or -1. */
static long first_not(const char *p, size_t n, int c)
{
	uint64_t all;
	size_t i = 0;

	memset(&all, c, sizeof(all));
	for (; i + 8 <= n; i += 8)
		if (memcmp(p + i, &all, 8))
			break;
	for (; i < n; i++)
		if ((unsigned char)p[i] != (unsigned char)c)
			return (long)i;
	return -1;
}

/* ---- what each message is ---- */

/* Every size class the data path treats apart: inline, the small immediate,
 * the adaptive-routing threshold, striping's minimum, max_msg_sz's
 * neighbours in miniature, and up to 16 MiB. */
static const size_t size_table[] = {
	0,     1,      3,      63,     64,	65,	 127,	  128,	   255,	    1023,
	1024,  1025,   4095,   4096,   8191,	8192,	 8193,	  16384,   65535,   65536,
	65537, 131073, 262147, 524288, 1048579, 1048576, 2097151, 4194307, MAX_MSG,
};
#define TABLE_N (sizeof(size_table) / sizeof(size_table[0]))

struct msg {
	int n;
	size_t size[MAX_GROUP], soff[MAX_GROUP], roff[MAX_GROUP];
	int order[MAX_GROUP]; /* the order the sender's ranks send in */
};

static uint32_t hash32(uint64_t x)
{
	x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
	return (uint32_t)(x ^ (x >> 29));
}

static void msg_of(const struct mode *m, uint64_t i, struct msg *out)
{
	static const size_t odd[] = {0, 1, 3, 7, 0, 13};
	size_t cap = m->group > 1 ? GROUP_MAX : MAX_MSG;

	out->n = m->group > 1 ? 2 + (int)(i % (uint64_t)(m->group - 1)) : 1;
	for (int j = 0; j < out->n; j++) {
		uint64_t k = i * (uint64_t)m->group + (uint64_t)j;
		uint32_t h = hash32(k + 77);
		size_t s;

		/* the table in turn, with a size of any magnitude between */
		if (k % 3 != 2)
			s = size_table[(k / 3 * 2 + k % 3) % TABLE_N];
		else
			s = h % (1u << (1 + h % 22)); /* up to 4 MiB */
		out->size[j] = s > cap ? cap - (h % 9) : s;
		out->soff[j] = odd[k % 6];
		out->roff[j] = odd[(k + 3) % 6];
		out->order[j] = (j + (int)(i % (uint64_t)out->n)) % out->n;
	}
}

static uint64_t seed_of(int round, uint64_t i, int j)
{
	return (uint64_t)round << 40 | i << 4 | (uint64_t)j;
}

/* ---- a round ---- */

struct side {
	char *mem;
	size_t part; /* bytes per buffer: a message's or a grouped receive's */
	int nbuf;    /* buffers per message, at most */
	void *mh;
};

static char *buf_at(const struct side *s, uint64_t i, int j)
{
	return s->mem + ((size_t)(i % DEPTH) * (size_t)s->nbuf + (size_t)j) * s->part;
}

struct pending_send {
	void *req;
	uint64_t i;
	int j;
};

struct round {
	const struct mode *m;
	struct gdx_drv *d;
	struct gdx_dpair p;
	struct side s, r;
	int round;
	uint64_t want;
	/* receiver */
	uint64_t rposted, rdone;
	void *rreq[DEPTH];
	struct msg rmsg[DEPTH];
	/* of each receive buffer, the bytes from its start that were written
	 * and then scribbled over when it was last handed back */
	size_t used[DEPTH][MAX_GROUP];
	/* sender: the next message, the parts of it sent, and every send not
	 * yet done, oldest first */
	uint64_t snext;
	int sparts;
	bool filled;
	struct pending_send q[DEPTH * MAX_GROUP];
	int qhead, qlen;
	uint64_t bytes, messages;
};

static void side_open(struct round *rd, struct side *s, void *comm, size_t part, int fill)
{
	size_t len = (size_t)DEPTH * (size_t)rd->m->group * part;

	s->part = part;
	s->nbuf = rd->m->group;
	s->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(s->mem != MAP_FAILED);
	memset(s->mem, fill, len);
	/* one registration per comm, as NCCL registers its buffer pool */
	gdx_drv_reg(rd->d, comm, s->mem, len, &s->mh);
}

static void side_close(struct round *rd, struct side *s, void *comm)
{
	ASSERT_EQ(gdx_drv_dereg(rd->d, comm, s->mh), ncclSuccess);
	munmap(s->mem, (size_t)DEPTH * (size_t)s->nbuf * s->part);
}

/* Receive proxy: post the next receive, its buffers checked untouched since
 * they were handed back. */
static bool recv_post(struct round *rd)
{
	uint64_t i = rd->rposted;
	struct msg *mg = &rd->rmsg[i % DEPTH];
	void *data[MAX_GROUP], *mhs[MAX_GROUP];
	size_t sizes[MAX_GROUP];
	int tags[MAX_GROUP];

	if (i >= rd->want || i >= rd->rdone + DEPTH)
		return false;
	msg_of(rd->m, i, mg);
	for (int j = 0; j < mg->n; j++) {
		char *b = buf_at(&rd->r, i, j);
		long bad = first_not(b, rd->used[i % DEPTH][j], RECV_SCRIBBLE);

		if (bad >= 0)
			gdx_test_fail(
				__FILE__, __LINE__,
				"round %d: before message %llu: byte %ld of buffer %d is 0x%02x "
				"after it was handed back: something wrote into it",
				rd->round, (unsigned long long)i, bad, j, (unsigned char)b[bad]);
		data[j] = b + mg->roff[j];
		sizes[j] = rd->r.part - mg->roff[j]; /* larger than the send */
		tags[j] = 100 + j;
		mhs[j] = rd->r.mh;
	}
	rd->rreq[i % DEPTH] = NULL;
	ASSERT_EQ(
		gdx_drv_irecv(rd->d, rd->p.r, mg->n, data, sizes, tags, mhs, &rd->rreq[i % DEPTH]),
		ncclSuccess);
	if (!rd->rreq[i % DEPTH])
		return false; /* not now: NCCL posts it again */
	rd->rposted++;
	return true;
}

/* NCCL's iflush after a receive into GPU memory (here forced on host
 * memory), tested until done before the buffer is used. */
static void recv_flush(struct round *rd, const struct msg *mg, uint64_t i, const int *got)
{
	void *data[MAX_GROUP], *mhs[MAX_GROUP], *req = NULL;
	int sizes[MAX_GROUP], total = 0, done = 0;

	for (int j = 0; j < mg->n; j++) {
		data[j] = buf_at(&rd->r, i, j) + mg->roff[j];
		mhs[j] = rd->r.mh;
		sizes[j] = got[j];
		total += got[j];
	}
	if (!total)
		return; /* NCCL flushes only what received bytes */
	ASSERT_EQ(gdx_drv_iflush(rd->d, rd->p.r, mg->n, data, sizes, mhs, &req), ncclSuccess);
	ASSERT(req != NULL);
	for (double t0 = gdx_now_s(); !done;) {
		ASSERT_EQ(gdx_drv_test(rd->d, req, &done, NULL), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
}

/* Receive proxy: test the oldest receive; once done, check it and hand it
 * back (scribbled over). */
static void recv_test(struct round *rd)
{
	uint64_t i = rd->rdone;
	const struct msg *mg = &rd->rmsg[i % DEPTH];
	int done = 0, got[MAX_GROUP];

	if (i >= rd->rposted)
		return;
	memset(got, 0xff, sizeof(got));
	ASSERT_EQ(gdx_drv_test(rd->d, rd->rreq[i % DEPTH], &done, got), ncclSuccess);
	if (!done)
		return;
	if (rd->m->flush)
		recv_flush(rd, mg, i, got);
	for (int j = 0; j < mg->n; j++) {
		char *b = buf_at(&rd->r, i, j);
		size_t n = mg->size[j], end;
		long bad;

		if (got[j] != (int)n)
			gdx_test_fail(
				__FILE__, __LINE__,
				"round %d: message %llu buffer %d: %d bytes reported, %zu sent",
				rd->round, (unsigned long long)i, j, got[j], n);
		bad = pat_check(b + mg->roff[j], n, seed_of(rd->round, i, j));
		if (bad >= 0) {
			unsigned char c = (unsigned char)b[mg->roff[j] + (size_t)bad];

			gdx_test_fail(
				__FILE__, __LINE__,
				"round %d: message %llu buffer %d (%zu bytes, sent from offset "
				"%zu into offset %zu): byte %ld is 0x%02x%s",
				rd->round, (unsigned long long)i, j, n, mg->soff[j], mg->roff[j],
				bad, c,
				c == SEND_SCRIBBLE ? ", the sender's scribble: its buffer was "
						     "reused while the NIC still read it"
						   : "");
		}
		/* nothing before the message, or in the ROOM bytes past it */
		end = mg->roff[j] + n + ROOM < rd->r.part ? mg->roff[j] + n + ROOM : rd->r.part;
		bad = first_not(b, mg->roff[j], RECV_SCRIBBLE);
		if (bad < 0 && (bad = first_not(b + mg->roff[j] + n, end - mg->roff[j] - n,
						RECV_SCRIBBLE)) >= 0)
			bad += (long)(mg->roff[j] + n);
		if (bad >= 0)
			gdx_test_fail(__FILE__, __LINE__,
				      "round %d: message %llu buffer %d (%zu bytes at offset %zu): "
				      "byte %ld of the buffer, outside the message, was written",
				      rd->round, (unsigned long long)i, j, n, mg->roff[j], bad);
		rd->bytes += n;
		/* handed back: NCCL's GPU now uses it; checked again before it
		 * is posted for another message */
		memset(b, RECV_SCRIBBLE, end);
		rd->used[i % DEPTH][j] = end;
	}
	rd->rdone++;
	rd->messages++;
}

/* Send proxy: the parts of the next message, each sent until the plugin
 * takes it. */
static void send_post(struct round *rd)
{
	while (rd->snext < rd->want && rd->qlen < DEPTH * MAX_GROUP) {
		uint64_t i = rd->snext;
		struct msg mg;
		void *req = NULL;
		int j;

		/* the slot of message i - DEPTH is free once its sends are done */
		if (rd->qlen && rd->q[rd->qhead].i + DEPTH <= i)
			return;
		msg_of(rd->m, i, &mg);
		if (!rd->filled) {
			for (int k = 0; k < mg.n; k++)
				pat_fill(buf_at(&rd->s, i, k) + mg.soff[k], mg.size[k],
					 seed_of(rd->round, i, k));
			rd->filled = true;
		}
		j = mg.order[rd->sparts];
		ASSERT_EQ(gdx_drv_isend(rd->d, rd->p.s, buf_at(&rd->s, i, j) + mg.soff[j],
					mg.size[j], 100 + j, rd->s.mh, &req),
			  ncclSuccess);
		if (!req)
			return; /* no clear-to-send yet: NCCL calls again */
		rd->q[(rd->qhead + rd->qlen++) % (DEPTH * MAX_GROUP)] =
			(struct pending_send){req, i, j};
		if (++rd->sparts == mg.n) {
			rd->sparts = 0;
			rd->filled = false;
			rd->snext++;
		}
	}
}

/* Send proxy: test the oldest send; once done, its buffer is NCCL's again:
 * scribble over it at once, as the next step's data would. */
static void send_test(struct round *rd)
{
	struct pending_send *ps = &rd->q[rd->qhead];
	struct msg mg;
	int done = 0, got = -1;

	if (!rd->qlen)
		return;
	ASSERT_EQ(gdx_drv_test(rd->d, ps->req, &done, &got), ncclSuccess);
	if (!done)
		return;
	msg_of(rd->m, ps->i, &mg);
	memset(buf_at(&rd->s, ps->i, ps->j) + mg.soff[ps->j], SEND_SCRIBBLE, mg.size[ps->j]);
	ASSERT_EQ(got, (int)mg.size[ps->j]);
	rd->qhead = (rd->qhead + 1) % (DEPTH * MAX_GROUP);
	rd->qlen--;
}

/* ---- the wire under a rail, down and up during a round ---- */

static volatile int flap_done;

static void *flapper(void *arg)
{
	(void)arg;
	usleep(300000);
	ASSERT_EQ(system("ip link set veth1 down"), 0);
	usleep(1000000);
	ASSERT_EQ(system("ip link set veth1 up"), 0);
	gdx_port_wait_active("rxe1");
	gdx_port_wait_active("rxe0");
	__atomic_store_n(&flap_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void round_run(struct gdx_drv *d, const struct mode *m, int ldev, int cdev, int round)
{
	size_t part = (m->group > 1 ? GROUP_MAX : MAX_MSG) + ROOM;
	struct round *rd = calloc(1, sizeof(*rd));
	const uint64_t base = 48;
	pthread_t flap;
	double t0;

	ASSERT(rd != NULL);
	rd->m = m;
	rd->d = d;
	rd->round = round;
	rd->want = base;
	gdx_drv_pair(d, ldev, cdev, &rd->p);
	side_open(rd, &rd->s, rd->p.s, part, SEND_SCRIBBLE);
	side_open(rd, &rd->r, rd->p.r, part, RECV_SCRIBBLE);
	if (m->flap) {
		gdx_test_log_clear();
		flap_done = 0;
		ASSERT_EQ(pthread_create(&flap, NULL, flapper, NULL), 0);
	}
	t0 = gdx_now_s();
	while (rd->rdone < rd->want || rd->qlen || rd->snext < rd->want) {
		/* with a flap: on until the rail is back and carries again */
		if (m->flap && rd->want < rd->rdone + DEPTH &&
		    (!__atomic_load_n(&flap_done, __ATOMIC_ACQUIRE) ||
		     !strstr(gdx_test_infos(), "back in the connection")))
			rd->want = rd->rdone + DEPTH;
		if (gdx_now_s() - t0 > 120)
			gdx_test_fail(__FILE__, __LINE__,
				      "round %d: after 120 s, %llu of %llu messages received, %llu "
				      "sent, %d sends not done",
				      round, (unsigned long long)rd->rdone,
				      (unsigned long long)rd->want, (unsigned long long)rd->snext,
				      rd->qlen);
		while (recv_post(rd))
			;
		send_post(rd);
		send_test(rd);
		recv_test(rd);
	}
	if (m->flap) {
		ASSERT_EQ(pthread_join(flap, NULL), 0);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "taken out of the connection");
		ASSERT_STR_CONTAINS(gdx_test_infos(), "back in the connection");
	}
	printf("  round %d: %llu messages, %.1f MiB, every byte checked after reuse (%.1f s)\n",
	       round, (unsigned long long)rd->messages, (double)rd->bytes / 1048576.0,
	       gdx_now_s() - t0);
	fflush(stdout);
	side_close(rd, &rd->s, rd->p.s);
	side_close(rd, &rd->r, rd->p.r);
	gdx_drv_unpair(d, &rd->p);
	free(rd);
}

/* "A=1 B=2": each set in the environment the plugin reads at init. */
static void set_env(const char *env)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", env ? env : "");
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');

		ASSERT(eq != NULL);
		*eq = '\0';
		ASSERT_EQ(setenv(t, eq + 1, 1), 0);
	}
}

static int rounds(void)
{
	const char *s = getenv("GDX_REUSE_ROUNDS");

	return s && atoi(s) > 0 ? atoi(s) : 3;
}

static void run_mode(const struct mode *m)
{
	struct gdx_drv d;
	int ldev = 0, cdev = 1; /* rxe0 <- rxe1 */

	gdx_vm_links_up();
	set_env(m->env);
	gdx_drv_load(&d, m->v ? m->v : NEWEST);
	if (m->fused) {
		const int a[] = {0, 2}, b[] = {1, 3};

		ASSERT_EQ(gdx_drv_make_vdevice(&d, &ldev, 2, a), ncclSuccess);
		ASSERT_EQ(gdx_drv_make_vdevice(&d, &cdev, 2, b), ncclSuccess);
	}
	printf("  %s%s%s%s%s, %d round(s), plugin %s\n", m->env ? m->env : "defaults",
	       m->fused ? ", fused rxe1+rxe3 -> rxe0+rxe2" : "",
	       m->group > 1 ? ", grouped receives" : "", m->flap ? ", a rail down and up" : "",
	       m->flush ? ", iflush after each receive" : "", rounds(),
	       getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so");
	/* scripts/run-tests.sh says which build it runs: the debug one must
	 * say it checks the invariant */
	if (getenv("GDX_REUSE_DEBUG"))
		ASSERT_STR_CONTAINS(gdx_test_infos(), "debug build: a request that completes");
	for (int r = 0; r < rounds(); r++)
		round_run(&d, m, ldev, cdev, r);
	if (!m->flap)
		ASSERT_EQ(gdx_test_warning_count(), 0);
}

#define MODE(fn, ...)                                        \
	static void fn(void)                                 \
	{                                                    \
		run_mode(&(const struct mode){__VA_ARGS__}); \
	}

#define AR0 "NCCL_GDX_ADAPTIVE_ROUTING=1 NCCL_GDX_AR_THRESHOLD=0"
#define FO  "NCCL_GDX_FAILOVER=1"

MODE(test_default, .group = 1)
MODE(test_default_v7, .v = 7, .group = 1)
MODE(test_adaptive_routing_threshold_0, .env = AR0, .group = 1)
MODE(test_adaptive_routing_default_threshold, .env = "NCCL_GDX_ADAPTIVE_ROUTING=1", .group = 1)
MODE(test_qps_4_round_robin, .env = "NCCL_GDX_QPS_PER_CONNECTION=4", .group = 1)
MODE(test_qps_4_split, .env = "NCCL_GDX_QPS_PER_CONNECTION=4 NCCL_GDX_SPLIT_DATA_ON_QPS=1",
     .group = 1)
MODE(test_qps_4_split_adaptive_routing,
     .env = AR0 " NCCL_GDX_QPS_PER_CONNECTION=4 NCCL_GDX_SPLIT_DATA_ON_QPS=1", .group = 1)
MODE(test_fused_weighted, .fused = true, .group = 1)
MODE(test_fused_even, .env = "NCCL_GDX_STRIPE_WEIGHTED=0", .fused = true, .group = 1)
MODE(test_fused_adaptive_routing_qps_2_split,
     .env = AR0 " NCCL_GDX_QPS_PER_CONNECTION=2 NCCL_GDX_SPLIT_DATA_ON_QPS=1", .fused = true,
     .group = 1)
MODE(test_fused_failover_rail_down_and_up, .env = FO, .fused = true, .group = 1, .flap = true)
MODE(test_fused_failover_adaptive_routing_rail_down_and_up, .env = FO " " AR0, .fused = true,
     .group = 1, .flap = true)
MODE(test_grouped, .group = MAX_GROUP)
MODE(test_grouped_fused_adaptive_routing, .env = AR0, .fused = true, .group = MAX_GROUP)
MODE(test_flush_forced_host_memory, .env = "NCCL_GDX_GDR_FLUSH=2", .group = 1, .flush = true)
MODE(test_flush_forced_grouped_adaptive_routing, .env = "NCCL_GDX_GDR_FLUSH=2 " AR0, .group = 4,
     .flush = true)

/*
 * The debug build's invariant catches the bug of 0.3.1: with
 * GDX_DEBUG_BREAK=ar-imm-only (debug builds only) the plugin names a
 * request on its zero-byte immediate alone, as 0.3.1 did, and completes it
 * while its bulk WRITE still reads the buffer. The run must abort, naming
 * adaptive routing, before any corrupted message is reported.
 */
static void test_debug_invariant_catches_ar_done_at_post(void)
{
	static const struct mode ar0 = {.env = AR0, .group = 1};
	char out[8192] = "";
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t child;

	ASSERT(getenv("GDX_REUSE_DEBUG") != NULL);
	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	child = fork();
	ASSERT(child >= 0);
	if (child == 0) {
		dup2(fds[1], 2);
		dup2(fds[1], 1);
		setenv("GDX_DEBUG_BREAK", "ar-imm-only", 1);
		setenv("GDX_REUSE_ROUNDS", "1", 1);
		run_mode(&ar0);
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	printf("  with the bug put back: %s\n",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
	printf("%s", strstr(out, "invariant broken") ? strstr(out, "invariant broken") : out);
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	ASSERT_STR_CONTAINS(out,
			    "invariant broken: a send request (mode: chunked, adaptive routing");
	ASSERT_STR_CONTAINS(out, "was not complete");
}

GDX_TESTS_MAIN(TEST(test_default, 300), TEST(test_default_v7, 300),
	       TEST(test_adaptive_routing_threshold_0, 300),
	       TEST(test_adaptive_routing_default_threshold, 300),
	       TEST(test_qps_4_round_robin, 300), TEST(test_qps_4_split, 300),
	       TEST(test_qps_4_split_adaptive_routing, 300), TEST(test_fused_weighted, 300),
	       TEST(test_fused_even, 300), TEST(test_fused_adaptive_routing_qps_2_split, 300),
	       TEST(test_fused_failover_rail_down_and_up, 300),
	       TEST(test_fused_failover_adaptive_routing_rail_down_and_up, 300),
	       TEST(test_grouped, 300), TEST(test_grouped_fused_adaptive_routing, 300),
	       TEST(test_flush_forced_host_memory, 300),
	       TEST(test_flush_forced_grouped_adaptive_routing, 300),
	       TEST_BY_NAME(test_debug_invariant_catches_ar_done_at_post, 120,
			    "needs the debug build: tests/vm/reuse_debug.sh"))
