/* SPDX-License-Identifier: MIT */
/*
 * The NCCL boundary in the newest API's terms: argument checks, contexts, and
 * the one mapping from internal errors to ncclResult_t. The exported tables
 * (gdx_net_tables.c) are thin adapters onto these functions.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nccl/net.h>
#include "comm/gdx_comm.h"
#include "conn/gdx_conn.h"
#include "conn/gdx_connect.h"
#include "dev/gdx_dev.h"
#include "sys/gdx_env.h"
#include "data/gdx_flush.h"
#include "conn/gdx_listen.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "net/gdx_net.h"
#include "net/gdx_start.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "data/gdx_prof.h"
#include "stats/gdx_qpstat.h"
#include "data/gdx_reg.h"
#include "comm/gdx_registry.h"

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif
#define GDX_NET_STR_(x) #x
#define GDX_NET_STR(x)	GDX_NET_STR_(x)

static pthread_mutex_t gdx_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool gdx_initialized;
/* v11+ contexts handed out and not finalized; under gdx_init_lock. */
static struct gdx_ctx **gdx_ctxs;
static int gdx_nctxs;
/* Users of the devices that are not net contexts (one-sided RMA's init
 * contexts, gdx_net_hold); under gdx_init_lock. */
static int gdx_holds;

ncclResult_t gdx_net_error(int err)
{
	switch (err) {
	case -EINVAL: /* NCCL passed something wrong (net_ib's answer) */
	case -EBADF:
	case -ENOSPC:	       /* more requests than the API allows */
	case -ENOTRECOVERABLE: /* the plugin's own state is wrong: a bug */
		return ncclInternalError;
	case -EBADR: /* a handle or argument the RMA tables refuse (net_ib's RMA answer) */
		return ncclInvalidArgument;
	case -EMSGSIZE:	       /* the ranks disagree on a size */
	case -EPROTONOSUPPORT: /* peer runs another protocol version */
	case -EDOM:	       /* a value of the user's refused: a setting, a fused device */
	case -EBUSY:	       /* torn down out of NCCL's order, or driven by two threads */
		return ncclInvalidUsage;
	case -ECONNRESET: /* peer gone */
	case -EREMOTEIO:  /* completion error */
	case -EPROTO: /* peer sent something malformed */ return ncclRemoteError;
	default: return ncclSystemError;
	}
}

/*
 * What NCCL does once init has failed, by NCCL_NET as NCCL 2.19 to 2.30 read
 * it (src/net.cc, then src/plugin/net.cc): unset, it tries its next network
 * (the next plugin of NCCL_NET_PLUGIN, its own IB, sockets); naming this
 * network, it tries no other and the communicator's init fails; naming
 * another, NCCL would not have used this plugin anyway. The cause was the
 * one WARN before; this says what follows from it.
 */
static void gdx_net_disabled(int err, enum gdx_start_step step)
{
	const char *net = gdx_env(GDX_ENV_NET), *at = gdx_start_step_name(step);

	if (!net)
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "plugin disabled (%s: %s); NCCL_NET is unset, so NCCL falls back to its "
			 "next network (the next plugin of NCCL_NET_PLUGIN, else its own IB, else "
			 "sockets)",
			 at, strerror(-err));
	else if (!strcasecmp(net, GDX_NET_NAME))
		GDX_WARN("plugin disabled (%s: %s); NCCL_NET=%s names this plugin's network, so "
			 "NCCL does not fall back: the communicator's init fails (NCCL: \"Failed "
			 "to initialize any NET plugin\", or in older releases \"network %s not "
			 "found\"); "
			 "fix the cause above, or unset NCCL_NET to run on NCCL's own transport",
			 at, strerror(-err), net, net);
	else
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "plugin disabled (%s: %s); NCCL_NET=%s selects another network, so NCCL "
			 "does not use this plugin anyway",
			 at, strerror(-err), net);
}

/*
 * The first line of every init that sets the plugin up, before anything
 * can fail: its version and the file it was loaded from (dladdr on one of
 * its own functions; made absolute where it can be), so that a failed
 * init's log says which build failed. Not "libnccl-net-gdx V" right after
 * the prefix: gdx-doctor check reads the INIT line below by that marker.
 */
