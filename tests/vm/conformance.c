/* SPDX-License-Identifier: MIT */
/*
 * The plugin driven the way NCCL drives a net plugin, read from NCCL's proxy
 * (src/transport/net.cc) and its topology code (src/graph/topo.cc), over real
 * rxe devices, through ncclNetPlugin_v7 and the newest table:
 * - several local ranks sharing one send comm, told apart by tag (PXN), and
 *   single receives matched by tag as net_ib matches them;
 * - receives posted NCCL_STEPS ahead, only the oldest request of each side
 *   tested, at NCCL's step sizes, and a sender that batching never idles;
 * - grouped receives of NCCL's registered-buffer sizes, up to 1 GiB;
 * - the shared buffer pool registered once per connection;
 * - iflush where NCCL calls it;
 * - makeVDevice called as NCCL's merge calls it, with the device count before
 *   and after, and what the topology needs of getProperties: one (guid, port)
 *   per physical NIC, railId from the user;
 * - the traffic class both ways; closing comms to a dead host; a handle
 *   buffer reused by a later connect; the out-of-band interface NCCL picks.
 * Runs inside the VM with --pairs 2 (rxe0-rxe3); the cases that need every
 * NIC to reach every other (ends with different rail counts) are in
 * switch_conformance.c, on one switch.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define NCCL_STEPS   8
#define LL_STEP	     (64 * 1024)  /* NCCL_BUFFSIZE's LL buffer / NCCL_STEPS */
#define SIMPLE_STEP  (512 * 1024) /* the 4 MiB SIMPLE buffer / NCCL_STEPS */
#define MAX_NET_SIZE (1ULL << 30) /* NCCL_MAX_NET_SIZE: one registered-buffer step */
#define NEWEST	     12
#define T12(dp)	     ((const ncclNet_v12_t *)(dp)->table)

static void *xalloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT(p != MAP_FAILED);
	return p;
}

static void run_cmd(const char *cmd)
{
	if (system(cmd) != 0)
		gdx_test_fail(__FILE__, __LINE__, "command failed: %s", cmd);
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(dir != NULL);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* isend until it returns a request, within 20 s. */
static void *send_now(struct gdx_drv *d, void *s, void *buf, size_t n, int tag, void *mh)
{
	void *req = NULL;

	for (double t0 = gdx_now_s(); !req;) {
		ASSERT(gdx_now_s() - t0 < 20);
		ASSERT_EQ(gdx_drv_isend(d, s, buf, n, tag, mh, &req), ncclSuccess);
	}
	return req;
}

/* isend for a while: it must keep returning no request (no receive with its
 * tag is posted), calling test on nothing. */
static void send_refused_for(struct gdx_drv *d, void *s, void *buf, size_t n, int tag, void *mh,
			     double secs)
{
	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < secs;) {
		void *req = NULL;

		ASSERT_EQ(gdx_drv_isend(d, s, buf, n, tag, mh, &req), ncclSuccess);
		if (req)
			gdx_test_fail(__FILE__, __LINE__,
				      "isend with tag %d matched a receive posted for another tag",
				      tag);
	}
}

/* ---- tags: a single receive is matched by tag, as every grouped one ---- */

static void tag_single_receive(int v)
{
	enum { SZ = 100000 };
	struct gdx_drv d;
	struct gdx_dpair p;
	char *sb = xalloc(SZ), *rb = xalloc(SZ);
	void *smh, *rmh, *rreq = NULL, *sreq;
	size_t size = SZ;
	int tag5 = 5, got = -1;

	gdx_drv_load(&d, v);
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_reg(&d, p.s, sb, SZ, &smh);
	gdx_drv_reg(&d, p.r, rb, SZ, &rmh);
	gdx_fill(sb, SZ, 5);
	ASSERT_EQ(gdx_drv_irecv(&d, p.r, 1, (void **)&rb, &size, &tag5, &rmh, &rreq), ncclSuccess);
	/* a send of another rank (tag 7) waits: its bytes must not land in the
	 * buffer posted for rank 5 */
	send_refused_for(&d, p.s, sb, SZ, 7, smh, 0.3);
	sreq = send_now(&d, p.s, sb, SZ, 5, smh);
	ASSERT_EQ(gdx_drv_wait(&d, sreq, &got), ncclSuccess);
	ASSERT_EQ(gdx_drv_wait(&d, rreq, &got), ncclSuccess);
	ASSERT_EQ(got, SZ);
	ASSERT_EQ(gdx_check(rb, SZ, 5), -1);
	ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh), ncclSuccess);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_tag_single_receive_v7(void)
{
	tag_single_receive(7);
}

static void test_tag_single_receive_newest(void)
{
	tag_single_receive(NEWEST);
}

/*
 * PXN: three local ranks (tags 10, 11, 12) send through one shared send comm
 * to one remote proxy, whose receive comm posts grouped receives of the subs
 * still running (NCCL groups the subs of one recvComm, n <= maxRecvs, fewer
 * as subs finish). Each round the ranks try their sends in a different order;
 * a rank without a buffer in the head receive waits. Every byte is checked
 * against the rank that sent it.
 */
