/* SPDX-License-Identifier: MIT */
/*
 * Random traffic through the ncclNetPlugin_v7 table, every byte verified:
 * sizes from 0 to 8 MiB (mostly small), 1 to 32 messages in flight with the
 * depth changing as it goes, several comms at once over both rxe pairs and in
 * both directions, receives sometimes larger than the send, unaligned buffers.
 * Runs inside the VM with --pairs 2 (or 1, on fewer comms).
 *
 *   GDX_STRESS_MESSAGES  messages over all comms (default 3000)
 *   GDX_STRESS_SEED      random seed (default: from the clock, printed)
 *   GDX_STRESS_LARGE     per mille of sizes drawn from 0..8 MiB (default 30)
 *   GDX_STRESS_MEDIUM    per mille drawn from 0..256 KiB (default 150); the
 *                        rest are 0..4 KiB or edge sizes
 *   GDX_STRESS_TIMEOUT_S the whole run's limit (default 600)
 *
 * Ends with "messages, bytes, corrupted bytes, time"; scripts/soak.sh runs it
 * for a million messages.
 */
#include <stdbool.h>
#include <unistd.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define STRESS_MAX_SIZE (8u << 20)
#define STRESS_GUARD	64 /* canary bytes after every receive */
#define STRESS_ARENA	(24u << 20)
#define STRESS_DEPTH	NCCL_NET_MAX_REQUESTS
#define STRESS_FLOWS	6
#define STRESS_STALL_S	60 /* no progress at all for this long is a hang */

struct msg {
	uint64_t seed;
	uint32_t size;	/* bytes sent */
	uint32_t rsize; /* bytes the receive offers: size or more */
	size_t off;	/* same place in the send and the receive arena */
	void *sreq, *rreq;
	bool rdone, sdone;
};

/* One send/receive comm pair and the messages in flight on it, oldest first. */
struct flow {
	struct gdx_pair p;
	int listen_dev, connect_dev;
	char *sarena, *rarena;
	void *smh, *rmh;
	struct msg ring[STRESS_DEPTH];
	uint64_t head;	     /* oldest message not yet retired */
	uint64_t next_alloc; /* next message to give buffers to */
	uint64_t next_recv;  /* next to post a receive for */
	uint64_t next_send;  /* next to post a send for */
	uint64_t total;	     /* messages this flow carries */
	size_t alloc_pos;    /* arena: where the next message goes */
	int depth;
	uint64_t depth_until;
};

struct stress {
	const ncclNet_v7_t *n;
	uint64_t rng;
	unsigned large, medium; /* per mille */
	uint64_t messages, bytes, corrupted;
	double last_progress;
};

/* Under LeakSanitizer a leak fails the test: the runner's children end with
 * _exit(), which skips the check LeakSanitizer makes at exit. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void leak_check(void)
{
	if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check())
		gdx_test_fail(__FILE__, __LINE__, "LeakSanitizer found leaks (above)");
}

static uint64_t rnd(struct stress *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ULL;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static uint32_t pick_size(struct stress *s)
{
	static const uint32_t edges[] = {0,   1,   7,	 8,    63,   64,    65,	   127,
					 128, 129, 4095, 4096, 4097, 65535, 65536, 65537};
	uint64_t r = rnd(s) % 1000;

	if (r < s->large) /* one large in 16 is the largest there is */
		return rnd(s) % 16 ? (uint32_t)(rnd(s) % (STRESS_MAX_SIZE + 1)) : STRESS_MAX_SIZE;
	if (r < s->large + s->medium)
		return (uint32_t)(rnd(s) % (256 * 1024 + 1));
	if (rnd(s) % 20 == 0)
		return edges[rnd(s) % (sizeof(edges) / sizeof(edges[0]))];
	return (uint32_t)(rnd(s) % 4097);
}

/* The byte pattern: 8 bytes per splitmix64 step of (seed, word index), so a
 * message in the wrong buffer, a stale one or a shifted one never matches. */
