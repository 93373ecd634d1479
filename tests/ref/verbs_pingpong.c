/* SPDX-License-Identifier: MIT */
/*
 * The floor under gdx-bench -m lat: the same 8-byte ping-pong on the plugin's
 * own QPs (its device discovery, GID choice and rail set-up), with none of
 * its data path. Two threads, one per device, each posting an inline
 * WRITE_WITH_IMM and waiting for the receive completion on its CQ, as the
 * plugin does (-m imm), or posting a plain RDMA WRITE and polling the byte it
 * lands in, as ib_write_lat does (-m write). Half round trips are stamped as
 * gdx-bench and perftest stamp them. scripts/side-by-side.sh prints it next
 * to both; it runs in the VM: build/tests/ref/verbs_pingpong rxe0 rxe1
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev/gdx_dev.h"
#include "sys/gdx_param.h"
#include <gdx/gdx_stamp.h>
#include "rail/gdx_rail.h"

#define REF_SIZE	 8
#define REF_SEND_WR	 64
#define REF_RECV_WR	 64
#define REF_SIGNAL_EVERY 16

struct ref_end {
	struct gdx_rail rail;
	struct gdx_qp qp;
	struct ibv_mr *mr;
	volatile char *buf; /* [0]: where the peer's byte lands; [64]: what this end sends */
	struct ref_end *peer;
	unsigned unsignaled;
};

static int ref_imm = 1, ref_iters = 10000, ref_warmup = 100;

static void ref_die(const char *what, int err)
{
	fprintf(stderr, "verbs_pingpong: %s: %s\n", what, strerror(err));
	exit(1);
}

static void ref_open(struct ref_end *e, const char *name)
{
	struct gdx_dev *dev = NULL;
	int ret;

	for (int i = 0; i < gdx_devs_count() && !dev; i++)
		if (!strcmp(gdx_dev_get(i)->name, name))
			dev = gdx_dev_get(i);
	if (!dev) {
		fprintf(stderr, "verbs_pingpong: no device %s\n", name);
		exit(2);
	}
	ret = gdx_rail_create(&e->rail, dev, e, 1, &e->qp, REF_SEND_WR, REF_RECV_WR);
	if (ret)
		ref_die("creating the QP", -ret);
	e->buf = aligned_alloc(4096, 4096);
	if (!e->buf)
		ref_die("allocating the buffer", ENOMEM);
	memset((void *)e->buf, 0, 4096);
	e->mr = ibv_reg_mr(e->rail.pd, (void *)e->buf, 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		ref_die("ibv_reg_mr", errno);
	ret = gdx_rail_post_recvs(&e->rail, 0, REF_RECV_WR);
	if (ret)
		ref_die("posting receives", -ret);
}

static void ref_send(struct ref_end *e, char v)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + 64, .length = REF_SIZE, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = ref_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_INLINE,
		.imm_data = htobe32(REF_SIZE),
		.wr.rdma = {.remote_addr = (uintptr_t)e->peer->buf, .rkey = e->peer->mr->rkey},
	};
	struct ibv_send_wr *bad;
	int ret;

	/* unsignaled but one in REF_SIGNAL_EVERY, as the plugin's inline sends */
	if (++e->unsignaled == REF_SIGNAL_EVERY) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		e->unsignaled = 0;
	}
	e->buf[64] = v;
	ret = ibv_post_send(e->rail.qps[0].qp, &wr, &bad);
	if (ret)
		ref_die("ibv_post_send", ret);
}

/* Waits for the peer's message number v: its receive completion (imm), or
 * its byte in memory (write); send completions are reaped on the way. */
static void ref_wait(struct ref_end *e, char v)
{
	for (;;) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(e->rail.cq, 16, wc), got = 0;

		if (n < 0)
			ref_die("ibv_poll_cq", EIO);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs_pingpong: completion failed: %s\n",
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			got += wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM;
		}
		if (got && gdx_rail_post_recvs(&e->rail, 0, got))
			ref_die("reposting receives", EIO);
		if (ref_imm ? got > 0 : e->buf[0] == v)
			return;
	}
}

