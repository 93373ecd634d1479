/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA through the plugin's tables (ncclRmaPlugin_v14, _v15, _v16)
 * as NCCL drives them: 4 ranks as 4 processes, each on a fused device of 2
 * or 3 rxe NICs of the switched VM (scripts/vm-run.sh --switch --pairs 3:
 * rxe0-rxe5 on one bridge), host memory, the listen handles exchanged
 * through the test's own bootstrap (a socketpair per rank to the parent,
 * which all-gathers what the ranks send it).
 *
 * NICs: with 2 rails rank k has rxe<k> and rxe<4 + k % 2>; with 3, rxe<k>,
 * rxe<4 + k % 2> and rxe<5 - k % 2>: every rank's first NIC (the one its
 * small puts and signals take) is its own, the others are shared.
 *
 * Each run: devices and properties as NCCL reads them, all-to-all connect
 * (given the net plugin's context, as NCCL's RMA proxy gives it), contexts,
 * windows; puts from 1 B to 4 MiB to every rank (itself too), each checked
 * once its signal is seen; INC and ADD with the words' final values; a ring
 * of thousands of rounds where a signal seen means its data is there byte
 * for byte, sources reused as soon as test says done; gets and flushes;
 * every request completed once and a completed one refused; bad input
 * refused. Then a link dropped mid-run: failover carries on with every byte
 * right, and without failover queryLastError names the failure.
 *
 * test_bench (by name) prints put bandwidth and put+signal latency over one
 * and two rails (scripts/bench-rma.sh puts them beside perftest's).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_rma_drv.h"
#include "gdx_test.h"

#define NRANKS 4
#define SLOT   (4u << 20) /* a sender's part of a data window */
#define SIGS   4096
#define RING_K 8      /* slots of the ring's target, each a round in flight */
#define RING_S 4      /* source slots of the ring's sender */
#define RING_B 131072 /* bytes of a ring slot */

/* ---- the bootstrap: a socketpair per rank to the parent ---- */

static int hub_fd = -1;

static void xwrite(int fd, const void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t k = write(fd, (const char *)p + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			gdx_test_fail(__FILE__, __LINE__, "bootstrap write: %s", strerror(errno));
		off += (size_t)k;
	}
}

static bool xread(int fd, void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t k = read(fd, (char *)p + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		off += (size_t)k;
	}
	return true;
}

/* Every rank's block of n bytes into all (NRANKS of them), mine among. */
static void allgather(const void *mine, void *all, uint32_t n)
{
	xwrite(hub_fd, &n, sizeof(n));
	xwrite(hub_fd, mine, n);
	if (!xread(hub_fd, all, (size_t)n * NRANKS))
		gdx_test_fail(__FILE__, __LINE__, "bootstrap: the hub went (another rank failed)");
}

static void barrier(void)
{
	char b = 0, all[NRANKS];

	allgather(&b, all, 1);
}

/* The parent: all-gathers what the ranks send, block by block, until they
 * close; one that closes early ends it for every rank. */
static void hub(const int *fds)
{
	for (;;) {
		uint32_t n[NRANKS];
		char *all = NULL;
		bool ok = true;

		for (int k = 0; k < NRANKS && ok; k++)
			ok = xread(fds[k], &n[k], sizeof(n[k])) && n[k] == n[0] &&
			     n[k] < (64u << 20);
		if (ok)
			all = malloc((size_t)n[0] * NRANKS);
		for (int k = 0; k < NRANKS && ok && all; k++)
			ok = xread(fds[k], all + (size_t)k * n[0], n[0]);
		for (int k = 0; k < NRANKS && ok && all; k++)
			xwrite(fds[k], all, (size_t)n[0] * NRANKS);
		free(all);
		if (!ok || !all)
			return;
	}
}

struct scenario {
	int v;	    /* the table: 14, 15 or 16 */
	int nics;   /* NICs per rank: 2 or 3 */
	int nctx;   /* contexts of the block */
	int rounds; /* of the ring */
	bool sizes, gets, bad, stride, subset, agg;
	int drop;	  /* link-drop runs: 1 failover carries on, 2 the failure reported */
	const char *veth; /* what drop takes down for 2.5 s */
};

static const struct scenario *sc;
static int me;
/* Link-drop runs: the write end of the flapper's pipe (rank 0 writes a
 * byte when the traffic runs). */
static int flap_fd = -1;

/* Runs fn as ranks 0..3, one process each, and waits for them all. */
static void run_ranks(void (*fn)(void))
{
	int fds[NRANKS], status, failed = 0;
	pid_t pids[NRANKS];

	fflush(stdout);
	for (int k = 0; k < NRANKS; k++) {
		int sv[2];

		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		pids[k] = fork();
		ASSERT(pids[k] >= 0);
		if (pids[k] == 0) {
			for (int j = 0; j < k; j++)
				close(fds[j]);
			close(sv[0]);
			hub_fd = sv[1];
			me = k;
			if (k && flap_fd >= 0) {
				close(flap_fd); /* rank 0's to write */
				flap_fd = -1;
			}
			fn();
			fflush(stdout);
			_exit(0);
		}
		close(sv[1]);
		fds[k] = sv[0];
	}
	hub(fds);
	for (int k = 0; k < NRANKS; k++)
		close(fds[k]);
	for (int k = 0; k < NRANKS; k++) {
		while (waitpid(pids[k], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("  rank %d: %s %d\n", k, WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			failed++;
		}
	}
	ASSERT_EQ(failed, 0);
}

/* ---- one rank ---- */

struct rank {
	struct gdx_drv net;
	struct gdx_rdrv d;
	int dev;
	void *coll, *x;
	char *data, *src, *sig;
	void *mdata, *msrc, *msig;
	long issued, completed;
	void *stale; /* a request completed and tested already */
	bool failed; /* link-drop runs: a request of this rank failed */
	int checked; /* rounds of the ring checked */
};

static const char *nic_of(int rank, int i)
{
	static char name[16];
	int n = i == 0 ? rank : i == 1 ? 4 + rank % 2 : 5 - rank % 2;

	snprintf(name, sizeof(name), "rxe%d", n);
	return name;
}

/* The physical device of the net table named name. */
static int phys_dev(struct gdx_drv *net, const char *name)
{
	int n = gdx_drv_devices(net);

	for (int i = 0; i < n; i++) {
		struct gdx_drv_props p;

		ASSERT_EQ(gdx_drv_props(net, i, &p), ncclSuccess);
		if (!strcmp(p.name, name))
			return i;
	}
	gdx_test_fail(__FILE__, __LINE__, "no device %s", name);
}

static void *xalloc(size_t n)
{
	void *p = NULL;

	ASSERT_EQ(posix_memalign(&p, 4096, n), 0);
	memset(p, 0, n);
	return p;
}

/* NCCL's order: the net plugin (which fuses the NICs, makeVDevice), then
 * the RMA table: init, devices, properties, listen, the handles
 * all-gathered, connect, closeListen. */
static void rank_up(struct rank *R, int nranks, int rank, int group)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE] = {0}, all[NRANKS][NCCL_NET_HANDLE_MAXSIZE];
	void *handles[NRANKS], *lc = NULL;
	int devs[3], ndev = 0;
	ncclNetProperties_v12_t p;
	ncclRmaProperties_v16_t rp;

	for (int i = 0; i < sc->nics; i++)
		devs[i] = phys_dev(&R->net, nic_of(me, i));
	ASSERT_EQ(gdx_drv_make_vdevice(&R->net, &R->dev, sc->nics, devs), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_devices(&R->d, &ndev), ncclSuccess);
	ASSERT(ndev > R->dev);
	ASSERT_EQ(gdx_rdrv_props(&R->d, R->dev, &p), ncclSuccess);
	ASSERT_EQ(p.netDeviceType, NCCL_NET_DEVICE_GIN_PROXY);
	ASSERT(p.maxRecvs >= 1);
	ASSERT(p.ptrSupport & NCCL_PTR_HOST);
	ASSERT(!(p.ptrSupport & NCCL_PTR_CUDA)); /* rxe reaches host memory only */
	ASSERT_EQ(p.vProps.ndevs, sc->nics);
	ASSERT_EQ(gdx_rdrv_listen(&R->d, R->dev, handle, &lc), ncclSuccess);
	allgather(handle, all, sizeof(handle));
	for (int k = 0; k < nranks; k++)
		handles[k] = all[group * nranks + k];
	/* the net plugin's context, as NCCL's RMA proxy passes it */
	ASSERT_EQ(gdx_rdrv_connect(&R->d, R->net.ctx, handles, nranks, rank, lc, &R->coll),
		  ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_listen(&R->d, lc), ncclSuccess);
	rp.flushesAllPutsOnAnySignal = true;
	ASSERT_EQ(gdx_rdrv_rma_props(&R->d, R->coll, &rp), ncclSuccess);
	ASSERT(!rp.flushesAllPutsOnAnySignal);
}

static void rank_open(struct rank *R)
{
	memset(R, 0, sizeof(*R));
	gdx_drv_load(&R->net, 12);
	gdx_rdrv_open(&R->d, sc->v);
	ASSERT_EQ(gdx_rdrv_init(&R->d, 0xabc0 + (uint64_t)me), ncclSuccess);
	rank_up(R, NRANKS, me, 0);
	ASSERT_EQ(gdx_rdrv_create_context(&R->d, R->coll, sc->nctx, -1, 1, &R->x), ncclSuccess);
	R->data = xalloc(NRANKS * SLOT);
	R->src = xalloc(NRANKS * SLOT);
	R->sig = xalloc(SIGS);
	ASSERT_EQ(gdx_rdrv_reg(&R->d, R->coll, R->data, NRANKS * SLOT, 0, &R->mdata), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_reg(&R->d, R->coll, R->src, NRANKS * SLOT, 0, &R->msrc), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_reg(&R->d, R->coll, R->sig, SIGS,
			       NCCL_NET_MR_FLAG_FORCE_SO | NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET,
			       &R->msig),
		  ncclSuccess);
}

static void rank_close(struct rank *R)
{
	bool has = true;

	ASSERT_EQ(gdx_rdrv_query_error(&R->d, R->x, &has), ncclSuccess);
	/* a request that failed is never swallowed: queryLastError says so */
	ASSERT(has == R->failed);
	if (!sc->drop)
		ASSERT_EQ(R->issued, R->completed);
	if (R->stale) {
		int done = 0;

		/* completed once: a second test is refused */
		ASSERT_EQ(gdx_rdrv_test(&R->d, R->coll, R->stale, &done), ncclInvalidArgument);
	}
	barrier();
	ASSERT_EQ(gdx_rdrv_dereg(&R->d, R->coll, R->mdata), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&R->d, R->coll, R->msrc), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&R->d, R->coll, R->msig), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_destroy_context(&R->d, R->x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&R->d, R->coll), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_finalize(&R->d), ncclSuccess);
	ASSERT_EQ(gdx_drv_finalize(&R->net), ncclSuccess);
	free(R->data);
	free(R->src);
	free(R->sig);
}

