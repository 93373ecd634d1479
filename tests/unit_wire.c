/* SPDX-License-Identifier: MIT */
/* The listen handle, the hello and the metadata: packing and refusal. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>

#include <gdx/gdx_wire.h>

#include "gdx_test.h"

static void test_handle_roundtrip(void)
{
	struct gdx_handle h;
	uint8_t ip[4] = {198, 18, 0, 1};
	char why[256] = "";

	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 1);
	ASSERT(sizeof(h) <= NCCL_NET_HANDLE_MAXSIZE);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), 0);
	ASSERT_EQ(ntohs(h.port), 4242);
	ASSERT_EQ(memcmp(h.addr, ip, 4), 0);
	ASSERT_EQ(le64toh(h.nonce), 0x1234);
	ASSERT_EQ(le16toh(h.nrails), 1);
	/* the listener's rail count, which the connector sizes its QPs by */
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, GDX_MAX_RAILS);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), 0);
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 0);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "announces 0 rails");
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, GDX_MAX_RAILS + 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
}

static void test_handle_wrong_magic_and_version(void)
{
	struct gdx_handle h;
	uint8_t ip[4] = {127, 0, 0, 1};
	uint8_t ip16[16] = {0};
	char why[256];

	gdx_handle_pack(&h, AF_INET, ip, htons(1), 0, 1, 1);
	h.version = htole32(GDX_WIRE_VERSION + 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "version 3"); /* the handle's, and ours */
	ASSERT_STR_CONTAINS(why, "version 2");
	gdx_handle_pack(&h, AF_INET, ip, htons(1), 0, 1, 1);
	h.magic = htole64(0x4e43434c49424844ULL);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "0x4e43434c49424844");
	ASSERT_STR_CONTAINS(why, "0x31307465786e6467");
	/* All zeros: what a handle from another plugin might look like. */
	memset(&h, 0, sizeof(h));
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	gdx_handle_pack(&h, AF_INET, ip, 0, 0, 1, 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	gdx_handle_pack(&h, 99, ip16, htons(1), 0, 1, 1); /* not AF_INET: 16 address bytes */
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
}

static void test_hello(void)
{
	struct gdx_wire_hello h;
	char why[256];

	gdx_wire_hello_pack(&h, 77, 1);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), 0);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 78, why, sizeof(why)), -EPROTO);
	ASSERT_STR_CONTAINS(why, "nonce");
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h) - 1, 77, why, sizeof(why)), -EPROTO);
	h.version = htole32(9);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "version 9");
	gdx_wire_hello_pack(&h, 77, 1);
	h.meta_len = htole32(0x7fffffff);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), -EPROTO);
	ASSERT_STR_CONTAINS(why, "2147483647 bytes of metadata");
}

static struct gdx_wire_meta good_meta(void)
{
	struct gdx_wire_meta m;

	memset(&m, 0, sizeof(m));
	m.nrails = 2;
	m.max_recvs = 1;
	m.fifo_addr = 0x7f0012345000ULL;
	m.fifo_rkey = 0xabcd;
	strcpy(m.dev_name, "rxe0");
	for (int i = 0; i < 2; i++) {
		m.rails[i].qpn = 0x11 + (uint32_t)i;
		m.rails[i].psn = 0x123456;
		m.rails[i].link_layer = 2;
		m.rails[i].mtu = 3;
		m.rails[i].gid[15] = (uint8_t)i;
	}
	return m;
}

static void test_meta_roundtrip(void)
{
	struct gdx_wire_meta in = good_meta(), wire, out;
	char why[256];

	gdx_wire_meta_pack(&wire, &in);
	ASSERT_EQ(gdx_wire_meta_unpack(&wire, sizeof(wire), &out, why, sizeof(why)), 0);
	ASSERT_EQ(memcmp(&in, &out, sizeof(in)), 0);
}

static void expect_meta_refused(struct gdx_wire_meta m, const char *needle)
{
	struct gdx_wire_meta wire, out;
	char why[256] = "";

	gdx_wire_meta_pack(&wire, &m);
	ASSERT_EQ(gdx_wire_meta_unpack(&wire, sizeof(wire), &out, why, sizeof(why)), -EPROTO);
	ASSERT_STR_CONTAINS(why, needle);
}

static void test_meta_refusals(void)
{
	struct gdx_wire_meta m = good_meta(), out;
	char why[256];

	m.nrails = 0;
	expect_meta_refused(m, "0 rails");
	m.nrails = GDX_MAX_RAILS + 1;
	expect_meta_refused(m, "9 rails");
	m = good_meta();
	m.rails[1].mtu = 6;
	expect_meta_refused(m, "MTU");
	m = good_meta();
	m.rails[0].link_layer = 0;
	expect_meta_refused(m, "link layer");
	m = good_meta();
	m.rails[1].qpn = 0;
	expect_meta_refused(m, "QP number");
	m = good_meta();
	m.max_recvs = 1000;
	expect_meta_refused(m, "max_recvs");
	ASSERT_EQ(gdx_wire_meta_unpack(&m, sizeof(m) - 8, &out, why, sizeof(why)), -EPROTO);
	/* An unterminated name is cut, never read past. */
	m = good_meta();
	memset(m.dev_name, 'A', sizeof(m.dev_name));
	gdx_wire_meta_pack(&out, &m);
	ASSERT_EQ(gdx_wire_meta_unpack(&out, sizeof(out), &out, why, sizeof(why)), 0);
	ASSERT_EQ(strlen(out.dev_name), GDX_DEV_NAME_MAX - 1);
}

static void test_cts_layout(void)
{
	ASSERT_EQ(sizeof(struct gdx_cts), 64);
	/* The sender polls seq: it must be the last word written. */
	ASSERT_EQ(offsetof(struct gdx_cts, seq), 60);
}

GDX_TESTS_MAIN(TEST(test_handle_roundtrip, 5), TEST(test_handle_wrong_magic_and_version, 5),
	       TEST(test_hello, 5), TEST(test_meta_roundtrip, 5), TEST(test_meta_refusals, 5),
	       TEST(test_cts_layout, 5))