static void pxn_shared_send_comm(int v)
{
	enum { RANKS = 3, ROUNDS = 12, SZ = 70000 };
	struct gdx_drv d;
	struct gdx_dpair p;
	char *sb = xalloc((size_t)RANKS * SZ), *rb = xalloc((size_t)RANKS * SZ);
	void *smh, *rmh;

	gdx_drv_load(&d, v);
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_reg(&d, p.s, sb, (size_t)RANKS * SZ, &smh);
	gdx_drv_reg(&d, p.r, rb, (size_t)RANKS * SZ, &rmh);
	for (int round = 0; round < ROUNDS; round++) {
		/* the subs still running this round: all, then two, then one */
		int ranks[RANKS], n = round < 4 ? 3 : round < 8 ? 2 : 1, got[RANKS] = {0};
		void *data[RANKS], *mhs[RANKS], *rreq = NULL, *sreq[RANKS] = {0};
		size_t sizes[RANKS];
		int tags[RANKS], left;

		for (int i = 0; i < n; i++) {
			ranks[i] = (round + 2 * i) % RANKS;
			data[i] = rb + (size_t)ranks[i] * SZ;
			sizes[i] = SZ;
			tags[i] = 10 + ranks[i];
			mhs[i] = rmh;
			memset(data[i], 0, SZ);
		}
		for (int r = 0; r < RANKS; r++)
			gdx_fill(sb + (size_t)r * SZ, SZ - (size_t)r, (uint32_t)(round * 10 + r));
		ASSERT_EQ(gdx_drv_irecv(&d, p.r, n, data, sizes, tags, mhs, &rreq), ncclSuccess);
		/* every rank tries, in turn, until the posted ones have matched;
		 * the ranks with no buffer this round must never match */
		left = n;
		for (double t0 = gdx_now_s(); left;) {
			ASSERT(gdx_now_s() - t0 < 20);
			for (int k = 0; k < RANKS; k++) {
				int r = (k + round) % RANKS, posted = 0;

				for (int i = 0; i < n; i++)
					posted |= ranks[i] == r;
				if (sreq[r])
					continue;
				ASSERT_EQ(gdx_drv_isend(&d, p.s, sb + (size_t)r * SZ,
							SZ - (size_t)r, 10 + r, smh, &sreq[r]),
					  ncclSuccess);
				if (sreq[r] && !posted)
					gdx_test_fail(__FILE__, __LINE__,
						      "round %d: rank %d's send matched, but no "
						      "buffer with its tag is posted",
						      round, r);
				left -= sreq[r] != NULL;
			}
		}
		ASSERT_EQ(gdx_drv_wait(&d, rreq, got), ncclSuccess);
		for (int i = 0; i < n; i++) {
			int r = ranks[i], one;

			ASSERT_EQ(got[i], SZ - r);
			ASSERT_EQ(gdx_check(data[i], (size_t)(SZ - r), (uint32_t)(round * 10 + r)),
				  -1);
			ASSERT_EQ(gdx_drv_wait(&d, sreq[r], &one), ncclSuccess);
		}
	}
	ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh), ncclSuccess);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_pxn_shared_send_comm_v7(void)
{
	pxn_shared_send_comm(7);
}

static void test_pxn_shared_send_comm_newest(void)
{
	pxn_shared_send_comm(NEWEST);
}

/* ---- NCCL's proxy loop: NCCL_STEPS ahead, only the oldest tested ---- */

struct proxy_run {
	int sender_idle; /* isend found no clear-to-send with nothing else in flight */
	double secs;
};

/*
 * One connection as net.cc drives it: the receive side keeps NCCL_STEPS
 * receives posted and tests only the oldest; the send side sends each step
 * once its receive is posted (the GPU's data is ready at once here) and tests
 * only its oldest send. One thread does both, as one proxy thread progresses
 * every connection of a GPU. sender_idle counts isends that found no
 * clear-to-send while the step's receive was posted and the sender had
 * nothing else in flight: time the sender waits for the receiver.
 */
static void proxy_loop(struct gdx_drv *d, struct gdx_dpair *p, size_t step, int nsteps,
		       struct proxy_run *out)
{
	char *sb = xalloc(step * NCCL_STEPS), *rb = xalloc(step * NCCL_STEPS);
	void *smh, *rmh, *rreq[NCCL_STEPS], *sreq[NCCL_STEPS];
	int posted = 0, received = 0, sent = 0, sdone = 0, filled = 0, tag = 3;
	double t0 = gdx_now_s();

