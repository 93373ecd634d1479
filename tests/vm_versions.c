/* SPDX-License-Identifier: MIT */
/*
 * Every exported table, v7 to v12, over real rxe devices: connect, verified
 * transfers of several sizes, and each version's own fields and calls
 * (regIsGlobal and the registration cache, vProps and makeVDevice, the
 * optional-completion hint, the traffic class on the wire, contexts and
 * finalize, railId). Runs inside the VM with --pairs 2.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* One table of any version behind one set of calls. */
struct drv {
	int v;
	void *lib;
	const void *table;
	void *ctx; /* v11+ */
	int tc;	   /* v10: the traffic class passed to connect */
};

#define T(type)	      ((const type *)d->table)
#define TBL(dp, type) ((const type *)(dp)->table)

static void drv_load(struct drv *d, int v)
{
	const char *path = getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so";
	char sym[32];

	memset(d, 0, sizeof(*d));
	d->v = v;
	d->tc = -1;
	d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT(d->lib != NULL);
	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
	d->table = dlsym(d->lib, sym);
	ASSERT(d->table != NULL);
	switch (v) {
	case 7: ASSERT_EQ(T(ncclNet_v7_t)->init(gdx_test_logger), ncclSuccess); break;
	case 8: ASSERT_EQ(T(ncclNet_v8_t)->init(gdx_test_logger), ncclSuccess); break;
	case 9: ASSERT_EQ(T(ncclNet_v9_t)->init(gdx_test_logger), ncclSuccess); break;
	case 10: ASSERT_EQ(T(ncclNet_v10_t)->init(gdx_test_logger, NULL), ncclSuccess); break;
	case 11:
		ASSERT_EQ(T(ncclNet_v11_t)->init(&d->ctx, 0x1111, NULL, gdx_test_logger, NULL),
			  ncclSuccess);
		break;
	default:
		ASSERT_EQ(T(ncclNet_v12_t)->init(&d->ctx, 0x1212, NULL, gdx_test_logger, NULL),
			  ncclSuccess);
	}
}

static void drv_listen(struct drv *d, int dev, void *h, void **l)
{
	switch (d->v) {
	case 7: ASSERT_EQ(T(ncclNet_v7_t)->listen(dev, h, l), ncclSuccess); break;
	case 8: ASSERT_EQ(T(ncclNet_v8_t)->listen(dev, h, l), ncclSuccess); break;
	case 9: ASSERT_EQ(T(ncclNet_v9_t)->listen(dev, h, l), ncclSuccess); break;
	case 10: ASSERT_EQ(T(ncclNet_v10_t)->listen(dev, h, l), ncclSuccess); break;
	case 11: ASSERT_EQ(T(ncclNet_v11_t)->listen(d->ctx, dev, h, l), ncclSuccess); break;
	default: ASSERT_EQ(T(ncclNet_v12_t)->listen(d->ctx, dev, h, l), ncclSuccess);
	}
}

static ncclResult_t drv_connect(struct drv *d, int dev, void *h, void **s)
{
	ncclNetCommConfig_v10_t cfg = {.trafficClass = d->tc};

	switch (d->v) {
	case 7: return T(ncclNet_v7_t)->connect(dev, h, s, NULL);
	case 8: return T(ncclNet_v8_t)->connect(dev, h, s, NULL);
	case 9: return T(ncclNet_v9_t)->connect(dev, h, s, NULL);
	case 10: return T(ncclNet_v10_t)->connect(dev, &cfg, h, s, NULL);
	case 11: return T(ncclNet_v11_t)->connect(d->ctx, dev, h, s, NULL);
	default: return T(ncclNet_v12_t)->connect(d->ctx, dev, h, s, NULL);
	}
}

/* Calls whose types are the same in every version. */
static const ncclNet_v8_t *drv_common(const struct drv *d)
{
	/* accept, regMr(size_t) (v8+), deregMr, test and the closes sit at the
	 * same offsets with the same types in v8 to v12 (static asserts in
	 * include/nccl pin them); v7 differs only in regMr's size type. */
	return d->table;
}

