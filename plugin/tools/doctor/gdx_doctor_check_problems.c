/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's problems: each said with its level (a note, degraded,
 * broken), the worst of them the node's status; the GPUs' paths to their
 * nearest NICs, the RDMA ports and the plugin's own start-up
 * (gdx_doctor_check_start.c) judged here, NCCL's in gdx_doctor_check_nccl.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include "topo/gdx_topo.h"
#include "net/gdx_start.h"
#include "sys/gdx_param.h"

#include "tools/doctor/gdx_doctor_check.h"

void check_problem(struct check *c, enum gdx_gdr_level level, const char *fmt, ...)
{
	struct check_problem *pr;
	va_list ap;

	if (level > c->status)
		c->status = level;
	if (c->nproblems == CHECK_MAX_PROBLEMS)
		return;
	pr = &c->problems[c->nproblems++];
	pr->level = level;
	va_start(ap, fmt);
	vsnprintf(pr->text, sizeof(pr->text), fmt, ap);
	va_end(ap);
}

static bool check_pair_ok(const struct gdx_gdr_verdict *v)
{
	return v->mode == GDX_GDR_DIRECT && !v->degraded;
}

/* Every GPU should reach its nearest NIC directly and cleanly. */
void check_gpu_problems(struct check *c)
{
	const struct gdx_gdr_probe *p = c->p;

	for (int g = 0; g < p->ngpus; g++) {
		enum gdx_path best = GDX_PATH_UNKNOWN;
		const struct gdx_gdr_verdict *worst = NULL;
		char text[GDX_GDR_TEXT_LEN];
		int worst_nic = -1;
		bool ok = false;

		if (gdx_gdr_bar1_check(p, g, text, sizeof(text)) != GDX_GDR_LEVEL_OK)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED, "%s", text);
		/* among the NICs the plugin uses, where it started here: one
		 * it left out is a rail lost (check_start_problems) */
		for (int n = 0; n < p->nnics; n++)
			if (gdx_gdr_path(p, g, n)->cls < best && !check_nic_unused(c, n))
				best = gdx_gdr_path(p, g, n)->cls;
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_verdict *v = &c->pair_v[g * p->nnics + n];

			if (gdx_gdr_path(p, g, n)->cls != best || check_nic_unused(c, n))
				continue;
			if (check_pair_ok(v))
				ok = true;
			else if (!worst)
				worst = v, worst_nic = n;
			if (gdx_gdr_path(p, g, n)->acs == GDX_GDR_ACS_UNKNOWN)
				check_problem(
					c, GDX_GDR_LEVEL_OK,
					"ACS between GPU %s and %s unknown: bridge %s's config "
					"space beyond 64 bytes is unreadable; run as root",
					p->gpus[g].pci, p->nics[n].name,
					gdx_gdr_path(p, g, n)->acs_bridge);
		}
		if (ok || !worst || c->policy == GDX_GDR_POLICY_OFF)
			continue;
		if (worst->mode == GDX_GDR_DIRECT)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "GPU %s and %s (%s): degraded: %s; fix: %s", p->gpus[g].pci,
				      p->nics[worst_nic].name, gdx_path_name(worst->path),
				      worst->degraded_why, worst->fix);
		else
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "GPU %s is staged through host memory on its nearest NIC %s "
				      "(%s): %s%s%s%s%s",
				      p->gpus[g].pci, p->nics[worst_nic].name,
				      gdx_path_name(worst->path), worst->reason,
				      worst->degraded ? "; " : "", worst->degraded_why,
				      worst->fix[0] ? "; fix: " : "", worst->fix);
	}
}