/* Tests req until done, counting it; rmaProgress between tests. */
static void wait_req(struct rank *R, void *req)
{
	ASSERT(req != NULL);
	ASSERT_EQ(gdx_rdrv_wait(&R->d, R->coll, R->x, req, 120), ncclSuccess);
	R->completed++;
	R->stale = req;
}

static uint64_t word(struct rank *R, uint64_t off)
{
	return __atomic_load_n((uint64_t *)(R->sig + off), __ATOMIC_ACQUIRE);
}

/* Polls a signal word (the NIC writes it) until it reaches want. */
static void wait_word(struct rank *R, uint64_t off, uint64_t want, const char *what)
{
	double t0 = gdx_now_s();

	while (word(R, off) < want) {
		ASSERT_EQ(gdx_rdrv_progress(&R->d, R->x), ncclSuccess);
		if (gdx_now_s() - t0 > 120)
			gdx_test_fail(__FILE__, __LINE__, "rank %d: %s stays at %llu, want %llu",
				      me, what, (unsigned long long)word(R, off),
				      (unsigned long long)want);
	}
}

static uint32_t seed_of(int from, int to, uint64_t tag)
{
	return (uint32_t)(from * 131 + to * 7919 + tag * 104729 + 1);
}

/* ---- the phases ---- */

