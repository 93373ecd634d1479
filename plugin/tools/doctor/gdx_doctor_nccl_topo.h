/* SPDX-License-Identifier: MIT */
/*
 * NCCL's topology file in gdx-doctor (gdx_doctor_nccl_topo.c): which file
 * NCCL takes its topology from (NCCL_TOPO_FILE, and where that setting came
 * from), what NCCL makes of it, the GPU-NIC pairing it imposes, and the
 * plugin's rails judged against it; for check and topo.
 */
#ifndef GDX_DOCTOR_NCCL_TOPO_H
#define GDX_DOCTOR_NCCL_TOPO_H

#include <stdbool.h>
#include <stdio.h>

#include "gdr/gdx_gdr_verdict.h"
#include "topo/gdx_topo.h"
#include "topo/gdx_topo_nccl.h"

struct doctor_nccl_topo {
	const char *file;	  /* NCCL_TOPO_FILE; NULL when unset */
	char from[1100];	  /* "environment", "/etc/nccl.conf:6" */
	bool plugin_own;	  /* NCCL_GDX_TOPO_FILE is set: the plugin reads that instead */
	int err;		  /* 0: n read; else why it is not */
	enum gdx_gdr_level level; /* what err means for the node */
	char why[512];
	struct gdx_topo_nccl *n;
};

/* NCCL_TOPO_FILE, read as NCCL would read it (nt->file NULL when unset). */
void doctor_nccl_topo_read(struct doctor_nccl_topo *nt);
void doctor_nccl_topo_free(struct doctor_nccl_topo *nt);
/* The file a topology load follows (gdx_topo_opts.nccl_file): nt's when
 * it was read and the plugin follows it; else NULL. */
const char *doctor_nccl_topo_follow(const struct doctor_nccl_topo *nt);

/* The lines of the section: the file and its source, what NCCL does with
 * it, the pairing it imposes (each GPU's nearest NICs in it, named as t
 * names them when t is not NULL). */
void doctor_nccl_topo_human(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f);
/* "\"nccl_topo\": null" or the same as an object. */
void doctor_nccl_topo_json(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f);

/* A file given where hwloc's XML was asked for (topo --xml) that is NCCL's
 * format: what it is, and every GPU-NIC class in it as NCCL reads it, as
 * text or JSON. Returns the exit status, or -1 when path is not NCCL's
 * format either (the caller's error stands). */
int doctor_nccl_topo_as_xml(const char *path, bool json, FILE *f);

/*
 * The plugin's fused devices that the file disagrees with: NCCL_GDX_RAILS's
 * groups (rails as given; auto and gpu: t's rail groups) with two members
 * the file pairs with different GPUs. Calls say(ctx, line) for each;
 * returns how many.
 */
int doctor_nccl_topo_rails(const struct doctor_nccl_topo *nt, const struct gdx_topo *t,
			   const char *rails, void (*say)(void *ctx, const char *line), void *ctx);

#endif
