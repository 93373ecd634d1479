/* SPDX-License-Identifier: MIT */
/*
 * The RDMA netlink messages of the NIC counters (gdx_qpstat.h), without a
 * socket: the requests as the kernel reads them, and answers built here by
 * hand, whole, cut short, lying about their lengths, missing attributes or
 * with more counters than a slot holds: each parsed, or refused with
 * -EBADMSG, never read past its end.
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "stats/gdx_qpstat.h"

#include "gdx_test.h"

/* A message under construction: attributes appended, nests opened and closed. */
struct msg {
	char b[65536] __attribute__((aligned(8)));
	size_t len;
	size_t nest[4];
	int depth;
};

static void msg_start(struct msg *m, uint16_t type, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;

	memset(m, 0, sizeof(*m));
	h->nlmsg_type = type;
	h->nlmsg_seq = seq;
	m->len = NLMSG_HDRLEN;
}

static void msg_attr(struct msg *m, uint16_t type, const void *val, size_t vlen)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);

	ASSERT(m->len + NLA_ALIGN(NLA_HDRLEN + vlen) <= sizeof(m->b));
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + vlen);
	if (vlen) /* a nest opens with no value (and val NULL) */
		memcpy(m->b + m->len + NLA_HDRLEN, val, vlen);
	m->len += NLA_ALIGN(NLA_HDRLEN + vlen);
}

static void msg_u32(struct msg *m, uint16_t type, uint32_t v)
{
	msg_attr(m, type, &v, sizeof(v));
}

static void msg_nest(struct msg *m, uint16_t type)
{
	m->nest[m->depth++] = m->len;
	msg_attr(m, type | NLA_F_NESTED, NULL, 0);
}

static void msg_nest_end(struct msg *m)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->nest[--m->depth]);

	a->nla_len = (uint16_t)(m->len - m->nest[m->depth]);
}

/* Bytes with no attribute header: an error's errno, a done's int. */
static void msg_raw(struct msg *m, int32_t v)
{
	memcpy(m->b + m->len, &v, sizeof(v));
	m->len += sizeof(v);
}

static size_t msg_end(struct msg *m)
{
	((struct nlmsghdr *)m->b)->nlmsg_len = (uint32_t)m->len;
	return m->len;
}

static void msg_counter(struct msg *m, const char *name, uint64_t v)
{
	msg_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	msg_attr(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name, strlen(name) + 1);
	msg_attr(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &v, sizeof(v));
	msg_nest_end(m);
}

/* A port's totals as rxe's kernel answers `rdma statistic show link rxe0/1`. */
static size_t port_answer(struct msg *m, uint32_t seq)
{
	msg_start(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), seq);
	msg_u32(m, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	msg_attr(m, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0", 5);
	msg_u32(m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	msg_nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	msg_counter(m, "sent_pkts", 123456);
	msg_counter(m, "duplicate_request", 7);
	msg_counter(m, "rcvd_seq_err", 40);
	msg_counter(m, "retry_exceeded_err", 1);
	msg_nest_end(m);
	return msg_end(m);
}

static struct gdx_qpstat_reply r;

static void test_port_answer(void)
{
	static struct msg m;
	size_t len = port_answer(&m, 9), used;

	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), 0);
	ASSERT_EQ(used, len);
	ASSERT_EQ(r.kind, GDX_QPSTAT_MSG_DATA);
	ASSERT_EQ(r.seq, 9);
	ASSERT(r.has_dev && r.has_port && !r.has_counter);
	ASSERT_EQ(r.dev_index, 3);
	ASSERT_EQ(r.port, 1);
	ASSERT(!strcmp(r.dev_name, "rxe0"));
	ASSERT_EQ(r.n, 4);
	ASSERT(!strcmp(r.c[2].name, "rcvd_seq_err"));
	ASSERT_EQ(r.c[2].value, 40);
	ASSERT_EQ(r.c[0].value, 123456);
	ASSERT(!r.cut);
}