	gdx_drv_reg(d, p->s, sb, step * NCCL_STEPS, &smh);
	gdx_drv_reg(d, p->r, rb, step * NCCL_STEPS, &rmh);
	memset(out, 0, sizeof(*out));
	while (sdone < nsteps || received < nsteps) {
		ASSERT(gdx_now_s() - t0 < 120);
		/* receive proxy: post, else test the oldest */
		if (posted < nsteps && posted < received + NCCL_STEPS) {
			void *data = rb + (size_t)(posted % NCCL_STEPS) * step;

			ASSERT_EQ(gdx_drv_irecv(d, p->r, 1, &data, &step, &tag, &rmh,
						&rreq[posted % NCCL_STEPS]),
				  ncclSuccess);
			posted++;
		} else if (received < posted) {
			int done = 0, size = -1;

			ASSERT_EQ(gdx_drv_test(d, rreq[received % NCCL_STEPS], &done, &size),
				  ncclSuccess);
			if (done) {
				ASSERT_EQ(size, (int)step);
				ASSERT_EQ(gdx_check(rb + (size_t)(received % NCCL_STEPS) * step,
						    step, (uint32_t)received),
					  -1);
				received++;
			}
		}
		/* send proxy: send the next step; when that cannot go yet (or
		 * there is none), test the oldest send */
		if (sent < posted && sent < sdone + NCCL_STEPS) {
			char *data = sb + (size_t)(sent % NCCL_STEPS) * step;
			void **req = &sreq[sent % NCCL_STEPS];

			if (filled == sent)
				gdx_fill(data, step, (uint32_t)filled++);
			*req = NULL;
			ASSERT_EQ(gdx_drv_isend(d, p->s, data, step, tag, smh, req), ncclSuccess);
			if (*req) {
				sent++;
				continue;
			}
			if (sent == sdone)
				out->sender_idle++;
		}
		if (sdone < sent) {
			int done = 0, size = -1;

			ASSERT_EQ(gdx_drv_test(d, sreq[sdone % NCCL_STEPS], &done, &size),
				  ncclSuccess);
			sdone += done;
		}
	}
	out->secs = gdx_now_s() - t0;
	ASSERT_EQ(gdx_drv_dereg(d, p->s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(d, p->r, rmh), ncclSuccess);
	munmap(sb, step * NCCL_STEPS);
	munmap(rb, step * NCCL_STEPS);
}

static void steps_ahead(int v)
{
	struct gdx_drv d;
	struct gdx_dpair p;
	struct proxy_run run;

	gdx_drv_load(&d, v);
	gdx_drv_pair(&d, 0, 1, &p);
	proxy_loop(&d, &p, LL_STEP, 64, &run);
	proxy_loop(&d, &p, SIMPLE_STEP, 24, &run);
	proxy_loop(&d, &p, 4096, 200, &run);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_steps_ahead_oldest_tested_v7(void)
{
	steps_ahead(7);
}

static void test_steps_ahead_oldest_tested_newest(void)
{
	steps_ahead(NEWEST);
}

/* ---- shared comms: each sub tests its own oldest ---- */

#define SUBS 4

/*
 * NCCL_NET_SHARED_COMMS (on by default) and PXN: several channels' subs
 * share one send comm and one receive comm to a peer, each with its own
 * tag, its own NCCL_STEPS receives posted ahead, and its own step size; one
 * proxy thread progresses them in turn, and each tests only its own oldest
 * request. Across the comm the requests are tested out of order: 32 in
 * flight, a sub's small steps done while another's large one is on its way
 * (on a device fused over two NICs, the messages take different wires).
 * Every step of every sub arrives, in its own buffer, verified; a receive
 * the plugin cannot take yet (its slot's last receive is in flight) is
 * posted again, as NCCL does when irecv gives no request.
 */
static void shared_comm_subs(int v)
{
	static const size_t step[SUBS] = {SIMPLE_STEP, LL_STEP, 4096, 2 * SIMPLE_STEP};
	const int nsteps = 24, a[] = {0, 2}, b[] = {1, 3};
	struct gdx_drv d;
	struct gdx_dpair p;
	char *sb[SUBS], *rb[SUBS];
	void *smh[SUBS], *rmh[SUBS], *rreq[SUBS][NCCL_STEPS], *sreq[SUBS][NCCL_STEPS];
	int posted[SUBS] = {0}, received[SUBS] = {0}, sent[SUBS] = {0}, sdone[SUBS] = {0};
	int filled[SUBS] = {0}, left = SUBS, not_now = 0, ldev = 0, cdev = 1;
	double t0;

	gdx_drv_load(&d, v);
	if (v >= 9) {
		ASSERT_EQ(gdx_drv_make_vdevice(&d, &ldev, 2, a), ncclSuccess);
		ASSERT_EQ(gdx_drv_make_vdevice(&d, &cdev, 2, b), ncclSuccess);
	}
	gdx_drv_pair(&d, ldev, cdev, &p);
	for (int k = 0; k < SUBS; k++) {
		sb[k] = xalloc(step[k] * NCCL_STEPS);
		rb[k] = xalloc(step[k] * NCCL_STEPS);
		gdx_drv_reg(&d, p.s, sb[k], step[k] * NCCL_STEPS, &smh[k]);
		gdx_drv_reg(&d, p.r, rb[k], step[k] * NCCL_STEPS, &rmh[k]);
	}
	t0 = gdx_now_s();
	while (left) {
		ASSERT(gdx_now_s() - t0 < 150);
		left = 0;
		for (int k = 0; k < SUBS; k++) {
			int done = 0, size = -1;
			uint32_t seed = (uint32_t)(k << 16 | received[k]);

			left += received[k] < nsteps || sdone[k] < nsteps;
			/* this sub's receive proxy: post, and test its oldest */
			if (posted[k] < nsteps && posted[k] < received[k] + NCCL_STEPS) {
				void *data = rb[k] + (size_t)(posted[k] % NCCL_STEPS) * step[k];
				void **req = &rreq[k][posted[k] % NCCL_STEPS];
				size_t sz = step[k];

				*req = NULL;
				ASSERT_EQ(gdx_drv_irecv(&d, p.r, 1, &data, &sz, &k, &rmh[k], req),
					  ncclSuccess);
				if (*req)
					posted[k]++;
				else
					not_now++;
			}
			if (received[k] < posted[k]) {
				ASSERT_EQ(gdx_drv_test(&d, rreq[k][received[k] % NCCL_STEPS], &done,
						       &size),
					  ncclSuccess);
				if (done) {
					ASSERT_EQ(size, (int)step[k]);
					ASSERT_EQ(gdx_check(rb[k] + (size_t)(received[k] %
									     NCCL_STEPS) *
									    step[k],
							    step[k], seed),
						  -1);
					received[k]++;
				}
			}
			/* this sub's send proxy: its next step, and its oldest send */
			if (sent[k] < posted[k] && sent[k] < sdone[k] + NCCL_STEPS) {
				char *data = sb[k] + (size_t)(sent[k] % NCCL_STEPS) * step[k];
				void **req = &sreq[k][sent[k] % NCCL_STEPS];

				if (filled[k] == sent[k])
					gdx_fill(data, step[k], (uint32_t)(k << 16 | filled[k]++));
				*req = NULL;
				ASSERT_EQ(gdx_drv_isend(&d, p.s, data, step[k], k, smh[k], req),
					  ncclSuccess);
				sent[k] += *req != NULL;
			}
			if (sdone[k] < sent[k]) {
				done = 0;
				ASSERT_EQ(gdx_drv_test(&d, sreq[k][sdone[k] % NCCL_STEPS], &done,
						       &size),
					  ncclSuccess);
				sdone[k] += done;
			}
		}
	}
	printf("  %d subs x %d steps through one comm, each testing its own oldest: every byte "
	       "right in %.1f s; irecv said not now %d time(s)\n",
	       SUBS, nsteps, gdx_now_s() - t0, not_now);
	for (int k = 0; k < SUBS; k++) {
		ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh[k]), ncclSuccess);
		ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh[k]), ncclSuccess);
		munmap(sb[k], step[k] * NCCL_STEPS);
		munmap(rb[k], step[k] * NCCL_STEPS);
	}
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_shared_comms_subs_test_their_own_oldest_v7(void)
{
	shared_comm_subs(7);
}

static void test_shared_comms_subs_test_their_own_oldest_fused_newest(void)
{
	shared_comm_subs(NEWEST);
}

/*
 * A clear-to-send held back leaves the sender idle whenever the receiver
 * counts as "held by the sender" one that is already a message on the wire:
 * receives of NCCL's step sizes never hold theirs. NCCL_STEPS receives
 * posted, and the receive side not called again: the sender must find all of
 * them, with batching on (the default) as with it off, and every byte arrives.
 */
