/* SPDX-License-Identifier: MIT */
/*
 * Every exported table, v7 to v12, over real rxe devices: connect, verified
 * transfers of several sizes, and each version's own fields and calls
 * (regIsGlobal and the registration cache, vProps and makeVDevice, the
 * optional-completion hint, the traffic class on the wire, contexts and
 * finalize, railId, v6's table). Runs inside the VM with --pairs 2.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define T(type)	      ((const type *)d->table)
#define TBL(dp, type) ((const type *)(dp)->table)

static void transfers(int v)
{
	static const size_t sizes[] = {0, 1, 4097, 65536, 1000003, 8388608};
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;

	gdx_drv_load(d, v);
	gdx_drv_pair(d, 0, 1, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		gdx_drv_transfer(d, &p, sizes[i], (uint32_t)(v * 100 + i), 0);
	gdx_drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* NCCL 2.13-2.18 load v6: no device handles, the older properties. */
static void test_v6_transfers(void)
{
	struct gdx_drv d_, *d = &d_;
	struct gdx_drv_props props;

	transfers(6);
	gdx_drv_load(d, 6);
	ASSERT_EQ(gdx_drv_devices(d), 4);
	ASSERT_EQ(gdx_drv_props(d, 1, &props), ncclSuccess);
	ASSERT_EQ(strcmp(props.name, "rxe1"), 0);
	ASSERT(props.speed > 0);
	ASSERT_EQ(props.ptr_support, NCCL_PTR_HOST);
	ASSERT_EQ(props.max_recvs, 8);
	ASSERT(T(ncclNet_v6_t)->regMrDmaBuf != NULL);
}

static void test_v7_transfers(void)
{
	transfers(7);
}
static void test_v8_transfers(void)
{
	transfers(8);
}
static void test_v9_transfers(void)
{
	transfers(9);
}
static void test_v10_transfers(void)
{
	transfers(10);
}
static void test_v11_transfers(void)
{
	transfers(11);
}
static void test_v12_transfers(void)
{
	transfers(12);
}

static void test_v8_registration_is_global_and_cached(void)
{
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair a, b;
	ncclNetProperties_v8_t props;
	char *buf = malloc(1 << 20);
	void *whole, *part;

	gdx_drv_load(d, 8);
	ASSERT_EQ(T(ncclNet_v8_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.regIsGlobal, 1);
	gdx_drv_pair(d, 0, 1, &a);
	gdx_drv_pair(d, 0, 1, &b);
	/* registered through one comm, a range inside it through another comm of
	 * the same device: both work, and the second is a cache hit */
	gdx_drv_reg(d, a.r, buf, 1 << 20, &whole);
	gdx_drv_reg(d, b.r, buf + 4096, 8192, &part);
	ASSERT_EQ(gdx_drv_dereg(d, a.r, whole), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(d, b.r, part), ncclSuccess);
	gdx_drv_transfer(d, &b, 100000, 3, 0);
	gdx_drv_unpair(d, &a);
	gdx_drv_unpair(d, &b);
	free(buf);
}

static void test_v9_fields_hint_and_make_vdevice(void)
{
	ncclNetVDeviceProps_v9_t vp = {.ndevs = 2, .devs = {0, 2}};
	ncclNetVDeviceProps_v9_t vq = {.ndevs = 2, .devs = {1, 3}};
	ncclNetVDeviceProps_v9_t bad;
	ncclNetProperties_v9_t props;
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	int ndev, va = -1, vb = -1, vbad;

	gdx_drv_load(d, 9);
	ASSERT_EQ(T(ncclNet_v9_t)->getProperties(1, &props), ncclSuccess);
	ASSERT_EQ(props.vProps.ndevs, 1);
	ASSERT_EQ(props.vProps.devs[0], 1);
	ASSERT(props.maxP2pBytes > 0 && props.maxP2pBytes <= NCCL_MAX_NET_SIZE_BYTES);
	ASSERT(props.maxCollBytes > 0);
	ASSERT_EQ(props.forceFlush, 0);
	ASSERT_EQ(T(ncclNet_v9_t)->devices(&ndev), ncclSuccess);
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&va, &vp), ncclSuccess);
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vb, &vq), ncclSuccess);
	ASSERT_EQ(va, ndev);
	ASSERT_EQ(vb, ndev + 1);
	ASSERT_EQ(T(ncclNet_v9_t)->getProperties(va, &props), ncclSuccess);
	ASSERT_EQ(strcmp(props.name, "rxe0+rxe2"), 0);
	ASSERT_EQ(props.vProps.ndevs, 2);
	ASSERT_EQ(props.vProps.devs[1], 2);
	/* the NCCL-made device stripes, every byte verified */
	gdx_drv_pair(d, va, vb, &p);
	gdx_drv_transfer(d, &p, 4194305, 9, 0);
	gdx_drv_transfer(d, &p, 100, 10, 1); /* the optional-completion hint on input */
	gdx_drv_unpair(d, &p);
	/* refusals: unknown device, too many members, none, a fused member */
	bad = (ncclNetVDeviceProps_v9_t){.ndevs = 2, .devs = {0, 99}};
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vbad, &bad), ncclInvalidUsage);
	bad = (ncclNetVDeviceProps_v9_t){.ndevs = 5, .devs = {0, 1, 2, 3}};
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vbad, &bad), ncclInvalidUsage);
	bad = (ncclNetVDeviceProps_v9_t){.ndevs = 0};
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vbad, &bad), ncclInvalidUsage);
	bad = (ncclNetVDeviceProps_v9_t){.ndevs = 2, .devs = {0, va}};
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vbad, &bad), ncclInvalidUsage);
	bad = (ncclNetVDeviceProps_v9_t){.ndevs = 2, .devs = {1, 1}};
	ASSERT_EQ(T(ncclNet_v9_t)->makeVDevice(&vbad, &bad), ncclInvalidUsage);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "member 99 is not a physical device");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "too many members");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "listed twice");
}