/* Two messages in one datagram (a dump), then its end. */
static void test_dump_and_done(void)
{
	static struct msg a, b;
	static char buf[65536];
	size_t la, lb, used, off = 0;

	msg_start(&a, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), 5);
	msg_u32(&a, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	msg_attr(&a, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0", 5);
	la = msg_end(&a);
	msg_start(&b, NLMSG_DONE, 5);
	msg_raw(&b, 0); /* NLMSG_DONE carries an int */
	lb = msg_end(&b);
	memcpy(buf, a.b, la);
	memcpy(buf + la, b.b, lb);
	ASSERT_EQ(gdx_qpstat_parse(buf, la + lb, &r, &used), 0);
	ASSERT_EQ(r.kind, GDX_QPSTAT_MSG_DATA);
	ASSERT(r.has_dev && r.dev_index == 0 && !strcmp(r.dev_name, "rxe0"));
	off += used;
	ASSERT_EQ(gdx_qpstat_parse(buf + off, la + lb - off, &r, &used), 0);
	ASSERT_EQ(r.kind, GDX_QPSTAT_MSG_DONE);
	off += used;
	ASSERT_EQ(off, la + lb);
	ASSERT_EQ(gdx_qpstat_parse(buf + off, 0, &r, &used), -ENODATA);
}

/* The kernel's refusal: its errno; a value no errno is: -EPROTO. */
static void test_error_answer(void)
{
	static struct msg m;
	size_t used;

	msg_start(&m, NLMSG_ERROR, 2);
	msg_raw(&m, -EPERM);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), 0);
	ASSERT_EQ(r.kind, GDX_QPSTAT_MSG_ERROR);
	ASSERT_EQ(r.err, -EPERM);
	msg_start(&m, NLMSG_ERROR, 2);
	msg_raw(&m, 77777);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), 0);
	ASSERT_EQ(r.err, -EPROTO);
	/* an error message too short for its errno */
	msg_start(&m, NLMSG_ERROR, 2);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);
}

/* A bind's answer names the counter. */
static void test_bind_answer(void)
{
	static struct msg m;
	size_t used;

	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET), 4);
	msg_u32(&m, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	msg_u32(&m, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	msg_u32(&m, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 12);
	msg_u32(&m, RDMA_NLDEV_ATTR_RES_LQPN, 0x11);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), 0);
	ASSERT(r.has_counter);
	ASSERT_EQ(r.counter_id, 12);
	ASSERT_EQ(r.n, 0);
}

/* Every cut of a whole answer, at every byte: refused or parsed, never a
 * read past the cut (ASan would say), and a cut message never taken for
 * the whole one. */
static void test_every_truncation(void)
{
	static struct msg m;
	size_t len = port_answer(&m, 1), used;

	for (size_t cut = 0; cut < len; cut++) {
		char *copy = malloc(cut ? cut : 1);
		int ret;

		memcpy(copy, m.b, cut);
		ret = gdx_qpstat_parse(copy, cut, &r, &used);
		ASSERT(ret == -EBADMSG || ret == -ENODATA);
		ASSERT(used <= cut);
		free(copy);
	}
}

/* Lengths that lie: the message's beyond the datagram, or under a header;
 * an attribute's beyond its message or under its own header. */
static void test_bad_lengths(void)
{
	static struct msg m;
	size_t len = port_answer(&m, 1), used;
	struct nlmsghdr *h = (struct nlmsghdr *)m.b;
	struct nlattr *a = (struct nlattr *)(m.b + NLMSG_HDRLEN);

	h->nlmsg_len = (uint32_t)len + 4;
	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), -EBADMSG);
	h->nlmsg_len = 3;
	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), -EBADMSG);
	h->nlmsg_len = 0xffffffff;
	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), -EBADMSG);
	h->nlmsg_len = (uint32_t)len;
	a->nla_len = 0xffff;
	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), -EBADMSG);
	a->nla_len = 2;
	ASSERT_EQ(gdx_qpstat_parse(m.b, len, &r, &used), -EBADMSG);
	/* a DEV_INDEX of 2 bytes: too short for a u32 */
	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_attr(&m, RDMA_NLDEV_ATTR_DEV_INDEX, "ab", 2);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);
}

/* A counter without its value, without its name, with a value of 4 bytes,
 * a name with no terminator or too long for a slot. */
static void test_missing_attributes(void)
{
	static struct msg m;
	char longname[200];
	uint32_t v4 = 5;
	uint64_t v = 9;
	size_t used;

	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x", 2);
	msg_nest_end(&m);
	msg_nest_end(&m);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);

	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &v, sizeof(v));
	msg_nest_end(&m);
	msg_nest_end(&m);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);

	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x", 2);
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &v4, sizeof(v4));
	msg_nest_end(&m);
	msg_nest_end(&m);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);

	memset(longname, 'n', sizeof(longname));
	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_attr(&m, RDMA_NLDEV_ATTR_DEV_NAME, longname, sizeof(longname)); /* unterminated */
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, longname, sizeof(longname));
	msg_attr(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &v, sizeof(v));
	msg_nest_end(&m);
	msg_nest_end(&m);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), 0);
	ASSERT_EQ(strlen(r.dev_name), sizeof(r.dev_name) - 1);
	ASSERT_EQ(r.n, 1);
	ASSERT_EQ(strlen(r.c[0].name), GDX_LIVE_NIC_NAME - 1);
	ASSERT_EQ(r.c[0].value, 9);
}