static void test_cts_large_receives_never_held(void)
{
	static const size_t steps[] = {LL_STEP, SIMPLE_STEP};

	for (int batched = 0; batched < 2; batched++) {
		struct gdx_drv d;
		struct gdx_dpair p;

		if (!batched)
			setenv("NCCL_GDX_CTS_BATCH", "1", 1);
		gdx_drv_load(&d, NEWEST);
		gdx_drv_pair(&d, 0, 1, &p);
		for (int s = 0; s < 2; s++) {
			size_t step = steps[s];
			char *sb = xalloc(step * NCCL_STEPS), *rb = xalloc(step * NCCL_STEPS);
			void *smh, *rmh, *sreq[NCCL_STEPS] = {0}, *rreq[NCCL_STEPS];
			int tag = 1, found = 0;

			gdx_drv_reg(&d, p.s, sb, step * NCCL_STEPS, &smh);
			gdx_drv_reg(&d, p.r, rb, step * NCCL_STEPS, &rmh);
			for (int i = 0; i < NCCL_STEPS; i++) {
				void *data = rb + (size_t)i * step;

				ASSERT_EQ(gdx_drv_irecv(&d, p.r, 1, &data, &step, &tag, &rmh,
							&rreq[i]),
					  ncclSuccess);
				ASSERT(rreq[i]);
			}
			for (int i = 0; i < NCCL_STEPS; i++) {
				char *data = sb + (size_t)i * step;

				gdx_fill(data, step, (uint32_t)i);
				for (double t0 = gdx_now_s(); !sreq[i] && gdx_now_s() - t0 < 30;)
					ASSERT_EQ(gdx_drv_isend(&d, p.s, data, step, tag, smh,
								&sreq[i]),
						  ncclSuccess);
				if (!sreq[i])
					break;
				found++;
			}
			printf("  %zu-byte steps, clear-to-sends %s: the sender found %d of %d "
			       "with no receive-side call\n",
			       step, batched ? "batched" : "one by one", found, NCCL_STEPS);
			ASSERT_EQ(found, NCCL_STEPS);
			for (int i = 0; i < NCCL_STEPS; i++) {
				int size = -1;

				ASSERT_EQ(gdx_drv_wait(&d, rreq[i], &size), ncclSuccess);
				ASSERT_EQ(size, (int)step);
				ASSERT_EQ(gdx_drv_wait(&d, sreq[i], &size), ncclSuccess);
				ASSERT_EQ(gdx_check(rb + (size_t)i * step, step, (uint32_t)i), -1);
			}
			ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh), ncclSuccess);
			ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh), ncclSuccess);
			munmap(sb, step * NCCL_STEPS);
			munmap(rb, step * NCCL_STEPS);
		}
		gdx_drv_unpair(&d, &p);
		unsetenv("NCCL_GDX_CTS_BATCH");
		ASSERT_EQ(dlclose(d.lib), 0); /* the next load reads the variable again */
	}
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* ---- grouped receives of NCCL's registered-buffer sizes ---- */

/*
 * NCCL's registered-buffer path posts each buffer up to NCCL_MAX_NET_SIZE
 * (1 GiB) and groups them up to maxRecvs: one grouped receive of a 1 GiB and
 * a small buffer, with more than 512 MiB sent into the large one. Sizes come
 * back per buffer.
 */
static void test_grouped_receive_of_1gib_buffers(void)
{
	const size_t big = MAX_NET_SIZE, small = 8192, sent_big = (520ULL << 20) + 4093;
	struct gdx_drv d;
	struct gdx_dpair p;
	char *rb = xalloc(big + small), *sb = xalloc(sent_big + small);
	void *data[2] = {rb, rb + big}, *mhs[2], *rmh, *smh, *rreq = NULL, *sreq[2];
	size_t sizes[2] = {big, small};
	int tags[2] = {21, 22}, got[2] = {-1, -1}, one;

	gdx_drv_load(&d, NEWEST);
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_reg(&d, p.r, rb, big + small, &rmh);
	gdx_drv_reg(&d, p.s, sb, sent_big + small, &smh);
	mhs[0] = mhs[1] = rmh;
	gdx_fill(sb, sent_big, 1);
	gdx_fill(sb + sent_big, small - 1, 2);
	ASSERT_EQ(gdx_drv_irecv(&d, p.r, 2, data, sizes, tags, mhs, &rreq), ncclSuccess);
	ASSERT(rreq != NULL);
	/* the small one's rank first: the group goes when both have matched */
	sreq[1] = send_now(&d, p.s, sb + sent_big, small - 1, 22, smh);
	sreq[0] = send_now(&d, p.s, sb, sent_big, 21, smh);
	ASSERT_EQ(gdx_drv_wait(&d, rreq, got), ncclSuccess);
	ASSERT_EQ(got[0], (int)sent_big);
	ASSERT_EQ(got[1], (int)(small - 1));
	ASSERT_EQ(gdx_check(rb, sent_big, 1), -1);
	ASSERT_EQ(gdx_check(rb + big, small - 1, 2), -1);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(gdx_drv_wait(&d, sreq[i], &one), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh), ncclSuccess);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* ---- registration as NCCL does it ---- */

/* Verbs objects of one kind on one device, from `rdma resource show`. */
static int rdma_count(const char *dev, const char *kind)
{
	char out[4096], key[64];
	const char *line, *at;
	int v = -1;

	gdx_rdma_counts(out, sizeof(out));
	snprintf(key, sizeof(key), ": %s: ", dev);
	line = strstr(out, key);
	ASSERT(line != NULL);
	snprintf(key, sizeof(key), " %s ", kind);
	at = strstr(line, key);
	ASSERT(at != NULL);
	ASSERT_EQ(sscanf(at + strlen(key), "%d", &v), 1);
	return v;
}

/*
 * NCCL's p2p connections share one buffer pool per local rank and register
 * the whole pool through every connection; user buffers are registered per
 * peer. Four connections register one pool: one memory region per device,
 * every connection moves bytes through its part of it, and the regions go
 * when the last handle does.
 */
