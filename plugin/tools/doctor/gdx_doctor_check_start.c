/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check runs the plugin's own start-up on the node
 * (net/gdx_start.c, the code init runs), so that what it says of the
 * devices, the out-of-band interface and the rails is what the plugin will
 * do: where the start-up refuses, check is broken with the plugin's words;
 * a port the start-up leaves out is a rail lost, degraded, with each GPU
 * whose direct path goes with it. A saved tree's node cannot be started
 * here: its ports are judged from the tree alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include "dev/gdx_gid.h"
#include "net/gdx_start.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

#include "tools/doctor/gdx_doctor_check.h"

/* NCCL's logger stand-in: the report keeps the WARNs; nothing is printed. */
static void check_start_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
			       int line, const char *fmt, ...)
{
	(void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

/* The RoCE version of the port's GID at index (1 also for InfiniBand's). */
static int check_gid_version(const struct check *c, const struct check_port *cp, int index)
{
	struct gdx_gid_entry *gids = calloc(GDX_GID_TABLE_MAX, sizeof(*gids));
	int n, v = 0;

	if (!gids)
		return 0;
	n = gdx_gid_read_table(c->p->sysfs_root, cp->dev, cp->port, gids, GDX_GID_TABLE_MAX);
	for (int i = 0; i < n; i++)
		if (gids[i].index == index)
			v = gids[i].roce_version;
	free(gids);
	return v;
}

void check_start(struct check *c)
{
	/* The view of the table NCCL would load: v9+ numbers every physical
	 * port, v6-v8 the plugin's own fused devices (gdx_dev.h). */
	enum gdx_view view = c->nccl.api && c->nccl.api < 9 ? GDX_VIEW_FUSED : GDX_VIEW_PHYSICAL;

	c->start = malloc(sizeof(*c->start));
	if (!c->start)
		return;
	gdx_log_set(check_start_logger);
	if (!gdx_start(view, c->start))
		gdx_devs_fini();
	gdx_log_set(NULL);
	/* The GID and MTU of a port it took are the plugin's own. */
	for (int i = 0; i < c->nports; i++) {
		struct check_port *cp = &c->ports[i];
		const struct gdx_start_port *sp = check_start_port(c, cp->dev, cp->port);

		if (c->start->result || !sp || sp->seen.fate != GDX_SEEN_TAKEN)
			continue;
		if (sp->mtu)
			cp->mtu = sp->mtu;
		if (sp->gid_index < 0) {
			cp->gid[0] = '\0';
			cp->gid_roce = 0;
		} else if (strcmp(cp->gid, sp->gid)) {
			snprintf(cp->gid, sizeof(cp->gid), "%s", sp->gid);
			cp->gid_roce = check_gid_version(c, cp, sp->gid_index);
		}
	}
}

const struct gdx_start_port *check_start_port(const struct check *c, const char *dev, int port)
{
	for (int i = 0; c->start && i < c->start->nports; i++) {
		const struct gdx_start_port *sp = &c->start->ports[i];

		if (!strcmp(sp->seen.ibdev, dev) && (sp->seen.port == port || sp->seen.port == 0))
			return sp;
	}
	return NULL;
}

const char *check_nic_unused(const struct check *c, int nic)
{
	const char *name = c->p->nics[nic].name, *why = NULL;

	if (!c->start || c->start->result)
		return NULL; /* not started here, or not at all: a problem of its own */
	for (int i = 0; i < c->start->nports; i++) {
		const struct gdx_start_port *sp = &c->start->ports[i];

		if (strcmp(sp->seen.ibdev, name))
			continue;
		if (sp->seen.fate == GDX_SEEN_TAKEN)
			return NULL;
		why = sp->seen.fate == GDX_SEEN_NOT_ACTIVE ? "down"
							   : gdx_seen_fate_name(sp->seen.fate);
	}
	return why ? why : "not seen by the plugin";
}