static const size_t sizes[] = {1, 3, 64, 4096, 65541, 1 << 20, 4 << 20};

/* Puts of every size to every rank, itself too, each with a strong INC on
 * the target's word of its sender; the target checks each once it sees it. */
static void phase_sizes(struct rank *R)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *req[NRANKS];

		for (int p = 0; p < NRANKS; p++) {
			gdx_fill(R->src + (size_t)p * SLOT, sizes[i], seed_of(me, p, i));
			req[p] = NULL;
			ASSERT_EQ(gdx_rdrv_iput_signal(&R->d, R->x, p % sc->nctx,
						       (uint64_t)p * SLOT, R->msrc, sizes[i],
						       (uint64_t)me * SLOT, R->mdata, (uint32_t)p,
						       (uint64_t)me * 8, R->msig, 0,
						       NCCL_NET_SIGNAL_OP_INC, true, 0, &req[p]),
				  ncclSuccess);
			R->issued++;
		}
		for (int p = 0; p < NRANKS; p++) {
			wait_req(R, req[p]);
			/* done: the source may be reused at once */
			memset(R->src + (size_t)p * SLOT, 0xee, sizes[i]);
		}
		for (int from = 0; from < NRANKS; from++) {
			long bad;

			wait_word(R, (uint64_t)from * 8, i + 1, "a sender's word");
			bad = gdx_check(R->data + (size_t)from * SLOT, sizes[i],
					seed_of(from, me, i));
			if (bad >= 0)
				gdx_test_fail(
					__FILE__, __LINE__,
					"rank %d: %zu B from rank %d: byte %ld differs once its "
					"signal is seen",
					me, sizes[i], from, bad);
		}
		barrier(); /* every target checked before the windows are reused */
	}
	if (me == 0)
		printf("  puts of 1 B to 4 MiB, to every rank: every byte there once its signal "
		       "is seen\n");
}

/* INC and ADD, strong and weak, the signal alone: the final values. */
static void phase_inc_add(struct rank *R)
{
	void *req[NRANKS * 8];
	int n = 0;

	for (int p = 0; p < NRANKS; p++)
		for (int i = 0; i < 8; i++) {
			bool add = i >= 5;
			uint64_t v = add ? (uint64_t)(me + 1) * 1000 + (uint64_t)i : 99;

			ASSERT_EQ(gdx_rdrv_iput_signal(
					  &R->d, R->x, i % sc->nctx, 0, NULL, 0, 0, NULL,
					  (uint32_t)p, 64 + (uint64_t)me * 8, R->msig, v,
					  add ? NCCL_NET_SIGNAL_OP_ADD : NCCL_NET_SIGNAL_OP_INC,
					  i % 2 == 0, 0, &req[n]),
				  ncclSuccess);
			n++;
			R->issued++;
		}
	for (int i = 0; i < n; i++)
		wait_req(R, req[i]);
	for (int from = 0; from < NRANKS; from++) {
		uint64_t want = 5 + 3 * (uint64_t)(from + 1) * 1000 + 5 + 6 + 7;

		wait_word(R, 64 + (uint64_t)from * 8, want, "INC and ADD");
		ASSERT_EQ(word(R, 64 + (uint64_t)from * 8), want);
	}
	barrier();
	if (me == 0)
		printf("  INC and ADD from every rank: every word at its final value\n");
}

/* The ring: rank r sends rounds to r + 1 and takes r - 1's. A round is a
 * put into one of RING_K slots of the target with a signal on the slot's
 * word: a strong signal alone after the put, a weak one with it, or a
 * strong ADD with it. The target checks a round's bytes as soon as it sees
 * its word, then acknowledges it on the sender's word; the sender reuses a
 * slot once its round is acknowledged, and a source as soon as test says
 * done. Rounds alternate contexts; sizes cross the striping threshold. */
#define RING_SIG  512  /* the target's slot words */
#define RING_ACK  1024 /* the sender's acknowledgement word */
#define RING_DATA (2u * SLOT)
/* A round's length, which the target works out as the sender did: small
 * (the home QP), medium, or striped over every rail. */
static size_t ring_len(int from, int round)
{
	uint32_t h = seed_of(from, 3, (uint64_t)round) * 2654435761u;
	uint32_t pick = (h >> 8) % 10, r = h >> 12;

	return pick < 4 ? 1 + r % 512 : pick < 7 ? 4096 + r % 60000 : 65536 + r % 65536;
}

