/* SPDX-License-Identifier: MIT */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "rail/gdx_ece.h"
#include "data/gdx_failover.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rail/gdx_post.h"
#include "data/gdx_prof.h"
#include "stats/gdx_qpstat.h"
#include "conn/gdx_setup.h"

/* A comm's large parts in pages of their own, zeroed: closing the comm gives
 * them back to the system, whatever the heap holds around them. */
static void *gdx_setup_pages_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void gdx_setup_pages_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int gdx_setup_base_init(struct gdx_comm *c, uint32_t kind, int dev, int fd, const char *peer,
			struct gdx_ctx *ctx, int tc)
{
	c->kind = kind;
	c->dev_index = dev;
	c->ctx = ctx;
	c->tc = tc >= 0 ? tc : (ctx && ctx->tc >= 0 ? ctx->tc : -1);
	c->nmembers = gdx_vdev_get(dev)->nmembers;
	snprintf(c->dev_name, sizeof(c->dev_name), "%s", gdx_vdev_get(dev)->name);
	c->sock = fd;
	c->ch.live = &c->live_own;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	gdx_comm_bind_chan(c);
	/* receive comms: 32 receives plus their flushes */
	c->max_reqs = kind == GDX_KIND_SEND ? GDX_MAX_SEND_REQUESTS : 2 * GDX_MAX_REQUESTS;
	c->reqs = gdx_setup_pages_alloc((size_t)c->max_reqs * sizeof(*c->reqs));
	if (!c->reqs)
		return -ENOMEM;
	for (int i = 0; i < c->max_reqs; i++)
		c->reqs[i].comm = c;
	return 0;
}

/* The control area and the staging (gdx_comm.h), registered on every NIC of
 * the device: remote write over only the part of the control area the peer
 * writes (gdx_ctrl_span), local access for the staging we write from; never
 * relaxed ordering, as the entries are read last field first. */