static void drv_reg(struct drv *d, void *comm, void *p, size_t n, void **mh)
{
	if (d->v == 7)
		ASSERT_EQ(T(ncclNet_v7_t)->regMr(comm, p, (int)n, NCCL_PTR_HOST, mh), ncclSuccess);
	else
		ASSERT_EQ(drv_common(d)->regMr(comm, p, n, NCCL_PTR_HOST, mh), ncclSuccess);
}

static ncclResult_t drv_isend(struct drv *d, void *s, void *p, size_t n, void *mh, void **req)
{
	switch (d->v) {
	case 7: return T(ncclNet_v7_t)->isend(s, p, (int)n, 0, mh, req);
	case 8: return T(ncclNet_v8_t)->isend(s, p, (int)n, 0, mh, req);
	case 9: return T(ncclNet_v9_t)->isend(s, p, n, 0, mh, req);
	case 10: return T(ncclNet_v10_t)->isend(s, p, n, 0, mh, NULL, req);
	case 11: return T(ncclNet_v11_t)->isend(s, p, n, 0, mh, NULL, req);
	default: return T(ncclNet_v12_t)->isend(s, p, n, 0, mh, NULL, req);
	}
}

static ncclResult_t drv_irecv(struct drv *d, void *r, void *p, size_t n, void *mh, void **req)
{
	int isz = (int)n, tag = 0;
	size_t sz = n;
	void *phandle = NULL;

	switch (d->v) {
	case 7: return T(ncclNet_v7_t)->irecv(r, 1, &p, &isz, &tag, &mh, req);
	case 8: return T(ncclNet_v8_t)->irecv(r, 1, &p, &isz, &tag, &mh, req);
	case 9: return T(ncclNet_v9_t)->irecv(r, 1, &p, &sz, &tag, &mh, req);
	case 10: return T(ncclNet_v10_t)->irecv(r, 1, &p, &sz, &tag, &mh, &phandle, req);
	case 11: return T(ncclNet_v11_t)->irecv(r, 1, &p, &sz, &tag, &mh, &phandle, req);
	default: return T(ncclNet_v12_t)->irecv(r, 1, &p, &sz, &tag, &mh, &phandle, req);
	}
}

static ncclResult_t drv_wait(struct drv *d, void *req, int *size)
{
	int done = 0;

	for (double t0 = gdx_now_s(); !done;) {
		ncclResult_t r = drv_common(d)->test(req, &done, size);

		if (r != ncclSuccess)
			return r;
		if (gdx_now_s() - t0 > 60)
			gdx_test_fail(__FILE__, __LINE__, "request not done after 60 s");
	}
	return ncclSuccess;
}

struct dpair {
	void *l, *s, *r;
};

