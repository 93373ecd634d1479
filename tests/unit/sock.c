/* SPDX-License-Identifier: MIT */
/* The out-of-band interface choice, on made-up interface lists: NCCL's order
 * of preference, NCCL_SOCKET_IFNAME's syntax, NCCL_SOCKET_FAMILY. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>

#include "sys/gdx_log.h"
#include "sys/gdx_sock.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define MAX_IFS 16

struct fake_ifs {
	struct ifaddrs ifa[MAX_IFS];
	struct sockaddr_storage sa[MAX_IFS];
	char names[MAX_IFS][16];
	int n;
};

/* Appends an up, running interface with one address (IPv4 or IPv6 text). */
static void add_if(struct fake_ifs *f, const char *name, const char *addr, unsigned flags)
{
	struct ifaddrs *ifa = &f->ifa[f->n];

	ASSERT(f->n < MAX_IFS);
	memset(ifa, 0, sizeof(*ifa));
	snprintf(f->names[f->n], sizeof(f->names[0]), "%s", name);
	ifa->ifa_name = f->names[f->n];
	ifa->ifa_flags = IFF_UP | IFF_RUNNING | flags;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&f->sa[f->n];

		s6->sin6_family = AF_INET6;
		ASSERT_EQ(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&f->sa[f->n];

		s4->sin_family = AF_INET;
		ASSERT_EQ(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
	}
	ifa->ifa_addr = (struct sockaddr *)&f->sa[f->n];
	if (f->n)
		f->ifa[f->n - 1].ifa_next = ifa;
	f->n++;
}

/* The interface picked, "" when none. */
static const char *pick(const struct fake_ifs *f, const char *spec, const char *family)
{
	static char name[GDX_IFNAME_MAX];
	struct gdx_sockaddr a;

	if (gdx_sock_pick_if(f->n ? &f->ifa[0] : NULL, spec, family, &a, name))
		name[0] = '\0';
	return name;
}

/* A host with everything: loopback first, docker and libvirt bridges, a
 * link-local-only interface, Ethernet, and InfiniBand (IPoIB) last. */
static void busy_host(struct fake_ifs *f)
{
	memset(f, 0, sizeof(*f));
	add_if(f, "lo", "127.0.0.1", IFF_LOOPBACK);
	add_if(f, "docker0", "172.17.0.1", 0);
	add_if(f, "virbr0", "192.168.122.1", 0);
	add_if(f, "enp1s0", "169.254.3.4", 0); /* IPv4 link-local only */
	add_if(f, "eth0", "fe80::1", 0);       /* IPv6 link-local ... */
	add_if(f, "eth0", "10.0.0.5", 0);      /* ... and a real address */
	add_if(f, "ib0", "fe80::2", 0);
	add_if(f, "ib0", "2001:db8::7", 0);
	add_if(f, "ib0", "10.1.0.5", 0);
}

static void test_nccl_order(void)
{
	struct fake_ifs f;

	busy_host(&f);
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), "ib0"), 0);
	/* the IPv4 address of ib0, not its IPv6 or link-local one */
	{
		struct gdx_sockaddr a;
		char name[GDX_IFNAME_MAX], text[64];

		ASSERT_EQ(gdx_sock_pick_if(&f.ifa[0], "", NULL, &a, name), 0);
		gdx_sock_addr_str(&a, text, sizeof(text));
		ASSERT_EQ(strcmp(text, "10.1.0.5:0"), 0);
		ASSERT_EQ(gdx_sock_pick_if(&f.ifa[0], "", "AF_INET6", &a, name), 0);
		gdx_sock_addr_str(&a, text, sizeof(text));
		ASSERT_EQ(strcmp(text, "[2001:db8::7]:0"), 0);
	}
	/* without InfiniBand: Ethernet, never the link-local-only interface */
	memset(&f, 0, sizeof(f));
	add_if(&f, "lo", "127.0.0.1", IFF_LOOPBACK);
	add_if(&f, "docker0", "172.17.0.1", 0);
	add_if(&f, "enp1s0", "169.254.3.4", 0);
	add_if(&f, "eth0", "10.0.0.5", 0);
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), "eth0"), 0);
	/* the last resorts, in NCCL's order: docker, then loopback, then virbr */
	memset(&f, 0, sizeof(f));
	add_if(&f, "virbr0", "192.168.122.1", 0);
	add_if(&f, "lo", "127.0.0.1", IFF_LOOPBACK);
	add_if(&f, "docker0", "172.17.0.1", 0);
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), "docker0"), 0);
	f.ifa[1].ifa_next = NULL; /* virbr0 and lo */
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), "lo"), 0);
	/* nothing usable: only link-local addresses */
	memset(&f, 0, sizeof(f));
	add_if(&f, "eth0", "fe80::1", 0);
	add_if(&f, "eth1", "169.254.0.9", 0);
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), ""), 0);
}

