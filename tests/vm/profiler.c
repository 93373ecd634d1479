/* SPDX-License-Identifier: MIT */
/*
 * NCCL's profiler events over real rxe devices (gdx_prof.h), through the v10
 * and v12 tables with a profiler callback that records every call: a known
 * number of isends and irecvs of known sizes, and for each the events it
 * started (one per piece of a send, one per buffer of a receive), each with
 * net_ib's pluginId and QP descriptor naming a QP of its comm, its bytes
 * adding up to the message, stopped once, by the test that completes it.
 * NULL phandles start nothing; phandles without a callback break nothing.
 * Runs inside the VM with --pairs 2.
 */
#include <stdlib.h>

#include <nccl/profiler_net.h>
#include "comm/gdx_comm.h"

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define T12(d) ((const ncclNet_v12_t *)(d)->table)

#define MAX_EVENTS 1024
#define MAX_SIZE   (4 << 20)

/* What the callback saw: every start, and which were stopped. */
struct ev {
	void *phandle;
	int64_t id;
	ncclProfilerNetIbDescr_v1_t d;
	int stopped;
};
static struct ev evs[MAX_EVENTS];
static int nev, nstops, nother;

static ncclResult_t rec(void **eh, int type, void *phandle, int64_t id, void *ext)
{
	if (type == ncclProfilerNetEventStart) {
		ASSERT(phandle != NULL && ext != NULL && nev < MAX_EVENTS);
		evs[nev] = (struct ev){
			.phandle = phandle, .id = id, .d = *(ncclProfilerNetIbDescr_v1_t *)ext};
		*eh = &evs[nev++];
	} else if (type == ncclProfilerNetEventStop) {
		struct ev *e = *eh;

		ASSERT(e >= evs && e < evs + nev);
		ASSERT_EQ(e->stopped, 0);
		e->stopped = 1;
		nstops++;
	} else {
		nother++;
	}
	return ncclSuccess;
}

/* Whether the comm (the NCCL handle is the comm itself) has a QP numbered
 * qpn on its device's NIC device: QP numbers are per NIC, and two NICs of a
 * fused device may both have one. */
static int comm_qp(void *comm, int device, int qpn)
{
	const struct gdx_comm *c = comm;

	for (int r = 0; r < c->ch.nrails; r++)
		for (int q = 0; q < c->ch.rails[r].nqps; q++)
			if (c->ch.rails[r].member == device &&
			    (int)c->ch.rails[r].qps[q].qp->qp_num == qpn)
				return 1;
	return 0;
}

/* The events started since first with this phandle: how many, their bytes;
 * each an IB QP event on a QP of comm, with opcode op. */