/* Link-drop runs: a rank whose request failed says so here, in a page
 * every rank shares, and the ring stops on every rank (its peers would
 * wait for rounds that no longer come). */
static int *abort_flag;

static bool aborted(void)
{
	return abort_flag && __atomic_load_n(abort_flag, __ATOMIC_ACQUIRE);
}

/* A call's result: success, or in a link-drop run a failure noted (the
 * rank's and every rank's ring stops); anything else fails the test. */
static bool ok_or_failed(struct rank *R, ncclResult_t r, const char *what)
{
	if (r == ncclSuccess)
		return true;
	if (!sc->drop)
		gdx_test_fail(__FILE__, __LINE__, "rank %d: %s: result %d", me, what, r);
	if (!R->failed)
		printf("  rank %d: %s failed (result %d): the ring stops\n", me, what, r);
	R->failed = true;
	__atomic_store_n(abort_flag, 1, __ATOMIC_RELEASE);
	return false;
}

/* One test of *req: cleared once done, or failed. */
static void step_req(struct rank *R, void **req)
{
	int done = 0;

	if (!*req)
		return;
	if (!ok_or_failed(R, gdx_rdrv_test(&R->d, R->coll, *req, &done), "test"))
		done = 1;
	else if (done) {
		R->completed++;
		R->stale = *req;
	}
	if (done)
		*req = NULL;
}

/* Tests *req until it is done, fails, or the ring stops. */
static void finish_req(struct rank *R, void **req)
{
	double t0 = gdx_now_s();

	while (*req) {
		step_req(R, req);
		if (*req)
			ASSERT_EQ(gdx_rdrv_progress(&R->d, R->x), ncclSuccess);
		if (gdx_now_s() - t0 > 120)
			gdx_test_fail(__FILE__, __LINE__, "rank %d: a ring request stays in flight",
				      me);
	}
}

static void phase_ring(struct rank *R, int rounds)
{
	int to = (me + 1) % NRANKS, from = (me + NRANKS - 1) % NRANKS;
	void *put[RING_S] = {0}, *sigr[RING_S] = {0};
	int sent = 0, checked = 0, acked_out = 0;
	void *acks[64] = {0};
	unsigned seed = 1000 + (unsigned)me;
	size_t len[RING_S];
	double t0 = gdx_now_s();

	while ((sent < rounds || checked < rounds) && !aborted()) {
		/* send the next round when its slot is acknowledged and its
		 * source free */
		if (sent < rounds && word(R, RING_ACK) + RING_K > (uint64_t)sent) {
			int s = sent % RING_S, kind = sent % 3, c = sent % sc->nctx;
			uint64_t dst = RING_DATA + (uint64_t)(sent % RING_K) * RING_B;
			uint64_t sig = RING_SIG + (uint64_t)(sent % RING_K) * 8;
			uint32_t flags = sc->agg && rand_r(&seed) % 4 == 0
						 ? ncclRmaOptFlagsAggregateRequests
						 : 0;

			finish_req(R, &put[s]);
			finish_req(R, &sigr[s]);
			if (aborted())
				break;
			len[s] = ring_len(me, sent);
			if (flap_fd >= 0 && me == 0 && sent == 100) {
				xwrite(flap_fd, "x", 1); /* the link goes down now */
				close(flap_fd);
				flap_fd = -1;
			}
			gdx_fill(R->src + (size_t)s * RING_B, len[s], seed_of(me, to, 1000 + sent));
			if (kind == 0) {
				if (ok_or_failed(R,
						 gdx_rdrv_iput(&R->d, R->x, c, (uint64_t)s * RING_B,
							       R->msrc, len[s], dst, R->mdata,
							       (uint32_t)to, flags, &put[s]),
						 "iput"))
					R->issued++;
				if (ok_or_failed(R,
						 gdx_rdrv_iput_signal(
							 &R->d, R->x, c, 0, NULL, 0, 0, NULL,
							 (uint32_t)to, sig, R->msig, 0,
							 NCCL_NET_SIGNAL_OP_INC, true, 0, &sigr[s]),
						 "iputSignal"))
					R->issued++;
			} else if (ok_or_failed(R,
						gdx_rdrv_iput_signal(
							&R->d, R->x, c, (uint64_t)s * RING_B,
							R->msrc, len[s], dst, R->mdata,
							(uint32_t)to, sig, R->msig, 1,
							kind == 1 ? NCCL_NET_SIGNAL_OP_INC
								  : NCCL_NET_SIGNAL_OP_ADD,
							kind == 2, flags, &put[s]),
						"iputSignal")) {
				R->issued++;
			}
			sent++;
		}
		/* a source whose round is done is overwritten at once */
		for (int s = 0; s < RING_S; s++) {
			if (put[s]) {
				step_req(R, &put[s]);
				if (!put[s])
					memset(R->src + (size_t)s * RING_B, 0xee, len[s]);
			}
			step_req(R, &sigr[s]);
		}
		/* the rounds from the previous rank, in order */
		if (checked < rounds && word(R, RING_SIG + (uint64_t)(checked % RING_K) * 8) >=
						(uint64_t)(checked / RING_K + 1)) {
			uint64_t off = RING_DATA + (uint64_t)(checked % RING_K) * RING_B;
			size_t l = ring_len(from, checked);
			long bad = gdx_check(R->data + off, l, seed_of(from, me, 1000 + checked));

			if (bad >= 0)
				gdx_test_fail(
					__FILE__, __LINE__,
					"rank %d: round %d from rank %d (%zu B): its signal is "
					"seen and byte %ld is not there",
					me, checked, from, l, bad);
			checked++;
			if (acked_out == 64) {
				for (int i = 0; i < 64; i++)
					finish_req(R, &acks[i]);
				acked_out = 0;
			}
			if (ok_or_failed(R,
					 gdx_rdrv_iput_signal(&R->d, R->x, 0, 0, NULL, 0, 0, NULL,
							      (uint32_t)from, RING_ACK, R->msig, 0,
							      NCCL_NET_SIGNAL_OP_INC, true, 0,
							      &acks[acked_out]),
					 "iputSignal (an acknowledgement)")) {
				acked_out++;
				R->issued++;
			}
		}
		if (gdx_now_s() - t0 > 150)
			gdx_test_fail(__FILE__, __LINE__,
				      "rank %d: ring stuck at sent %d checked %d", me, sent,
				      checked);
	}
	/* what is in flight: done, or (the ring stopped) failed */
	for (int s = 0; s < RING_S; s++) {
		finish_req(R, &put[s]);
		finish_req(R, &sigr[s]);
	}
	for (int i = 0; i < acked_out; i++)
		finish_req(R, &acks[i]);
	if (!aborted())
		wait_word(R, RING_ACK, (uint64_t)rounds, "the acknowledgements");
	R->checked = checked;
	barrier();
	if (me == 0 && !aborted())
		printf("  ring of %d rounds a rank (%d context(s)): every round's bytes there as "
		       "its signal is seen, sources reused as test says done (%.1f s)\n",
		       rounds, sc->nctx, gdx_now_s() - t0);
}