static void gdx_net_say_version(void)
{
	char real[PATH_MAX], quoted[1024];
	const char *path = "(unknown)";
	Dl_info info;

	if (dladdr((void *)gdx_net_say_version, &info) && info.dli_fname && *info.dli_fname)
		path = realpath(info.dli_fname, real) ? real : info.dli_fname;
	GDX_INFO(NCCL_INIT | NCCL_NET, "starting libnccl-net-gdx " GDX_VERSION ", loaded from %s",
		 gdx_log_quote(quoted, sizeof(quoted), path));
}

/* Once per load: the start-up (gdx_start.c: parameters, the out-of-band
 * interface, the devices as the loading table's NCCL numbers them); then
 * the one INIT line. */
static int gdx_net_setup(ncclDebugLogger_t logger, enum gdx_view view)
{
	struct gdx_start_report *r;
	int ret;

	gdx_log_set(logger);
	if (gdx_initialized) {
		ret = gdx_devs_view(view);
		if (ret == -EBUSY)
			GDX_WARN("init through a table of net API %s, after the plugin was set up "
				 "for one %s in this load: NCCL loads one version",
				 view == GDX_VIEW_FUSED ? "v6-v8" : "v9+",
				 view == GDX_VIEW_FUSED ? "v9+" : "v6-v8");
		return ret == -EBUSY ? -EDOM : ret;
	}
	gdx_net_say_version();
	r = malloc(sizeof(*r));
	if (!r) {
		gdx_net_disabled(-ENOMEM, GDX_START_PARAMS);
		return -ENOMEM;
	}
	ret = gdx_start(view, r);
	if (ret < 0) {
		gdx_net_disabled(ret, r->step);
		free(r);
		/* Every -EINVAL of these steps is a value of the user's they
		 * refused, each after a WARN naming it (NCCL passes them
		 * nothing): ncclInvalidUsage, not an internal error that NCCL
		 * would ask to report to its developers. */
		return ret == -EINVAL ? -EDOM : ret;
	}
	gdx_initialized = true;
	/* The one line at INIT, as net_ib's "NET/IB : Using ...; OOB ...": the
	 * devices NCCL sees, each with its ports, link layer and GPUDirect
	 * verdict, and the out-of-band interface. The versions sit in the format
	 * string itself: gdx-doctor check reads them from the library file, as
	 * the plugin NCCL would load says them. */
	GDX_INFO(NCCL_INIT | NCCL_NET,
		 "libnccl-net-gdx " GDX_VERSION ", wire protocol " GDX_NET_STR(
			 GDX_WIRE_VERSION) ", net API v6 to v12; using%s; OOB %s",
		 r->using, r->oob);
	free(r);
#ifdef GDX_DEBUG
	GDX_INFO(NCCL_NET, "debug build: a request that completes while a work request "
			   "still reads its buffer aborts, and so does a piece counted before its "
			   "bytes are in the receive buffer (gdx_req.h)");
#endif
	return 0;
}

static struct gdx_ctx *gdx_net_ctx(void *ctx, const char *call)
{
	bool found = false;

	pthread_mutex_lock(&gdx_init_lock);
	for (int i = 0; i < gdx_nctxs && !found; i++)
		found = gdx_ctxs[i] == ctx;
	pthread_mutex_unlock(&gdx_init_lock);
	if (!found)
		GDX_WARN("%s: %p is not a context from init (finalized already?)", call, ctx);
	return found ? ctx : NULL;
}