static int gdx_setup_ctrl_create(struct gdx_comm *c)
{
	size_t off, len;
	int ret;

	c->ctrl = gdx_setup_pages_alloc(sizeof(*c->ctrl));
	c->stage = gdx_setup_pages_alloc(sizeof(*c->stage));
	if (!c->ctrl || !c->stage)
		return -ENOMEM;
	gdx_ctrl_span(c->kind, &off, &len);
	for (int m = 0; m < c->nmembers; m++) {
		const char *what = "the comm's control region";

		c->ctrl_mr[m] = ibv_reg_mr(c->ch.rails[m].pd, (char *)c->ctrl + off, len,
					   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (c->ctrl_mr[m]) {
			what = "the comm's staging";
			c->stage_mr[m] = ibv_reg_mr(c->ch.rails[m].pd, c->stage, sizeof(*c->stage),
						    IBV_ACCESS_LOCAL_WRITE);
		}
		if (!c->ctrl_mr[m] || !c->stage_mr[m]) {
			ret = errno ? -errno : -ENOMEM;
			GDX_WARN("ibv_reg_mr(%s, %s) failed: %s", c->ch.rails[m].dev->ibdev, what,
				 strerror(-ret));
			return ret;
		}
		c->ch.stage_lkey[m] = c->stage_mr[m]->lkey;
	}
	return 0;
}

/* The per-path byte counts of a comm, once it closes: the proof of which path
 * the bytes really took, and what its rails went through. Logged under NET;
 * its NICs add them to their sums (gdx_devs_report(), at finalize). */
static void gdx_setup_report(const struct gdx_comm *c)
{
	uint64_t gpu = c->ch.live->bytes_gpu, host = c->ch.live->bytes_host;
	char rails[512] = "";
	size_t off = 0;

	for (int r = 0; r < c->ch.nrails && c->ch.nrails > 1 && off < sizeof(rails); r++) {
		off += (size_t)snprintf(rails + off, sizeof(rails) - off, "; rail %d (%s)", r,
					c->ch.rails[r].dev->ibdev);
		if (c->kind == GDX_KIND_SEND && off < sizeof(rails))
			off += (size_t)snprintf(rails + off, sizeof(rails) - off,
						" delivered %.0f Mb/s lately",
						c->ch.run[r].rate * 8e-3);
		if (c->ch.run[r].downs && off < sizeof(rails))
			off += (size_t)snprintf(
				rails + off, sizeof(rails) - off, ", taken out %u time(s), now %s",
				c->ch.run[r].downs, gdx_rail_state_name(c->ch.run[r].state));
	}
	for (int i = 0; i < c->ch.nrails && c->handed; i++) {
		struct gdx_dev *d = c->ch.rails[i].dev;
		bool first = true;

		/* split evenly: the rails of one comm carry alike */
		__atomic_add_fetch(&d->bytes_gpu, gpu / (uint64_t)c->ch.nrails, __ATOMIC_RELAXED);
		__atomic_add_fetch(&d->bytes_host, host / (uint64_t)c->ch.nrails, __ATOMIC_RELAXED);
		__atomic_add_fetch(&d->failovers, (uint64_t)c->ch.run[i].downs, __ATOMIC_RELAXED);
		for (int j = 0; j < i; j++)
			first &= c->ch.rails[j].dev != d;
		if (first) /* one comm per NIC, however many of its rails are there */
			__atomic_add_fetch(&d->comms, 1, __ATOMIC_RELAXED);
	}
	if (gpu + host == 0 || c->ch.nrails == 0)
		return;
	GDX_INFO(NCCL_NET,
		 "%s: %s comm with %s closed: %llu bytes GPU-direct, %llu bytes through "
		 "host memory%s",
		 c->dev_name, c->kind == GDX_KIND_SEND ? "send" : "receive", c->peer,
		 (unsigned long long)gpu, (unsigned long long)host, rails);
}

void gdx_setup_base_fini(struct gdx_comm *c)
{
	gdx_prof_comm_fini(c); /* requests NCCL left in flight: their events end */
	gdx_failover_fini(c);
	gdx_setup_report(c); /* from its live slot, before the slot goes */
	gdx_qpstat_closing(c);
	gdx_live_comm_close(c);
	for (int i = 0; i < c->ch.nrails; i++) {
		for (int q = 0; q < c->ch.rails[i].nqps; q++) {
			gdx_seglog_destroy(&c->ch.rails[i].qps[q]);
			gdx_qpstat_qp_del(c->ch.rails[i].dev, c->ch.rails[i].qps[q].qp);
		}
		gdx_rail_destroy(&c->ch.rails[i]);
	}
	c->ch.nrails = 0;
	free(c->ch.qps);
	c->ch.qps = NULL;
	for (int m = 0; m < GDX_MAX_RAILS; m++) {
		if (c->ctrl_mr[m])
			ibv_dereg_mr(c->ctrl_mr[m]);
		if (c->stage_mr[m])
			ibv_dereg_mr(c->stage_mr[m]);
	}
	gdx_setup_pages_free(c->ctrl, sizeof(*c->ctrl));
	gdx_setup_pages_free(c->stage, sizeof(*c->stage));
	gdx_setup_pages_free(c->reqs, (size_t)c->max_reqs * sizeof(*c->reqs));
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	c->kind = GDX_KIND_DEAD;
}

int gdx_setup_rails_for(int local, uint32_t remote)
{
	return (uint32_t)local > remote ? local : (int)remote;
}

int gdx_setup_qps_for(int nrails, uint32_t remote)
{
	uint32_t want = (uint32_t)gdx_params.qps_per_connection > remote
				? (uint32_t)gdx_params.qps_per_connection
				: remote;
	uint32_t max = GDX_MAX_QPS / (uint32_t)nrails;

	return (int)(want < max ? want : max);
}

int gdx_setup_rails_create(struct gdx_comm *c, struct gdx_vdev *v, int nrails, int qps, uint8_t sl,
			   uint8_t tc)
{
	bool send = c->kind == GDX_KIND_SEND;
	int ret;

	c->ch.qps = calloc((size_t)nrails * (size_t)qps, sizeof(*c->ch.qps));
	if (!c->ch.qps)
		return -ENOMEM;
	c->ch.qps_per_rail = qps;
	c->ch.max_inline = UINT32_MAX;
	c->ar = send;
	c->ch.split = send && gdx_params.split_data_on_qps;
	for (int i = 0; i < nrails; i++) {
		struct gdx_rail *r = &c->ch.rails[i];

		ret = gdx_rail_create(r, v->members[i % v->nmembers], &c->ch, qps,
				      &c->ch.qps[i * qps], send ? GDX_SEND_SQ : GDX_RECV_SQ,
				      send ? 0 : gdx_recvs_ahead(nrails));
		if (ret)
			return ret; /* the caller's free destroys the rails made */
		r->member = i % v->nmembers;
		if (v->far & (1u << r->member))
			c->ch.standby |= 1u << i;
		r->sl = sl;
		r->tc = tc;
		c->ch.nrails = i + 1;
		/* at INIT, the kernel knows their port: bound to its counter */
		for (int q = 0; q < r->nqps; q++)
			gdx_qpstat_qp_add(r->dev, r->qps[q].qp);
		if (r->max_inline < c->ch.max_inline)
			c->ch.max_inline = r->max_inline;
		c->ar &= r->dev->ar;
		gdx_ece_query(r, &r->ece);
	}
	gdx_failover_init(c);
	/* a sender logs what it posts, to know what is delivered */
	for (int i = 0; send && i < nrails * qps; i++) {
		ret = gdx_seglog_create(&c->ch.qps[i]);
		if (ret)
			return ret;
	}
	return gdx_setup_ctrl_create(c);
}

void gdx_setup_meta_fill(struct gdx_wire_meta *m, const struct gdx_comm *c)
{
	memset(m, 0, sizeof(*m));
	m->nrails = (uint32_t)c->ch.nrails;
	m->qps_per_rail = (uint32_t)c->ch.qps_per_rail;
	m->max_recvs = GDX_MAX_RECVS;
	m->sl = c->ch.rails[0].sl;
	m->tc = c->ch.rails[0].tc;
#ifdef GDX_DEBUG
	m->flags = GDX_META_F_RECORDS;
#endif
	if (c->ch.failover)
		m->flags |= GDX_META_F_FAILOVER;
	m->ctrl_addr = (uintptr_t)c->ctrl;
	snprintf(m->dev_name, sizeof(m->dev_name), "%.63s", c->dev_name);
	for (int i = 0; i < c->ch.nrails; i++) {
		gdx_rail_local(&c->ch.rails[i], &m->rails[i], &m->qpn[i * c->ch.qps_per_rail]);
		m->rails[i].ctrl_rkey = c->ctrl_mr[c->ch.rails[i].member]->rkey;
	}
}

/* Failover runs only where both ends run it: an end that takes a rail out
 * alone waits for counts the other never sends, then fails the comm; the
 * other, which never took it out, posts on QPs in error. Said once per
 * process at WARN (every connection of a misconfigured node would say it),
 * then at INFO. */
static void gdx_setup_failover_agree(struct gdx_comm *c, const struct gdx_wire_meta *remote)
{
	static int warned;
	bool theirs = remote->flags & GDX_META_F_FAILOVER;

	if (c->ch.nrails < 2 || c->ch.failover == theirs)
		return;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		GDX_WARN("%s: failover is %s here and %s at peer %s (%s): it is off for the "
			 "connection, so a rail that fails fails it; set NCCL_GDX_FAILOVER (or "
			 "NCCL_IB_RESILIENCY_PORT_FAILOVER) the same on every node, with "
			 "libnccl-net-gdx 0.4.3 or later on each",
			 c->dev_name, c->ch.failover ? "on" : "off", theirs ? "on" : "off", c->peer,
			 GDX_LOG_QUOTED(remote->dev_name));
	else
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "%s: failover is %s here and %s at peer %s: off for the connection",
			 c->dev_name, c->ch.failover ? "on" : "off", theirs ? "on" : "off",
			 c->peer);
	c->ch.failover = false;
}