/* Gets from every rank (itself too), then a flush each. One rank at a
 * time: rxe in Debian 12's kernel can complete an RDMA READ whose responses
 * were lost as a success, with no data (its completer's WARN at
 * rxe_comp.c:756, then the QP in error): the load of four ranks reading
 * each other at once loses packets under the emulator. */
static void phase_gets(struct rank *R)
{
	const size_t n = (256 << 10) + 13;

	gdx_fill(R->data + 3 * SLOT, n, seed_of(me, 77, 77));
	for (int turn = 0; turn < NRANKS; turn++) {
		barrier();
		for (int p = 0; p < NRANKS && turn == me; p++) {
			void *req = NULL;
			long bad;

			memset(R->src + (size_t)p * SLOT, 0, n);
			ASSERT_EQ(gdx_rdrv_iget(&R->d, R->x, 0, 3 * SLOT, R->mdata, n,
						(uint64_t)p * SLOT, R->msrc, (uint32_t)p, 0, &req),
				  ncclSuccess);
			R->issued++;
			wait_req(R, req);
			bad = gdx_check(R->src + (size_t)p * SLOT, n, seed_of(p, 77, 77));
			if (bad >= 0)
				gdx_test_fail(__FILE__, __LINE__,
					      "rank %d: get from rank %d done, byte %ld not there",
					      me, p, bad);
			/* the flush: a request, done once the reads through each
			 * NIC are */
			req = NULL;
			ASSERT_EQ(gdx_rdrv_iflush(&R->d, R->x, 0, R->msrc, (uint32_t)p, &req),
				  ncclSuccess);
			R->issued++;
			wait_req(R, req);
		}
	}
	barrier();
	if (me == 0)
		printf("  gets of 256 KiB + 13 B from every rank, then flushes: every byte right\n");
}

static void expect_refused(ncclResult_t r, const char *warning)
{
	ASSERT_EQ(r, ncclInvalidArgument);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), warning);
}

static void phase_bad_input(struct rank *R)
{
	void *req = NULL, *tmp = NULL, *fake = &req;
	char *buf = xalloc(8192);

	gdx_test_log_clear();
	expect_refused(gdx_rdrv_iput(&R->d, R->x, 0, 0, R->msrc, 8, 0, NULL, 1, 0, &req),
		       "NULL destination handle");
	expect_refused(gdx_rdrv_iput(&R->d, R->x, 0, 0, fake, 8, 0, R->mdata, 1, 0, &req),
		       "is not a registered window of this collective comm");
	expect_refused(gdx_rdrv_iput(&R->d, R->x, 0, 0, R->msrc, 8, NRANKS * SLOT - 4, R->mdata, 1,
				     0, &req),
		       "is outside rank 1's window");
	expect_refused(
		gdx_rdrv_iget(&R->d, R->x, 0, 0, R->mdata, 16, NRANKS * SLOT, R->msrc, 1, 0, &req),
		"is outside rank");
	expect_refused(gdx_rdrv_iput_signal(&R->d, R->x, 0, 0, NULL, 0, 0, NULL, 1, 12, R->msig, 0,
					    NCCL_NET_SIGNAL_OP_INC, true, 0, &req),
		       "is not 8-byte aligned");
	expect_refused(gdx_rdrv_iput_signal(&R->d, R->x, 0, 0, NULL, 0, 0, NULL, 1, 8, R->msig, 0,
					    7, true, 0, &req),
		       "is neither INC");
	expect_refused(gdx_rdrv_iput(&R->d, R->x, sc->nctx, 0, R->msrc, 8, 0, R->mdata, 1, 0, &req),
		       "out of range");
	expect_refused(gdx_rdrv_iput(&R->d, R->x, 0, 0, R->msrc, 8, 0, R->mdata, NRANKS, 0, &req),
		       "rank 4 out of range");
	/* a window deregistered is refused: made and dropped by every rank */
	ASSERT_EQ(gdx_rdrv_reg(&R->d, R->coll, buf, 8192, 0, &tmp), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&R->d, R->coll, tmp), ncclSuccess);
	expect_refused(gdx_rdrv_iput(&R->d, R->x, 0, 0, tmp, 8, 0, R->mdata, 1, 0, &req),
		       "is not a registered window");
	/* a stride that does not divide the group, on every rank alike */
	expect_refused(gdx_rdrv_create_context(&R->d, R->coll, 1, -1, 3, &tmp),
		       "rank stride 3 refused");
	barrier();
	free(buf);
	if (me == 0)
		printf("  bad input refused with a WARN naming it: NULL, foreign and deregistered "
		       "handles, ranges, signal offset and operation, context, rank, stride\n");
}