/* A thousand counters: the first GDX_LIVE_NIC_COUNTERS kept, cut said. */
static void test_huge_count(void)
{
	static struct msg m;
	size_t used;

	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (int i = 0; i < 1000; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		msg_counter(&m, name, (uint64_t)i);
	}
	msg_nest_end(&m);
	/* the nest is longer than an attribute's 16-bit length can say: the
	 * kernel could never send it so, and it is refused */
	if (m.len - NLMSG_HDRLEN > 0xffff) {
		ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), -EBADMSG);
		/* 1000 counters in a nest that fits: short names, few bytes */
	}
	msg_start(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 1);
	msg_nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (int i = 0; i < 1000; i++)
		msg_counter(&m, "c", (uint64_t)i);
	msg_nest_end(&m);
	ASSERT(m.len - NLMSG_HDRLEN <= 0xffff);
	ASSERT_EQ(gdx_qpstat_parse(m.b, msg_end(&m), &r, &used), 0);
	ASSERT_EQ(r.n, GDX_LIVE_NIC_COUNTERS);
	ASSERT(r.cut);
	ASSERT_EQ(r.c[GDX_LIVE_NIC_COUNTERS - 1].value, GDX_LIVE_NIC_COUNTERS - 1);
}

/* Random bytes, many times: parsed or refused, never a crash. */
static void test_random_bytes(void)
{
	static char buf[512];
	size_t used;

	srand(38);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)rand() % sizeof(buf);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int ret;

		for (size_t k = 0; k < len; k++)
			buf[k] = (char)rand();
		if (len >= NLMSG_HDRLEN && i % 2)
			h->nlmsg_len = (uint32_t)len; /* get past the header */
		ret = gdx_qpstat_parse(buf, len, &r, &used);
		ASSERT(ret == 0 || ret == -EBADMSG || ret == -ENODATA);
		ASSERT(used <= len);
		ASSERT(r.n >= 0 && r.n <= GDX_LIVE_NIC_COUNTERS);
	}
}

/* The requests, as the kernel's parser would read them back. */
static void test_requests(void)
{
	static char buf[256];
	int len = gdx_qpstat_msg_bind(buf, sizeof(buf), 7, 2, 1, 0x1234, 0);
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	size_t used;

	ASSERT(len > 0);
	ASSERT_EQ(h->nlmsg_len, (uint32_t)len);
	ASSERT_EQ(h->nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET));
	ASSERT(h->nlmsg_flags & NLM_F_REQUEST);
	/* DEV_INDEX, PORT_INDEX, STAT_RES, STAT_MODE, LQPN: five u32s */
	ASSERT_EQ(len, NLMSG_HDRLEN + 5 * NLA_ALIGN(NLA_HDRLEN + 4));
	ASSERT_EQ(gdx_qpstat_parse(buf, (size_t)len, &r, &used), 0);
	ASSERT(r.has_dev && r.dev_index == 2 && r.has_port && r.port == 1 && !r.has_counter);
	len = gdx_qpstat_msg_bind(buf, sizeof(buf), 7, 2, 1, 0x1234, 9);
	ASSERT_EQ(gdx_qpstat_parse(buf, (size_t)len, &r, &used), 0);
	ASSERT(r.has_counter && r.counter_id == 9);
	len = gdx_qpstat_msg_counter(buf, sizeof(buf), 8, 2, 1, 9);
	ASSERT_EQ(gdx_qpstat_parse(buf, (size_t)len, &r, &used), 0);
	ASSERT(r.has_counter && r.counter_id == 9 && r.seq == 8);
	len = gdx_qpstat_msg_devs(buf, sizeof(buf), 3);
	ASSERT_EQ(len, NLMSG_HDRLEN);
	ASSERT(h->nlmsg_flags & NLM_F_DUMP);
	ASSERT_EQ(gdx_qpstat_msg_port(buf, 20, 1, 2, 1), -EMSGSIZE);
	ASSERT_EQ(gdx_qpstat_msg_devs(buf, 8, 1), -EMSGSIZE);
}

GDX_TESTS_MAIN(TEST(test_port_answer, 10), TEST(test_dump_and_done, 10),
	       TEST(test_error_answer, 10), TEST(test_bind_answer, 10),
	       TEST(test_every_truncation, 10), TEST(test_bad_lengths, 10),
	       TEST(test_missing_attributes, 10), TEST(test_huge_count, 10),
	       TEST(test_random_bytes, 30), TEST(test_requests, 10))