ncclResult_t gdx_net_init(void **ctx_p, uint64_t comm_id, int tc, ncclDebugLogger_t logger,
			  ncclProfilerCallback_t prof, enum gdx_view view)
{
	struct gdx_ctx *ctx, **v;
	int ret;

	gdx_prof_set(prof);
	pthread_mutex_lock(&gdx_init_lock);
	ret = gdx_net_setup(logger, view);
	if (ret || !ctx_p)
		goto out;
	ctx = calloc(1, sizeof(*ctx));
	v = realloc(gdx_ctxs, (size_t)(gdx_nctxs + 1) * sizeof(*v));
	if (!ctx || !v) {
		free(ctx);
		if (v)
			gdx_ctxs = v;
		ret = -ENOMEM;
		goto out;
	}
	gdx_ctxs = v;
	ctx->kind = GDX_KIND_CTX;
	ctx->comm_id = comm_id;
	ctx->tc = tc;
	gdx_ctxs[gdx_nctxs++] = ctx;
	*ctx_p = ctx;
	GDX_INFO(NCCL_NET, "context %p for communicator 0x%llx, traffic class %d", (void *)ctx,
		 (unsigned long long)comm_id, tc);
out:
	pthread_mutex_unlock(&gdx_init_lock);
	/* Outside the init lock: making the file may first remove those that
	 * ended processes left, which no other thread's init should wait on.
	 * Again after a finalize that closed it. */
	if (!ret)
		gdx_live_open();
	return gdx_net_result(ret);
}

/*
 * Under gdx_init_lock, after a finalize: the last context gone (net and
 * RMA alike) and no comm open, the job is done with the plugin for now
 * (NCCL #1978: a communicator destroyed, another made later in the same
 * process). What the comms moved is said, and everything the plugin holds
 * is released: the live file, the verbs devices, their PDs and caches. The
 * next init sets it all up again, reading the environment anew.
 */
static void gdx_net_idle(void)
{
	if (!gdx_initialized || gdx_nctxs || gdx_holds || gdx_registry_count())
		return;
	gdx_devs_report();
	gdx_qpstat_fini(); /* its slots are in the file */
	gdx_live_close(true);
	gdx_conn_fini();
	gdx_devs_fini();
	free(gdx_ctxs); /* empty: the next init grows it again */
	gdx_ctxs = NULL;
	gdx_initialized = false;
	GDX_INFO(NCCL_NET, "the last context is finalized and no comm is open: devices closed, "
			   "every resource released; the next init opens them again");
}

ncclResult_t gdx_net_finalize(void *ctx)
{
	struct gdx_ctx *c = gdx_net_ctx(ctx, "finalize");
	int left;

	if (!c)
		return gdx_net_result(-EINVAL);
	left = gdx_conn_close_owned(c);
	if (left)
		GDX_WARN("finalize of context %p closed %d comm(s) NCCL had left open", ctx, left);
	pthread_mutex_lock(&gdx_init_lock);
	for (int i = 0; i < gdx_nctxs; i++)
		if (gdx_ctxs[i] == c)
			gdx_ctxs[i] = gdx_ctxs[--gdx_nctxs];
	pthread_mutex_unlock(&gdx_init_lock);
	c->kind = GDX_KIND_DEAD;
	free(c);
	pthread_mutex_lock(&gdx_init_lock);
	gdx_net_idle();
	pthread_mutex_unlock(&gdx_init_lock);
	return ncclSuccess;
}

void gdx_net_hold(void)
{
	pthread_mutex_lock(&gdx_init_lock);
	gdx_holds++;
	pthread_mutex_unlock(&gdx_init_lock);
}

void gdx_net_unhold(void)
{
	pthread_mutex_lock(&gdx_init_lock);
	gdx_holds--;
	gdx_net_idle();
	pthread_mutex_unlock(&gdx_init_lock);
}

ncclResult_t gdx_net_set_attr(void *ctx, const ncclNetAttr_v11_t *attr)
{
	if (!gdx_net_ctx(ctx, "setNetAttr") || !attr)
		return gdx_net_result(-EINVAL);
	/* Hints for tuning; the transport does not change with them: what
	 * the flows per peer could steer (whole messages or split, QPs per
	 * rail) was measured, and no choice beat today's
	 * (libnccl-net-gdx-performance(7); scripts/bench-flows.sh). */
	GDX_TRACE(NCCL_NET,
		  "setNetAttr send peers %d-%d flows %d-%d, receive peers %d-%d flows %d-%d, op "
		  "%#x algo %#x proto %#x",
		  attr->sendCommAttr.minConcurrentPeers, attr->sendCommAttr.maxConcurrentPeers,
		  attr->sendCommAttr.minFlowsPerPeer, attr->sendCommAttr.maxFlowsPerPeer,
		  attr->recvCommAttr.minConcurrentPeers, attr->recvCommAttr.maxConcurrentPeers,
		  attr->recvCommAttr.minFlowsPerPeer, attr->recvCommAttr.maxFlowsPerPeer, attr->op,
		  attr->algo, attr->proto);
	return ncclSuccess;
}