static void *ref_pong(void *arg)
{
	struct ref_end *e = arg;
	int total = ref_warmup + ref_iters;

	for (int i = 0; i < total; i++) {
		ref_wait(e, (char)(i + 1));
		ref_send(e, (char)(i + 1));
	}
	return NULL;
}

static int ref_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct ref_end a = {0}, b = {0};
	struct gdx_wire_rail wa, wb;
	uint32_t qa, qb;
	double *half, start, per_stamp;
	uint64_t prev, first, last;
	pthread_t pong;
	int opt, ret, bad = 0;

	while (!bad && (opt = getopt(argc, argv, "m:n:w:")) != -1) {
		if (opt == 'm' && (!strcmp(optarg, "imm") || !strcmp(optarg, "write")))
			ref_imm = !strcmp(optarg, "imm");
		else if (opt == 'n' && atoi(optarg) > 0)
			ref_iters = atoi(optarg);
		else if (opt == 'w' && atoi(optarg) >= 0)
			ref_warmup = atoi(optarg);
		else
			bad = 1;
	}
	if (bad || optind + 2 != argc) {
		fprintf(stderr, "usage: verbs_pingpong [-m imm|write] [-n iters] [-w warmup] "
				"DEV_A DEV_B\n");
		return 2;
	}
	ret = gdx_params_load();
	if (ret)
		ref_die("NCCL_GDX_* parameters", -ret);
	ret = gdx_devs_init();
	if (ret < 0)
		ref_die("finding devices", -ret);
	ref_open(&a, argv[optind]);
	ref_open(&b, argv[optind + 1]);
	a.peer = &b;
	b.peer = &a;
	gdx_rail_local(&a.rail, &wa, &qa);
	gdx_rail_local(&b.rail, &wb, &qb);
	if ((ret = gdx_rail_connect(&a.rail, &wb, &qb)) ||
	    (ret = gdx_rail_connect(&b.rail, &wa, &qa)))
		ref_die("connecting the QPs", -ret);
	half = calloc((size_t)ref_iters, sizeof(*half));
	if (!half)
		ref_die("allocating", ENOMEM);
	ret = pthread_create(&pong, NULL, ref_pong, &b);
	if (ret)
		ref_die("pthread_create", ret);
	start = gdx_wall_s();
	first = prev = gdx_stamp();
	for (int i = 0; i < ref_warmup + ref_iters; i++) {
		uint64_t now;

		ref_send(&a, (char)(i + 1));
		ref_wait(&a, (char)(i + 1));
		now = gdx_stamp();
		if (i >= ref_warmup)
			half[i - ref_warmup] = (double)(now - prev) / 2;
		if (i == ref_warmup - 1) { /* the timed round trips start here */
			start = gdx_wall_s();
			first = now;
		}
		prev = now;
	}
	last = prev;
	per_stamp = last > first ? (gdx_wall_s() - start) / (double)(last - first) : 0;
	pthread_join(pong, NULL);
	for (int i = 0; i < ref_iters; i++)
		half[i] *= per_stamp * 1e6;
	qsort(half, (size_t)ref_iters, sizeof(*half), ref_cmp);
	printf("# verbs_pingpong: %s <-> %s, %s, %d iterations after %d warm-up\n", argv[optind],
	       argv[optind + 1],
	       ref_imm ? "WRITE_WITH_IMM, receive completions from the CQ"
		       : "RDMA WRITE, the byte polled in memory",
	       ref_iters, ref_warmup);
	printf("#        bytes     median(us)        p99(us)        min(us)\n");
	printf("  %12d %14.2f %14.2f %14.2f\n", REF_SIZE, half[ref_iters / 2],
	       half[(ref_iters * 99) / 100], half[0]);
	return 0;
}
