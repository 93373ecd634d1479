/* SPDX-License-Identifier: MIT */
/*
 * The plugin's start-up, once per load (gdx_start.c): the parameters, the
 * out-of-band interface, the devices and ports it takes, their GPUDirect
 * verdicts and the view NCCL numbers them by. init runs it, and so does
 * gdx-doctor check on the node itself: one decision path, so that the gate
 * cannot say what the plugin will not do. What it took, what it left out
 * and why, and every WARN it said is kept in a report.
 */
#ifndef GDX_START_H
#define GDX_START_H

#include "dev/gdx_dev.h"
#include "dev/gdx_dev_seen.h"
#include "sys/gdx_sock.h"

enum gdx_start_step {
	GDX_START_PARAMS,  /* NCCL_GDX_* and their twins */
	GDX_START_OOB,	   /* the out-of-band interface */
	GDX_START_DEVICES, /* the devices and ports that pass NCCL_GDX_HCA */
	GDX_START_GDR,	   /* each NIC's GPUDirect RDMA verdict */
	GDX_START_VIEW,	   /* the devices as NCCL numbers them (NCCL_GDX_RAILS) */
	GDX_START_DONE,
};
const char *gdx_start_step_name(enum gdx_start_step s);

#define GDX_START_WARNS	   16
#define GDX_START_WARN_MAX 1024

/* A port the start-up saw: what it made of it, and for one it took, what
 * that device advertises. */
struct gdx_start_port {
	struct gdx_dev_seen seen;
	/* a port it took: what that device advertises, the GID a connection
	 * would take (its index -1 when it has none: a WARN says why) and the
	 * active MTU in bytes */
	int ptr_support;
	int gid_index;
	char gid[48];
	int mtu;
	/* the device NCCL sees through the NIC's Data Direct DMA function
	 * (NCCL_GDX_DATA_DIRECT), -1 none: seen.dev itself, or with both
	 * advertised the one after it; and that function's bus id */
	int dd_dev;
	char dd_fn[16];
};

struct gdx_start_report {
	int result;		       /* 0: started; else the failed step's -errno */
	enum gdx_start_step step;      /* the step that failed, GDX_START_DONE once started */
	char oob[GDX_IFNAME_MAX + 64]; /* "eth0 10.0.0.5" once found */
	char using[1024];	       /* the devices NCCL sees, as the INIT line says them */
	int nwarns;		       /* WARN lines said, past GDX_START_WARNS counted only */
	char warns[GDX_START_WARNS][GDX_START_WARN_MAX]; /* without the log prefix */
	int nports;
	struct gdx_start_port ports[GDX_SEEN_MAX];
};

/*
 * Runs the start-up for NCCL's view, filling *r (the caller's, zeroed here).
 * Returns 0 with the device table set up (gdx_devs_fini() releases it), or
 * the step's negative errno after its WARNs, with nothing left open.
 */
int gdx_start(enum gdx_view view, struct gdx_start_report *r);

#endif