static void shared_pool(int v)
{
	enum { CONNS = 4, PART = 1 << 20 };
	struct gdx_drv d;
	struct gdx_dpair p[CONNS];
	char *spool = xalloc((size_t)CONNS * PART), *rpool = xalloc((size_t)CONNS * PART);
	void *smh[CONNS], *rmh[CONNS];
	int mr0, mr1;

	gdx_drv_load(&d, v);
	for (int c = 0; c < CONNS; c++)
		gdx_drv_pair(&d, 0, 1, &p[c]);
	mr0 = rdma_count("rxe0", "mr");
	mr1 = rdma_count("rxe1", "mr");
	for (int c = 0; c < CONNS; c++) {
		gdx_drv_reg(&d, p[c].s, spool, (size_t)CONNS * PART, &smh[c]);
		gdx_drv_reg(&d, p[c].r, rpool, (size_t)CONNS * PART, &rmh[c]);
	}
	ASSERT_EQ(rdma_count("rxe0", "mr"), mr0 + 1); /* receives land on rxe0 */
	ASSERT_EQ(rdma_count("rxe1", "mr"), mr1 + 1);
	for (int c = 0; c < CONNS; c++) {
		char *sb = spool + (size_t)c * PART, *rb = rpool + (size_t)c * PART;
		void *rreq = NULL, *sreq;
		size_t size = PART;
		int tag = c, got = -1;

		gdx_fill(sb, PART, (uint32_t)c);
		ASSERT_EQ(gdx_drv_irecv(&d, p[c].r, 1, (void **)&rb, &size, &tag, &rmh[c], &rreq),
			  ncclSuccess);
		sreq = send_now(&d, p[c].s, sb, PART, c, smh[c]);
		ASSERT_EQ(gdx_drv_wait(&d, sreq, &got), ncclSuccess);
		ASSERT_EQ(gdx_drv_wait(&d, rreq, &got), ncclSuccess);
		ASSERT_EQ(gdx_check(rb, PART, (uint32_t)c), -1);
	}
	/* released in another order than registered */
	for (int c = CONNS - 1; c >= 0; c--) {
		ASSERT_EQ(gdx_drv_dereg(&d, p[c].s, smh[c]), ncclSuccess);
		ASSERT_EQ(gdx_drv_dereg(&d, p[(c + 1) % CONNS].r, rmh[c]), ncclSuccess);
	}
	ASSERT_EQ(rdma_count("rxe0", "mr"), mr0);
	ASSERT_EQ(rdma_count("rxe1", "mr"), mr1);
	for (int c = 0; c < CONNS; c++)
		gdx_drv_unpair(&d, &p[c]);
}

static void test_shared_pool_registered_per_connection_v7(void)
{
	shared_pool(7);
}

static void test_shared_pool_registered_per_connection_newest(void)
{
	shared_pool(NEWEST);
}

/*
 * iflush where the proxy calls it: after a grouped receive completed, with
 * the sizes test returned, only when bytes arrived. Host memory needs none
 * (NULL request: NCCL counts it done); with NCCL_GDX_GDR_FLUSH=2 the flush
 * reads go through the loopback QPs and complete.
 */
static void iflush_as_nccl(int forced)
{
	enum { SZ = 50000 };
	struct gdx_drv d;
	struct gdx_dpair p;
	char *sb = xalloc(2 * SZ), *rb = xalloc(2 * SZ);
	void *data[2] = {rb, rb + SZ}, *mhs[2], *rmh, *smh, *rreq = NULL, *freq = NULL, *s0, *s1;
	size_t sizes[2] = {SZ, SZ};
	int tags[2] = {1, 2}, got[2] = {0, 0}, one;

	if (forced)
		setenv("NCCL_GDX_GDR_FLUSH", "2", 1);
	gdx_drv_load(&d, NEWEST);
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_reg(&d, p.r, rb, 2 * SZ, &rmh);
	gdx_drv_reg(&d, p.s, sb, 2 * SZ, &smh);
	mhs[0] = mhs[1] = rmh;
	ASSERT_EQ(gdx_drv_irecv(&d, p.r, 2, data, sizes, tags, mhs, &rreq), ncclSuccess);
	s1 = send_now(&d, p.s, sb + SZ, 0, 2, smh); /* one sub sent nothing */
	s0 = send_now(&d, p.s, sb, SZ, 1, smh);
	ASSERT_EQ(gdx_drv_wait(&d, rreq, got), ncclSuccess);
	ASSERT_EQ(got[0], SZ);
	ASSERT_EQ(got[1], 0);
	ASSERT_EQ(gdx_drv_iflush(&d, p.r, 2, data, got, mhs, &freq), ncclSuccess);
	if (forced) {
		ASSERT(freq != NULL);
		ASSERT_EQ(gdx_drv_wait(&d, freq, NULL), ncclSuccess);
	} else {
		ASSERT(freq == NULL);
	}
	ASSERT_EQ(gdx_drv_wait(&d, s0, &one), ncclSuccess);
	ASSERT_EQ(gdx_drv_wait(&d, s1, &one), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.r, rmh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(&d, p.s, smh), ncclSuccess);
	gdx_drv_unpair(&d, &p);
	unsetenv("NCCL_GDX_GDR_FLUSH");
	ASSERT_EQ(dlclose(d.lib), 0); /* the next load reads the variable again */
}

static void test_iflush_as_nccl_calls_it(void)
{
	iflush_as_nccl(0);
	iflush_as_nccl(1);
}

/* ---- what NCCL's topology code takes from the devices ---- */

/* Devices 0..n-1 are physical NICs: one (guid, port) each. */
static void assert_unique_ports(struct gdx_drv *d, int n)
{
	struct gdx_drv_props a, b;

	for (int i = 0; i < n; i++) {
		ASSERT_EQ(gdx_drv_props(d, i, &a), ncclSuccess);
		ASSERT(a.speed > 0);
		for (int j = 0; j < i; j++) {
			ASSERT_EQ(gdx_drv_props(d, j, &b), ncclSuccess);
			if (a.guid == b.guid && a.port == b.port)
				gdx_test_fail(__FILE__, __LINE__,
					      "devices %d (%s) and %d (%s) share guid 0x%llx port "
					      "%d: NCCL takes them for one NIC",
					      j, b.name, i, a.name, (unsigned long long)a.guid,
					      a.port);
		}
	}
}

/*
 * NCCL 2.24+ takes the device count at init as its physical NICs, merges
 * them itself (NCCL_NET_MERGE_LEVEL, NCCL_NET_FORCE_MERGE) through
 * makeVDevice, then counts again and reads the new devices after the
 * physical ones. An NCCL_GDX_RAILS group is NCCL's to make here: the plugin
 * presents the physical NICs only, and says how to ask NCCL instead.
 */