ncclResult_t gdx_net_devices(int *ndev)
{
	if (!ndev)
		return gdx_net_result(-EINVAL);
	*ndev = gdx_vdevs_count();
	return ncclSuccess;
}

static struct gdx_vdev *gdx_net_dev(int dev, const char *call)
{
	struct gdx_vdev *v = gdx_vdev_get(dev);

	if (!v)
		GDX_WARN("%s: device %d does not exist (%d devices)", call, dev, gdx_vdevs_count());
	return v;
}

ncclResult_t gdx_net_props(int dev, struct gdx_net_props *p)
{
	struct gdx_vdev *v = gdx_net_dev(dev, "getProperties");
	struct gdx_dev *lead;

	if (!v || !p)
		return gdx_net_result(-EINVAL);
	/* A fused device is placed where its leading NIC is, and shares its
	 * (guid, port) so NCCL accounts their bandwidth together. */
	lead = v->members[0];
	memset(p, 0, sizeof(*p));
	p->name = v->name;
	p->pci_path = lead->pci_path;
	p->guid = lead->guid;
	/* A fused device takes GPU memory only where every member does. */
	p->ptr_support = lead->ptr_support;
	for (int i = 1; i < v->nmembers; i++)
		p->ptr_support &= v->members[i]->ptr_support;
	p->reg_is_global = 1;
	p->speed = v->speed_mbps;
	p->port = lead->port;
	/* as net_ib: a Data Direct device's data goes by PCIe while its
	 * completions come by the NIC's own path, so NCCL flushes its receives */
	p->force_flush = lead->data_direct;
	p->max_comms = lead->max_qp;
	p->max_recvs = GDX_MAX_RECVS;
	p->ndevs = v->nmembers;
	memcpy(p->devs, v->phys, sizeof(int) * (size_t)v->nmembers);
	p->max_p2p_bytes = GDX_MAX_MESSAGE;
	p->max_coll_bytes = GDX_MAX_MESSAGE;
	p->max_multi_request_size = GDX_MAX_RECVS;
	p->rail_id = (int16_t)v->rail_id; /* -1 = NCCL_NET_ID_UNDEF when none */
	p->plane_id = (int16_t)v->plane_id;
	return ncclSuccess;
}

ncclResult_t gdx_net_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct gdx_listen_comm *lc;
	int ret;

	if (!handle || !listen_comm || !gdx_net_dev(dev, "listen"))
		return gdx_net_result(-EINVAL);
	if (ctx && !gdx_net_ctx(ctx, "listen"))
		return gdx_net_result(-EINVAL);
	ret = gdx_listen(ctx, dev, handle, &lc);
	if (!ret)
		*listen_comm = lc;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_connect(void *ctx, int dev, int tc, void *handle, void **send_comm)
{
	struct gdx_send_comm *sc = NULL;
	int ret;

	if (!handle || !send_comm || !gdx_net_dev(dev, "connect"))
		return gdx_net_result(-EINVAL);
	if (ctx && !gdx_net_ctx(ctx, "connect"))
		return gdx_net_result(-EINVAL);
	ret = gdx_connect(ctx, dev, tc, handle, &sc);
	*send_comm = sc;
	return gdx_net_result(ret);
}

static struct gdx_listen_comm *gdx_net_listen_comm(void *comm, const char *call)
{
	struct gdx_listen_comm *lc = comm;

	if (!lc || lc->kind != GDX_KIND_LISTEN) {
		GDX_WARN("%s: %p is not a listen comm", call, comm);
		return NULL;
	}
	return lc;
}

static struct gdx_send_comm *gdx_net_send_comm(void *comm, const char *call)
{
	struct gdx_send_comm *sc = comm;

	if (!sc || sc->base.kind != GDX_KIND_SEND) {
		GDX_WARN("%s: %p is not a send comm", call, comm);
		return NULL;
	}
	return sc;
}

