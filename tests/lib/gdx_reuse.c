/* SPDX-License-Identifier: MIT */
/* The reuse matrix's round (gdx_reuse.h). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_reuse.h"
#include "gdx_test.h"

#define NEWEST	      12
#define MAX_WINDOW    32 /* NCCL_NET_MAX_REQUESTS */
#define MAX_GROUP     8	 /* buffers of a grouped receive, at most */
#define MAX_SENDERS   8
#define MAX_MSG	      (16u << 20)
#define BIG_MSG	      (4u << 20)
#define GROUP_MAX     (2u << 20) /* largest buffer of a grouped receive here */
#define ROOM	      64	 /* past the largest message: odd offsets, canaries */
#define SEND_SCRIBBLE 0xe7
#define RECV_SCRIBBLE 0x5a

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

static int window_of(const struct reuse_mode *m)
{
	return m->window ? m->window : 8; /* NCCL_STEPS */
}

static int senders_of(const struct reuse_mode *m)
{
	return m->senders ? m->senders : 1;
}

static size_t max_msg_of(const struct reuse_mode *m)
{
	if (m->group > 1)
		return m->max_msg && m->max_msg < GROUP_MAX ? m->max_msg : GROUP_MAX;
	return m->max_msg ? m->max_msg : MAX_MSG;
}

