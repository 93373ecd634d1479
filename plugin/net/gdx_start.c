/* SPDX-License-Identifier: MIT */
/*
 * The start-up (gdx_start.h): the steps init takes once per load, in order,
 * each stopping the rest when it refuses, with the account of what they
 * said and decided.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conn/gdx_listen.h"
#include "dev/gdx_dev.h"
#include "dev/gdx_dev_gid.h"
#include "dev/gdx_dev_seen.h"
#include "dev/gdx_gid.h"
#include "rail/gdx_rail.h"
#include "net/gdx_start.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

const char *gdx_start_step_name(enum gdx_start_step s)
{
	static const char *const names[] = {
		[GDX_START_PARAMS] = "its parameters",
		[GDX_START_OOB] = "the out-of-band interface",
		[GDX_START_DEVICES] = "the RDMA devices",
		[GDX_START_GDR] = "GPUDirect RDMA",
		[GDX_START_VIEW] = "the rail groups",
		[GDX_START_DONE] = "started",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* The WARNs of the start-up's thread, kept in its report. */
static void gdx_start_keep(void *arg, ncclDebugLogLevel level, const char *text)
{
	struct gdx_start_report *r = arg;
	size_t plen = strlen(GDX_LOG_PREFIX);

	if (level != NCCL_LOG_WARN)
		return;
	if (!strncmp(text, GDX_LOG_PREFIX, plen))
		text += plen;
	if (r->nwarns < GDX_START_WARNS)
		snprintf(r->warns[r->nwarns], sizeof(r->warns[0]), "%s", text);
	r->nwarns++;
}

/* The device of the port's NIC seen through its Data Direct DMA function,
 * for gdx-doctor check to say which function each port uses. */
static void gdx_start_dd(struct gdx_start_port *sp, const struct gdx_dev *taken)
{
	for (int i = 0; i < gdx_devs_count(); i++) {
		const struct gdx_dev *d = gdx_dev_get(i);
		const char *bus = d->pci_path ? strrchr(d->pci_path, '/') : NULL;

		if (d->data_direct && bus && d->ib_port == taken->ib_port &&
		    !strcmp(d->ibdev, taken->ibdev)) {
			sp->dd_dev = i;
			snprintf(sp->dd_fn, sizeof(sp->dd_fn), "%s", bus + 1);
			return;
		}
	}
}

static void gdx_start_ports(struct gdx_start_report *r, bool started)
{
	int n;
	const struct gdx_dev_seen *seen = gdx_devs_seen(&n);

	r->nports = n < GDX_SEEN_MAX ? n : GDX_SEEN_MAX;
	for (int i = 0; i < r->nports; i++) {
		struct gdx_dev *d = started && seen[i].dev >= 0 ? gdx_dev_get(seen[i].dev) : NULL;
		struct gdx_start_port *sp = &r->ports[i];
		union ibv_gid gid;

		sp->seen = seen[i];
		sp->gid_index = -1;
		sp->dd_dev = -1;
		if (!d)
			continue;
		gdx_start_dd(sp, d);
		sp->ptr_support = d->ptr_support;
		sp->mtu = d->active_mtu >= IBV_MTU_256 && d->active_mtu <= IBV_MTU_4096
				  ? 128 << d->active_mtu
				  : 0;
		/* as a connection will ask, so that a port without a usable
		 * GID is said now, not at the first connect */
		if (!gdx_dev_gid(d, &sp->gid_index, &gid))
			gdx_gid_str(gid.raw, sp->gid, sizeof(sp->gid));
		else
			sp->gid_index = -1;
	}
}

int gdx_start(enum gdx_view view, struct gdx_start_report *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	gdx_log_tee(gdx_start_keep, r);
	r->step = GDX_START_PARAMS;
	ret = gdx_params_load();
	if (!ret) {
		r->step = GDX_START_OOB;
		ret = gdx_oob_check(r->oob, sizeof(r->oob));
	}
	if (!ret) {
		r->step = GDX_START_DEVICES;
		ret = gdx_devs_init();
	}
	if (ret >= 0) {
		r->step = GDX_START_GDR;
		ret = gdx_devs_gdr();
	}
	if (ret >= 0) {
		r->step = GDX_START_VIEW;
		ret = gdx_devs_view(view);
	}
	if (r->step >= GDX_START_DEVICES)
		gdx_start_ports(r, ret >= 0);
	if (ret < 0) {
		/* Devices opened before the failure go too: NCCL may retry the
		 * load, and nothing may stay behind (tests/vm/lifecycle.c). */
		gdx_devs_fini();
		r->result = ret;
	} else {
		r->step = GDX_START_DONE;
		gdx_devs_using(r->using, sizeof(r->using));
	}
	gdx_log_tee(NULL, NULL);
	return r->result;
}