static struct gdx_recv_comm *gdx_net_recv_comm(void *comm, const char *call)
{
	struct gdx_recv_comm *rc = comm;

	if (!rc || rc->base.kind != GDX_KIND_RECV) {
		GDX_WARN("%s: %p is not a receive comm", call, comm);
		return NULL;
	}
	return rc;
}

ncclResult_t gdx_net_accept(void *listen_comm, void **recv_comm)
{
	struct gdx_listen_comm *lc = gdx_net_listen_comm(listen_comm, "accept");
	struct gdx_recv_comm *rc = NULL;
	int ret;

	if (!lc || !recv_comm)
		return gdx_net_result(-EINVAL);
	ret = gdx_accept(lc, &rc);
	*recv_comm = rc;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct gdx_comm *c = comm;
	struct gdx_mr *mr;
	int ret;

	if (!c || (c->kind != GDX_KIND_SEND && c->kind != GDX_KIND_RECV) || !mhandle) {
		GDX_WARN("regMr: %p is not a send or receive comm", comm);
		return gdx_net_result(-EINVAL);
	}
	ret = gdx_reg_mr(c, data, size, type, &mr);
	if (!ret)
		*mhandle = mr;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
				   int fd, void **mhandle)
{
	struct gdx_comm *c = comm;
	struct gdx_mr *mr;
	int ret;

	if (!c || (c->kind != GDX_KIND_SEND && c->kind != GDX_KIND_RECV) || !mhandle) {
		GDX_WARN("regMrDmaBuf: %p is not a send or receive comm", comm);
		return gdx_net_result(-EINVAL);
	}
	ret = gdx_reg_mr_dmabuf(c, data, size, type, offset, fd, &mr);
	if (!ret)
		*mhandle = mr;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_dereg_mr(void *comm, void *mhandle)
{
	(void)comm; /* registrations are global: the handle knows its caches */
	return gdx_net_result(gdx_dereg_mr(mhandle));
}

static bool gdx_net_size_ok(const char *call, size_t size)
{
	if (size <= GDX_MAX_MESSAGE)
		return true;
	GDX_WARN("%s: %zu bytes is more than maxP2pBytes (%llu)", call, size, GDX_MAX_MESSAGE);
	return false;
}

ncclResult_t gdx_net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			   void *phandle, void **request)
{
	struct gdx_send_comm *sc = gdx_net_send_comm(send_comm, "isend");
	struct gdx_request *req;
	int ret;

	if (!sc || !request || !gdx_net_size_ok("isend", size))
		return gdx_net_result(-EINVAL);
	ret = gdx_isend(sc, data, size, tag, mhandle, phandle, &req);
	*request = req;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			   void **mhandles, void **phandles, void **request)
{
	struct gdx_recv_comm *rc = gdx_net_recv_comm(recv_comm, "irecv");
	struct gdx_request *req;
	int ret;

	/* *request may hold NCCL_NET_OPTIONAL_RECV_COMPLETION on input (v9+): it is
	 * only a hint, and a real request is always written back. */
	if (!rc || !request || !data || !sizes || !tags || !mhandles || n < 1 ||
	    n > NCCL_NET_MAX_REQUESTS)
		return gdx_net_result(-EINVAL);
	/* each buffer's size and handle checked by gdx_irecv, in one pass */
	ret = gdx_irecv(rc, n, data, sizes, tags, (struct gdx_mr **)mhandles, phandles, &req);
	*request = req;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			    void **request)
{
	struct gdx_recv_comm *rc = gdx_net_recv_comm(recv_comm, "iflush");
	struct gdx_request *req;
	int ret;

	if (!rc || !request)
		return gdx_net_result(-EINVAL);
	ret = gdx_iflush(rc, n, data, sizes, (struct gdx_mr **)mhandles, &req);
	*request = req;
	return gdx_net_result(ret);
}