static void drv_pair(struct drv *d, int ldev, int cdev, struct dpair *p)
{
	char h[NCCL_NET_HANDLE_MAXSIZE];

	memset(p, 0, sizeof(*p));
	drv_listen(d, ldev, h, &p->l);
	for (double t0 = gdx_now_s(); !p->s || !p->r;) {
		if (!p->s)
			ASSERT_EQ(drv_connect(d, cdev, h, &p->s), ncclSuccess);
		if (!p->r)
			ASSERT_EQ(drv_common(d)->accept(p->l, &p->r, NULL), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
}

static void drv_unpair(struct drv *d, struct dpair *p)
{
	ASSERT_EQ(drv_common(d)->closeSend(p->s), ncclSuccess);
	ASSERT_EQ(drv_common(d)->closeRecv(p->r), ncclSuccess);
	ASSERT_EQ(drv_common(d)->closeListen(p->l), ncclSuccess);
}

/* One verified message; the receive request may start as the v9 hint. */
static void drv_transfer(struct drv *d, struct dpair *p, size_t n, uint32_t seed, int hint)
{
	char *sb = malloc(n + 1), *rb = malloc(n + 1);
	void *smh, *rmh, *sreq = NULL,
			 *rreq = hint ? (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION : NULL;
	int got = -1;

	ASSERT(sb && rb);
	memset(rb, 0, n + 1);
	gdx_fill(sb, n, seed);
	drv_reg(d, p->s, sb, n + 1, &smh);
	drv_reg(d, p->r, rb, n + 1, &rmh);
	ASSERT_EQ(drv_irecv(d, p->r, rb, n, rmh, &rreq), ncclSuccess);
	ASSERT(rreq != NULL && rreq != (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION);
	for (double t0 = gdx_now_s(); !sreq;) {
		ASSERT_EQ(drv_isend(d, p->s, sb, n, smh, &sreq), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
	ASSERT_EQ(drv_wait(d, sreq, &got), ncclSuccess);
	ASSERT_EQ(drv_wait(d, rreq, &got), ncclSuccess);
	ASSERT_EQ(got, (int)n);
	ASSERT_EQ(gdx_check(rb, n, seed), -1);
	ASSERT_EQ(drv_common(d)->deregMr(p->s, smh), ncclSuccess);
	ASSERT_EQ(drv_common(d)->deregMr(p->r, rmh), ncclSuccess);
	free(sb);
	free(rb);
}

static void transfers(int v)
{
	static const size_t sizes[] = {0, 1, 4097, 65536, 1000003, 8388608};
	struct drv d_, *d = &d_;
	struct dpair p;

	drv_load(d, v);
	drv_pair(d, 0, 1, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		drv_transfer(d, &p, sizes[i], (uint32_t)(v * 100 + i), 0);
	drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
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
	struct drv d_, *d = &d_;
	struct dpair a, b;
	ncclNetProperties_v8_t props;
	char *buf = malloc(1 << 20);
	void *whole, *part;

	drv_load(d, 8);
	ASSERT_EQ(T(ncclNet_v8_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.regIsGlobal, 1);
	drv_pair(d, 0, 1, &a);
	drv_pair(d, 0, 1, &b);
	/* registered through one comm, a range inside it through another comm of
	 * the same device: both work, and the second is a cache hit */
	drv_reg(d, a.r, buf, 1 << 20, &whole);
	drv_reg(d, b.r, buf + 4096, 8192, &part);
	ASSERT_EQ(drv_common(d)->deregMr(a.r, whole), ncclSuccess);
	ASSERT_EQ(drv_common(d)->deregMr(b.r, part), ncclSuccess);
	drv_transfer(d, &b, 100000, 3, 0);
	drv_unpair(d, &a);
	drv_unpair(d, &b);
	free(buf);
}

static void test_v9_fields_hint_and_make_vdevice(void)
{
	ncclNetVDeviceProps_v9_t vp = {.ndevs = 2, .devs = {0, 2}};
	ncclNetVDeviceProps_v9_t vq = {.ndevs = 2, .devs = {1, 3}};
	ncclNetVDeviceProps_v9_t bad;
	ncclNetProperties_v9_t props;
	struct drv d_, *d = &d_;
	struct dpair p;
	int ndev, va = -1, vb = -1, vbad;

	drv_load(d, 9);
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
	drv_pair(d, va, vb, &p);
	drv_transfer(d, &p, 4194305, 9, 0);
	drv_transfer(d, &p, 100, 10, 1); /* the optional-completion hint on input */
	drv_unpair(d, &p);
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

/* The TOS byte of the next RoCE v2 packet (UDP port 4791) leaving ifname. */
static int capture_tos(const char *ifname, void (*send_some)(void *), void *arg)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	unsigned char pkt[2048];
	int fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), tos = -1, seen = 0;

	ASSERT(fd >= 0);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	ASSERT(sll.sll_ifindex > 0);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	send_some(arg);
	for (int i = 0; i < 10000 && tos < 0; i++) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		const struct iphdr *ip = (const struct iphdr *)pkt;
		struct sockaddr_ll from;
		socklen_t from_len;
		ssize_t n;

		if (poll(&pfd, 1, 2000) <= 0)
			break;
		from_len = sizeof(from);
		n = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&from, &from_len);
		/* only what leaves: the peer's packets arrive on this veth too */
		if (n < (ssize_t)(sizeof(*ip) + sizeof(struct udphdr)) ||
		    from.sll_pkttype != PACKET_OUTGOING || from.sll_protocol != htons(ETH_P_IP) ||
		    ip->protocol != IPPROTO_UDP)
			continue;
		seen++;
		if (ntohs(((const struct udphdr *)(pkt + ip->ihl * 4))->dest) == 4791)
			tos = ip->tos;
	}
	close(fd);
	if (tos < 0)
		printf("  %d outgoing UDP packets on %s, none to port 4791\n", seen, ifname);
	return tos;
}

struct tc_run {
	struct drv *d;
	struct dpair *p;
};

static void tc_send(void *arg)
{
	struct tc_run *t = arg;

	drv_transfer(t->d, t->p, 50000, 1, 0);
}

static void test_v10_traffic_class_on_the_wire(void)
{
	struct drv d_, *d = &d_;
	struct dpair p;
	struct tc_run t = {d, &p};
	int tos;

	drv_load(d, 10);
	d->tc = 104; /* DSCP 26 (AF31) << 2 */
	drv_pair(d, 0, 1, &p);
	/* the connecting side (rxe1, veth1) sends the data */
	tos = capture_tos("veth1", tc_send, &t);
	printf("  v10 trafficClass 104: RoCE packets leave veth1 with TOS %d\n", tos);
	ASSERT_EQ(tos, 104);
	drv_unpair(d, &p);
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
	struct drv a, b;
	struct dpair pa, pb, left;
	void *ctx_c = NULL;

	drv_load(&a, 11);
	drv_load(&b, 11); /* same library, a second communicator */
	ASSERT(a.ctx && b.ctx && a.ctx != b.ctx);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->setNetAttr(a.ctx, &attr), ncclSuccess);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.maxMultiRequestSize, 8);
	drv_pair(&a, 0, 1, &pa);
	drv_pair(&b, 1, 0, &pb);
	drv_pair(&a, 0, 1, &left); /* left open: finalize must release it */
	drv_transfer(&a, &pa, 300000, 1, 0);
	drv_unpair(&a, &pa);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(a.ctx), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed 3 comm(s) NCCL had left open");
	/* the other context keeps working; the finalized one is refused */
	drv_transfer(&b, &pb, 300000, 2, 0);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(a.ctx), ncclInternalError);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->setNetAttr(a.ctx, &attr), ncclInternalError);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->init(&ctx_c, 3, NULL, gdx_test_logger, NULL),
		  ncclSuccess);
	ASSERT_EQ(TBL(&a, ncclNet_v11_t)->finalize(ctx_c), ncclSuccess);
	drv_unpair(&b, &pb);
	ASSERT_EQ(TBL(&b, ncclNet_v11_t)->finalize(b.ctx), ncclSuccess);
}

