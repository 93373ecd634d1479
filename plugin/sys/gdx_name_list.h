/* SPDX-License-Identifier: MIT */
/*
 * A list of names that filters devices (NCCL_GDX_HCA) or interfaces
 * (NCCL_SOCKET_IFNAME), in NCCL_IB_HCA's syntax: "mlx5_0:1,mlx5_1"; a leading
 * '^' excludes the listed names; a leading '=' (after any '^') makes names exact
 * instead of prefixes, so "=mlx5_1" does not also match mlx5_10. An entry may
 * go on to a rail and a plane id, "mlx5_0:1:3:0" (NCCL 2.30's railId and
 * planeId; an empty field, as in "mlx5_0::3", is any port / no id).
 */
#ifndef GDX_NAME_LIST_H
#define GDX_NAME_LIST_H

#include <stdbool.h>

#define GDX_NAME_LIST_MAX      32
#define GDX_NAME_LIST_NAME_MAX 64

struct gdx_name_list_entry {
	char name[GDX_NAME_LIST_NAME_MAX];
	int port;  /* -1: any port */
	int rail;  /* -1: none given */
	int plane; /* -1: none given */
};

struct gdx_name_list {
	bool exclude;
	bool exact;
	int n; /* 0: everything passes */
	struct gdx_name_list_entry entries[GDX_NAME_LIST_MAX];
};

/* with_ports: "name:port" entries (devices); without, names may contain ":"
 * (interfaces such as eth0:1). Returns 0, or -EINVAL with *err_p pointing at a static description
 * of what was wrong (empty name, bad port, rail or plane, too many entries, name too long). */
int gdx_name_list_parse(const char *spec, bool with_ports, struct gdx_name_list *f,
			const char **err_p);

bool gdx_name_list_match(const struct gdx_name_list *f, const char *dev, int port);
/* The entry of an including list that matches (its rail and plane), or NULL. */
const struct gdx_name_list_entry *gdx_name_list_find(const struct gdx_name_list *f, const char *dev,
						     int port);

#endif
