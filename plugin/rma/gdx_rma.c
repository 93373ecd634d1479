/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's NCCL boundary (gdx_rma.h): the opt-in, what init and
 * getProperties say, the checks of every object NCCL hands back, and the
 * one error mapping of the RMA tables. The work is below: connection setup
 * (gdx_rma_conn.c), windows (gdx_rma_reg.c), data calls (gdx_rma_post.c)
 * and their progress (gdx_rma_progress.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gdx_dev.h"
#include "sys/gdx_log.h"
#include "net/gdx_net.h"
#include "sys/gdx_param.h"
#include "comm/gdx_ptrset.h"
#include "comm/gdx_registry.h"
#include "rma/gdx_rma.h"
#include "rma/gdx_rma_conn.h"
#include "rma/gdx_rma_post.h"
#include "rma/gdx_rma_progress.h"
#include "rma/gdx_rma_reg.h"

/* Every handle handed out and not yet given back: init contexts, listen
 * comms, collective comms and blocks of contexts (each collective comm
 * keeps its windows and requests in sets of its own, under its lock). A
 * handle is looked up here before it is read, so that a stale or foreign
 * one is refused and never dereferenced. */
static pthread_mutex_t gdx_rma_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdx_ptrset gdx_rma_live;
static bool gdx_rma_said_off, gdx_rma_said_on;

/* The comms the net's registry holds too (a context lives within its
 * collective comm, an init is the net's hold). */
static bool gdx_rma_net_held(uint32_t kind)
{
	return kind == GDX_KIND_RMA_LISTEN || kind == GDX_KIND_RMA_COLL;
}

static int gdx_rma_track(const void *p)
{
	int ret;

	pthread_mutex_lock(&gdx_rma_lock);
	ret = gdx_ptrset_add(&gdx_rma_live, p);
	pthread_mutex_unlock(&gdx_rma_lock);
	/* the net's registry too: the devices stay open while it is live */
	if (!ret && gdx_rma_net_held(*(const uint32_t *)p)) {
		ret = gdx_registry_add(p);
		if (ret) {
			pthread_mutex_lock(&gdx_rma_lock);
			gdx_ptrset_remove(&gdx_rma_live, p);
			pthread_mutex_unlock(&gdx_rma_lock);
		}
	}
	return ret;
}

/* Whether p is live and of kind; forgotten when forget. */
static bool gdx_rma_known(const void *p, uint32_t kind, bool forget)
{
	bool found;

	pthread_mutex_lock(&gdx_rma_lock);
	found = p && gdx_ptrset_has(&gdx_rma_live, p) && *(const uint32_t *)p == kind;
	if (found && forget)
		gdx_ptrset_remove(&gdx_rma_live, p);
	pthread_mutex_unlock(&gdx_rma_lock);
	if (found && forget && gdx_rma_net_held(kind))
		gdx_registry_remove(p);
	return found;
}

/* Whether NCCL_GDX_RMA asks for the tables, read before anything is set up:
 * a plugin that declines touches nothing. */
static bool gdx_rma_asked(void)
{
	const char *v = gdx_param_env("RMA");

	return v && *v && strcmp(v, "0");
}

ncclResult_t gdx_rma_api_init(void **ctx_p, uint64_t comm_id, ncclDebugLogger_t logger, int version)
{
	struct gdx_rma_init *c;
	ncclResult_t res;
	bool say;

	gdx_log_set(logger);
	if (!ctx_p)
		return gdx_net_result(-EBADR);
	if (!gdx_rma_asked()) {
		pthread_mutex_lock(&gdx_rma_lock);
		say = !gdx_rma_said_off;
		gdx_rma_said_off = true;
		pthread_mutex_unlock(&gdx_rma_lock);
		if (say)
			GDX_INFO(
				NCCL_INIT | NCCL_NET,
				"RMA: ncclRmaPlugin_v%d declines, NCCL_GDX_RMA is not 1: NCCL keeps "
				"its one-sided traffic (host RMA, the GIN proxy) on its own RMA "
				"proxy; set NCCL_GDX_RMA=1 to carry it over this plugin's rails. "
				"NCCL uses RMA at all only with NCCL_CROSS_NIC not 0 and GPUs with "
				"cuMem GPUDirect RDMA support; its own IB proxy needs GPUDirect RDMA",
				version);
		return ncclInvalidUsage;
	}
	/* The devices and parameters, as the net tables set them up (NCCL
	 * initializes its net plugin first: this is then a no-op). */
	res = gdx_net_init(NULL, comm_id, NCCL_NET_TRAFFIC_CLASS_UNDEF, logger, NULL,
			   GDX_VIEW_PHYSICAL);
	if (res != ncclSuccess)
		return res;
	if (gdx_params.rma != 1)
		return ncclInvalidUsage;
	c = calloc(1, sizeof(*c));
	if (!c)
		return gdx_net_result(-ENOMEM);
	c->kind = GDX_KIND_RMA_INIT;
	c->comm_id = comm_id;
	if (gdx_rma_track(c)) {
		free(c);
		return gdx_net_result(-ENOMEM);
	}
	gdx_net_hold(); /* the devices stay until its finalize */
	pthread_mutex_lock(&gdx_rma_lock);
	say = !gdx_rma_said_on;
	gdx_rma_said_on = true;
	pthread_mutex_unlock(&gdx_rma_lock);
	if (say)
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "RMA: ncclRmaPlugin_v%d on (NCCL_GDX_RMA=1): puts as RDMA WRITE, signals "
			 "as atomic fetch-and-add once their puts are placed, gets and flushes as "
			 "RDMA READ, over every rail of a fused device; %d device(s)",
			 version, gdx_vdevs_count());
	GDX_INFO(NCCL_NET, "RMA: context %p for communicator 0x%llx", (void *)c,
		 (unsigned long long)comm_id);
	*ctx_p = c;
	return ncclSuccess;
}