/* The live counters, as gdx-doctor top reads them: this rank's RMA bytes put
 * through each of its NICs, in the Prometheus text. */
static void phase_live(struct rank *R)
{
	char cmd[128], line[512];
	int nics = 0;
	FILE *f;

	(void)R;
	barrier();
	if (me == 0) {
		snprintf(cmd, sizeof(cmd), "build/gdx-doctor top --prometheus --interval 0.05");
		f = popen(cmd, "r");
		ASSERT(f != NULL);
		while (fgets(line, sizeof(line), f)) {
			char pid[32];
			unsigned long long n = 0;

			snprintf(pid, sizeof(pid), "pid=\"%d\"", (int)getpid());
			if (!strncmp(line, "gdx_rma_put_bytes_total{", 24) && strstr(line, pid) &&
			    sscanf(strrchr(line, ' ') + 1, "%llu", &n) == 1 && n > 0)
				nics++;
		}
		ASSERT_EQ(pclose(f), 0);
		printf("  gdx-doctor top --prometheus: RMA bytes put through %d NIC(s) of rank 0\n",
		       nics);
		ASSERT_EQ(nics, sc->nics);
	}
	barrier();
}

/* A block with rank stride 2: connected to itself and rank + 2 only. */
static void phase_stride(struct rank *R)
{
	void *x = NULL, *req = NULL;
	int two = (me + 2) % NRANKS;

	ASSERT_EQ(gdx_rdrv_create_context(&R->d, R->coll, 1, -1, 2, &x), ncclSuccess);
	gdx_test_log_clear();
	expect_refused(
		gdx_rdrv_iput(&R->d, x, 0, 0, R->msrc, 8, 0, R->mdata, (uint32_t)(me ^ 1), 0, &req),
		"is not connected in this block");
	gdx_fill(R->src, 777, seed_of(me, two, 5));
	ASSERT_EQ(gdx_rdrv_iput_signal(&R->d, x, 0, 0, R->msrc, 777, (uint64_t)me * SLOT, R->mdata,
				       (uint32_t)two, 256 + (uint64_t)me * 8, R->msig, 0,
				       NCCL_NET_SIGNAL_OP_INC, true, 0, &req),
		  ncclSuccess);
	ASSERT_EQ(gdx_rdrv_wait(&R->d, R->coll, x, req, 60), ncclSuccess);
	wait_word(R, 256 + (uint64_t)two * 8, 1, "the stride-2 word");
	ASSERT_EQ(gdx_check(R->data + (size_t)two * SLOT, 777, seed_of(two, me, 5)), -1);
	barrier();
	ASSERT_EQ(gdx_rdrv_destroy_context(&R->d, x), ncclSuccess);
	if (me == 0)
		printf("  a block of rank stride 2: rank + 2 reached, rank + 1 refused\n");
}

