/* SPDX-License-Identifier: MIT */
/*
 * RoCE GID choice. The table comes from sysfs (so tests feed a fixture tree);
 * the choice itself is a pure function of the table and the preferences.
 */
#ifndef GDX_GID_H
#define GDX_GID_H

#include <stdbool.h>
#include <stdint.h>

#define GDX_GID_TABLE_MAX 256

struct gdx_gid_entry {
	int index;
	uint8_t raw[16];
	int roce_version; /* 1 or 2; 0 when the type could not be read */
};

/* Reads <sysfs_root>/class/infiniband/<dev>/ports/<port>/gids/<i> and
 * gid_attrs/types/<i>. Entries whose type cannot be read (unpopulated slots
 * return EINVAL) are skipped. Returns the number of entries, or -errno. */
int gdx_gid_read_table(const char *sysfs_root, const char *dev, int port,
		       struct gdx_gid_entry *table, int max);

bool gdx_gid_is_zero(const uint8_t raw[16]);

/* NCCL_IB_ADDR_RANGE's "address/bits", IPv4 or IPv6; set false when empty. */
struct gdx_gid_range {
	bool set;
	uint8_t addr[16]; /* IPv4 as ::ffff:a.b.c.d, as RoCE GIDs carry it */
	int bits;	  /* of addr that must match */
};

/* 0 (an empty string is no range) or -EINVAL for a malformed one. */
int gdx_gid_range_parse(const char *s, struct gdx_gid_range *r);

/*
 * Best GID for RoCE: configured, inside range (NULL or unset: anywhere), not
 * link-local, of the preferred RoCE version (2) and address family (4 or 6),
 * lowest index on a tie. A link-local or other-version GID is taken only
 * when nothing better exists. Returns the position in table, or -1 when no
 * GID is usable.
 */
int gdx_gid_choose(const struct gdx_gid_entry *table, int n, int family, int roce_version,
		   const struct gdx_gid_range *range);

void gdx_gid_str(const uint8_t raw[16], char *buf, unsigned len);

/* For the tests only: no other file of the plugin uses what follows. */

bool gdx_gid_is_link_local(const uint8_t raw[16]);
bool gdx_gid_is_ipv4(const uint8_t raw[16]);
/* Parses sysfs's "fe80:0000:...:0001" form. */
int gdx_gid_parse(const char *s, uint8_t raw[16]);

#endif