static bool gdx_rma_owned_by(const void *p, void *owner)
{
	uint32_t kind = *(const uint32_t *)p;

	if (kind == GDX_KIND_RMA_LISTEN)
		return ((const struct gdx_rma_listen *)p)->owner == owner;
	if (kind == GDX_KIND_RMA_COLL)
		return ((const struct gdx_rma_coll *)p)->owner == owner;
	return false;
}

ncclResult_t gdx_rma_api_finalize(void *ctx)
{
	int left = 0;

	if (!gdx_rma_known(ctx, GDX_KIND_RMA_INIT, true)) {
		GDX_WARN("RMA finalize: %p is not a context from init (finalized already?)", ctx);
		return gdx_net_result(-EBADR);
	}
	for (;;) {
		const void *p;

		pthread_mutex_lock(&gdx_rma_lock);
		p = gdx_ptrset_first(&gdx_rma_live, gdx_rma_owned_by, ctx);
		pthread_mutex_unlock(&gdx_rma_lock);
		if (!p)
			break;
		if (*(const uint32_t *)p == GDX_KIND_RMA_LISTEN)
			gdx_rma_api_close_listen((void *)p);
		else
			gdx_rma_api_close_coll((void *)p);
		left++;
	}
	if (left)
		GDX_WARN("RMA finalize of context %p closed %d comm(s) NCCL had left open", ctx,
			 left);
	((struct gdx_rma_init *)ctx)->kind = GDX_KIND_DEAD;
	free(ctx);
	gdx_net_unhold();
	return ncclSuccess;
}

ncclResult_t gdx_rma_api_devices(int *ndev)
{
	if (!ndev)
		return gdx_net_result(-EBADR);
	*ndev = gdx_vdevs_count();
	return ncclSuccess;
}

ncclResult_t gdx_rma_api_props(int dev, ncclNetProperties_v12_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r;

	if (!out) {
		GDX_WARN("RMA getProperties: NULL properties");
		return gdx_net_result(-EBADR);
	}
	r = gdx_net_props(dev, &p);
	if (r != ncclSuccess)
		return r;
	memset(out, 0, sizeof(*out));
	out->name = p.name;
	out->pciPath = p.pci_path;
	out->guid = p.guid;
	/* what registration takes: GPU memory and DMA-BUF only where every NIC
	 * of the device has GPUDirect RDMA */
	out->ptrSupport = p.ptr_support;
	out->regIsGlobal = 0;
	out->speed = p.speed;
	out->port = p.port;
	out->latency = p.latency;
	out->maxComms = p.max_comms;
	out->maxRecvs = GDX_RMA_MAX_RECVS;
	/* NCCL's GIN takes its type from here: 2, through its proxy thread */
	out->netDeviceType = NCCL_NET_DEVICE_GIN_PROXY;
	out->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	out->vProps.ndevs = p.ndevs;
	memcpy(out->vProps.devs, p.devs, sizeof(int) * (size_t)p.ndevs);
	out->maxP2pBytes = GDX_RMA_MAX_BYTES;
	out->maxCollBytes = GDX_RMA_MAX_BYTES;
	out->maxMultiRequestSize = 1;
	out->railId = p.rail_id;
	out->planeId = p.plane_id;
	return ncclSuccess;
}