struct tc_run {
	struct gdx_drv *d;
	struct gdx_dpair *p;
};

static void tc_send(void *arg)
{
	struct tc_run *t = arg;

	gdx_drv_transfer(t->d, t->p, 50000, 1, 0);
}

static void test_v10_traffic_class_on_the_wire(void)
{
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	struct tc_run t = {d, &p};
	int tos;

	gdx_drv_load(d, 10);
	d->tc = 104; /* DSCP 26 (AF31) << 2 */
	gdx_drv_pair(d, 0, 1, &p);
	/* the connecting side (rxe1, veth1) sends the data */
	tos = gdx_capture_tos("veth1", tc_send, &t);
	printf("  v10 trafficClass 104: RoCE packets leave veth1 with TOS %d\n", tos);
	ASSERT_EQ(tos, 104);
	gdx_drv_unpair(d, &p);
}

static int count_dir(const char *path)
{
	DIR *dir = opendir(path);
	int n = 0;

	ASSERT(dir != NULL);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

static void test_v11_two_contexts_and_finalize(void)
{
	ncclNetProperties_v11_t props;
	ncclNetAttr_v11_t attr = {.op = 1, .algo = 2, .proto = 3};
	struct gdx_drv a, b;
	struct gdx_dpair pa, pb, left;
	void *ctx_c = NULL;

	gdx_drv_load(&a, 11);
	gdx_drv_load(&b, 11); /* same library, a second communicator */
	ASSERT(a.ctx && b.ctx && a.ctx != b.ctx);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->setNetAttr(a.ctx, &attr), ncclSuccess);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.maxMultiRequestSize, 8);
	gdx_drv_pair(&a, 0, 1, &pa);
	gdx_drv_pair(&b, 1, 0, &pb);
	gdx_drv_pair(&a, 0, 1, &left); /* left open: finalize must release it */
	gdx_drv_transfer(&a, &pa, 300000, 1, 0);
	gdx_drv_unpair(&a, &pa);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(a.ctx), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed 3 comm(s) NCCL had left open");
	/* the other context keeps working; the finalized one is refused */
	gdx_drv_transfer(&b, &pb, 300000, 2, 0);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(a.ctx), ncclInternalError);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->setNetAttr(a.ctx, &attr), ncclInternalError);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->init(&ctx_c, 3, NULL, gdx_test_logger, NULL),
		  ncclSuccess);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(ctx_c), ncclSuccess);
	gdx_drv_unpair(&b, &pb);
	ASSERT_EQ(TBL(&b, ncclNet_v11_t)->finalize(b.ctx), ncclSuccess);
}

