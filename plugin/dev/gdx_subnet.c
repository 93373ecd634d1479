/* SPDX-License-Identifier: MIT */
/* Subnet-aware device choice (gdx_subnet.h). */
#include <string.h>

#include "dev/gdx_dev.h"
#include "dev/gdx_dev_gid.h"
#include "dev/gdx_gid.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "dev/gdx_subnet.h"

/* The WARN that no device reaches a listener's subnets was given. */
static bool gdx_subnet_warned;

static bool gdx_subnet_prefix_eq(const uint8_t *a, const uint8_t *b, int bits)
{
	int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)bytes))
		return false;
	return !rest || !((a[bytes] ^ b[bytes]) & (0xff << (8 - rest)));
}

bool gdx_subnet_same(const uint8_t a[16], const uint8_t b[16], int prefix)
{
	if (gdx_gid_is_zero(a) || gdx_gid_is_zero(b))
		return false;
	if (gdx_gid_is_ipv4(a) && gdx_gid_is_ipv4(b))
		return gdx_subnet_prefix_eq(a + 12, b + 12, prefix > 32 ? 32 : prefix);
	return gdx_subnet_prefix_eq(a, b, prefix > 128 ? 128 : prefix);
}

bool gdx_subnet_reaches(const uint8_t (*local)[16], int n, const struct gdx_handle *h, int prefix)
{
	for (int i = 0; i < n; i++) {
		bool any = false;

		for (int k = 0; k < GDX_HANDLE_GIDS && !any; k++)
			any = gdx_subnet_same(local[i], h->gids[k], prefix);
		if (!any)
			return false;
	}
	return n > 0;
}

/* Whether one of n GIDs is one of the handle's. */
static bool gdx_subnet_listeners_own(const uint8_t (*gids)[16], int n, const struct gdx_handle *h)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < GDX_HANDLE_GIDS; k++)
			if (!memcmp(gids[i], h->gids[k], 16))
				return true;
	return false;
}

/* The GIDs of v's RoCE members; how many (0 when one has none, or one is
 * not RoCE: the setting is RoCE's). */
static int gdx_subnet_gids(const struct gdx_vdev *v, uint8_t (*out)[16], int max)
{
	int n = 0;

	for (int i = 0; i < v->nmembers && n < max; i++) {
		union ibv_gid gid;
		int index;

		if (v->members[i]->link_layer != IBV_LINK_LAYER_ETHERNET ||
		    gdx_dev_gid(v->members[i], &index, &gid))
			return 0;
		memcpy(out[n++], gid.raw, 16);
	}
	return n;
}

/* The first device other than dev whose every port shares a subnet with
 * the listener's; own: the listener's own ports too. -1 when none does. */
static int gdx_subnet_find(int dev, const struct gdx_handle *h, bool own)
{
	uint8_t gids[GDX_MAX_RAILS][16];

	for (int d = 0; d < gdx_vdevs_count(); d++) {
		const struct gdx_vdev *o = gdx_vdev_get(d);
		int n;

		if (d == dev || !o)
			continue;
		n = gdx_subnet_gids(o, gids, GDX_MAX_RAILS);
		if (n &&
		    gdx_subnet_reaches((const uint8_t(*)[16])gids, n, h,
				       gdx_params.subnet_prefix_len) &&
		    (own || !gdx_subnet_listeners_own((const uint8_t(*)[16])gids, n, h)))
			return d;
	}
	return -1;
}

void gdx_subnet_fill(struct gdx_handle *h, int dev)
{
	const struct gdx_vdev *v = gdx_vdev_get(dev);

	if (gdx_params.subnet_aware_routing && v)
		gdx_subnet_gids(v, h->gids, GDX_HANDLE_GIDS);
}

int gdx_subnet_pick(int dev, const struct gdx_handle *h)
{
	uint8_t gids[GDX_MAX_RAILS][16], none[16] = {0};
	char want[64];
	int n, prefix = gdx_params.subnet_prefix_len;
	const struct gdx_vdev *v;

	if (!gdx_params.subnet_aware_routing || !memcmp(h->gids[0], none, 16) ||
	    !(v = gdx_vdev_get(dev)))
		return dev;
	n = gdx_subnet_gids(v, gids, GDX_MAX_RAILS);
	if (n && gdx_subnet_reaches((const uint8_t(*)[16])gids, n, h, prefix))
		return dev;
	/* A port with the listener's very GID is the listener's own (the two
	 * ends on one node): another on its subnet first, then that one. */
	for (int pass = 0; pass < 2; pass++) {
		int d = gdx_subnet_find(dev, h, pass == 1);

		if (d < 0)
			continue;
		gdx_gid_str(h->gids[0], want, sizeof(want));
		GDX_INFO(NCCL_NET,
			 "connect: device %d (%s) is not on the listener's subnets (%s/%d...); "
			 "device %d (%s) is, and connects instead (NCCL_GDX_SUBNET_AWARE_ROUTING)",
			 dev, v->name, want, prefix, d, gdx_vdev_get(d)->name);
		return d;
	}
	/* once: NCCL connects every channel to every peer */
	if (__atomic_exchange_n(&gdx_subnet_warned, true, __ATOMIC_RELAXED))
		return dev;
	gdx_gid_str(h->gids[0], want, sizeof(want));
	GDX_WARN("connect: no device shares a subnet (/%d) with the listener's ports (%s...); "
		 "device %d (%s) connects as NCCL gave it, and may not reach it: check the "
		 "cabling and NCCL_GDX_SUBNET_PREFIX_LEN",
		 prefix, want, dev, v->name);
	return dev;
}