int gdx_setup_rails_connect(struct gdx_comm *c, const struct gdx_wire_meta *remote)
{
	bool acceptor = c->kind == GDX_KIND_RECV;

	if ((int)remote->nrails != c->ch.nrails ||
	    (int)remote->qps_per_rail != c->ch.qps_per_rail) {
		GDX_WARN("peer %s (%s) made %u rail(s) of %u QP(s) for the connection, %s made %d "
			 "of %d: its handshake disagrees with the counts both ends announced",
			 c->peer, remote->dev_name, remote->nrails, remote->qps_per_rail,
			 c->dev_name, c->ch.nrails, c->ch.qps_per_rail);
		return -EPROTO;
	}
	snprintf(c->peer_dev, sizeof(c->peer_dev), "%s", remote->dev_name);
	gdx_setup_failover_agree(c, remote);
	c->remote_ctrl = remote->ctrl_addr;
#ifdef GDX_DEBUG
	c->dbg_records = remote->flags & GDX_META_F_RECORDS;
#endif
	memcpy(c->remote_rails, remote->rails, sizeof(c->remote_rails));
	memcpy(c->remote_qpn, remote->qpn, sizeof(c->remote_qpn));
	for (int i = 0; i < c->ch.nrails; i++) {
		struct gdx_rail *r = &c->ch.rails[i];
		int ret;

		c->ch.ctrl_rkey[i] = remote->rails[i].ctrl_rkey;
		/* ECE: the acceptor sets what both have and reads back what its
		 * device kept; the connector sets that (net_ib's order) */
		if (acceptor)
			gdx_ece_common(&r->ece, &remote->rails[i].ece, &r->ece);
		else if (!remote->rails[i].ece.supported)
			r->ece.supported = 0;
		else
			r->ece = remote->rails[i].ece;
		ret = gdx_rail_connect(r, &remote->rails[i], &remote->qpn[i * c->ch.qps_per_rail]);
		if (ret)
			return ret;
		if (acceptor && r->ece.supported)
			gdx_ece_query(r, &r->ece);
	}
	return 0;
}

const char *gdx_setup_features(const struct gdx_comm *c, char *buf, size_t len)
{
	char ece[64], standby[48] = "";

	if (c->ch.standby && c->kind == GDX_KIND_SEND)
		snprintf(standby, sizeof(standby), " (%d standing by)",
			 __builtin_popcount(c->ch.standby));
	snprintf(buf, len, "%d rail(s)%s x %d QP(s)%s, AR %s, relaxed ordering %s, ECE %s",
		 c->ch.nrails, standby, c->ch.qps_per_rail,
		 c->ch.qps_per_rail > 1 && c->ch.split ? " (split)" : "",
		 c->kind != GDX_KIND_SEND ? "sender's"
		 : c->ar		  ? "on"
					  : "off",
		 c->ch.rails[0].dev->ro ? "on" : "off",
		 gdx_ece_str(&c->ch.rails[0].ece, ece, sizeof(ece)));
	return buf;
}
