/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gdx_gid.h"
#include "sys/gdx_sysfs.h"

bool gdx_gid_is_zero(const uint8_t raw[16])
{
	static const uint8_t zero[16];

	return memcmp(raw, zero, 16) == 0;
}

bool gdx_gid_is_link_local(const uint8_t raw[16])
{
	return raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80;
}

bool gdx_gid_is_ipv4(const uint8_t raw[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(raw, prefix, sizeof(prefix)) == 0;
}

int gdx_gid_parse(const char *s, uint8_t raw[16])
{
	unsigned g[8];
	char tail;

	if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%c", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
		   &g[6], &g[7], &tail) < 8)
		return -EINVAL;
	for (int i = 0; i < 8; i++) {
		raw[2 * i] = (uint8_t)(g[i] >> 8);
		raw[2 * i + 1] = (uint8_t)g[i];
	}
	return 0;
}

void gdx_gid_str(const uint8_t raw[16], char *buf, unsigned len)
{
	if (!inet_ntop(AF_INET6, raw, buf, len))
		snprintf(buf, len, "?");
}

int gdx_gid_read_table(const char *sysfs_root, const char *dev, int port,
		       struct gdx_gid_entry *table, int max)
{
	char path[512], line[128];
	int n = 0;

	for (int i = 0; i < GDX_GID_TABLE_MAX && n < max; i++) {
		struct gdx_gid_entry *e = &table[n];
		int ret;

		snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/gids/%d", dev, port, i);
		ret = gdx_sysfs_read_line_in(sysfs_root, path, line, sizeof(line));
		if (ret == -ENOENT)
			break; /* past the end of the table */
		if (ret || gdx_gid_parse(line, e->raw))
			continue;
		snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
			 port, i);
		if (gdx_sysfs_read_line_in(sysfs_root, path, line, sizeof(line)))
			continue; /* EINVAL: slot not populated */
		e->index = i;
		e->roce_version = strstr(line, "v2") ? 2 : 1;
		n++;
	}
	return n ? n : -ENOENT;
}

int gdx_gid_range_parse(const char *s, struct gdx_gid_range *r)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = s ? strchr(s, '/') : NULL;
	char *end;
	long bits;

	memset(r, 0, sizeof(*r));
	if (!s || !*s)
		return 0;
	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	bits = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || *end)
		return -EINVAL;
	if (inet_pton(AF_INET, addr, r->addr + 12) == 1) {
		/* an IPv4 range matches the IPv4-mapped GIDs ::ffff:a.b.c.d */
		if (bits < 0 || bits > 32)
			return -EINVAL;
		r->addr[10] = r->addr[11] = 0xff;
		r->bits = 96 + (int)bits;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		if (bits < 0 || bits > 128)
			return -EINVAL;
		r->bits = (int)bits;
	} else {
		return -EINVAL;
	}
	r->set = true;
	return 0;
}

/* True when there is no range, or the GID lies in it. */
static bool gdx_gid_in_range(const uint8_t raw[16], const struct gdx_gid_range *r)
{
	int full, rest;

	if (!r || !r->set)
		return true;
	full = r->bits / 8;
	rest = r->bits % 8;
	if (memcmp(raw, r->addr, (size_t)full))
		return false;
	return !rest || ((raw[full] ^ r->addr[full]) & (0xff00 >> rest) & 0xff) == 0;
}

static int gdx_gid_score(const struct gdx_gid_entry *e, int family, int roce_version,
			 const struct gdx_gid_range *range)
{
	int score = 1;

	if (gdx_gid_is_zero(e->raw) || !gdx_gid_in_range(e->raw, range))
		return 0;
	if (!gdx_gid_is_link_local(e->raw))
		score += 4;
	if (e->roce_version == roce_version)
		score += 2;
	if (gdx_gid_is_ipv4(e->raw) == (family == 4))
		score += 1;
	return score;
}

int gdx_gid_choose(const struct gdx_gid_entry *table, int n, int family, int roce_version,
		   const struct gdx_gid_range *range)
{
	int best = -1, best_score = 0;

	for (int i = 0; i < n; i++) {
		int s = gdx_gid_score(&table[i], family, roce_version, range);

		if (s > best_score) {
			best = i;
			best_score = s;
		}
	}
	return best;
}