/* Groups of two (NCCL's rail teams): a connect of a subset of the ranks. */
static void phase_subset(struct rank *R)
{
	struct rank S = {.net = R->net, .d = R->d};
	void *x = NULL, *req = NULL, *m = NULL;
	char *buf = xalloc(4096);
	int other = me ^ 1;

	rank_up(&S, 2, me % 2, me / 2);
	ASSERT_EQ(gdx_rdrv_create_context(&S.d, S.coll, 1, -1, 1, &x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_reg(&S.d, S.coll, buf, 4096, NCCL_NET_MR_FLAG_FORCE_SO, &m),
		  ncclSuccess);
	ASSERT_EQ(gdx_rdrv_iput_signal(&S.d, x, 0, 0, NULL, 0, 0, NULL, (uint32_t)(other % 2),
				       8 * (uint64_t)(me % 2), m, 40 + (uint64_t)me,
				       NCCL_NET_SIGNAL_OP_ADD, true, 0, &req),
		  ncclSuccess);
	ASSERT_EQ(gdx_rdrv_wait(&S.d, S.coll, x, req, 60), ncclSuccess);
	while (__atomic_load_n((uint64_t *)(buf + 8 * (other % 2)), __ATOMIC_ACQUIRE) == 0)
		ASSERT_EQ(gdx_rdrv_progress(&S.d, x), ncclSuccess);
	ASSERT_EQ(*(uint64_t *)(buf + 8 * (other % 2)), 40 + (uint64_t)other);
	barrier();
	ASSERT_EQ(gdx_rdrv_dereg(&S.d, S.coll, m), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_destroy_context(&S.d, x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&S.d, S.coll), ncclSuccess);
	free(buf);
	if (me == 0)
		printf("  a connect of two ranks of four (groups {0,1} and {2,3})\n");
}

/* A link drops mid-ring, on a NIC that is no rank's first (the rail 1 of
 * the connections it is on): failover carries on, the rounds checked byte
 * for byte all the while, nothing reported; or, where a request failed
 * anyway, queryLastError says so (rank_close) and the ring stops on every
 * rank. No outcome is a signal seen before its data. rxe in Debian 12's
 * kernel can also fail a rail the drop did not touch (its completer's WARN
 * at rxe_comp.c:756 under retransmissions): that is the second outcome. */
static void drop_failover(struct rank *R)
{
	char mine[3], all[NRANKS][3];
	int took = 0, failed = 0, stalled = 0;

	gdx_test_log_clear();
	phase_ring(R, sc->rounds);
	mine[0] = strstr(gdx_test_warnings(), "taken out of the connection") != NULL;
	mine[1] = R->failed;
	/* the QPs on the NIC that went down stalled first, told as the
	 * two-sided path tells it, by rank (gdx_stall.h) */
	mine[2] = strstr(gdx_test_warnings(), ", context 0 has had no completion for") != NULL;
	allgather(mine, all, 3);
	for (int k = 0; k < NRANKS; k++) {
		took += all[k][0];
		failed += all[k][1];
		stalled += all[k][2];
	}
	if (me == 0 && !failed)
		printf("  %s down for 2.5 s mid-ring: %d rank(s) took a rail out and carried on, "
		       "every round's bytes right, nothing reported\n",
		       sc->veth, took);
	else if (me == 0)
		printf("  %s down for 2.5 s mid-ring: %d rank(s) took a rail out, %d rank(s) had "
		       "a request fail and queryLastError says so; every round checked was "
		       "right\n",
		       sc->veth, took, failed);
	if (me == 0)
		printf("  %d rank(s) told a stall of a QP on that NIC before it was taken out\n",
		       stalled);
	ASSERT(took >= 1 || failed >= 1);
	ASSERT(stalled >= 1);
}

/* Without failover: rank 0 puts to rank 1 while rank 0's first NIC goes
 * down; its requests fail with ncclRemoteError, and queryLastError says
 * so (rank_close), after a WARN that names the rail and its NIC. */
static void drop_reported(struct rank *R)
{
	ncclResult_t res = ncclSuccess;
	double t0 = gdx_now_s();
	int round = 0;

	gdx_test_log_clear();
	while (me == 0 && res == ncclSuccess) {
		void *req = NULL;
		int done = 0;

		if (round == 50) {
			xwrite(flap_fd, "x", 1);
			close(flap_fd);
			flap_fd = -1;
		}
		ASSERT_EQ(gdx_rdrv_iput_signal(&R->d, R->x, 0, 0, R->msrc, 100000, 0, R->mdata, 1,
					       0, R->msig, 0, NCCL_NET_SIGNAL_OP_INC, true, 0,
					       &req),
			  ncclSuccess);
		R->issued++;
		while ((res = gdx_rdrv_test(&R->d, R->coll, req, &done)) == ncclSuccess && !done)
			if (gdx_now_s() - t0 > 60)
				gdx_test_fail(__FILE__, __LINE__, "round %d not done after 60 s",
					      round);
		round++;
	}
	if (me == 0) {
		bool has = false;

		R->failed = true;
		ASSERT_EQ(res, ncclRemoteError);
		ASSERT_EQ(gdx_rdrv_query_error(&R->d, R->x, &has), ncclSuccess);
		ASSERT(has);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "rail 0 (rxe0)");
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "the connection failed");
		printf("  rxe0 down under rank 0's puts, no failover: round %d failed with "
		       "ncclRemoteError, queryLastError true, the WARN names rail 0 (rxe0)\n",
		       round);
	}
	barrier();
}

static void rank_main(void)
{
	struct rank R;

	rank_open(&R);
	if (sc->drop) {
		if (sc->drop == 1)
			drop_failover(&R);
		else
			drop_reported(&R);
		rank_close(&R);
		return;
	}
	if (sc->sizes)
		phase_sizes(&R);
	phase_inc_add(&R);
	phase_ring(&R, sc->rounds);
	if (sc->gets)
		phase_gets(&R);
	if (sc->bad)
		phase_bad_input(&R);
	if (sc->stride) {
		phase_live(&R);
		phase_stride(&R);
	}
	if (sc->subset)
		phase_subset(&R);
	rank_close(&R);
}

/* The flapper: when rank 0 says, veth down for 2.5 s, then up again. */
static pid_t flapper(const char *veth, int *wfd)
{
	int fds[2];
	pid_t pid;

	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		char b, cmd[64];

		close(fds[1]);
		if (read(fds[0], &b, 1) == 1) {
			snprintf(cmd, sizeof(cmd), "ip link set %s down", veth);
			if (system(cmd))
				_exit(1);
			usleep(2500 * 1000);
		}
		snprintf(cmd, sizeof(cmd), "ip link set %s up", veth);
		_exit(system(cmd) ? 1 : 0);
	}
	close(fds[0]);
	*wfd = fds[1];
	return pid;
}

static void run(const struct scenario *s)
{
	pid_t fl = -1;
	int status;

	sc = s;
	if (!abort_flag) {
		abort_flag =
			mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT(abort_flag != MAP_FAILED);
	}
	*abort_flag = 0;
	gdx_vm_links_up();
	setenv("NCCL_GDX_RMA", "1", 1);
	setenv("NCCL_GDX_GDR_FLUSH", "2", 1); /* host memory: flush reads anyway */
	if (s->drop) {
		/* retries that run out in about half a second */
		setenv("NCCL_GDX_TIMEOUT", "14", 1);
		setenv("NCCL_GDX_FAILOVER", s->drop == 1 ? "1" : "0", 1);
		/* a stall is told (gdx_stall.h) before the retries run out */
		setenv("NCCL_GDX_STALL_MS", "100", 1);
		fl = flapper(s->veth, &flap_fd);
	}
	run_ranks(rank_main);
	if (fl > 0) {
		close(flap_fd);
		flap_fd = -1;
		while (waitpid(fl, &status, 0) < 0 && errno == EINTR)
			;
		ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		gdx_vm_links_up();
		unsetenv("NCCL_GDX_TIMEOUT");
		unsetenv("NCCL_GDX_FAILOVER");
		unsetenv("NCCL_GDX_STALL_MS");
	}
}

