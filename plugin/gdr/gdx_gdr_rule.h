/* SPDX-License-Identifier: MIT */
/*
 * NCCL's GPUDirect RDMA distance rule (ncclTopoCheckGdr in src/graph/paths.cc)
 * as the NCCL that loads the plugin applies it. Whether NCCL reads or writes
 * a GPU's memory through a NIC, rather than staging through host memory,
 * depends on the path type NCCL computes for the pair and on
 * NCCL_NET_GDR_LEVEL; both changed with NVLink-C2C (Grace):
 *   < 2.26      PIX PXB PHB SYS; the level's default is PXB
 *   2.26        NCCL_NET_GDR_C2C (default 0): a PHB pair whose GPU is on
 *               NVLink-C2C to its CPU counts as C2C, within PXB
 *   2.27, 2.28  the pair is typed P2C and NCCL_NET_GDR_C2C defaults to 1;
 *               with it a P2C pair counts as C2C, within PXB
 *   2.29 on     the default level is P2C when NCCL_NET_GDR_C2C is 1, PXB
 *               when 0; only the GPU's nearest NICs become P2C
 * The names NCCL_NET_GDR_LEVEL takes, and their order, are the version's
 * own (P2C came after PXN in 2.27.3 and before it from 2.27.5). Pure
 * functions, so every version is tested on any machine.
 */
#ifndef GDX_GDR_RULE_H
#define GDX_GDR_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "topo/gdx_topo.h"

/* NCCL's path types, in the newest version's order (topoPathTypeStr). */
enum gdx_nccl_path {
	GDX_NCCL_LOC,
	GDX_NCCL_NVL,
	GDX_NCCL_NVB,
	GDX_NCCL_C2C,
	GDX_NCCL_PIX,
	GDX_NCCL_PXB,
	GDX_NCCL_P2C,
	GDX_NCCL_PXN,
	GDX_NCCL_PHB,
	GDX_NCCL_SYS,
	GDX_NCCL_NPATHS,
	GDX_NCCL_UNKNOWN = -1, /* the pair cannot be placed (no PCI device) */
};

/* NCCL's version code (2.28.9 is 22809): the newest whose rule this file
 * knows, which an unknown version is judged by. */
#define GDX_GDR_RULE_NEWEST 23007

struct gdx_gdr_rule {
	int version;	    /* the NCCL judged; 0: unknown, judged as the newest */
	bool c2c_set;	    /* NCCL_NET_GDR_C2C given, and read by NCCL as a number */
	long long c2c;	    /* its value when set */
	char level_env[32]; /* NCCL_NET_GDR_LEVEL as given, "" when unset */
};

/* The rule with NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_C2C from the
 * environment, for the NCCL of that version code (0: unknown). */
void gdx_gdr_rule_init(struct gdx_gdr_rule *r, int version);

/* "P2C" and the others, as NCCL writes them; "?" for UNKNOWN. */
const char *gdx_nccl_path_name(enum gdx_nccl_path p);

/* NCCL_NET_GDR_C2C as that NCCL applies it (its default when unset; 0
 * before 2.26, which has no such setting). */
bool gdx_gdr_rule_c2c(const struct gdx_gdr_rule *r);

/* The level in effect: the user's, else the version's default. */
enum gdx_nccl_path gdx_gdr_rule_level(const struct gdx_gdr_rule *r);

/*
 * Whether that NCCL uses GPUDirect RDMA on the pair: 1 yes, 0 no, -1 when
 * it depends on a C2C attachment that is unknown (c2c -1). *type_p gets the
 * path type with c2c as given (without C2C when unknown).
 */
int gdx_gdr_rule_within(const struct gdx_gdr_rule *r, enum gdx_path cls, int c2c, bool nearest,
			enum gdx_nccl_path *type_p);

/* "NCCL 2.28.9" or "NCCL of unknown version (judged as 2.30)". */
void gdx_gdr_rule_nccl(const struct gdx_gdr_rule *r, char *buf, size_t len);

/* The level and where it came from: "NCCL_NET_GDR_LEVEL=PHB (set)",
 * "NCCL_NET_GDR_LEVEL=P2C (NCCL's default with NCCL_NET_GDR_C2C=1)". */
void gdx_gdr_rule_level_why(const struct gdx_gdr_rule *r, char *buf, size_t len);

/* For the tests only: no other file of the plugin uses what follows. */

/* NCCL_NET_GDR_LEVEL as that NCCL reads it: a name of its table (exactly:
 * NCCL compares case-sensitively) or an old numeral; -1 when unset or a
 * value it ignores, which *ignored then says (when not NULL). */
int gdx_gdr_rule_user_level(const struct gdx_gdr_rule *r, bool *ignored);

#endif