static void test_make_vdevice_as_nccl_merges(void)
{
	const int a[] = {0, 2}, b[] = {1, 3};
	struct gdx_drv d;
	struct gdx_drv_props pr;
	struct gdx_dpair p;
	int va = -1, vb = -1;

	setenv("NCCL_GDX_RAILS", "rxe0+rxe2,rxe1+rxe3", 1);
	gdx_drv_load(&d, NEWEST);
	ASSERT_EQ(gdx_drv_devices(&d), 4);
	assert_unique_ports(&d, 4);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_NET_FORCE_MERGE=rxe0,rxe2;rxe1,rxe3");
	gdx_test_log_clear();
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &va, 2, a), ncclSuccess);
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &vb, 2, b), ncclSuccess);
	ASSERT_EQ(gdx_drv_devices(&d), 6);
	ASSERT_EQ(va, 4);
	ASSERT_EQ(vb, 5);
	ASSERT_EQ(gdx_drv_props(&d, 4, &pr), ncclSuccess);
	ASSERT_EQ(strcmp(pr.name, "rxe0+rxe2"), 0);
	ASSERT_EQ(pr.ndevs, 2);
	ASSERT_EQ(pr.devs[0], 0);
	ASSERT_EQ(pr.devs[1], 2);
	gdx_drv_pair(&d, 4, 5, &p);
	gdx_drv_transfer(&d, &p, 3000017, 1, 0);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	unsetenv("NCCL_GDX_RAILS");
}

/* Where NCCL cannot merge (v7, v8), the plugin fuses at init and hides the
 * members: every NIC is in exactly one device. */
static void test_fused_at_init_hides_members_v7(void)
{
	struct gdx_drv d;
	struct gdx_drv_props pr;
	struct gdx_dpair p;

	setenv("NCCL_GDX_RAILS", "rxe0+rxe2,rxe1+rxe3", 1);
	gdx_drv_load(&d, 7);
	ASSERT_EQ(gdx_drv_devices(&d), 2);
	assert_unique_ports(&d, 2);
	ASSERT_EQ(gdx_drv_props(&d, 0, &pr), ncclSuccess);
	ASSERT_EQ(strcmp(pr.name, "rxe0+rxe2"), 0);
	ASSERT_EQ(gdx_drv_props(&d, 1, &pr), ncclSuccess);
	ASSERT_EQ(strcmp(pr.name, "rxe1+rxe3"), 0);
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_transfer(&d, &p, 2000003, 2, 0);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	unsetenv("NCCL_GDX_RAILS");
}

/*
 * railId and planeId come from the user's device list, as NCCL_IB_HCA's
 * name:port:rail:plane, never from PCIe locality (a topology that puts two
 * NICs under one GPU says nothing about their leaf switches); a fused device
 * has its members' rail when they share one, else none.
 */
static void test_rail_ids_from_the_user(void)
{
	const int same[] = {0, 1}, mixed[] = {0, 2};
	struct gdx_drv d;
	struct gdx_drv_props pr;
	int v;

	setenv("NCCL_GDX_TOPO_FILE", "tests/lib/fixtures/topo/vm-rails.xml", 1);
	setenv("NCCL_IB_HCA", "=rxe0:1:3:0,rxe1:1:3:1,rxe2:1:4:0,rxe3:1:4:1", 1);
	gdx_drv_load(&d, NEWEST);
	ASSERT_EQ(gdx_drv_devices(&d), 4);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(gdx_drv_props(&d, i, &pr), ncclSuccess);
		ASSERT_EQ(pr.rail_id, i < 2 ? 3 : 4);
		ASSERT_EQ(pr.plane_id, i % 2);
	}
	ASSERT_STR_CONTAINS(gdx_test_infos(), "set by NCCL_IB_HCA");
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &v, 2, same), ncclSuccess);
	ASSERT_EQ(gdx_drv_props(&d, v, &pr), ncclSuccess);
	ASSERT_EQ(pr.rail_id, 3);
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &v, 2, mixed), ncclSuccess);
	ASSERT_EQ(gdx_drv_props(&d, v, &pr), ncclSuccess);
	ASSERT_EQ(pr.rail_id, NCCL_NET_ID_UNDEF);
	unsetenv("NCCL_IB_HCA");
	unsetenv("NCCL_GDX_TOPO_FILE");
}

static void test_rail_ids_undefined_by_default(void)
{
	struct gdx_drv d;
	struct gdx_drv_props pr;

	setenv("NCCL_GDX_TOPO_FILE", "tests/lib/fixtures/topo/vm-rails.xml", 1);
	gdx_drv_load(&d, NEWEST);
	for (int i = 0; i < gdx_drv_devices(&d); i++) {
		ASSERT_EQ(gdx_drv_props(&d, i, &pr), ncclSuccess);
		ASSERT_EQ(pr.rail_id, NCCL_NET_ID_UNDEF);
		ASSERT_EQ(pr.plane_id, NCCL_NET_ID_UNDEF);
		/* NCCL's limits: maxP2pBytes in (0, 1 TiB], and at least one
		 * registered-buffer step */
		ASSERT(pr.max_p2p_bytes >= MAX_NET_SIZE &&
		       pr.max_p2p_bytes <= NCCL_MAX_NET_SIZE_BYTES);
		ASSERT(pr.max_coll_bytes > 0 && pr.max_coll_bytes <= NCCL_MAX_NET_SIZE_BYTES);
		ASSERT_EQ(pr.max_recvs, 8);
	}
	unsetenv("NCCL_GDX_TOPO_FILE");
}

/* ---- the traffic class, closing, handle buffers ---- */

/*
 * The connection's traffic class, from NCCL's config (v10 connect, v11+
 * init) or NCCL_IB_TC, is the sender's, and the receiver's packets carry it
 * too (its clear-to-sends and acknowledgements), as net_ib takes the
 * sender's class for both ends; NCCL_IB_FIFO_TC sets the receiver's own.
 */
struct tos_run {
	struct gdx_drv *d;
	struct gdx_dpair *p;
};

static void tos_send(void *arg)
{
	struct tos_run *t = arg;

	gdx_drv_transfer(t->d, t->p, 40000, 7, 0);
}

