/* SPDX-License-Identifier: MIT */
/* The listen handle, the hello, the metadata and the immediates: packing,
 * every form, and refusal. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>

#include "wire/gdx_wire.h"

#include "gdx_test.h"

#define VERSION_STR_(v) "version " #v
#define VERSION_STR(v)	VERSION_STR_(v)
/* "version N" as the plugin writes its own in a refusal */
#define THIS_VERSION VERSION_STR(GDX_WIRE_VERSION)

static void test_handle_roundtrip(void)
{
	struct gdx_handle h;
	uint8_t ip[4] = {198, 18, 0, 1};
	char why[256] = "";

	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 1, 4);
	ASSERT(sizeof(h) <= NCCL_NET_HANDLE_MAXSIZE);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), 0);
	ASSERT_EQ(ntohs(h.port), 4242);
	ASSERT_EQ(memcmp(h.addr, ip, 4), 0);
	ASSERT_EQ(le64toh(h.nonce), 0x1234);
	ASSERT_EQ(le16toh(h.nrails), 1);
	ASSERT_EQ(le16toh(h.qps), 4); /* the listener's QPs per rail */
	/* the listener's rail count, which the connector sizes its QPs by */
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, GDX_MAX_RAILS, 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), 0);
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 0, 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "announces 0 rails");
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, GDX_MAX_RAILS + 1, 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 1, 0);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "0 QPs per rail");
	gdx_handle_pack(&h, AF_INET, ip, htons(4242), 0, 0x1234, 1, GDX_MAX_QPS + 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
}

static void test_handle_wrong_magic_and_version(void)
{
	struct gdx_handle h;
	uint8_t ip[4] = {127, 0, 0, 1};
	uint8_t ip16[16] = {0};
	char why[256];

	gdx_handle_pack(&h, AF_INET, ip, htons(1), 0, 1, 1, 1);
	h.version = htole32(GDX_WIRE_VERSION + 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "version 4"); /* the handle's, and ours */
	ASSERT_STR_CONTAINS(why, THIS_VERSION);
	gdx_handle_pack(&h, AF_INET, ip, htons(1), 0, 1, 1, 1);
	h.magic = htole64(0x4e43434c49424844ULL);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "0x4e43434c49424844");
	ASSERT_STR_CONTAINS(why, "0x31307465786e6467");
	/* All zeros: what a handle from another plugin might look like. */
	memset(&h, 0, sizeof(h));
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EPROTONOSUPPORT);
	gdx_handle_pack(&h, AF_INET, ip, 0, 0, 1, 1, 1);
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
	gdx_handle_pack(&h, 99, ip16, htons(1), 0, 1, 1, 1); /* not AF_INET: 16 address bytes */
	ASSERT_EQ(gdx_handle_check(&h, why, sizeof(why)), -EINVAL);
}

static void test_hello(void)
{
	struct gdx_wire_hello h;
	char why[256];

	gdx_wire_hello_pack(&h, 77, 1);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), 0);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 78, why, sizeof(why)), -EACCES);
	ASSERT_STR_CONTAINS(why, "nonce");
	ASSERT(!strstr(why, "77") && !strstr(why, "78") && !strstr(why, "4d") &&
	       !strstr(why, "4e")); /* neither nonce, in decimal or hex */
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h) - 1, 77, why, sizeof(why)), -EPROTO);
	h.version = htole32(9);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), -EPROTONOSUPPORT);
	ASSERT_STR_CONTAINS(why, "version 9");
	gdx_wire_hello_pack(&h, 77, 1);
	h.meta_len = htole32(0x7fffffff);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 77, why, sizeof(why)), -EPROTO);
	ASSERT_STR_CONTAINS(why, "2147483647 bytes of metadata");
}

