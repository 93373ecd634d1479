/* SPDX-License-Identifier: MIT */
/*
 * What the files of gdx-doctor check share (gdx_doctor_check.c, the
 * command; _problems.c, what it finds wrong; _nccl.c, the NCCL that would
 * load the plugin; _nccl_topo.c, NCCL's configuration and topology files; _report.c, its tables and
 * its JSON): the node's facts as the check gathers them, and the problems found in them.
 */
#ifndef GDX_DOCTOR_CHECK_H
#define GDX_DOCTOR_CHECK_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include "topo/gdx_topo.h"
#include "net/gdx_start.h"

#include "tools/common/gdx_gdr_homes.h"
#include "tools/common/gdx_gdr_names.h"
#include "tools/common/gdx_gdr_pair.h"
#include "tools/common/gdx_topo_query.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_nccl_topo.h"

/*
 * One pass over everything GPUDirect RDMA needs, from the plugin's own
 * probes (gdx_gdr.h): RDMA ports, memlock, peer memory, DMA-BUF, the CUDA
 * driver and GPUs, every GPU-NIC path, and the NCCL that would load the
 * plugin. The status is the worst problem found: healthy, degraded, broken.
 * Tests point --sysfs-root and --xml at fixtures, and GDX_GDR_FACTS at a
 * facts file standing in for CUDA, uname, getrlimit and the DMA-BUF probe.
 */

#define CHECK_MAX_PORTS	   256
#define CHECK_MAX_PROBLEMS 256

struct check_port {
	char dev[GDX_TOPO_NAME_LEN];
	int port;
	char state[32]; /* "ACTIVE", "DOWN" */
	bool active;
	char link[24]; /* "InfiniBand", "Ethernet" */
	char rate[64];
	int ngids, nv2; /* configured GIDs, and of them RoCE v2 */
	char gid[64];	/* the one the plugin would choose, "" when none */
	int gid_roce;	/* its RoCE version (1 also for InfiniBand's), 0 when none */
	int mtu;	/* the active MTU in bytes; 0 when not queried (a fixture tree) */
};

struct check_problem {
	enum gdx_gdr_level level; /* OK: a note */
	char text[GDX_GDR_LINE_LEN];
};

struct check_nccl {
	bool found, in_path;
	char path[PATH_MAX];
	int version;			  /* NCCL_VERSION_CODE, 0 when unknown */
	const struct nccl_loader *loader; /* how it loads plugins; NULL: no NCCL, no version */
	const struct nccl_loader *judged; /* the row judged by: loader, else the newest */
	const char *plugin_env;		  /* NCCL_NET_PLUGIN, NULL when unset or empty */
	const char *net_env;		  /* NCCL_NET, NULL when unset or empty */
	/* The library NCCL would open for NCCL_NET_PLUGIN, whichever it is. */
	char lib_path[PATH_MAX];       /* "" when none opens */
	char lib_net[64];	       /* the name in its table, "GDX" for this plugin */
	unsigned lib_exported;	       /* its ncclNetPlugin_vN, bit N */
	unsigned lib_rma;	       /* its ncclRmaPlugin_vN, bit N */
	char tried[2 * NCCL_NAME_MAX]; /* the names NCCL tries, "gdx, then libnccl-net-gdx.so" */
	char load_error[512];	       /* a file found that dlopen refuses, and why */
	bool missing;		       /* NCCL_NET_PLUGIN is a path, and nothing is there */
	char beside[PATH_MAX];	       /* the plugin beside this gdx-doctor, "" when none */
	char first_other[PATH_MAX];    /* 2.27+ lists: another plugin listed before this one */
	bool ours;		       /* lib_path is this plugin */
	int api;		       /* the ncclNetPlugin_vN NCCL loads of this plugin, 0 none */
	char plugin_path[PATH_MAX];    /* lib_path when ours, else "" */
	char plugin_version[32];       /* from its INIT line's text, "" when it has none */
	int plugin_wire;	       /* its wire protocol version, 0 when unknown */
};

/* One-sided RMA through the plugin (gdx_doctor_check_rma.c): whether it is
 * on, the table NCCL would take, and every reason NCCL would not use it. */
#define CHECK_RMA_WHY 10
struct check_rma {
	bool asked; /* NCCL_GDX_RMA=1 */
	int api;    /* the ncclRmaPlugin_vN NCCL takes from this plugin, 0 none */
	int nwhy;
	char why[CHECK_RMA_WHY][320];
};

