/* SPDX-License-Identifier: MIT */
/* Subnet-aware device choice's rule (gdx_subnet.c): which GIDs share a
 * subnet, for IPv4-mapped GIDs by their address and for others by the whole
 * GID, and when a device's ports all reach a listener's. */
#include <string.h>

#include "dev/gdx_subnet.h"

#include "gdx_test.h"

static void v4(uint8_t g[16], int a, int b, int c, int d)
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	g[12] = (uint8_t)a;
	g[13] = (uint8_t)b;
	g[14] = (uint8_t)c;
	g[15] = (uint8_t)d;
}

static void test_same_subnet(void)
{
	uint8_t a[16], b[16], z[16] = {0}, x[16] = {0}, y[16] = {0};

	v4(a, 198, 18, 0, 1);
	v4(b, 198, 18, 0, 2);
	ASSERT(gdx_subnet_same(a, b, 24));
	ASSERT(gdx_subnet_same(a, b, 30)); /* a /30 link: .1 and .2 */
	ASSERT(!gdx_subnet_same(a, b, 32));
	v4(b, 198, 18, 1, 2);
	ASSERT(!gdx_subnet_same(a, b, 24));
	ASSERT(gdx_subnet_same(a, b, 23));
	ASSERT(gdx_subnet_same(a, b, 16));
	ASSERT(!gdx_subnet_same(a, b, 100)); /* 32 bits at most: the addresses differ */
	ASSERT(gdx_subnet_same(a, a, 100));
	v4(b, 198, 18, 0, 2);
	ASSERT(!gdx_subnet_same(a, z, 1)); /* a zero GID is no address */
	ASSERT(!gdx_subnet_same(z, z, 24));
	/* IPv6 and InfiniBand GIDs: the whole GID's prefix */
	x[0] = y[0] = 0xfd;
	x[7] = 1;
	y[7] = 2;
	x[15] = y[15] = 9;
	ASSERT(gdx_subnet_same(x, y, 56));
	ASSERT(!gdx_subnet_same(x, y, 64));
	ASSERT(!gdx_subnet_same(a, x, 1)); /* IPv4 against IPv6: the whole GID */
}

static void test_every_port_reaches(void)
{
	struct gdx_handle h;
	uint8_t local[2][16];

	memset(&h, 0, sizeof(h));
	v4(h.gids[0], 10, 0, 1, 1);
	v4(h.gids[1], 10, 0, 2, 1);
	v4(local[0], 10, 0, 2, 2);
	v4(local[1], 10, 0, 1, 2);
	ASSERT(gdx_subnet_reaches((const uint8_t(*)[16])local, 2, &h, 24));
	v4(local[1], 10, 0, 3, 2); /* one port on a subnet the listener is not */
	ASSERT(!gdx_subnet_reaches((const uint8_t(*)[16])local, 2, &h, 24));
	ASSERT(gdx_subnet_reaches((const uint8_t(*)[16])local, 1, &h, 24));
	ASSERT(!gdx_subnet_reaches((const uint8_t(*)[16])local, 0, &h, 24));
	memset(&h, 0, sizeof(h)); /* a handle without GIDs reaches nothing */
	ASSERT(!gdx_subnet_reaches((const uint8_t(*)[16])local, 1, &h, 24));
}

GDX_TESTS_MAIN(TEST(test_same_subnet, 5), TEST(test_every_port_reaches, 5))