static void tos_both_ways(int v, int tc, int expect_send, int expect_recv)
{
	struct gdx_drv d;
	struct gdx_dpair p;
	struct tos_run t = {&d, &p};
	int s, r;

	gdx_drv_load_tc(&d, v, tc);
	gdx_drv_pair(&d, 0, 1, &p);
	/* the connector is rxe1 (veth1), the receiver rxe0 (veth0) */
	s = gdx_capture_tos("veth1", tos_send, &t);
	r = gdx_capture_tos("veth0", tos_send, &t);
	printf("  v%d, class %d: sender's packets TOS %d, receiver's TOS %d\n", v, tc, s, r);
	ASSERT_EQ(s, expect_send);
	ASSERT_EQ(r, expect_recv);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(dlclose(d.lib), 0);
}

static void test_traffic_class_both_ways(void)
{
	tos_both_ways(10, 104, 104, 104);
	tos_both_ways(NEWEST, 72, 72, 72);
	setenv("NCCL_IB_TC", "40", 1);
	tos_both_ways(NEWEST, NCCL_NET_TRAFFIC_CLASS_UNDEF, 40, 40);
	setenv("NCCL_IB_FIFO_TC", "96", 1);
	tos_both_ways(NEWEST, NCCL_NET_TRAFFIC_CLASS_UNDEF, 40, 96);
	unsetenv("NCCL_IB_TC");
	unsetenv("NCCL_IB_FIFO_TC");
}

/*
 * A job aborting with a peer host gone: its RoCE traffic is dropped on the
 * wire (netem loss 100% on both veths) while the out-of-band sockets stay
 * up, as a dead host's do until TCP gives up. Each send comm still holds an
 * inline send it reported done; closing all of them must take well under a
 * second together, not a wait per comm.
 */
static void test_close_send_to_dead_host_is_quick(void)
{
	enum { N = 64 };
	struct gdx_drv d;
	struct gdx_dpair p[N];
	char *sb = xalloc(64), *rb = xalloc(64 * N);
	void *smh[N], *rmh[N], *rreq[N];
	double t0, took;

	gdx_drv_load(&d, 7);
	for (int i = 0; i < N; i++) {
		char *data = rb + 64 * i;
		size_t size = 64;
		int tag = 0;

		gdx_drv_pair(&d, 0, 1, &p[i]);
		gdx_drv_reg(&d, p[i].s, sb, 64, &smh[i]);
		gdx_drv_reg(&d, p[i].r, data, 64, &rmh[i]);
		ASSERT_EQ(gdx_drv_irecv(&d, p[i].r, 1, (void **)&data, &size, &tag, &rmh[i],
					&rreq[i]),
			  ncclSuccess);
	}
	/* every clear-to-send is there before the wire goes */
	for (int i = 0; i < N; i++) {
		void *req = send_now(&d, p[i].s, sb, 8, 0, smh[i]);
		int done = 0, size;

		ASSERT_EQ(gdx_drv_test(&d, req, &done, &size), ncclSuccess);
		ASSERT_EQ(done, 1); /* inline: done when posted */
	}
	run_cmd("tc qdisc add dev veth0 root netem loss 100% && "
		"tc qdisc add dev veth1 root netem loss 100%");
	/* the sends posted just now may still be in the send queue: more of
	 * them, each done at post, none confirmed */
	for (int i = 0; i < N; i++) {
		char *data = rb + 64 * i;
		size_t size = 64;
		int tag = 0;
		void *rq = NULL;

		ASSERT_EQ(gdx_drv_irecv(&d, p[i].r, 1, (void **)&data, &size, &tag, &rmh[i], &rq),
			  ncclSuccess);
		(void)rq;
	}
	t0 = gdx_now_s();
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(gdx_drv_dereg(&d, p[i].s, smh[i]), ncclSuccess);
		ASSERT_EQ(gdx_drv_close_send(&d, p[i].s), ncclSuccess);
	}
	took = gdx_now_s() - t0;
	run_cmd("tc qdisc del dev veth0 root && tc qdisc del dev veth1 root");
	printf("  %d send comms to a host that no longer answers closed in %.3f s\n", N, took);
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(gdx_drv_dereg(&d, p[i].r, rmh[i]), ncclSuccess);
		ASSERT_EQ(gdx_drv_close_recv(&d, p[i].r), ncclSuccess);
		ASSERT_EQ(gdx_drv_close_listen(&d, p[i].l), ncclSuccess);
	}
	/* one wait of GDX_DRAIN_MS (100 ms) per host, not one per comm (6.4 s);
	 * the rest is closing 64 comms under the emulator, 0.3-0.5 s */
	ASSERT(took < 2.0);
}

/*
 * NCCL passes the same handle buffer to every retry of one connect, and may
 * reuse that buffer for another handle later. A connect abandoned half way
 * must not be resumed by a later connect to another listener through the
 * same buffer, and what the abandoned one held is released.
 */
static void test_handle_buffer_reused_by_another_connect(void)
{
	char ha[NCCL_NET_HANDLE_MAXSIZE], hb[NCCL_NET_HANDLE_MAXSIZE], buf[NCCL_NET_HANDLE_MAXSIZE];
	struct gdx_drv d;
	void *la, *lb, *s = NULL, *r = NULL, *ra = NULL;
	int fds;

	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", "300", 1);
	gdx_drv_load(&d, 7);
	ASSERT_EQ(gdx_drv_listen(&d, 0, ha, &la), ncclSuccess);
	ASSERT_EQ(gdx_drv_listen(&d, 0, hb, &lb), ncclSuccess);
	fds = count_fds();
	memcpy(buf, ha, sizeof(buf));
	ASSERT_EQ(gdx_drv_connect(&d, 1, buf, &s), ncclSuccess); /* started, then abandoned */
	ASSERT(s == NULL);
	memcpy(buf, hb, sizeof(buf));
	for (double t0 = gdx_now_s(); !s || !r;) {
		ASSERT(gdx_now_s() - t0 < 10);
		if (!s)
			ASSERT_EQ(gdx_drv_connect(&d, 1, buf, &s), ncclSuccess);
		if (!r)
			ASSERT_EQ(gdx_drv_accept(&d, lb, &r), ncclSuccess);
		ASSERT_EQ(gdx_drv_accept(&d, la, &ra), ncclSuccess);
		ASSERT(ra == NULL); /* nothing reaches listener a */
	}
	gdx_drv_transfer(&d, &(struct gdx_dpair){lb, s, r}, 100000, 3, 0);
	/* the abandoned connect goes once its handshake time is up: its socket
	 * and its comm are freed by the next connect call, and listener a drops
	 * its half */
	usleep(400 * 1000);
	ASSERT_EQ(gdx_drv_accept(&d, la, &ra), ncclSuccess);
	memcpy(buf, hb, sizeof(buf));
	{
		void *s2 = NULL, *r2 = NULL;

		for (double t0 = gdx_now_s(); !s2 || !r2;) {
			ASSERT(gdx_now_s() - t0 < 10);
			if (!s2)
				ASSERT_EQ(gdx_drv_connect(&d, 1, buf, &s2), ncclSuccess);
			if (!r2)
				ASSERT_EQ(gdx_drv_accept(&d, lb, &r2), ncclSuccess);
		}
		ASSERT_EQ(gdx_drv_close_send(&d, s2), ncclSuccess);
		ASSERT_EQ(gdx_drv_close_recv(&d, r2), ncclSuccess);
	}
	ASSERT_EQ(gdx_drv_close_send(&d, s), ncclSuccess);
	ASSERT_EQ(gdx_drv_close_recv(&d, r), ncclSuccess);
	ASSERT_EQ(count_fds(), fds);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "abandoned");
	ASSERT_EQ(gdx_drv_close_listen(&d, la), ncclSuccess);
	ASSERT_EQ(gdx_drv_close_listen(&d, lb), ncclSuccess);
	unsetenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS");
}