void check_port_problems(struct check *c)
{
	int active = 0;

	if (!c->p->nnics) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "no RDMA device in %s/class/infiniband; fix: load the NIC's driver "
			      "(mlx5_ib), or create a Soft-RoCE device (rdma link add)",
			      c->p->sysfs_root);
		return;
	}
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];

		active += cp->active;
		if (cp->active && !strcmp(cp->link, "Ethernet") && !cp->nv2)
			check_problem(
				c, GDX_GDR_LEVEL_BROKEN,
				"%s port %d: RoCE port without a RoCE v2 GID; fix: give its "
				"netdev an IP address (RoCE v2 GIDs follow the addresses) and "
				"check that RoCE v2 is enabled",
				cp->dev, cp->port);
	}
	if (!active)
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "no active RDMA port; fix: check the cable and the subnet manager "
			      "(InfiniBand) or the netdev's link (RoCE)");
}

/* Whether text says what a problem already there says. */
static bool check_said(const struct check *c, const char *text)
{
	for (int i = 0; i < c->nproblems; i++)
		if (strstr(c->problems[i].text, text) || strstr(text, c->problems[i].text))
			return true;
	return false;
}

/* The GPUs that nic was a nearest NIC of (by path class) and whose best
 * NIC left in use is farther: "; it was the nearest NIC of GPU
 * 0000:17:00.0 (now mlx5_2, PHB)". */
static void check_gpus_losing(const struct check *c, int nic, char *buf, size_t len)
{
	const struct gdx_gdr_probe *p = c->p;
	size_t off = 0;

	buf[0] = '\0';
	for (int g = 0; g < p->ngpus; g++) {
		enum gdx_path best = GDX_PATH_UNKNOWN, used_best = GDX_PATH_UNKNOWN;
		int used_nic = -1;
		char now[96];

		for (int n = 0; n < p->nnics; n++) {
			enum gdx_path cls = gdx_gdr_path(p, g, n)->cls;

			if (cls < best)
				best = cls;
			if (!check_nic_unused(c, n) && cls < used_best)
				used_best = cls, used_nic = n;
		}
		if (best == GDX_PATH_UNKNOWN || gdx_gdr_path(p, g, nic)->cls != best ||
		    used_best == best || off + 160 > len)
			continue;
		if (used_nic >= 0)
			snprintf(now, sizeof(now), "now %s, %s", p->nics[used_nic].name,
				 gdx_path_name(used_best));
		else
			snprintf(now, sizeof(now), "no NIC left");
		off += (size_t)snprintf(buf + off, len - off, "%s GPU %s (%s)",
					off ? "," : "; it was the nearest NIC of", p->gpus[g].pci,
					now);
	}
}