static void test_v11_load_init_finalize_unload_cycles(void)
{
	int fds = 0, threads = 0;

	for (int i = 0; i < 6; i++) {
		struct drv d_, *d = &d_;
		struct dpair p;

		if (i == 1) {
			fds = count_dir("/proc/self/fd");
			threads = count_dir("/proc/self/task");
		}
		drv_load(d, 11);
		drv_pair(d, 0, 1, &p);
		drv_transfer(d, &p, 65536, (uint32_t)i, 0);
		drv_unpair(d, &p);
		ASSERT_EQ(T(ncclNet_v11_t)->finalize(d->ctx), ncclSuccess);
		ASSERT_EQ(dlclose(d->lib), 0);
	}
	ASSERT_EQ(count_dir("/proc/self/fd"), fds);
	ASSERT_EQ(count_dir("/proc/self/task"), threads);
}

static void test_v12_rail_ids_from_topology(void)
{
	ncclNetProperties_v12_t props;
	ncclNetVDeviceProps_v12_t big = {.ndevs = 9};
	struct drv d_, *d = &d_;
	struct dpair p;
	int ndev, v;

	/* A fixture topology that puts rxe0+rxe2 under one GPU and rxe1+rxe3
	 * under another: railId follows it, and auto fuses each GPU's pair. */
	setenv("NCCL_GDX_TOPO_FILE", "tests/fixtures/topo/vm-rails.xml", 1);
	drv_load(d, 12);
	ASSERT_EQ(T(ncclNet_v12_t)->devices(&ndev), ncclSuccess);
	ASSERT_EQ(ndev, 6);
	ASSERT_EQ(T(ncclNet_v12_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.railId, 0);
	ASSERT_EQ(props.planeId, NCCL_NET_ID_UNDEF);
	ASSERT_EQ(T(ncclNet_v12_t)->getProperties(1, &props), ncclSuccess);
	ASSERT_EQ(props.railId, 1);
	ASSERT_EQ(T(ncclNet_v12_t)->getProperties(4, &props), ncclSuccess);
	ASSERT_EQ(strcmp(props.name, "rxe0+rxe2"), 0);
	ASSERT_EQ(props.vProps.ndevs, 2);
	ASSERT_EQ(props.railId, 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_RAILS=auto");
	drv_pair(d, 4, 5, &p);
	drv_transfer(d, &p, 2000001, 12, 0);
	drv_unpair(d, &p);
	/* up to 8 members from v12: 9 is refused */
	ASSERT_EQ(T(ncclNet_v12_t)->makeVDevice(&v, &big), ncclInvalidUsage);
	ASSERT_EQ(T(ncclNet_v12_t)->finalize(d->ctx), ncclSuccess);
}

static void test_v12_rail_unknown_without_topology(void)
{
	ncclNetProperties_v12_t props;
	struct drv d_, *d = &d_;

	drv_load(d, 12);
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
	struct drv d_, *d = &d_;
	ncclNetProperties_v9_t props;
	void *smh, *rmh, *rreq[SLOTS], *sreq[SLOTS][N];
	int got[SLOTS][N] = {{0}}, rdone[SLOTS] = {0}, oldest = 0;
	struct dpair p;

	drv_load(d, 9);
	ASSERT_EQ(T(ncclNet_v9_t)->getProperties(0, &props), ncclSuccess);
	ASSERT_EQ(props.maxRecvs, N);
	drv_pair(d, 0, 1, &p);
	drv_reg(d, p.s, sbuf, sizeof(sbuf), &smh);
	drv_reg(d, p.r, rbuf, sizeof(rbuf), &rmh);
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
			ASSERT_EQ(drv_wait(d, rreq[s], sizes), ncclSuccess);
		for (int i = 0; i < N; i++) {
			size_t n = (size_t)(SZ - 977 * i - s);

			ASSERT_EQ(sizes[i], (int)n);
			ASSERT_EQ(gdx_check(rbuf[s][i], n, (uint32_t)(s * N + i)), -1);
			ASSERT_EQ(drv_wait(d, sreq[s][i], &one), ncclSuccess);
			ASSERT_EQ(one, (int)n);
		}
	}
	ASSERT_EQ(drv_common(d)->deregMr(p.s, smh), ncclSuccess);
	ASSERT_EQ(drv_common(d)->deregMr(p.r, rmh), ncclSuccess);
	drv_unpair(d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_v7_transfers, 120), TEST(test_v8_transfers, 120),
	       TEST(test_v9_transfers, 120), TEST(test_v10_transfers, 120),
	       TEST(test_v11_transfers, 120), TEST(test_v12_transfers, 120),
	       TEST(test_v8_registration_is_global_and_cached, 60),
	       TEST(test_v9_fields_hint_and_make_vdevice, 120),
	       TEST(test_v10_traffic_class_on_the_wire, 60),
	       TEST(test_v11_two_contexts_and_finalize, 120),
	       TEST(test_v11_load_init_finalize_unload_cycles, 120),
	       TEST(test_v12_rail_ids_from_topology, 120),
	       TEST(test_v12_rail_unknown_without_topology, 60), TEST(test_grouped_receives, 300))