/*
 * The out-of-band interface, chosen as NCCL chooses its own: an InfiniBand
 * interface (ib*) before the Ethernet ones, docker* only as a last resort.
 * Two interfaces made for the test (dummy links with addresses), a docker
 * bridge before the veths and an IPoIB one after them in the kernel's order.
 */
static void test_oob_interface_as_nccl(void)
{
	struct gdx_drv d;
	struct gdx_dpair p;

	run_cmd("ip link add docker0 type dummy && ip addr add 172.17.0.1/16 dev docker0 && "
		"ip link set docker0 up && ip link add ib0 type dummy && "
		"ip addr add 10.77.0.1/24 dev ib0 && ip link set ib0 up");
	gdx_drv_load(&d, NEWEST);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "out-of-band interface ib0, address 10.77.0.1");
	gdx_drv_pair(&d, 0, 1, &p);
	gdx_drv_transfer(&d, &p, 100000, 4, 0);
	gdx_drv_unpair(&d, &p);
	run_cmd("ip link del ib0 && ip link del docker0");
}

/*
 * What NCCL 2.28+ prints of two communicators' lives through the newest
 * table at its default subsystems (INIT; BOOTSTRAP and ENV besides): the
 * two INIT lines when the plugin starts (its version and file, then the
 * devices), none for a context (NCCL calls init
 * per communicator), a connection or its close, and one summary per NIC
 * port at the last context's finalize. A finalize with a context left says
 * nothing yet.
 */
static void test_log_at_default_subsystems_newest(void)
{
	const unsigned long deflt = NCCL_INIT | 4096 /* NCCL_BOOTSTRAP */ | NCCL_ENV;
	struct gdx_drv a, b;
	struct gdx_dpair pa, pb;
	int env;

	gdx_test_log_clear();
	gdx_drv_load(&a, NEWEST);
	gdx_drv_load(&b, NEWEST); /* a second communicator */
	env = gdx_test_log_count(NCCL_LOG_INFO, NCCL_ENV, " set by ");
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, NULL), 2);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, "starting libnccl-net-gdx "), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, ", wire protocol "), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 2 + env);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, "context "), 2);
	gdx_test_log_clear();
	gdx_drv_pair(&a, 0, 1, &pa);
	gdx_drv_pair(&b, 2, 3, &pb);
	gdx_drv_transfer(&a, &pa, 300000, 1, 0);
	gdx_drv_transfer(&b, &pb, 200000, 2, 0);
	gdx_drv_unpair(&a, &pa);
	gdx_drv_unpair(&b, &pb);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, " closed: "), 4);
	/* every comm closed, but a context is open: its finalize is to come */
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 0);
	ASSERT_EQ(T12(&a)->finalize(a.ctx), ncclSuccess);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 0);
	ASSERT_EQ(T12(&b)->finalize(b.ctx), ncclSuccess);
	printf("  two communicators' lives, NCCL_DEBUG_SUBSYS=INIT shows:\n");
	gdx_test_log_print(NCCL_LOG_INFO, NCCL_INIT);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 4);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "rxe0 port 1: 1 comm(s) closed, 0 bytes GPU-direct, 300000 "
				     "bytes through host memory, 0 rail failover(s)"),
		  1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "rxe3 port 1: 1 comm(s) closed, 0 bytes GPU-direct, 200000 "
				     "bytes through host memory, 0 rail failover(s)"),
		  1);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_tag_single_receive_v7, 60), TEST(test_tag_single_receive_newest, 60),
	       TEST(test_pxn_shared_send_comm_v7, 120), TEST(test_pxn_shared_send_comm_newest, 120),
	       TEST(test_steps_ahead_oldest_tested_v7, 180),
	       TEST(test_steps_ahead_oldest_tested_newest, 180),
	       TEST(test_shared_comms_subs_test_their_own_oldest_v7, 180),
	       TEST(test_shared_comms_subs_test_their_own_oldest_fused_newest, 180),
	       TEST(test_cts_large_receives_never_held, 300),
	       TEST(test_grouped_receive_of_1gib_buffers, 240),
	       TEST(test_shared_pool_registered_per_connection_v7, 60),
	       TEST(test_shared_pool_registered_per_connection_newest, 60),
	       TEST(test_iflush_as_nccl_calls_it, 60), TEST(test_make_vdevice_as_nccl_merges, 60),
	       TEST(test_fused_at_init_hides_members_v7, 60), TEST(test_rail_ids_from_the_user, 60),
	       TEST(test_rail_ids_undefined_by_default, 60),
	       TEST(test_traffic_class_both_ways, 120),
	       TEST(test_close_send_to_dead_host_is_quick, 240),
	       TEST(test_handle_buffer_reused_by_another_connect, 60),
	       TEST(test_oob_interface_as_nccl, 60),
	       TEST(test_log_at_default_subsystems_newest, 120))