static void msg_of(const struct reuse_mode *m, uint64_t i, struct msg *out)
{
	static const size_t odd[] = {0, 1, 3, 7, 0, 13};
	size_t cap = max_msg_of(m);

	out->n = m->group > 1 ? 2 + (int)(i % (uint64_t)(m->group - 1)) : 1;
	for (int j = 0; j < out->n; j++) {
		uint64_t k = i * (uint64_t)m->group + (uint64_t)j;
		uint32_t h = hash32(k + 77);
		size_t s;

		if (m->big_first)
			/* one large message, then a window's worth of small ones
			 * that complete while it is on its way */
			s = i % (uint64_t)window_of(m) == 0 ? BIG_MSG - (h % 3) : h % 4097;
		else if (k % 3 != 2) /* the table in turn, with a size of any magnitude between */
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

/* The tag of buffer j of message i: each sender its own (PXN), each buffer
 * of a group its own. */
static int tag_of(const struct reuse_mode *m, uint64_t i, int j)
{
	return 100 + (int)(i % (uint64_t)senders_of(m)) * MAX_GROUP + j;
}

/* ---- a round ---- */

/* The receive side is not to be called (a pause, reuse_pause): set by the
 * flapper around a flap. */
static volatile int recv_paused;
/* and the main loop has stopped calling it (REUSE_IDLE: once its receives
 * in flight are done), so that the wire goes down only then */
static volatile int recv_quiet;

/* Each side's buffers: window slots of a message each (its group's parts),
 * taken by a message as it is posted and free again once it is done, in
 * whatever order that is: NCCL keeps up to 32 requests in flight on a comm
 * and hands each buffer back as its own request completes. */
struct side {
	char *mem;
	size_t part; /* bytes per buffer: a message's or a grouped receive's */
	int nbuf;    /* buffers per message, at most */
	int window;
	bool busy[MAX_WINDOW];
	void *mh;
};

static char *buf_at(const struct side *s, int slot, int j)
{
	return s->mem + ((size_t)slot * (size_t)s->nbuf + (size_t)j) * s->part;
}

static int slot_take(struct side *s)
{
	for (int b = 0; b < s->window; b++)
		if (!s->busy[b]) {
			s->busy[b] = true;
			return b;
		}
	return -1;
}

/* A receive in flight: message i in slot. */
struct pending_recv {
	void *req;
	uint64_t i;
	int slot;
	struct msg mg;
};

/* A send in flight: part j of message i, from slot. */
struct pending_send {
	void *req;
	uint64_t i;
	int j, slot;
};

struct round {
	const struct reuse_mode *m;
	struct gdx_drv *d;
	struct gdx_dpair p;
	struct side s, r;
	int round, window, senders;
	uint64_t want;
	unsigned rng;
	/* receiver: the next message, and every receive in flight, oldest first */
	uint64_t rposted;
	struct pending_recv rq[MAX_WINDOW];
	int rlen;
	/* of each receive slot's buffers, the bytes from their start that were
	 * written and then scribbled over when last handed back */
	size_t used[MAX_WINDOW][MAX_GROUP];
	/* sender: the next message, its slot and the parts of it sent, and
	 * every send not yet done, oldest first; each slot's parts in flight */
	uint64_t snext;
	int sslot, sparts;
	struct pending_send q[MAX_WINDOW * MAX_GROUP];
	int qlen;
	int sleft[MAX_WINDOW];
	uint64_t bytes, messages, completions;
	uint64_t refused;      /* irecv calls that gave no request (the slot's receive in flight) */
	uint64_t paused_turns; /* turns the receive side was not called */
};

static void side_open(struct round *rd, struct side *s, void *comm, size_t part, int fill)
{
	size_t len = (size_t)rd->window * (size_t)rd->m->group * part;

	s->part = part;
	s->nbuf = rd->m->group;
	s->window = rd->window;
	s->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(s->mem != MAP_FAILED);
	memset(s->mem, fill, len);
	/* one registration per comm, as NCCL registers its buffer pool */
	gdx_drv_reg(rd->d, comm, s->mem, len, &s->mh);
}

static void side_close(struct round *rd, struct side *s, void *comm)
{
	ASSERT_EQ(gdx_drv_dereg(rd->d, comm, s->mh), ncclSuccess);
	munmap(s->mem, (size_t)s->window * (size_t)s->nbuf * s->part);
}

/* Receive proxy: post the next receive into a free slot, its buffers
 * checked untouched since they were handed back. */
static bool recv_post(struct round *rd)
{
	uint64_t i = rd->rposted;
	struct pending_recv *pr = &rd->rq[rd->rlen];
	void *data[MAX_GROUP], *mhs[MAX_GROUP];
	size_t sizes[MAX_GROUP];
	int tags[MAX_GROUP], b;

	/* paused (REUSE_IDLE finishing what is in flight): nothing new */
	if (i >= rd->want || rd->rlen == rd->window ||
	    __atomic_load_n(&recv_paused, __ATOMIC_ACQUIRE))
		return false;
	b = slot_take(&rd->r);
	ASSERT(b >= 0);
	msg_of(rd->m, i, &pr->mg);
	for (int j = 0; j < pr->mg.n; j++) {
		char *buf = buf_at(&rd->r, b, j);
		long bad = first_not(buf, rd->used[b][j], RECV_SCRIBBLE);

		if (bad >= 0)
			gdx_test_fail(
				__FILE__, __LINE__,
				"round %d: before message %llu: byte %ld of buffer %d is 0x%02x "
				"after it was handed back: something wrote into it",
				rd->round, (unsigned long long)i, bad, j, (unsigned char)buf[bad]);
		data[j] = buf + pr->mg.roff[j];
		sizes[j] = rd->r.part - pr->mg.roff[j]; /* larger than the send */
		tags[j] = tag_of(rd->m, i, j);
		mhs[j] = rd->r.mh;
	}
	pr->req = NULL;
	ASSERT_EQ(gdx_drv_irecv(rd->d, rd->p.r, pr->mg.n, data, sizes, tags, mhs, &pr->req),
		  ncclSuccess);
	if (!pr->req) {
		rd->r.busy[b] = false;
		rd->refused++;
		return false; /* not now: NCCL posts it again */
	}
	pr->i = i;
	pr->slot = b;
	rd->rlen++;
	rd->rposted++;
	return true;
}

/* NCCL's iflush after a receive into GPU memory (here forced on host
 * memory), tested until done before the buffer is used. */
static void recv_flush(struct round *rd, const struct pending_recv *pr, const int *got)
{
	void *data[MAX_GROUP], *mhs[MAX_GROUP], *req = NULL;
	int sizes[MAX_GROUP], total = 0, done = 0;

	for (int j = 0; j < pr->mg.n; j++) {
		data[j] = buf_at(&rd->r, pr->slot, j) + pr->mg.roff[j];
		mhs[j] = rd->r.mh;
		sizes[j] = got[j];
		total += got[j];
	}
	if (!total)
		return; /* NCCL flushes only what received bytes */
	ASSERT_EQ(gdx_drv_iflush(rd->d, rd->p.r, pr->mg.n, data, sizes, mhs, &req), ncclSuccess);
	ASSERT(req != NULL);
	for (double t0 = gdx_now_s(); !done;) {
		ASSERT_EQ(gdx_drv_test(rd->d, req, &done, NULL), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
}

/* A receive test found done: check it and hand it back (scribbled over). */
static void recv_check(struct round *rd, const struct pending_recv *pr, const int *got)
{
	const struct msg *mg = &pr->mg;
	uint64_t i = pr->i;

	if (rd->m->flush)
		recv_flush(rd, pr, got);
	for (int j = 0; j < mg->n; j++) {
		char *b = buf_at(&rd->r, pr->slot, j);
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
				c == SEND_SCRIBBLE   ? ", the sender's scribble: its buffer was "
						       "reused while the NIC still read it"
				: c == RECV_SCRIBBLE ? ", not written: the receive was done before "
						       "its bytes landed"
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
		rd->used[pr->slot][j] = end;
	}
	rd->messages++;
}

/* Tests in-flight receive k once; true when it was done (and is gone). */
static bool recv_test_one(struct round *rd, int k)
{
	struct pending_recv *pr = &rd->rq[k];
	int done = 0, got[MAX_GROUP];

	memset(got, 0xff, sizeof(got));
	ASSERT_EQ(gdx_drv_test(rd->d, pr->req, &done, got), ncclSuccess);
	if (!done)
		return false;
	rd->completions++;
	recv_check(rd, pr, got);
	rd->r.busy[pr->slot] = false;
	memmove(pr, pr + 1, (size_t)(rd->rlen - k - 1) * sizeof(*pr));
	rd->rlen--;
	return true;
}

/* The oldest in-flight entry of sender (rank) s of n entries whose message
 * is msg(k), or -1. */
#define OLDEST_OF(n, msg, s, senders)                                        \
	({                                                                   \
		int found_ = -1;                                             \
		for (int k_ = 0; k_ < (n); k_++)                             \
			if ((int)((msg(k_)) % (uint64_t)(senders)) == (s)) { \
				found_ = k_;                                 \
				break;                                       \
			}                                                    \
		found_;                                                      \
	})

/* Which in-flight request (of n) to test this turn, by the mode's order:
 * the oldest; or each, newest first or at random. Returns how many to test
 * and their indices in pick[], as they are before any is removed. */
static int pick_order(struct round *rd, int n, int *pick)
{
	if (!n)
		return 0;
	switch (rd->m->order) {
	case REUSE_OLDEST: pick[0] = 0; return 1;
	case REUSE_NEWEST:
		for (int k = 0; k < n; k++)
			pick[k] = n - 1 - k;
		return n;
	case REUSE_RANDOM:
		for (int k = 0; k < n; k++)
			pick[k] = k;
		for (int k = n - 1; k > 0; k--) {
			int r = rand_r(&rd->rng) % (k + 1), t = pick[k];

			pick[k] = pick[r];
			pick[r] = t;
		}
		return n;
	}
	return 0;
}

/* Tests the requests pick[0..n) of a list from which each one done is
 * removed: an index past a removed one has moved down by one. */
#define TEST_PICKED(n, pick, test_one)                                         \
	do {                                                                   \
		for (int a_ = 0; a_ < (n); a_++)                               \
			if (test_one((pick)[a_]))                              \
				for (int b_ = a_ + 1; b_ < (n); b_++)          \
					(pick)[b_] -= (pick)[b_] > (pick)[a_]; \
	} while (0)

#define RQ_MSG(k) (rd->rq[k].i)
#define SQ_MSG(k) (rd->q[k].i)

/* Receive proxy: test as the mode says. */
static void recv_test(struct round *rd)
{
	int pick[MAX_WINDOW], n;

	if (rd->senders > 1) { /* each sender its own oldest */
		for (int s = 0; s < rd->senders; s++) {
			int k = OLDEST_OF(rd->rlen, RQ_MSG, s, rd->senders);

			if (k >= 0)
				recv_test_one(rd, k);
		}
		return;
	}
	n = pick_order(rd, rd->rlen, pick);
#define RECV_ONE(k) recv_test_one(rd, (k))
	TEST_PICKED(n, pick, RECV_ONE);
#undef RECV_ONE
}

/* Send proxy: the parts of the next message, each sent until the plugin
 * takes it, from a free slot. */
static void send_post(struct round *rd)
{
	while (rd->snext < rd->want) {
		uint64_t i = rd->snext;
		struct msg mg;
		void *req = NULL;
		int j;

		msg_of(rd->m, i, &mg);
		if (!rd->sparts && rd->sslot < 0) {
			rd->sslot = slot_take(&rd->s);
			if (rd->sslot < 0)
				return; /* every buffer still in flight */
			for (int k = 0; k < mg.n; k++)
				pat_fill(buf_at(&rd->s, rd->sslot, k) + mg.soff[k], mg.size[k],
					 seed_of(rd->round, i, k));
			rd->sleft[rd->sslot] = mg.n;
		}
		j = mg.order[rd->sparts];
		ASSERT_EQ(gdx_drv_isend(rd->d, rd->p.s, buf_at(&rd->s, rd->sslot, j) + mg.soff[j],
					mg.size[j], tag_of(rd->m, i, j), rd->s.mh, &req),
			  ncclSuccess);
		if (!req)
			return; /* no clear-to-send yet: NCCL calls again */
		ASSERT(rd->qlen < MAX_WINDOW * MAX_GROUP);
		rd->q[rd->qlen++] = (struct pending_send){req, i, j, rd->sslot};
		if (++rd->sparts == mg.n) {
			rd->sparts = 0;
			rd->sslot = -1;
			rd->snext++;
		}
	}
}

/* Tests pending send k once; when done its buffer is NCCL's again:
 * scribbled over at once, as the next step's data would. */
static bool send_test_one(struct round *rd, int k)
{
	struct pending_send ps = rd->q[k];
	struct msg mg;
	int done = 0, got = -1;

	ASSERT_EQ(gdx_drv_test(rd->d, ps.req, &done, &got), ncclSuccess);
	if (!done)
		return false;
	msg_of(rd->m, ps.i, &mg);
	memset(buf_at(&rd->s, ps.slot, ps.j) + mg.soff[ps.j], SEND_SCRIBBLE, mg.size[ps.j]);
	ASSERT_EQ(got, (int)mg.size[ps.j]);
	if (--rd->sleft[ps.slot] == 0)
		rd->s.busy[ps.slot] = false;
	memmove(&rd->q[k], &rd->q[k + 1], (size_t)(rd->qlen - k - 1) * sizeof(rd->q[0]));
	rd->qlen--;
	return true;
}

/* Send proxy: test as the mode says. */
static void send_test(struct round *rd)
{
	int pick[MAX_WINDOW * MAX_GROUP], n;

	if (rd->senders > 1) {
		for (int s = 0; s < rd->senders; s++) {
			int k = OLDEST_OF(rd->qlen, SQ_MSG, s, rd->senders);

			if (k >= 0)
				send_test_one(rd, k);
		}
		return;
	}
	n = pick_order(rd, rd->qlen, pick);
#define SEND_ONE(k) send_test_one(rd, (k))
	TEST_PICKED(n, pick, SEND_ONE);
#undef SEND_ONE
}

/* ---- wires under rails, down and up during a round ---- */

static volatile int flap_done;

static void link_set(int veth, const char *state)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "ip link set veth%d %s", veth, state);
	ASSERT_EQ(system(cmd), 0);
}

struct flap_plan {
	int flaps;
	int veth;   /* of the first flap: 1 (rail 0) or 3 (rail 1) */
	bool pause; /* the receive side not called across it */
};

/* One flap: the wire of a rail down for a second (with a pause, the receive
 * side not called from before it goes until a second after both ports are
 * active again: time for the sender to restore the rail and note it). Two:
 * veth1 down, veth3 (rail 1) down half a second later, veth1 back, then
 * veth3: a while with one rail left, each drop met by the other's failover. */
static void *flapper(void *arg)
{
	const struct flap_plan *f = arg;

	usleep(200000);
	if (f->pause) {
		__atomic_store_n(&recv_paused, 1, __ATOMIC_RELEASE);
		for (int t = 0; t < 2000 && !__atomic_load_n(&recv_quiet, __ATOMIC_ACQUIRE); t++)
			usleep(10000);
		ASSERT(__atomic_load_n(&recv_quiet, __ATOMIC_ACQUIRE));
	}
	usleep(100000);
	link_set(f->veth, "down");
	if (f->flaps > 1) {
		usleep(500000);
		link_set(3, "down");
	}
	usleep(f->flaps > 1 ? 500000 : 1000000);
	link_set(f->veth, "up");
	if (f->flaps > 1) {
		usleep(500000);
		link_set(3, "up");
	}
	for (int v = 0; v < 2 * f->flaps; v++) {
		char dev[16];

		snprintf(dev, sizeof(dev), "rxe%d", f->flaps == 1 ? f->veth - 1 + v : v);
		gdx_port_wait_active(dev);
	}
	if (f->pause) {
		usleep(1000000);
		__atomic_store_n(&recv_quiet, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&recv_paused, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&flap_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether the receive side is called this turn; REUSE_IDLE goes on until
 * every receive in flight is done, then stops too. */
static bool recv_runs(struct round *rd)
{
	if (!__atomic_load_n(&recv_paused, __ATOMIC_ACQUIRE))
		return true;
	if (rd->m->pause == REUSE_IDLE && rd->rlen)
		return true; /* recv_post posts nothing meanwhile */
	rd->paused_turns++;
	__atomic_store_n(&recv_quiet, 1, __ATOMIC_RELEASE);
	return false;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void round_run(struct gdx_drv *d, const struct reuse_mode *m, int ldev, int cdev, int round)
{
	size_t part = max_msg_of(m) + ROOM;
	struct round *rd = calloc(1, sizeof(*rd));
	const uint64_t base = 48;
	pthread_t flap;
	struct flap_plan plan = {m->flaps, m->flap_rail ? 3 : 1, m->pause != REUSE_RUNS};
	double t0, flap_seen_at = 0;

	ASSERT(rd != NULL);
	rd->m = m;
	rd->d = d;
	rd->round = round;
	rd->window = window_of(m);
	rd->senders = senders_of(m);
	rd->rng = (unsigned)round * 7919u + 1;
	rd->want = m->window > 8 ? 4 * (uint64_t)rd->window : base;
	rd->sslot = -1;
	ASSERT(rd->window <= MAX_WINDOW && rd->senders <= MAX_SENDERS);
	gdx_drv_pair(d, ldev, cdev, &rd->p);
	side_open(rd, &rd->s, rd->p.s, part, SEND_SCRIBBLE);
	side_open(rd, &rd->r, rd->p.r, part, RECV_SCRIBBLE);
	if (m->flaps) {
		gdx_test_log_clear();
		flap_done = 0;
		recv_paused = recv_quiet = 0;
		ASSERT_EQ(pthread_create(&flap, NULL, flapper, &plan), 0);
	}
	t0 = gdx_now_s();
	while (rd->rposted < rd->want || rd->rlen || rd->qlen || rd->snext < rd->want) {
		bool recv_called;

		/* with flaps: on until every rail is back and carries again; the
		 * sender always has a message to send meanwhile, so that it is
		 * called (and sees the flap) while the receive side is not */
		if (m->flaps && rd->want < rd->snext + (uint64_t)rd->window &&
		    (!__atomic_load_n(&flap_done, __ATOMIC_ACQUIRE) ||
		     count_of(gdx_test_infos(), "back in the connection") < m->flaps))
			rd->want = rd->snext + (uint64_t)rd->window;
		if (m->flaps && __atomic_load_n(&flap_done, __ATOMIC_ACQUIRE) && !flap_seen_at)
			flap_seen_at = gdx_now_s();
		if (flap_seen_at && gdx_now_s() - flap_seen_at > 30 &&
		    count_of(gdx_test_warnings(), "taken out of the connection") < m->flaps)
			gdx_test_fail(__FILE__, __LINE__,
				      "round %d: 30 s after the wires came back, %d rail(s) of %d "
				      "taken out: the plugin never saw the flap",
				      round,
				      count_of(gdx_test_warnings(), "taken out of the connection"),
				      m->flaps);
		if (gdx_now_s() - t0 > 180)
			gdx_test_fail(__FILE__, __LINE__,
				      "round %d: after 180 s, %llu of %llu messages received, %llu "
				      "sent, %d sends not done",
				      round, (unsigned long long)rd->messages,
				      (unsigned long long)rd->want, (unsigned long long)rd->snext,
				      rd->qlen);
		recv_called = recv_runs(rd);
		if (recv_called)
			while (recv_post(rd))
				;
		send_post(rd);
		send_test(rd);
		if (recv_called)
			recv_test(rd);
	}
	if (m->flaps) {
		ASSERT_EQ(pthread_join(flap, NULL), 0);
		ASSERT(count_of(gdx_test_warnings(), "taken out of the connection") >= m->flaps);
		ASSERT(count_of(gdx_test_infos(), "back in the connection") >= m->flaps);
	}
	/* every receive completed exactly once */
	ASSERT_EQ(rd->completions, rd->want);
	printf("  round %d: %llu messages, %.1f MiB, every byte checked after reuse, 0 corrupted, "
	       "0 lost; irecv said not now %llu time(s)%s (%.1f s)\n",
	       round, (unsigned long long)rd->messages, (double)rd->bytes / 1048576.0,
	       (unsigned long long)rd->refused,
	       m->pause == REUSE_STOPPED ? "; the receive side stopped across the flap"
	       : m->pause == REUSE_IDLE	 ? "; the receive side idle across the flap"
					 : "",
	       gdx_now_s() - t0);
	/* the pause happened: the sender went on alone for a while */
	if (m->pause)
		ASSERT(rd->paused_turns > 0);
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

static const char *const order_names[] = {"the oldest", "newest first", "in random order"};

void reuse_run_mode(const struct reuse_mode *m, int rounds)
{
	const char *s = getenv("GDX_REUSE_ROUNDS");
	struct gdx_drv d;
	int ldev = 0, cdev = 1; /* rxe0 <- rxe1 */
	char senders[48] = "";

	if (s && atoi(s) > 0)
		rounds = atoi(s);
	gdx_vm_links_up();
	set_env(m->env);
	gdx_drv_load(&d, m->v ? m->v : NEWEST);
	if (m->fused) {
		const int a[] = {0, 2, 4}, b[] = {1, 3, 5};

		ASSERT_EQ(gdx_drv_make_vdevice(&d, &ldev, m->fused, a), ncclSuccess);
		ASSERT_EQ(gdx_drv_make_vdevice(&d, &cdev, m->fused, b), ncclSuccess);
	}
	if (senders_of(m) > 1)
		snprintf(senders, sizeof(senders), ", %d senders sharing the comms", senders_of(m));
	printf("  %s%s%s%s%s; %d in flight, %s tested%s%s; %d round(s), plugin %s\n",
	       m->env ? m->env : "defaults",
	       m->fused == 3   ? ", fused rxe1+rxe3+rxe5 -> rxe0+rxe2+rxe4"
	       : m->fused == 2 ? ", fused rxe1+rxe3 -> rxe0+rxe2"
			       : "",
	       m->group > 1 ? ", grouped receives" : "",
	       m->flaps == 2		       ? ", two rails down and up, staggered"
	       : m->flaps == 1 && m->flap_rail ? ", rail 1 down and up"
	       : m->flaps == 1		       ? ", rail 0 (the control rail) down and up"
					       : "",
	       m->flush ? ", iflush after each receive" : "", window_of(m),
	       senders_of(m) > 1 ? "each sender's oldest" : order_names[m->order], senders,
	       m->big_first ? ", one 4 MiB message per window" : "", rounds,
	       getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so");
	/* scripts/run-tests.sh says which build it runs: the debug one must
	 * say it checks the invariant */
	if (getenv("GDX_REUSE_DEBUG"))
		ASSERT_STR_CONTAINS(gdx_test_infos(), "and so does a piece counted before its "
						      "bytes are in the receive buffer");
	for (int r = 0; r < rounds; r++)
		round_run(&d, m, ldev, cdev, r);
	if (!m->flaps)
		ASSERT_EQ(gdx_test_warning_count(), 0);
}