static int events_of(int first, void *phandle, void *comm, int op, uint64_t *bytes)
{
	int n = 0;

	*bytes = 0;
	for (int i = first; i < nev; i++) {
		if (evs[i].phandle != phandle)
			continue;
		ASSERT_EQ(evs[i].id, NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
		ASSERT_EQ(evs[i].d.type, ncclProfileQp);
		ASSERT_EQ(evs[i].d.qp.opcode, op);
		ASSERT(comm_qp(comm, evs[i].d.qp.device, evs[i].d.qp.qpNum));
		*bytes += evs[i].d.qp.length;
		n++;
	}
	return n;
}

static char *sbuf, *rbuf;
static void *smh, *rmh;

static void buffers(struct gdx_drv *d, struct gdx_dpair *p)
{
	sbuf = malloc(MAX_SIZE);
	rbuf = malloc(MAX_SIZE);
	ASSERT(sbuf && rbuf);
	gdx_drv_reg(d, p->s, sbuf, MAX_SIZE, &smh);
	gdx_drv_reg(d, p->r, rbuf, MAX_SIZE, &rmh);
}

static void buffers_free(struct gdx_drv *d, struct gdx_dpair *p)
{
	ASSERT_EQ(gdx_drv_dereg(d, p->s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(d, p->r, rmh), ncclSuccess);
	free(sbuf);
	free(rbuf);
}

/* One verified message of n bytes, its receive posted with rph and its send
 * with sph; the send's events are not stopped before its test. Returns the
 * index of the first event it started. */
static int message(struct gdx_drv *d, struct gdx_dpair *p, size_t n, uint32_t seed, void *sph,
		   void *rph)
{
	void *sreq = NULL, *rreq = NULL;
	int first = nev, got = -1, tag = 7;

	gdx_fill(sbuf, n, seed);
	d->phandle = rph;
	ASSERT_EQ(gdx_drv_irecv(d, p->r, 1, (void **)&rbuf, &n, &tag, &rmh, &rreq), ncclSuccess);
	d->phandle = sph;
	for (double t0 = gdx_now_s(); !sreq;) {
		ASSERT_EQ(gdx_drv_isend(d, p->s, sbuf, n, tag, smh, &sreq), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
	for (int i = first; i < nev; i++)
		ASSERT_EQ(evs[i].stopped, 0); /* none of them tested yet */
	ASSERT_EQ(gdx_drv_wait(d, sreq, &got), ncclSuccess);
	ASSERT_EQ(gdx_drv_wait(d, rreq, &got), ncclSuccess);
	ASSERT_EQ(got, (int)n);
	ASSERT_EQ(gdx_check(rbuf, n, seed), -1);
	return first;
}

/* v10, one NIC each end, one QP: every message is one piece, one event a
 * side, of the message's bytes; the receive's wr_id is its number. */
static void test_v10_one_event_per_send_and_receive(void)
{
	static const size_t sizes[] = {0, 1, 100, 4097, 65536, 1000003, MAX_SIZE};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	uint64_t sent = 0, send_bytes = 0, recv_bytes = 0, b;
	int sph, rph;

	gdx_drv_load_prof(d, 10, rec);
	gdx_drv_pair(d, 0, 1, &p);
	buffers(d, &p);
	for (int i = 0; i < N; i++) {
		int first = message(d, &p, sizes[i], (uint32_t)i, &sph, &rph);

		ASSERT_EQ(events_of(first, &sph, p.s, IBV_WR_RDMA_WRITE_WITH_IMM, &b), 1);
		ASSERT_EQ(b, sizes[i]);
		send_bytes += b;
		ASSERT_EQ(events_of(first, &rph, p.r, IBV_WR_RDMA_WRITE, &b), 1);
		ASSERT_EQ(b, sizes[i]);
		recv_bytes += b;
		for (int e = first; e < nev; e++)
			if (evs[e].phandle == &rph)
				ASSERT_EQ(evs[e].d.qp.wr_id, i);
		sent += sizes[i];
	}
	printf("  v10: %d messages, %d events started, %d stopped; %llu bytes sent, the send "
	       "events' lengths add up to %llu, the receives' to %llu\n",
	       N, nev, nstops, (unsigned long long)sent, (unsigned long long)send_bytes,
	       (unsigned long long)recv_bytes);
	ASSERT_EQ(nev, 2 * N);
	ASSERT_EQ(send_bytes, sent);
	ASSERT_EQ(recv_bytes, sent);
	/* NULL phandles: no event */
	for (int i = 0; i < N; i++)
		message(d, &p, sizes[i], (uint32_t)(100 + i), NULL, NULL);
	ASSERT_EQ(nev, 2 * N);
	ASSERT_EQ(nstops, nev);
	ASSERT_EQ(nother, 0);
	buffers_free(d, &p);
	gdx_drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* v12, fused devices of two NICs, two QPs a rail with the data split over
 * them: a large message goes in four pieces, one event each on four distinct
 * QPs on both NICs; a small one in one. A grouped receive: one event per
 * buffer with that buffer's phandle, one per isend into it. */
static void test_v12_events_of_striped_and_grouped_messages(void)
{
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	const struct gdx_comm *sc;
	int va, vb, first, sph, rph, gr[3], gs[3];
	uint64_t b;

	setenv("NCCL_GDX_QPS_PER_CONNECTION", "2", 1);
	setenv("NCCL_GDX_SPLIT_DATA_ON_QPS", "1", 1);
	gdx_drv_load_prof(d, 12, rec);
	ASSERT_EQ(gdx_drv_make_vdevice(d, &va, 2, (const int[]){0, 2}), ncclSuccess);
	ASSERT_EQ(gdx_drv_make_vdevice(d, &vb, 2, (const int[]){1, 3}), ncclSuccess);
	gdx_drv_pair(d, va, vb, &p);
	sc = p.s;
	ASSERT_EQ(sc->ch.nrails, 2);
	ASSERT_EQ(sc->ch.rails[0].nqps, 2);
	buffers(d, &p);

	first = message(d, &p, MAX_SIZE, 1, &sph, &rph);
	ASSERT_EQ(events_of(first, &sph, p.s, IBV_WR_RDMA_WRITE_WITH_IMM, &b), 4);
	ASSERT_EQ(b, MAX_SIZE);
	{
		int k = 0, e[4];

		for (int i = first; i < nev; i++)
			if (evs[i].phandle == &sph)
				e[k++] = i;
		for (int i = 0; i < 4; i++) {
			for (int j = 0; j < i; j++)
				ASSERT(evs[e[i]].d.qp.qpNum != evs[e[j]].d.qp.qpNum ||
				       evs[e[i]].d.qp.device != evs[e[j]].d.qp.device);
			/* rail 0's two QPs, then rail 1's, on the device's two NICs */
			ASSERT_EQ(evs[e[i]].d.qp.device, i / 2);
		}
	}
	ASSERT_EQ(events_of(first, &rph, p.r, IBV_WR_RDMA_WRITE, &b), 1);
	ASSERT_EQ(b, MAX_SIZE);
	first = message(d, &p, 100, 2, &sph, &rph);
	ASSERT_EQ(events_of(first, &sph, p.s, IBV_WR_RDMA_WRITE_WITH_IMM, &b), 1);
	ASSERT_EQ(b, 100);
	ASSERT_EQ(events_of(first, &rph, p.r, IBV_WR_RDMA_WRITE, &b), 1);

	{
		const size_t sz[3] = {1000, 50000, 7};
		void *data[3] = {rbuf, rbuf + 65536, rbuf + 2 * 65536};
		void *mhs[3] = {rmh, rmh, rmh}, *phs[3] = {&gr[0], &gr[1], &gr[2]};
		void *rreq = NULL, *sreq[3] = {NULL, NULL, NULL};
		int tags[3] = {1, 2, 3}, got[3], one;
		size_t total = 0;

		first = nev;
		ASSERT_EQ(T12(d)->irecv(p.r, 3, data, (size_t *)sz, tags, mhs, phs, &rreq),
			  ncclSuccess);
		for (int i = 2; i >= 0; i--) { /* matched by tag, in any order */
			gdx_fill(sbuf + i * 65536, sz[i], (uint32_t)(10 + i));
			for (double t0 = gdx_now_s(); !sreq[i];) {
				d->phandle = &gs[i];
				ASSERT_EQ(gdx_drv_isend(d, p.s, sbuf + i * 65536, sz[i], tags[i],
							smh, &sreq[i]),
					  ncclSuccess);
				ASSERT(gdx_now_s() - t0 < 20);
			}
		}
		ASSERT_EQ(gdx_drv_wait(d, rreq, got), ncclSuccess);
		for (int i = 0; i < 3; i++) {
			ASSERT_EQ(got[i], (int)sz[i]);
			ASSERT_EQ(gdx_check(rbuf + i * 65536, sz[i], (uint32_t)(10 + i)), -1);
			ASSERT_EQ(gdx_drv_wait(d, sreq[i], &one), ncclSuccess);
			ASSERT_EQ(events_of(first, &gr[i], p.r, IBV_WR_RDMA_WRITE, &b), 1);
			ASSERT_EQ(b, sz[i]);
			ASSERT_EQ(events_of(first, &gs[i], p.s, IBV_WR_RDMA_WRITE, &b), 1);
			ASSERT_EQ(b, sz[i]);
			total += b;
		}
		ASSERT_EQ(total, 1000 + 50000 + 7);
		/* a group goes on one QP */
		for (int e = first; e < nev; e++)
			for (int f = first; f < nev; f++)
				if (evs[e].phandle == &gs[0] && evs[f].phandle == &gs[2]) {
					ASSERT_EQ(evs[e].d.qp.qpNum, evs[f].d.qp.qpNum);
					ASSERT_EQ(evs[e].d.qp.device, evs[f].d.qp.device);
				}
	}
	printf("  v12, 2 rails x 2 QPs: %d events started, %d stopped\n", nev, nstops);
	ASSERT_EQ(nstops, nev);
	ASSERT_EQ(nother, 0);
	buffers_free(d, &p);
	gdx_drv_unpair(d, &p);
	ASSERT_EQ(T12(d)->finalize(d->ctx), ncclSuccess);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* NCCL gave no callback: phandles are taken and nothing is called. */
static void test_v11_phandles_without_callback(void)
{
	static const size_t sizes[] = {0, 8, 65536, 1000003};
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	int sph, rph;

	gdx_drv_load(d, 11);
	gdx_drv_pair(d, 0, 1, &p);
	buffers(d, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		message(d, &p, sizes[i], (uint32_t)i, &sph, &rph);
	ASSERT_EQ(nev + nstops + nother, 0);
	buffers_free(d, &p);
	gdx_drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_v10_one_event_per_send_and_receive, 120),
	       TEST(test_v12_events_of_striped_and_grouped_messages, 120),
	       TEST(test_v11_phandles_without_callback, 120))