static void test_v11_load_init_finalize_unload_cycles(void)
{
	int fds = 0, threads = 0;

	for (int i = 0; i < 6; i++) {
		struct gdx_drv d_, *d = &d_;
		struct gdx_dpair p;

		if (i == 1) {
			fds = count_dir("/proc/self/fd");
			threads = count_dir("/proc/self/task");
		}
		gdx_drv_load(d, 11);
		gdx_drv_pair(d, 0, 1, &p);
		gdx_drv_transfer(d, &p, 65536, (uint32_t)i, 0);
		gdx_drv_unpair(d, &p);
		ASSERT_EQ(T(ncclNet_v11_t)->finalize(d->ctx), ncclSuccess);
		ASSERT_EQ(dlclose(d->lib), 0);
	}
	ASSERT_EQ(count_dir("/proc/self/fd"), fds);
	ASSERT_EQ(count_dir("/proc/self/task"), threads);
}

/* From v12 a fused device takes up to 8 members; vProps lists them all. */
static void test_v12_make_vdevice_of_four(void)
{
	const int all[] = {0, 1, 2, 3}, other[] = {1, 3};
	ncclNetVDeviceProps_v12_t big = {.ndevs = 9};
	struct gdx_drv d_, *d = &d_;
	struct gdx_drv_props props;
	struct gdx_dpair p;
	int v, w;

	gdx_drv_load(d, 12);
	ASSERT_EQ(gdx_drv_devices(d), 4);
	ASSERT_EQ(gdx_drv_make_vdevice(d, &v, 4, all), ncclSuccess);
	ASSERT_EQ(gdx_drv_props(d, v, &props), ncclSuccess);
	ASSERT_EQ(strcmp(props.name, "rxe0+rxe1+rxe2+rxe3"), 0);
	ASSERT_EQ(props.ndevs, 4);
	ASSERT_EQ(props.devs[3], 3);
	ASSERT_EQ(props.rail_id, NCCL_NET_ID_UNDEF);
	/* two members of it, as another fused device, stripe over real rails */
	ASSERT_EQ(gdx_drv_make_vdevice(d, &w, 2, other), ncclSuccess);
	ASSERT_EQ(gdx_drv_make_vdevice(d, &v, 2, (const int[]){0, 2}), ncclSuccess);
	gdx_drv_pair(d, v, w, &p);
	gdx_drv_transfer(d, &p, 2000001, 12, 0);
	gdx_drv_unpair(d, &p);
	/* up to 8 members from v12: 9 is refused */
	ASSERT_EQ(T(ncclNet_v12_t)->makeVDevice(&v, &big), ncclInvalidUsage);
	ASSERT_EQ(T(ncclNet_v12_t)->finalize(d->ctx), ncclSuccess);
}