static void test_v14_two_rails(void)
{
	run(&(struct scenario){.v = 14,
			       .nics = 2,
			       .nctx = 1,
			       .rounds = 1500,
			       .sizes = true,
			       .gets = true,
			       .bad = true});
}

static void test_v15_three_rails_two_contexts(void)
{
	run(&(struct scenario){.v = 15,
			       .nics = 3,
			       .nctx = 2,
			       .rounds = 2000,
			       .sizes = true,
			       .gets = true,
			       .agg = true});
}

static void test_v16_two_rails_stride_subset(void)
{
	run(&(struct scenario){.v = 16,
			       .nics = 2,
			       .nctx = 1,
			       .rounds = 1500,
			       .sizes = true,
			       .gets = true,
			       .bad = true,
			       .stride = true,
			       .subset = true});
}

/* ---- the figures (test_bench, by name; scripts/bench-rma.sh) ---- */

/* Rank 0 puts size-byte buffers to rank 1, 8 in flight, until total bytes
 * have gone; returns Gb/s. */
static double bench_put(struct rank *R, size_t size, size_t total)
{
	void *req[8] = {0};
	size_t n = total / size, issued = 0, done = 0;
	double t0 = gdx_now_s();

	while (done < n) {
		for (int k = 0; k < 8; k++) {
			int d = 0;

			if (!req[k] && issued < n) {
				ASSERT_EQ(gdx_rdrv_iput(&R->d, R->x, 0, 0, R->msrc, size, 0,
							R->mdata, 1, 0, &req[k]),
					  ncclSuccess);
				issued++;
			}
			if (req[k]) {
				ASSERT_EQ(gdx_rdrv_test(&R->d, R->coll, req[k], &d), ncclSuccess);
				if (d) {
					req[k] = NULL;
					done++;
				}
			}
		}
	}
	return (double)(n * size) * 8 / 1e9 / (gdx_now_s() - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Put+signal ping-pong of 8 bytes between ranks 0 and 1 (strong INC, the
 * other waits on the word, then answers): the median of half the round
 * trips, in us. */
static double bench_pingpong(struct rank *R, int iters)
{
	int other = me ^ 1;
	double *half = calloc((size_t)iters, sizeof(*half)), med;

	ASSERT(half != NULL);
	for (int i = 0; i < iters; i++) {
		double t0 = gdx_now_s();
		void *req = NULL;

		if (me == 1)
			wait_word(R, 2048, (uint64_t)i + 1, "the ping");
		ASSERT_EQ(gdx_rdrv_iput_signal(&R->d, R->x, 0, 0, R->msrc, 8, 0, R->mdata,
					       (uint32_t)other, 2048, R->msig, 0,
					       NCCL_NET_SIGNAL_OP_INC, true, 0, &req),
			  ncclSuccess);
		if (me == 0)
			wait_word(R, 2048, (uint64_t)i + 1, "the pong");
		ASSERT_EQ(gdx_rdrv_wait(&R->d, R->coll, R->x, req, 60), ncclSuccess);
		half[i] = (gdx_now_s() - t0) * 1e6 / 2;
	}
	qsort(half, (size_t)iters, sizeof(*half), cmp_double);
	med = half[iters / 2];
	free(half);
	return med;
}

static void bench_main(void)
{
	static const size_t bsizes[] = {65536, 1 << 20, 4 << 20};
	struct rank R;

	rank_open(&R);
	barrier();
	for (size_t i = 0; i < sizeof(bsizes) / sizeof(bsizes[0]); i++) {
		if (me == 0) {
			double gbps = bench_put(&R, bsizes[i], 48u << 20);

			printf("rma-put rails %d size %zu gbps %.4f\n", sc->nics, bsizes[i], gbps);
			fflush(stdout);
		}
		barrier();
	}
	if (me < 2) {
		double us = bench_pingpong(&R, 500);

		if (me == 0)
			printf("rma-put-signal-latency rails %d size 8 us %.1f\n", sc->nics, us);
	}
	rank_close(&R);
}

/* Not in make test: the figures the closing note gives, beside perftest
 * (scripts/bench-rma.sh runs it). */
static void test_bench(void)
{
	const char *rails = getenv("GDX_BENCH_RAILS");

	for (int nics = 1; nics <= 2; nics++) {
		if (rails && atoi(rails) != nics)
			continue;
		/* the links as the script left them: shaped, or not */
		sc = &(struct scenario){.v = 16, .nics = nics, .nctx = 1};
		setenv("NCCL_GDX_RMA", "1", 1);
		setenv("NCCL_GDX_TIMEOUT", "14", 1); /* as perftest: a drop costs 67 ms */
		run_ranks(bench_main);
	}
}

static void test_link_drop_failover(void)
{
	run(&(struct scenario){
		.v = 16, .nics = 2, .nctx = 1, .rounds = 800, .drop = 1, .veth = "veth4"});
}

static void test_link_drop_reported(void)
{
	run(&(struct scenario){.v = 15, .nics = 2, .nctx = 1, .drop = 2, .veth = "veth0"});
}

GDX_TESTS_MAIN(TEST(test_v14_two_rails, 240), TEST(test_v15_three_rails_two_contexts, 240),
	       TEST(test_v16_two_rails_stride_subset, 240), TEST(test_link_drop_failover, 180),
	       TEST(test_link_drop_reported, 120),
	       TEST_BY_NAME(test_bench, 600, "figures, not a check: scripts/bench-rma.sh"))