static struct gdx_rma_coll *gdx_rma_coll_of(void *p, const char *call)
{
	if (!gdx_rma_known(p, GDX_KIND_RMA_COLL, false)) {
		GDX_WARN("RMA %s: %p is not an open collective comm (closed, or not from "
			 "connect)",
			 call, p);
		return NULL;
	}
	return p;
}

/* A block's collective comm is open while the block is live: closeColl
 * forgets its blocks first. */
static struct gdx_rma_ctx *gdx_rma_ctx_of(void *p, const char *call)
{
	if (!gdx_rma_known(p, GDX_KIND_RMA_CTX, false)) {
		GDX_WARN("RMA %s: %p is not a live RMA context from createContext (destroyed, "
			 "its collective comm closed, or not from createContext)",
			 call, p);
		return NULL;
	}
	return p;
}

ncclResult_t gdx_rma_api_rma_props(void *coll, ncclRmaProperties_v16_t *props)
{
	if (!gdx_rma_coll_of(coll, "getRmaProperties") || !props)
		return gdx_net_result(-EBADR);
	/* One atomic landing on one rail does not flush another rail's writes:
	 * the device barrier must keep its per-peer flush. */
	props->flushesAllPutsOnAnySignal = false;
	return ncclSuccess;
}

ncclResult_t gdx_rma_api_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct gdx_rma_listen *lc;
	int ret;

	if (!handle || !listen_comm) {
		GDX_WARN("RMA listen: NULL %s", handle ? "listen comm pointer" : "handle");
		return gdx_net_result(-EBADR);
	}
	if (!gdx_rma_known(ctx, GDX_KIND_RMA_INIT, false)) {
		GDX_WARN("RMA listen: %p is not a context from this plugin's RMA init", ctx);
		return gdx_net_result(-EBADR);
	}
	if (!gdx_vdev_get(dev)) {
		GDX_WARN("RMA listen: device %d does not exist (%d devices)", dev,
			 gdx_vdevs_count());
		return gdx_net_result(-EBADR);
	}
	ret = gdx_rma_listen(ctx, dev, handle, &lc);
	if (!ret) {
		ret = gdx_rma_track(lc);
		if (ret)
			gdx_rma_close_listen(lc);
	}
	if (!ret)
		*listen_comm = lc;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_connect(void *ctx, void *handles[], int nranks, int rank,
				 void *listen_comm, void **coll)
{
	struct gdx_rma_listen *lc = listen_comm;
	struct gdx_rma_coll *c;
	int ret;

	(void)ctx; /* the net plugin's, the GIN's or ours: the listen comm has it all */
	if (!coll || !handles || nranks < 1 || rank < 0 || rank >= nranks) {
		GDX_WARN("RMA connect: %s", !coll || !handles ? "NULL argument"
					    : nranks < 1      ? "no rank in the group"
							      : "rank out of range");
		return gdx_net_result(-EBADR);
	}
	for (int i = 0; i < nranks; i++)
		if (!handles[i]) {
			GDX_WARN("RMA connect: rank %d's handle is NULL", i);
			return gdx_net_result(-EBADR);
		}
	if (!gdx_rma_known(lc, GDX_KIND_RMA_LISTEN, false)) {
		GDX_WARN("RMA connect: %p is not an open RMA listen comm", listen_comm);
		return gdx_net_result(-EBADR);
	}
	ret = gdx_rma_connect(lc, handles, nranks, rank, &c);
	if (!ret) {
		ret = gdx_rma_track(c);
		if (ret)
			gdx_rma_close_coll(c);
	}
	if (!ret)
		*coll = c;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_create_context(void *coll, const ncclRmaConfig_v14_t *config,
					void **rma_ctx)
{
	struct gdx_rma_coll *c = gdx_rma_coll_of(coll, "createContext");
	struct gdx_rma_ctx *x;
	int stride, ret;

	if (!c || !config || !rma_ctx)
		return gdx_net_result(-EBADR);
	stride = config->rankStride;
	/* every rank has the same config: each refuses alike, before the
	 * exchange */
	if (config->nContexts < 1 || config->nContexts > 1024) {
		GDX_WARN("RMA createContext: %d contexts refused (1 to 1024)", config->nContexts);
		return gdx_net_result(-EBADR);
	}
	if (stride <= 0 || c->nranks % stride) {
		GDX_WARN(
			"RMA createContext: rank stride %d refused: it must be positive and divide "
			"the group's %d ranks",
			stride, c->nranks);
		return gdx_net_result(-EBADR);
	}
	ret = gdx_rma_ctx_create(c, config->nContexts, config->trafficClass, stride, &x);
	if (!ret) {
		ret = gdx_rma_track(x);
		if (ret)
			gdx_rma_ctx_destroy(x);
	}
	if (!ret)
		*rma_ctx = x;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_reg_mr_sym(void *coll, void *data, size_t size, int type,
				    uint64_t mr_flags, void **mhandle)
{
	struct gdx_rma_coll *c = gdx_rma_coll_of(coll, "regMrSym");
	struct gdx_rma_mr *mh;
	int ret;

	if (!c || !mhandle)
		return gdx_net_result(-EBADR);
	ret = gdx_rma_reg_sym(c, data, size, type, mr_flags, false, 0, -1, &mh);
	if (!ret)
		*mhandle = mh;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_reg_mr_sym_dmabuf(void *coll, void *data, size_t size, int type,
					   uint64_t offset, int fd, uint64_t mr_flags,
					   void **mhandle)
{
	struct gdx_rma_coll *c = gdx_rma_coll_of(coll, "regMrSymDmaBuf");
	struct gdx_rma_mr *mh;
	int ret;

	if (!c || !mhandle)
		return gdx_net_result(-EBADR);
	ret = gdx_rma_reg_sym(c, data, size, type, mr_flags, true, offset, fd, &mh);
	if (!ret)
		*mhandle = mh;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_dereg_mr_sym(void *coll, void *mhandle)
{
	struct gdx_rma_coll *c = gdx_rma_coll_of(coll, "deregMrSym");

	if (!c)
		return gdx_net_result(-EBADR);
	return gdx_net_result(gdx_rma_dereg_sym(c, mhandle));
}

/* The requests of block x NCCL still holds forgotten: they go with it. */
static void gdx_rma_reqs_forget(struct gdx_rma_ctx *x)
{
	struct gdx_rma_coll *c = x->coll;

	pthread_mutex_lock(&c->lock);
	for (int k = 0; k < x->ncontexts; k++)
		for (int p = 0; p < c->nranks; p++) {
			struct gdx_rma_conn *conn = gdx_rma_conn_of(x, k, p);

			for (int i = 0; conn && conn->active && i < GDX_RMA_MAX_REQS; i++)
				gdx_ptrset_remove(&c->reqs, &conn->reqs[i]);
		}
	pthread_mutex_unlock(&c->lock);
}

ncclResult_t gdx_rma_api_destroy_context(void *rma_ctx)
{
	if (!gdx_rma_known(rma_ctx, GDX_KIND_RMA_CTX, true)) {
		GDX_WARN("RMA destroyContext: %p is not a live RMA context (destroyed already, its "
			 "collective comm closed, or not from createContext)",
			 rma_ctx);
		return gdx_net_result(-EBADR);
	}
	gdx_rma_reqs_forget(rma_ctx);
	return gdx_net_result(gdx_rma_ctx_destroy(rma_ctx));
}

ncclResult_t gdx_rma_api_close_coll(void *coll)
{
	struct gdx_rma_coll *c = coll;

	if (!gdx_rma_known(coll, GDX_KIND_RMA_COLL, true)) {
		GDX_WARN("RMA closeColl: %p is not an open collective comm (closed twice?)", coll);
		return gdx_net_result(-EBADR);
	}
	/* blocks NCCL did not destroy go with it: forgotten first, so that a
	 * later call on one is refused */
	for (struct gdx_rma_ctx *x = c->ctxs; x; x = x->next) {
		gdx_rma_known(x, GDX_KIND_RMA_CTX, true);
		gdx_rma_reqs_forget(x);
	}
	return gdx_net_result(gdx_rma_close_coll(coll));
}

ncclResult_t gdx_rma_api_close_listen(void *listen_comm)
{
	if (!gdx_rma_known(listen_comm, GDX_KIND_RMA_LISTEN, true)) {
		GDX_WARN("RMA closeListen: %p is not an open RMA listen comm (closed twice?)",
			 listen_comm);
		return gdx_net_result(-EBADR);
	}
	return gdx_net_result(gdx_rma_close_listen(listen_comm));
}

static bool gdx_rma_req_p(void **request, const char *call)
{
	if (request)
		return true;
	GDX_WARN("RMA %s: NULL request pointer", call);
	return false;
}

/* r, just issued on x, handed to NCCL: test takes only what is here. r
 * stays in flight if this fails (destroyContext drops it). */
static int gdx_rma_req_track(struct gdx_rma_ctx *x, struct gdx_rma_req *r, const char *call)
{
	int ret;

	pthread_mutex_lock(&x->coll->lock);
	ret = gdx_ptrset_add(&x->coll->reqs, r);
	pthread_mutex_unlock(&x->coll->lock);
	if (ret)
		GDX_WARN("RMA %s: the request could not be kept for test: %s", call,
			 strerror(-ret));
	return ret;
}

ncclResult_t gdx_rma_api_iput(void *rma_ctx, int context, uint64_t src_off, void *src, size_t size,
			      uint64_t dst_off, void *dst, uint32_t rank, uint32_t flags,
			      void **request)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "iput");
	struct gdx_rma_req *r;
	int ret;

	if (!x || !gdx_rma_req_p(request, "iput"))
		return gdx_net_result(-EBADR);
	ret = gdx_rma_iput(x, context, src_off, src, size, dst_off, dst, rank,
			   flags & ncclRmaOptFlagsAggregateRequests, &r);
	if (!ret)
		ret = gdx_rma_req_track(x, r, "iput");
	if (!ret)
		*request = r;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_iput_signal(void *rma_ctx, int context, uint64_t src_off, void *src,
				     size_t size, uint64_t dst_off, void *dst, uint32_t rank,
				     uint64_t sig_off, void *sig, uint64_t value, uint32_t op,
				     bool strong, uint32_t flags, void **request)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "iputSignal");
	struct gdx_rma_req *r;
	int ret;

	if (!x || !gdx_rma_req_p(request, "iputSignal"))
		return gdx_net_result(-EBADR);
	ret = gdx_rma_iput_signal(x, context, src_off, src, size, dst_off, dst, rank, sig_off, sig,
				  value, op, strong, flags & ncclRmaOptFlagsAggregateRequests, &r);
	if (!ret)
		ret = gdx_rma_req_track(x, r, "iputSignal");
	if (!ret)
		*request = r;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_iget(void *rma_ctx, int context, uint64_t remote_off, void *remote,
			      size_t size, uint64_t local_off, void *local, uint32_t rank,
			      uint32_t flags, void **request)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "iget");
	struct gdx_rma_req *r;
	int ret;

	if (!x || !gdx_rma_req_p(request, "iget"))
		return gdx_net_result(-EBADR);
	ret = gdx_rma_iget(x, context, remote_off, remote, size, local_off, local, rank,
			   flags & ncclRmaOptFlagsAggregateRequests, &r);
	if (!ret)
		ret = gdx_rma_req_track(x, r, "iget");
	if (!ret)
		*request = r;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_iflush(void *rma_ctx, int context, void *mhandle, uint32_t rank,
				void **request)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "iflush");
	struct gdx_rma_req *r;
	int ret;

	if (!x || !gdx_rma_req_p(request, "iflush"))
		return gdx_net_result(-EBADR);
	ret = gdx_rma_iflush(x, context, mhandle, rank, &r);
	if (!ret)
		ret = gdx_rma_req_track(x, r, "iflush");
	if (!ret)
		*request = r;
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_test(void *coll, void *request, int *done)
{
	struct gdx_rma_coll *c = gdx_rma_coll_of(coll, "test");
	bool live;
	int ret;

	if (!c || !done)
		return gdx_net_result(-EBADR);
	/* looked up before it is read: a request's memory goes with its block */
	pthread_mutex_lock(&c->lock);
	live = request && gdx_ptrset_has(&c->reqs, request);
	pthread_mutex_unlock(&c->lock);
	if (!live) {
		GDX_WARN("RMA test: %p is not a request in flight on collective comm %p (completed "
			 "and tested already, its context destroyed, or another comm's)",
			 request, coll);
		return gdx_net_result(-EBADR);
	}
	ret = gdx_rma_test(request, done);
	/* done or failed, NCCL tests it no more: its slot may be reused */
	if (ret || *done) {
		pthread_mutex_lock(&c->lock);
		gdx_ptrset_remove(&c->reqs, request);
		pthread_mutex_unlock(&c->lock);
	}
	return gdx_net_result(ret);
}

ncclResult_t gdx_rma_api_progress(void *rma_ctx)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "rmaProgress");

	if (!x)
		return gdx_net_result(-EBADR);
	for (int k = 0; k < x->ncontexts; k++)
		gdx_rma_progress(x, k);
	return ncclSuccess;
}

ncclResult_t gdx_rma_api_query_last_error(void *rma_ctx, bool *has_error)
{
	struct gdx_rma_ctx *x = gdx_rma_ctx_of(rma_ctx, "queryLastError");
	const char *why;

	if (!x || !has_error)
		return gdx_net_result(-EBADR);
	why = gdx_rma_ctx_error(x);
	*has_error = why != NULL;
	if (why && !x->error_told) {
		x->error_told = true;
		GDX_INFO(NCCL_NET, "RMA queryLastError: %s", why);
	}
	return ncclSuccess;
}