/* A listener's refusal: its magic and version, the reason, and no nonce. */
static void test_refusal(void)
{
	struct gdx_wire_hello h;
	char why[256];

	gdx_wire_refusal_pack(&h, GDX_REFUSED_NONCE);
	ASSERT_EQ(le64toh(h.magic), GDX_WIRE_MAGIC);
	ASSERT_EQ(le32toh(h.version), GDX_WIRE_VERSION);
	ASSERT_EQ(h.nonce, 0);
	ASSERT_EQ(le32toh(h.refused), GDX_REFUSED_NONCE);
	/* whatever nonce the reader expects, a refusal is read as one */
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 0, why, sizeof(why)), -ECONNREFUSED);
	ASSERT_STR_CONTAINS(why, "stale handle");
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 99, why, sizeof(why)), -ECONNREFUSED);
	for (uint32_t r = GDX_REFUSED_VERSION; r <= GDX_REFUSED_LAST + 1; r++)
		ASSERT(strlen(gdx_wire_refusal_str(r)) > 10);
	ASSERT_STR_CONTAINS(gdx_wire_refusal_str(GDX_REFUSED_LAST + 1), "does not know");
	/* another version's refusal names both versions, as any hello does */
	h.version = htole32(GDX_WIRE_VERSION + 1);
	ASSERT_EQ(gdx_wire_hello_check(&h, sizeof(h), 0, why, sizeof(why)), -EPROTONOSUPPORT);
}

static struct gdx_wire_meta good_meta(void)
{
	struct gdx_wire_meta m;

	memset(&m, 0, sizeof(m));
	m.nrails = 2;
	m.qps_per_rail = 3;
	m.max_recvs = 1;
	m.ctrl_addr = 0x7f0012345000ULL;
	strcpy(m.dev_name, "rxe0");
	for (int i = 0; i < 2; i++) {
		m.rails[i].psn = 0x123456;
		m.rails[i].link_layer = 2;
		m.rails[i].mtu = 3;
		m.rails[i].gid[15] = (uint8_t)i;
		m.rails[i].ctrl_rkey = 0xabcd + (uint32_t)i;
		m.rails[i].ece = (struct gdx_wire_ece){
			.vendor_id = 0x2c9, .options = 0x30000000, .comp_mask = 1, .supported = 1};
	}
	for (int i = 0; i < 6; i++)
		m.qpn[i] = 0x11 + (uint32_t)i;
	return m;
}