void check_start_problems(struct check *c)
{
	const struct gdx_start_report *r = c->start;
	const char *hca = gdx_param_src("HCA") == GDX_PARAM_TWIN ? "NCCL_IB_HCA" : "NCCL_GDX_HCA";

	if (!r) {
		if (c->here)
			check_problem(c, GDX_GDR_LEVEL_BROKEN, "out of memory for the start-up");
		return;
	}
	if (r->result == -ENODEV && r->step == GDX_START_DEVICES && !c->p->nnics)
		return; /* "no RDMA device", said with the ports */
	if (r->result) {
		/* The plugin's own reasons, each already with its fix; one line
		 * saying that it does not start when they do not say so. */
		for (int i = 0; i < r->nwarns && i < GDX_START_WARNS; i++)
			if (!check_said(c, r->warns[i]))
				check_problem(c, GDX_GDR_LEVEL_BROKEN,
					      "the plugin does not start here (%s): %s",
					      gdx_start_step_name(r->step), r->warns[i]);
		if (!r->nwarns)
			check_problem(c, GDX_GDR_LEVEL_BROKEN,
				      "the plugin does not start here (%s: %s)",
				      gdx_start_step_name(r->step), strerror(-r->result));
		return;
	}
	for (int i = 0; i < r->nwarns && i < GDX_START_WARNS; i++)
		if (!check_said(c, r->warns[i]))
			check_problem(c, GDX_GDR_LEVEL_DEGRADED, "the plugin starts, but: %s",
				      r->warns[i]);
	/* Each port left out: a rail lost, but for what the user asked. */
	for (int i = 0; i < r->nports; i++) {
		const struct gdx_dev_seen *s = &r->ports[i].seen;
		int nic = gdx_gdr_find_nic(c->p, s->ibdev);
		char gpus[1024] = "", mine[32], its[32];

		if (s->fate == GDX_SEEN_TAKEN) {
			/* what NCCL is told is the plugin's: a verdict of this
			 * check's that differs is this check's mistake */
			if (nic >= 0 && c->nic_v[nic].ptr_support != r->ports[i].ptr_support) {
				gdx_gdr_ptr_name(c->nic_v[nic].ptr_support, mine, sizeof(mine));
				gdx_gdr_ptr_name(r->ports[i].ptr_support, its, sizeof(its));
				check_problem(c, GDX_GDR_LEVEL_OK,
					      "%s port %d: the plugin advertises %s, where this "
					      "check's own probe found %s: the plugin's is what "
					      "NCCL gets",
					      s->ibdev, s->port, its, mine);
			}
			continue;
		}
		if (nic >= 0)
			check_gpus_losing(c, nic, gpus, sizeof(gpus));
		if (s->fate == GDX_SEEN_FILTERED)
			check_problem(c, gpus[0] ? GDX_GDR_LEVEL_DEGRADED : GDX_GDR_LEVEL_OK,
				      "%s port %d: left out by %s=\"%s\"%s%s", s->ibdev, s->port,
				      hca, gdx_params.hca, gpus,
				      gpus[0] ? "; fix: keep it in the filter" : " (as asked)");
		else if (s->fate == GDX_SEEN_NOT_ACTIVE)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "%s port %d is %s: the plugin leaves it out, a rail fewer%s; "
				      "fix: bring its link up (the cable, the switch port, on "
				      "InfiniBand the subnet manager; ibv_devinfo -d %s)",
				      s->ibdev, s->port, gdx_port_state_name(s->state), gpus,
				      s->ibdev);
		else if (s->port)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "%s port %d: the plugin leaves it out (%s)%s", s->ibdev,
				      s->port, gdx_seen_fate_name(s->fate), gpus);
		else
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "%s: the plugin leaves it out (%s)%s", s->ibdev,
				      gdx_seen_fate_name(s->fate), gpus);
	}
}

/* CAP_IPC_LOCK's bit in the capability sets (linux/capability.h). */
#define CHECK_CAP_IPC_LOCK 14
/* NCCL's NCCL_BUFFSIZE default: the SIMPLE protocol's buffer per connection. */
#define CHECK_NCCL_BUFFSIZE (4ULL << 20)

/* Whether this process has CAP_IPC_LOCK in the first user namespace, where
 * the kernel's ib_umem_get() asks for it (capable()): with it, registering
 * pins past RLIMIT_MEMLOCK. The capability in a user namespace of its own
 * (rootless containers, enroot) does not count. */
static bool check_ipc_lock(void)
{
	unsigned long long eff = 0;
	char line[256];
	bool init_ns = false, found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	fclose(f);
	if (!found || !(eff >> CHECK_CAP_IPC_LOCK & 1))
		return false;
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f)) {
		unsigned long long in, out, count;

		init_ns = sscanf(line, "%llu %llu %llu", &in, &out, &count) == 3 && !in && !out &&
			  count == 4294967295ULL;
	}
	fclose(f);
	return init_ns;
}

static uint64_t check_pages(uint64_t off, uint64_t len, uint64_t page)
{
	return (off + len + page - 1) / page * page - off / page * page;
}

/* The bytes one comm of kind pins on each of its rails, as gdx_setup.c
 * registers them: the peer-written span of its control region and its
 * staging, whole pages each (each registration pins its pages again). */
