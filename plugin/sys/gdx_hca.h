/* SPDX-License-Identifier: MIT */
/*
 * The device filter, in NCCL_IB_HCA's syntax: "mlx5_0:1,mlx5_1"; a leading '^'
 * excludes the listed devices; a leading '=' (after any '^') makes names exact
 * instead of prefixes, so "=mlx5_1" does not also match mlx5_10. An entry may
 * go on to a rail and a plane id, "mlx5_0:1:3:0" (NCCL 2.30's railId and
 * planeId; an empty field, as in "mlx5_0::3", is any port / no id).
 */
#ifndef GDX_HCA_H
#define GDX_HCA_H

#include <stdbool.h>

#define GDX_HCA_MAX_ENTRIES 32
#define GDX_HCA_NAME_MAX    64

struct gdx_hca_entry {
	char name[GDX_HCA_NAME_MAX];
	int port;  /* -1: any port */
	int rail;  /* -1: none given */
	int plane; /* -1: none given */
};

struct gdx_hca_filter {
	bool exclude;
	bool exact;
	int n; /* 0: everything passes */
	struct gdx_hca_entry entries[GDX_HCA_MAX_ENTRIES];
};

/* with_ports: "name:port" entries (devices); without, names may contain ":"
 * (interfaces such as eth0:1). Returns 0, or -EINVAL with *err_p pointing at a static description
 * of what was wrong (empty name, bad port, rail or plane, too many entries, name too long). */
int gdx_hca_filter_parse(const char *spec, bool with_ports, struct gdx_hca_filter *f,
			 const char **err_p);

bool gdx_hca_filter_match(const struct gdx_hca_filter *f, const char *dev, int port);
/* The entry of an including list that matches (its rail and plane), or NULL. */
const struct gdx_hca_entry *gdx_hca_filter_entry(const struct gdx_hca_filter *f, const char *dev,
						 int port);

#endif
