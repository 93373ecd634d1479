/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's problems: each said with its level (a note, degraded,
 * broken), the worst of them the node's status; the GPUs' paths to their
 * nearest NICs and the RDMA ports judged here, NCCL's in
 * gdx_doctor_check_nccl.c.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dev/gdx_gdr.h"
#include "dev/gdx_gdr_verdict.h"
#include "dev/gdx_topo.h"

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
		for (int n = 0; n < p->nnics; n++)
			if (gdx_gdr_path(p, g, n)->cls < best)
				best = gdx_gdr_path(p, g, n)->cls;
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_verdict *v = &c->pair_v[g * p->nnics + n];

			if (gdx_gdr_path(p, g, n)->cls != best)
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