static uint64_t check_comm_pinned(uint32_t kind)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t off, len;

	gdx_ctrl_span(kind, &off, &len);
	page = page > 0 ? page : 4096;
	return check_pages(off, len, (uint64_t)page) +
	       check_pages(0, sizeof(struct gdx_stage), (uint64_t)page);
}

/* NCCL_BUFFSIZE as NCCL reads it, its default when unset or not a size. */
static uint64_t check_nccl_buffsize(void)
{
	const char *v = getenv("NCCL_BUFFSIZE");
	unsigned long long b;
	char *end;

	if (!v || !*v)
		return CHECK_NCCL_BUFFSIZE;
	b = strtoull(v, &end, 0);
	return *end || !b ? CHECK_NCCL_BUFFSIZE : b;
}

void check_memlock(struct check *c)
{
	static const char fix[] =
		"fix: ulimit -l unlimited (systemd LimitMEMLOCK=infinity, docker --ulimit "
		"memlock=-1)";
	const struct gdx_gdr_probe *p = c->p;
	uint64_t send = check_comm_pinned(GDX_KIND_SEND), recv = check_comm_pinned(GDX_KIND_RECV);
	uint64_t buf = check_nccl_buffsize(), pair;
	char have[32], need[32], staged[64] = "", what[160];

	c->memlock_level = GDX_GDR_LEVEL_OK;
	if (p->memlock_unknown || p->memlock >= GDX_GDR_MEMLOCK_MIN)
		return;
	gdx_gdr_bytes(p->memlock, have, sizeof(have));
	for (int n = 0; n < p->nnics && !staged[0]; n++)
		if (c->nic_v[n].mode != GDX_GDR_DIRECT)
			snprintf(staged, sizeof(staged), "%.60s", p->nics[n].name);
	if (c->live && check_ipc_lock()) {
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "memlock limit %s binds no registration here: this process has "
			      "CAP_IPC_LOCK, which lets ibv_reg_mr pin past it; a job run without "
			      "it is bound (below %llu MiB it may fail to register); %s",
			      have, GDX_GDR_MEMLOCK_MIN >> 20, fix);
		return;
	}
	if (p->memlock < send) {
		gdx_gdr_bytes(send, need, sizeof(need));
		c->memlock_level = GDX_GDR_LEVEL_BROKEN;
		check_problem(c, c->memlock_level,
			      "memlock limit %s is below the %s one send comm's control region "
			      "and staging pin on each rail: registering them will fail; %s",
			      have, need, fix);
		return;
	}
	if (staged[0] && p->memlock < buf + send) {
		gdx_gdr_bytes(buf, need, sizeof(need));
		c->memlock_level = GDX_GDR_LEVEL_BROKEN;
		check_problem(c, c->memlock_level,
			      "memlock limit %s is below NCCL_BUFFSIZE (%s), the host buffer NCCL "
			      "registers for each connection staged through host memory (%s is "
			      "staged): registering it will fail; %s",
			      have, need, staged, fix);
		return;
	}
	/* Enough for a first connection: the limit bounds how many fit. */
	pair = send + recv + (staged[0] ? 2 * buf : 0);
	gdx_gdr_bytes(send + recv, need, sizeof(need));
	if (staged[0])
		snprintf(
			what, sizeof(what),
			", and NCCL's host buffers, NCCL_BUFFSIZE each, where a NIC is staged (%s)",
			staged);
	else
		snprintf(what, sizeof(what),
			 " (with GPUDirect RDMA NCCL keeps most of its buffers in GPU memory, "
			 "which the limit does not bound)");
	c->memlock_level = GDX_GDR_LEVEL_DEGRADED;
	check_problem(c, c->memlock_level,
		      "memlock limit %s bounds the memory registered at once: a send and a "
		      "receive comm pin %s on each rail%s; at most %llu such pairs fit, and a job "
		      "with more (peers times channels) fails to register; %s",
		      have, need, what, (unsigned long long)(p->memlock / pair), fix);
}