ncclResult_t gdx_net_test(void *request, int *done, int *sizes)
{
	if (!request || !done) {
		GDX_WARN("test: NULL %s", request ? "done pointer" : "request");
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_result(gdx_test(request, done, sizes));
}

/*
 * After a close: before v11 there is no finalize, and the last comm's close
 * is the job's ncclCommDestroy of its last communicator; the NICs' summary
 * then (a v11+ context waits for its finalize). Returns err.
 */
static int gdx_net_closed(int err)
{
	pthread_mutex_lock(&gdx_init_lock);
	if (gdx_initialized && gdx_nctxs == 0 && gdx_registry_count() == 0)
		gdx_devs_report();
	pthread_mutex_unlock(&gdx_init_lock);
	return err;
}

ncclResult_t gdx_net_close_send(void *send_comm)
{
	struct gdx_send_comm *sc = send_comm;

	if (!sc || !gdx_registry_has(sc) || sc->base.kind != GDX_KIND_SEND) {
		GDX_WARN("closeSend: %p is not an open send comm (closed twice?)", send_comm);
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_result(gdx_net_closed(gdx_close_send(sc)));
}

ncclResult_t gdx_net_close_recv(void *recv_comm)
{
	struct gdx_recv_comm *rc = recv_comm;

	if (!rc || !gdx_registry_has(rc) || rc->base.kind != GDX_KIND_RECV) {
		GDX_WARN("closeRecv: %p is not an open receive comm (closed twice?)", recv_comm);
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_result(gdx_net_closed(gdx_close_recv(rc)));
}

ncclResult_t gdx_net_close_listen(void *listen_comm)
{
	struct gdx_listen_comm *lc = listen_comm;

	if (!lc || !gdx_registry_has(lc) || lc->kind != GDX_KIND_LISTEN) {
		GDX_WARN("closeListen: %p is not an open listen comm (closed twice?)", listen_comm);
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_result(gdx_net_closed(gdx_close_listen(lc)));
}

ncclResult_t gdx_net_make_vdevice(int *d, int ndevs, const int *devs, int max_members)
{
	const char *err = "no member given";
	int ret = -EINVAL;

	if (!d || !devs || ndevs < 1 || ndevs > max_members) {
		/* before reading devs[]: it holds max_members entries at most */
		GDX_WARN("makeVDevice: %d members refused: %s (at most %d)", ndevs,
			 ndevs < 1 ? err : "too many members for one fused device", max_members);
		return gdx_net_result(-EDOM);
	}
	for (int i = 0; i < ndevs; i++) {
		if (devs[i] < 0 || devs[i] >= gdx_devs_count()) {
			GDX_WARN("makeVDevice: member %d is not a physical device (there are %d)",
				 devs[i], gdx_devs_count());
			return gdx_net_result(-EDOM);
		}
	}
	ret = gdx_vdev_fuse(devs, ndevs, 1, max_members, &err);
	if (ret < 0) {
		GDX_WARN("makeVDevice: %d members refused: %s (at most %d)", ndevs, err,
			 max_members);
		return gdx_net_result(-EDOM);
	}
	*d = ret;
	GDX_INFO(NCCL_NET, "device %d: %s, made by NCCL from %d device(s)", ret,
		 gdx_vdev_get(ret)->name, ndevs);
	return ncclSuccess;
}

/* NCCL 2.28+ unloads the plugin when its last communicator goes, and before
 * v11 there is no finalize call: release the devices here. With comms still
 * open (the process is exiting under running threads) leave them alone. */
__attribute__((destructor)) static void gdx_net_unload(void)
{
	pthread_mutex_lock(&gdx_init_lock);
	if (gdx_initialized && gdx_registry_count() == 0) {
		for (int i = 0; i < gdx_nctxs; i++)
			free(gdx_ctxs[i]);
		free(gdx_ctxs);
		gdx_ctxs = NULL;
		gdx_nctxs = 0;
		gdx_conn_fini();
		/* what the comms moved since the last summary, if a close or a
		 * finalize has not said it */
		gdx_devs_report();
		gdx_devs_fini();
		gdx_initialized = false;
	}
	/* comms still open (a process exiting under running threads) keep
	 * writing their slots: the mapping stays for them */
	if (gdx_registry_count() == 0)
		gdx_qpstat_fini(); /* its slots are in the file */
	gdx_live_close(gdx_registry_count() == 0);
	pthread_mutex_unlock(&gdx_init_lock);
}