static uint64_t pattern_word(uint64_t seed, uint64_t w)
{
	uint64_t z = seed + (w + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void pattern_fill(char *p, size_t n, uint64_t seed)
{
	size_t w;

	for (w = 0; w + 8 <= n; w += 8) {
		uint64_t v = pattern_word(seed, w / 8);

		memcpy(p + w, &v, 8);
	}
	if (w < n) {
		uint64_t v = pattern_word(seed, w / 8);

		memcpy(p + w, &v, n - w);
	}
}

/* Number of bytes that differ from the pattern. */
static uint64_t pattern_check(const char *p, size_t n, uint64_t seed)
{
	uint64_t bad = 0;

	for (size_t w = 0; w < n; w += 8) {
		uint64_t want = pattern_word(seed, w / 8), got = 0;
		size_t len = n - w < 8 ? n - w : 8;

		memcpy(&got, p + w, len);
		if (len < 8)
			want &= (1ULL << (8 * len)) - 1;
		if (got == want)
			continue;
		for (size_t b = 0; b < len; b++)
			bad += ((got >> (8 * b)) & 0xff) != ((want >> (8 * b)) & 0xff);
	}
	return bad;
}

static size_t msg_span(uint32_t rsize)
{
	/* room for a misalignment of up to 7, the guard, and 64-byte steps */
	return ((size_t)rsize + 8 + STRESS_GUARD + 63) & ~(size_t)63;
}

/* Arena space is handed out and given back in message order, as a ring. */
static bool arena_alloc(struct flow *f, size_t span, size_t *off_p)
{
	size_t start;

	if (f->head == f->next_alloc) {
		f->alloc_pos = 0;
		if (span > STRESS_ARENA)
			return false;
		*off_p = 0;
		f->alloc_pos = span;
		return true;
	}
	start = f->ring[f->head % STRESS_DEPTH].off;
	if (f->alloc_pos > start) {
		if (f->alloc_pos + span <= STRESS_ARENA) {
			*off_p = f->alloc_pos;
		} else if (span < start) {
			*off_p = 0;
		} else {
			return false;
		}
	} else if (f->alloc_pos + span < start) {
		*off_p = f->alloc_pos;
	} else {
		return false;
	}
	f->alloc_pos = *off_p + span;
	return true;
}

static char *msg_sbuf(const struct flow *f, const struct msg *m, uint64_t idx)
{
	return f->sarena + m->off + idx % 8;
}

static char *msg_rbuf(const struct flow *f, const struct msg *m, uint64_t idx)
{
	return f->rarena + m->off + (idx + 3) % 8;
}

static void flow_open(struct stress *s, struct flow *f, int listen_dev, int connect_dev)
{
	memset(f, 0, sizeof(*f));
	f->listen_dev = listen_dev;
	f->connect_dev = connect_dev;
	gdx_pair_connect(s->n, listen_dev, connect_dev, &f->p);
	f->sarena = malloc(STRESS_ARENA);
	f->rarena = malloc(STRESS_ARENA);
	ASSERT(f->sarena && f->rarena);
	memset(f->sarena, 0, STRESS_ARENA);
	memset(f->rarena, 0, STRESS_ARENA);
	ASSERT_EQ(s->n->regMr(f->p.send, f->sarena, STRESS_ARENA, NCCL_PTR_HOST, &f->smh),
		  ncclSuccess);
	ASSERT_EQ(s->n->regMr(f->p.recv, f->rarena, STRESS_ARENA, NCCL_PTR_HOST, &f->rmh),
		  ncclSuccess);
	f->depth = 1 + (int)(rnd(s) % STRESS_DEPTH);
	f->depth_until = 1 + rnd(s) % 256;
}

static void flow_close(struct stress *s, struct flow *f)
{
	ASSERT_EQ(s->n->deregMr(f->p.send, f->smh), ncclSuccess);
	ASSERT_EQ(s->n->deregMr(f->p.recv, f->rmh), ncclSuccess);
	gdx_pair_close(&f->p);
	free(f->sarena);
	free(f->rarena);
}

static void msg_received(struct stress *s, struct flow *f, struct msg *m, uint64_t idx, int got)
{
	const char *r = msg_rbuf(f, m, idx);
	uint64_t bad;

	if (got != (int)m->size)
		gdx_test_fail(__FILE__, __LINE__,
			      "%d->%d message %llu: received %d bytes, %u were sent",
			      f->connect_dev, f->listen_dev, (unsigned long long)idx, got, m->size);
	bad = pattern_check(r, m->size, m->seed);
	/* Nothing written past the message, in the receive or its guard. */
	for (size_t i = m->size; i < (size_t)m->rsize + STRESS_GUARD; i++)
		bad += (unsigned char)r[i] != 0xa5;
	if (bad)
		fprintf(stderr, "  %d->%d message %llu (%u bytes into %u): %llu bytes corrupted\n",
			f->connect_dev, f->listen_dev, (unsigned long long)idx, m->size, m->rsize,
			(unsigned long long)bad);
	s->corrupted += bad;
}

/* One pass over a flow: new messages, receives, sends, tests, retirement.
 * Returns whether anything moved. */
static bool flow_step(struct stress *s, struct flow *f)
{
	const ncclNet_v7_t *n = s->n;
	bool moved = false;
	uint64_t inflight, first;

	/* Buffers for new messages, up to the current depth. */
	while (f->next_alloc < f->total && f->next_alloc - f->head < (uint64_t)f->depth) {
		struct msg *m = &f->ring[f->next_alloc % STRESS_DEPTH];
		uint32_t size = pick_size(s);
		uint32_t rsize = size;

		if (rnd(s) % 8 == 0) /* a receive larger than the send */
			rsize = size + (uint32_t)(rnd(s) % 4097);
		if (!arena_alloc(f, msg_span(rsize), &m->off))
			break;
		m->size = size;
		m->rsize = rsize;
		m->seed = rnd(s) | 1;
		m->sreq = m->rreq = NULL;
		m->rdone = m->sdone = false;
		pattern_fill(msg_sbuf(f, m, f->next_alloc), size, m->seed);
		memset(msg_rbuf(f, m, f->next_alloc) + size, 0xa5,
		       (size_t)rsize - size + STRESS_GUARD);
		f->next_alloc++;
		moved = true;
	}
	/* Receives and sends in order; in which order the two sides go varies. */
	for (int side = (int)(rnd(s) & 1), k = 0; k < 2; k++, side ^= 1) {
		if (side == 0) {
			while (f->next_recv < f->next_alloc) {
				struct msg *m = &f->ring[f->next_recv % STRESS_DEPTH];
				void *data = msg_rbuf(f, m, f->next_recv);
				int size = (int)m->rsize, tag = (int)(f->next_recv & 0x7fff);

				ASSERT_EQ(n->irecv(f->p.recv, 1, &data, &size, &tag, &f->rmh,
						   &m->rreq),
					  ncclSuccess);
				if (!m->rreq)
					break;
				f->next_recv++;
				moved = true;
			}
		} else {
			while (f->next_send < f->next_alloc) {
				struct msg *m = &f->ring[f->next_send % STRESS_DEPTH];

				ASSERT_EQ(n->isend(f->p.send, msg_sbuf(f, m, f->next_send),
						   (int)m->size, (int)(f->next_send & 0x7fff),
						   f->smh, &m->sreq),
					  ncclSuccess);
				if (!m->sreq)
					break; /* no clear-to-send yet */
				f->next_send++;
				moved = true;
			}
		}
	}
	/* Test what is in flight, starting anywhere: completion must not depend
	 * on the order requests are tested in. */
	inflight = f->next_alloc - f->head;
	first = inflight ? rnd(s) % inflight : 0;
	for (uint64_t k = 0; k < inflight; k++) {
		uint64_t idx = f->head + (first + k) % inflight;
		struct msg *m = &f->ring[idx % STRESS_DEPTH];
		int done = 0, got = -1;

		if (m->rreq && !m->rdone) {
			ASSERT_EQ(n->test(m->rreq, &done, &got), ncclSuccess);
			if (done) {
				m->rdone = true;
				msg_received(s, f, m, idx, got);
				moved = true;
			}
		}
		if (m->sreq && !m->sdone) {
			done = 0;
			ASSERT_EQ(n->test(m->sreq, &done, &got), ncclSuccess);
			if (done) {
				if (got != (int)m->size)
					gdx_test_fail(__FILE__, __LINE__,
						      "send of %u bytes completed with %d", m->size,
						      got);
				m->sdone = true;
				moved = true;
			}
		}
	}
	/* Retire in order; now and then another depth. */
	while (f->head < f->next_alloc && f->ring[f->head % STRESS_DEPTH].rdone &&
	       f->ring[f->head % STRESS_DEPTH].sdone) {
		s->messages++;
		s->bytes += f->ring[f->head % STRESS_DEPTH].size;
		f->head++;
		if (f->head >= f->depth_until) {
			f->depth = 1 + (int)(rnd(s) % STRESS_DEPTH);
			f->depth_until = f->head + 1 + rnd(s) % 256;
		}
	}
	return moved;
}

static void flow_dump(const struct flow *f)
{
	fprintf(stderr,
		"  %d->%d: %llu of %llu retired, allocated %llu, received-posted %llu, "
		"sent-posted %llu, depth %d\n",
		f->connect_dev, f->listen_dev, (unsigned long long)f->head,
		(unsigned long long)f->total, (unsigned long long)f->next_alloc,
		(unsigned long long)f->next_recv, (unsigned long long)f->next_send, f->depth);
}

static void test_stress(void)
{
	/* Both pairs, both directions, and a second comm on two of the pairs. */
	static const int devs[STRESS_FLOWS][2] = {{0, 1}, {1, 0}, {2, 3}, {3, 2}, {0, 1}, {3, 2}};
	uint64_t total = env_u64("GDX_STRESS_MESSAGES", 3000);
	uint64_t seed = env_u64("GDX_STRESS_SEED", 0);
	struct gdx_plugin plugin;
	struct flow *flows;
	struct stress s;
	double start, last_print;
	int ndev = 0, nflows = 0;

	alarm((unsigned)env_u64("GDX_STRESS_TIMEOUT_S", 600));
	if (!seed)
		seed = (uint64_t)(gdx_now_s() * 1e6) ^ (uint64_t)getpid();
	memset(&s, 0, sizeof(s));
	s.rng = seed;
	s.large = (unsigned)env_u64("GDX_STRESS_LARGE", 30);
	s.medium = (unsigned)env_u64("GDX_STRESS_MEDIUM", 150);
	printf("  seed %llu (GDX_STRESS_SEED), %llu messages, %u/1000 large, %u/1000 medium\n",
	       (unsigned long long)seed, (unsigned long long)total, s.large, s.medium);
	fflush(stdout);

	gdx_plugin_load(&plugin);
	s.n = plugin.v7;
	ASSERT_EQ(s.n->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(s.n->devices(&ndev), ncclSuccess);
	ASSERT(ndev >= 2);
	flows = calloc(STRESS_FLOWS, sizeof(*flows));
	ASSERT(flows != NULL);
	for (int i = 0; i < STRESS_FLOWS; i++) {
		if (devs[i][0] >= ndev || devs[i][1] >= ndev)
			continue;
		flow_open(&s, &flows[nflows], devs[i][0], devs[i][1]);
		nflows++;
	}
	for (int i = 0; i < nflows; i++)
		flows[i].total =
			total / (uint64_t)nflows + ((uint64_t)i < total % (uint64_t)nflows);

	start = last_print = s.last_progress = gdx_now_s();
	while (s.messages < total) {
		bool moved = false;

		for (int i = 0; i < nflows; i++)
			moved |= flow_step(&s, &flows[i]);
		if (moved) {
			s.last_progress = gdx_now_s();
		} else if (gdx_now_s() - s.last_progress > STRESS_STALL_S) {
			for (int i = 0; i < nflows; i++)
				flow_dump(&flows[i]);
			gdx_test_fail(__FILE__, __LINE__, "no progress for %d s", STRESS_STALL_S);
		}
		if (total > 100000 && gdx_now_s() - last_print > 60) {
			last_print = gdx_now_s();
			printf("  ... %llu messages, %llu bytes, %llu corrupted bytes, %.0f s\n",
			       (unsigned long long)s.messages, (unsigned long long)s.bytes,
			       (unsigned long long)s.corrupted, last_print - start);
			fflush(stdout);
		}
	}
	printf("  stress: %llu messages, %llu bytes, %llu corrupted bytes, %.1f s "
	       "(%.0f messages/s, %.1f MB/s) over %d comms\n",
	       (unsigned long long)s.messages, (unsigned long long)s.bytes,
	       (unsigned long long)s.corrupted, gdx_now_s() - start,
	       (double)s.messages / (gdx_now_s() - start),
	       (double)s.bytes / 1e6 / (gdx_now_s() - start), nflows);
	fflush(stdout);
	for (int i = 0; i < nflows; i++)
		flow_close(&s, &flows[i]);
	free(flows);
	ASSERT_EQ(s.corrupted, 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	gdx_plugin_unload(&plugin);
	leak_check();
}

GDX_TESTS_MAIN(TEST(test_stress, 600))