static void test_v12_rail_unknown_without_topology(void)
{
	ncclNetProperties_v12_t props;
	struct gdx_drv d_, *d = &d_;

	gdx_drv_load(d, 12);
	ASSERT_EQ(T(ncclNet_v12_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.railId, NCCL_NET_ID_UNDEF); /* rxe has no PCI parent */
	ASSERT_EQ(props.planeId, NCCL_NET_ID_UNDEF);
	ASSERT_EQ(T(ncclNet_v12_t)->finalize(d->ctx), ncclSuccess);
}

/* Grouped receives: 32 receives of 8 buffers each in flight, 256 isends
 * matched by tag in a scrambled order, none done before its group goes,
 * sizes reported per buffer. */
static void test_grouped_receives(void)
{
	enum { SLOTS = NCCL_NET_MAX_REQUESTS, N = 8, SZ = 40000 };
	static char sbuf[SLOTS][N][SZ], rbuf[SLOTS][N][SZ];
	struct gdx_drv d_, *d = &d_;
	ncclNetProperties_v9_t props;
	void *smh, *rmh, *rreq[SLOTS], *sreq[SLOTS][N];
	int got[SLOTS][N] = {{0}}, rdone[SLOTS] = {0}, oldest = 0;
	struct gdx_dpair p;

	gdx_drv_load(d, 9);
	ASSERT_EQ(T(ncclNet_v9_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.maxRecvs, N);
	gdx_drv_pair(d, 0, 1, &p);
	gdx_drv_reg(d, p.s, sbuf, sizeof(sbuf), &smh);
	gdx_drv_reg(d, p.r, rbuf, sizeof(rbuf), &rmh);
	for (int s = 0; s < SLOTS; s++) {
		void *data[N], *mhs[N];
		size_t sizes[N];
		int tags[N];

		for (int i = 0; i < N; i++) {
			data[i] = rbuf[s][i];
			mhs[i] = rmh;
			sizes[i] = SZ;
			tags[i] = 100 + i; /* the remote ranks */
			gdx_fill(sbuf[s][i], SZ, (uint32_t)(s * N + i));
		}
		ASSERT_EQ(T(ncclNet_v9_t)->irecv(p.r, N, data, sizes, tags, mhs, &rreq[s]),
			  ncclSuccess);
	}
	/* each slot's sends come in a different order; sizes differ per buffer.
	 * The oldest receive is tested while the sends wait, as NCCL's proxy
	 * loop does (the receiver sends clear-to-sends in batches). */
	for (int s = 0; s < SLOTS; s++) {
		for (int k = 0; k < N; k++) {
			int i = (k * 3 + s) % N;
			size_t n = (size_t)(SZ - 977 * i - s);

			sreq[s][i] = NULL;
			for (double t0 = gdx_now_s(); !sreq[s][i];) {
				int done = 0;

				ASSERT_EQ(T(ncclNet_v9_t)
						  ->isend(p.s, sbuf[s][i], n, 100 + i, smh,
							  &sreq[s][i]),
					  ncclSuccess);
				ASSERT(gdx_now_s() - t0 < 20);
				if (sreq[s][i] || oldest == SLOTS)
					continue;
				ASSERT_EQ(T(ncclNet_v9_t)->test(rreq[oldest], &done, got[oldest]),
					  ncclSuccess);
				if (done)
					rdone[oldest++] = 1;
			}
			/* A send matched before the last buffer of its slot has not
			 * gone yet: it is not done, its buffer is not free. */
			if (k < N - 1) {
				int done = -1, one;

				ASSERT_EQ(T(ncclNet_v9_t)->test(sreq[s][i], &done, &one),
					  ncclSuccess);
				ASSERT_EQ(done, 0);
			}
		}
	}
	for (int s = 0; s < SLOTS; s++) {
		int *sizes = got[s], one;

		if (!rdone[s])
			ASSERT_EQ(gdx_drv_wait(d, rreq[s], sizes), ncclSuccess);
		for (int i = 0; i < N; i++) {
			size_t n = (size_t)(SZ - 977 * i - s);

			ASSERT_EQ(sizes[i], (int)n);
			ASSERT_EQ(gdx_check(rbuf[s][i], n, (uint32_t)(s * N + i)), -1);
			ASSERT_EQ(gdx_drv_wait(d, sreq[s][i], &one), ncclSuccess);
			ASSERT_EQ(one, (int)n);
		}
	}
	ASSERT_EQ(gdx_drv_dereg(d, p.s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(d, p.r, rmh), ncclSuccess);
	gdx_drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_v6_transfers, 120), TEST(test_v7_transfers, 120),
	       TEST(test_v8_transfers, 120), TEST(test_v9_transfers, 120),
	       TEST(test_v10_transfers, 120), TEST(test_v11_transfers, 120),
	       TEST(test_v12_transfers, 120), TEST(test_v8_registration_is_global_and_cached, 60),
	       TEST(test_v9_fields_hint_and_make_vdevice, 120),
	       TEST(test_v10_traffic_class_on_the_wire, 60),
	       TEST(test_v11_two_contexts_and_finalize, 120),
	       TEST(test_v11_load_init_finalize_unload_cycles, 120),
	       TEST(test_v12_make_vdevice_of_four, 120),
	       TEST(test_v12_rail_unknown_without_topology, 60), TEST(test_grouped_receives, 300))