static void test_ifname_syntax(void)
{
	struct fake_ifs f;

	busy_host(&f);
	ASSERT_EQ(strcmp(pick(&f, "eth", NULL), "eth0"), 0); /* a prefix */
	ASSERT_EQ(strcmp(pick(&f, "=eth", NULL), ""), 0);    /* exact: no "eth" */
	ASSERT_EQ(strcmp(pick(&f, "=eth0", NULL), "eth0"), 0);
	ASSERT_EQ(strcmp(pick(&f, "^ib,lo", NULL), "docker0"), 0); /* excluded: first left */
	ASSERT_EQ(strcmp(pick(&f, "lo", NULL), "lo"), 0);	   /* named: loopback is fine */
	ASSERT_EQ(strcmp(pick(&f, "enp1s0", NULL), ""), 0);	   /* link-local only */
	gdx_log_set(gdx_test_logger);
	ASSERT_EQ(gdx_sock_find_if("^", NULL, &(struct gdx_sockaddr){0}, (char[GDX_IFNAME_MAX]){0}),
		  -EINVAL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "interface list \"^\" is malformed");
}

static void test_down_interfaces_skipped(void)
{
	struct fake_ifs f;

	busy_host(&f);
	f.ifa[8].ifa_flags &= ~(unsigned)IFF_RUNNING; /* ib0's IPv4 address */
	f.ifa[7].ifa_flags &= ~(unsigned)IFF_UP;      /* and its IPv6 one */
	ASSERT_EQ(strcmp(pick(&f, NULL, NULL), "eth0"), 0);
}

/* What a WARN lists when the interface list matches nothing: each usable
 * interface once, in the host's order; none down, none link-local only;
 * NCCL_SOCKET_FAMILY's family alone when it forces one; cut between names. */
static void test_usable_interfaces_listed(void)
{
	struct fake_ifs f;
	char buf[128];

	busy_host(&f);
	f.ifa[1].ifa_flags &= ~(unsigned)IFF_UP; /* docker0 */
	ASSERT_EQ(gdx_sock_usable_ifs(&f.ifa[0], NULL, buf, sizeof(buf)), 4);
	ASSERT_EQ(strcmp(buf, "lo, virbr0, eth0, ib0"), 0);
	ASSERT_EQ(gdx_sock_usable_ifs(&f.ifa[0], "AF_INET6", buf, sizeof(buf)), 1);
	ASSERT_EQ(strcmp(buf, "ib0"), 0);
	ASSERT_EQ(gdx_sock_usable_ifs(&f.ifa[0], NULL, buf, 16), 4);
	ASSERT_EQ(strcmp(buf, "lo, virbr0, ..."), 0);
	memset(&f, 0, sizeof(f));
	add_if(&f, "eth0", "fe80::1", 0);
	ASSERT_EQ(gdx_sock_usable_ifs(&f.ifa[0], NULL, buf, sizeof(buf)), 0);
	ASSERT_EQ(strcmp(buf, ""), 0);
}

GDX_TESTS_MAIN(TEST(test_nccl_order, 5), TEST(test_ifname_syntax, 5),
	       TEST(test_down_interfaces_skipped, 5), TEST(test_usable_interfaces_listed, 5))