struct check {
	const char *source;
	enum gdx_gdr_policy policy;
	const char *policy_env;
	struct gdx_gdr_probe *p;
	struct check_port ports[CHECK_MAX_PORTS];
	int nports;
	struct gdx_gdr_verdict *nic_v;	/* per NIC */
	struct gdx_gdr_verdict *pair_v; /* [gpu * nnics + nic] */
	struct check_nccl nccl;
	bool nccl_checked;
	const char *nccl_file; /* --nccl: the libnccl.so judged, NULL: the one a job loads */
	enum gdx_gdr_level memlock_level; /* check_memlock()'s */
	struct check_rma rma;		  /* once the NCCL is checked */
	struct check_problem problems[CHECK_MAX_PROBLEMS];
	int nproblems;
	struct gdx_gdr_homes homes; /* the Data Direct functions the facts name */
	enum gdx_gdr_level status;
	int exit; /* the exit status: status's, 0 for degraded with --allow-degraded */
	/* This machine, live: its devices probed, its NCCL judged. A saved
	 * tree (--sysfs-root) or a facts file stands for another node. */
	bool live;
	/* The node is this machine, facts file or not: its devices open here,
	 * and the plugin's own start-up runs (gdx_doctor_check_start.c), into
	 * start: NULL on a saved tree, and on a node with neither GPU nor
	 * RDMA device. */
	bool here;
	struct gdx_start_report *start;
	const char *hostname; /* the node's name, NULL when unknown */
	char host_buf[256];
	struct doctor_nccl_topo ntopo; /* NCCL_TOPO_FILE (gdx_doctor_check_nccl_topo.c) */
	const struct gdx_topo *topo;   /* the topology judged, when check loaded it */
};

/* A problem of the node (gdx_doctor_check_problems.c), at level; the worst
 * level found is the status. */
void check_problem(struct check *c, enum gdx_gdr_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Every GPU should reach its nearest NIC directly and cleanly. */
void check_gpu_problems(struct check *c);
/* No RDMA device, no active port, a RoCE port without a RoCE v2 GID. */
void check_port_problems(struct check *c);
/* The memlock limit against what registration pins (the plugin's control
 * regions on every rail, NCCL's host buffers where a NIC is staged), unless
 * CAP_IPC_LOCK lifts it: after the NICs' verdicts; c->memlock_level. */
void check_memlock(struct check *c);

/* NCCL's configuration files' notes, NCCL_TOPO_FILE and the rails against
 * it (gdx_doctor_check_nccl_topo.c): problems, once the probe ran on t (NULL:
 * the probe's own, from xml); and their lines in the report and its JSON
 * (the JSON's keys, each followed by a comma). */
void check_nccl_topo(struct check *c, const struct gdx_topo *t, const char *xml);
void check_nccl_topo_human(const struct check *c, const struct gdx_topo *t, FILE *f);
void check_nccl_topo_json(const struct check *c, const struct gdx_topo *t, FILE *f);

/* The plugin's start-up, as init runs it, for the view of the table NCCL
 * loads (after check_nccl()): c->start, NULL when out of memory. */
void check_start(struct check *c);
/* What the start-up refused (broken, in its own words), warned of, and
 * each port it left out: a rail lost (degraded), naming the GPUs whose
 * nearest NIC it was. */
void check_start_problems(struct check *c);
/* The start-up's account of a device's port (port 0 matches a device that
 * would not open), NULL when not run or not seen. */
const struct gdx_start_port *check_start_port(const struct check *c, const char *dev, int port);
/* Why the started plugin uses no port of NIC nic ("down", "left out by the
 * HCA filter"), NULL when it uses one or did not start here. */
const char *check_nic_unused(const struct check *c, int nic);

/* The NCCL that would load the plugin, and how it loads it
 * (gdx_doctor_check_nccl.c): c->nccl filled. */
void check_nccl(struct check *c);
/* --nccl FILE: the library loaded now, to be judged by check_nccl();
 * -errno (ENOENT, and EINVAL for a file that does not load or is no NCCL)
 * with why. */
int check_nccl_given(struct check *c, const char *file, char *why, size_t len);
/* Every way NCCL will not load the plugin, broken, with its fix; notes on
 * what may differ in the job. */
void check_nccl_problems(struct check *c);
/* Whether NCCL would carry its one-sided traffic over this plugin, and why
 * not (c->rma); after check_nccl(). A note, never a problem: off is the
 * default. */
void check_rma(struct check *c);
/* "2.28.9 (path)", or what is known of an NCCL not found or of unknown
 * version. */
void check_nccl_name(const struct check_nccl *n, char *buf, size_t len);

/* The report (gdx_doctor_check_report.c): the tables, or --json. */
void check_human(const struct check *c, FILE *f);
/* --quiet: "gdx-doctor check: [broken] ..." for each problem but the notes. */
void check_quiet(const struct check *c, FILE *f);
void check_json(const struct check *c, FILE *f);

#endif