static void test_meta_roundtrip(void)
{
	struct gdx_wire_meta in = good_meta(), wire, out;
	char why[256];

	in.flags = GDX_META_F_RECORDS | 0x8000; /* a later version's bit rides along */
	gdx_wire_meta_pack(&wire, &in);
	ASSERT_EQ(gdx_wire_meta_unpack(&wire, sizeof(wire), &out, why, sizeof(why)), 0);
	ASSERT_EQ(memcmp(&in, &out, sizeof(in)), 0);
	/* little-endian on the wire, where 0.4.0 sent a zero reserved word */
	ASSERT_EQ(((const uint8_t *)&wire)[offsetof(struct gdx_wire_meta, flags)], 1);
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
	m.qpn[4] = 0; /* QP 1 of rail 1 */
	expect_meta_refused(m, "QP 1 of rail 1 has QP number 0x0");
	m = good_meta();
	m.qpn[5] = 0x1000000;
	expect_meta_refused(m, "QP number 0x1000000");
	m = good_meta();
	m.qps_per_rail = 0;
	expect_meta_refused(m, "0 QPs on each of 2 rails");
	m.qps_per_rail = 65; /* 130 in all */
	expect_meta_refused(m, "65 QPs on each of 2 rails");
	m.qps_per_rail = 0x80000001u; /* overflows a product */
	expect_meta_refused(m, "QPs on each of 2 rails");
	m = good_meta();
	m.rails[0].ece.supported = 7;
	expect_meta_refused(m, "ECE flag 7");
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

/* The peer's device name reaches log lines and the live counters: what
 * unpack hands on is printable, control bytes written as \xNN. */
static void test_meta_dev_name_sanitized(void)
{
	struct gdx_wire_meta m = good_meta(), wire, out;
	char why[256];

	snprintf(m.dev_name, sizeof(m.dev_name), "rxe0\nNET/GDX plugin: fake line\x1b[2J\xff");
	gdx_wire_meta_pack(&wire, &m);
	ASSERT_EQ(gdx_wire_meta_unpack(&wire, sizeof(wire), &out, why, sizeof(why)), 0);
	ASSERT_EQ(strcmp(out.dev_name, "rxe0\\x0aNET/GDX plugin: fake line\\x1b[2J\\xff"), 0);
	/* escapes that do not fit in the field are left out whole */
	memset(m.dev_name, '\n', sizeof(m.dev_name));
	gdx_wire_meta_pack(&wire, &m);
	ASSERT_EQ(gdx_wire_meta_unpack(&wire, sizeof(wire), &out, why, sizeof(why)), 0);
	ASSERT_EQ(strlen(out.dev_name), 60); /* 15 escapes of 4 bytes */
	for (const char *p = out.dev_name; *p; p++)
		ASSERT(*p >= 0x20 && *p < 0x7f);
}

/* Both forms of the immediate, at their limits, and what no sender sends. */
static void test_immediates(void)
{
	struct gdx_imm im;

	ASSERT_EQ(gdx_imm_decode(gdx_imm_small(5, 1234), &im), 0);
	ASSERT(!im.chunked);
	ASSERT_EQ(im.seq, 5);
	ASSERT_EQ(im.size, 1234);
	ASSERT_EQ(im.pieces, 1);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_small(127 + 128 * 9, GDX_IMM_SMALL_MAX), &im), 0);
	ASSERT_EQ(im.seq, 127); /* seq mod 128 */
	ASSERT_EQ(im.size, GDX_IMM_SMALL_MAX);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_small(0, 0), &im), 0);
	ASSERT_EQ(im.size, 0);
	for (uint32_t n = 1; n <= GDX_IMM_MAX_PIECES; n += 127)
		for (uint32_t k = 0; k<n; k += n> 1 ? n - 1 : 1) {
			ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(300, k, n, 0), &im), 0);
			ASSERT(im.chunked);
			ASSERT_EQ(im.seq, 300 % 128);
			ASSERT_EQ(im.piece, k);
			ASSERT_EQ(im.pieces, n);
			ASSERT_EQ(im.flags, 0);
		}
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 0, 1, GDX_IMM_F_GROUP), &im), 0);
	ASSERT_EQ(im.flags, GDX_IMM_F_GROUP);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 0, 1, GDX_IMM_F_REFUSED), &im), 0);
	ASSERT_EQ(im.flags, GDX_IMM_F_REFUSED);
	/* refused: the low byte set, a piece past the count, a group in
	 * pieces, a refused group, a refused piece */
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 0, 1, 0) | 1, &im), -EPROTO);
	ASSERT_EQ(gdx_imm_decode(1u << 31 | 5u << 17 | 2u << 10, &im), -EPROTO);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 0, 2, GDX_IMM_F_GROUP), &im), -EPROTO);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 0, 1, GDX_IMM_F_GROUP | GDX_IMM_F_REFUSED), &im),
		  -EPROTO);
	ASSERT_EQ(gdx_imm_decode(gdx_imm_chunk(1, 1, 2, GDX_IMM_F_REFUSED), &im), -EPROTO);
}

static void test_cts_layout(void)
{
	ASSERT_EQ(sizeof(struct gdx_cts), 64);
	/* The sender polls seq: it must be the last word written. */
	ASSERT_EQ(offsetof(struct gdx_cts, seq), 60);
}

GDX_TESTS_MAIN(TEST(test_handle_roundtrip, 5), TEST(test_handle_wrong_magic_and_version, 5),
	       TEST(test_hello, 5), TEST(test_refusal, 5), TEST(test_meta_roundtrip, 5),
	       TEST(test_meta_refusals, 5), TEST(test_meta_dev_name_sanitized, 5),
	       TEST(test_immediates, 5), TEST(test_cts_layout, 5))
