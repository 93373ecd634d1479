/* SPDX-License-Identifier: MIT */
/*
 * The built .so as NCCL sees it, on a machine with no RDMA device (this one):
 * it loads, its table is complete, and init fails cleanly with one WARN that
 * says why, and one line that says what NCCL does next (falls back, or with
 * NCCL_NET=GDX stops). Again after dlclose + dlopen.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/gdx_log.h"
#include "sys/gdx_sock.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void test_table_is_complete(void)
{
	struct gdx_plugin p;
	const ncclNet_v7_t *n;

	gdx_plugin_load(&p);
	n = p.v7;
	ASSERT_EQ(strcmp(n->name, "GDX"), 0);
	ASSERT(n->init && n->devices && n->getProperties && n->listen && n->connect && n->accept &&
	       n->regMr && n->deregMr && n->isend && n->irecv && n->iflush && n->test &&
	       n->closeSend && n->closeRecv && n->closeListen);
	/* regMrDmaBuf refuses where DMA-BUF is not advertised; a host plugin
	 * without device handles leaves the last two NULL. */
	ASSERT(n->regMrDmaBuf != NULL);
	ASSERT(n->getDeviceMr == NULL && n->irecvConsumed == NULL);
	gdx_plugin_unload(&p);
}

static void test_init_without_devices_fails_cleanly(void)
{
	struct gdx_plugin p;
	int ndev = -1;

	unsetenv("NCCL_NET");
	for (int round = 0; round < 3; round++) {
		gdx_test_log_clear();
		gdx_plugin_load(&p);
		ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "no RDMA device found");
		ASSERT_EQ(gdx_test_warning_count(), 1);
		ASSERT_EQ(
			gdx_test_log_count(
				NCCL_LOG_INFO, NCCL_INIT,
				"plugin disabled (the RDMA devices: No such device); NCCL_NET is unset, so "
				"NCCL falls back to its next network"),
			1);
		ASSERT_EQ(p.v7->devices(&ndev), ncclSuccess);
		ASSERT_EQ(ndev, 0);
		gdx_plugin_unload(&p);
	}
}

/*
 * What follows a failed init, by NCCL_NET as NCCL reads it (src/plugin/net.cc):
 * set to this network (any case), NCCL tries no other and the communicator
 * fails, which is a WARN of its own; set to another, NCCL would not use the
 * plugin anyway.
 */
static void test_init_failure_says_what_nccl_does(void)
{
	static const char *const named[] = {"GDX", "gdx"};
	struct gdx_plugin p;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		setenv("NCCL_NET", named[i], 1);
		gdx_test_log_clear();
		gdx_plugin_load(&p);
		ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
		ASSERT_EQ(gdx_test_warning_count(), 2);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "no RDMA device found");
		ASSERT_STR_CONTAINS(gdx_test_warnings(),
				    "names this plugin's network, so NCCL does "
				    "not fall back: the communicator's init "
				    "fails");
		ASSERT(!strstr(gdx_test_infos(), "falls back"));
		gdx_plugin_unload(&p);
	}
	setenv("NCCL_NET", "IB", 1);
	gdx_test_log_clear();
	gdx_plugin_load(&p);
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(gdx_test_warning_count(), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "NCCL_NET=IB selects another network, so NCCL does not use "
				     "this plugin anyway"),
		  1);
	ASSERT(!strstr(gdx_test_infos(), "falls back"));
	gdx_plugin_unload(&p);
	unsetenv("NCCL_NET");
}

/* This host's interfaces the out-of-band choice could take (up, running,
 * an IPv4 or IPv6 address that is not link-local), as the WARN lists them. */
static void usable_interfaces(char *buf, size_t len)
{
	struct ifaddrs *ifas, *ifa;

	buf[0] = '\0';
	ASSERT_EQ(getifaddrs(&ifas), 0);
	for (ifa = ifas; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr *sa = ifa->ifa_addr;
		bool link_local;
		char name[GDX_IFNAME_MAX + 4];

		if (!sa || !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING) ||
		    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		link_local = sa->sa_family == AF_INET6
				     ? IN6_IS_ADDR_LINKLOCAL(
					       &((const struct sockaddr_in6 *)sa)->sin6_addr)
				     : (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
					16) == 0xa9fe;
		snprintf(name, sizeof(name), "%s%s", buf[0] ? ", " : "", ifa->ifa_name);
		if (link_local || strstr(buf, ifa->ifa_name))
			continue;
		strncat(buf, name, len - strlen(buf) - 1);
	}
	freeifaddrs(ifas);
}

/*
 * An interface list that matches nothing here: the WARN names the variable
 * the value came from, says it matched none, and lists the interfaces there
 * are (the value is set: "set NCCL_GDX_SOCKET_IFNAME" would not help).
 */
static void test_init_without_interface_fails_cleanly(void)
{
	static const char *const vars[] = {"NCCL_GDX_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"};
	char have[1024], want[1200];
	struct gdx_plugin p;

	usable_interfaces(have, sizeof(have));
	ASSERT(have[0] != '\0'); /* this machine has one: lo at least */
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		setenv(vars[i], "nope", 1);
		gdx_test_log_clear();
		gdx_plugin_load(&p);
		ASSERT_EQ(p.v7->init(gdx_test_logger), ncclSystemError);
		snprintf(want, sizeof(want),
			 "%s=\"nope\" matches none of this host's usable out-of-band interfaces "
			 "(up, with an address that is not link-local): %s",
			 vars[i], have);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), want);
		if (strstr(gdx_test_warnings(), "; set NCCL_GDX_SOCKET_IFNAME"))
			gdx_test_fail(__FILE__, __LINE__, "asks to set what is set: %s",
				      gdx_test_warnings());
		ASSERT_EQ(gdx_test_warning_count(), 1);
		gdx_plugin_unload(&p);
		unsetenv(vars[i]);
	}
}

static void test_bad_parameter_fails_init(void)
{
	struct gdx_plugin p;

	setenv("NCCL_GDX_RETRY_CNT", "8", 1);
	gdx_plugin_load(&p);
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_RETRY_CNT=8 is out of range 0-7");
	gdx_plugin_unload(&p);
}

/*
 * A value of the user's that init refuses is the user's to fix: NCCL is told
 * ncclInvalidUsage, not ncclInternalError (which NCCL's message asks to
 * report to its developers). Each setting init checks before it looks for a
 * device, through the v7 table and the newest (v12, with a context).
 */
static void test_refused_setting_is_invalid_usage(void)
{
	static const struct {
		const char *var, *value, *warn;
	} bad[] = {
		{"NCCL_GDX_RETRY_CNT", "8", "NCCL_GDX_RETRY_CNT=8 is out of range 0-7"},
		{"NCCL_GDX_TIMEOUT", "twenty", "NCCL_GDX_TIMEOUT=\"twenty\" is not an integer"},
		{"NCCL_GDX_ADDR_FAMILY", "7", "must be AF_INET or AF_INET6"},
		{"NCCL_GDX_SOCKET_IFNAME", "^", "is malformed"},
		{"NCCL_GDX_ADDR_RANGE", "10.0.0.0/99", "is not an address range"},
		{"NCCL_GDX_HCA", "mlx5_0:x", "NCCL_GDX_HCA=\"mlx5_0:x\" is malformed"},
	};
	struct gdx_plugin p;

	unsetenv("NCCL_NET");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const ncclNet_v12_t *v12;
		void *ctx = NULL;

		setenv(bad[i].var, bad[i].value, 1);
		gdx_test_log_clear();
		gdx_plugin_load(&p);
		ASSERT_EQ(p.v7->init(gdx_test_logger), ncclInvalidUsage);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), bad[i].warn);
		v12 = dlsym(p.lib, "ncclNetPlugin_v12");
		ASSERT(v12 != NULL);
		ASSERT_EQ(v12->init(&ctx, 1, NULL, gdx_test_logger, NULL), ncclInvalidUsage);
		ASSERT(ctx == NULL);
		gdx_plugin_unload(&p);
		unsetenv(bad[i].var);
	}
	/* NCCL's own values never fail init: a twin out of range is a WARN */
	setenv("NCCL_IB_TIMEOUT", "99", 1);
	gdx_test_log_clear();
	gdx_plugin_load(&p);
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclInvalidUsage);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "no RDMA device found");
	gdx_plugin_unload(&p);
	unsetenv("NCCL_IB_TIMEOUT");
}

/*
 * Whatever makes init fail, the first line it logs names the plugin's
 * version and the file it was loaded from (dladdr), so that a failed init's
 * log says which build failed: once per init, before any WARN.
 */
static void expect_version_first(const char *path)
{
	char want[PATH_MAX + 128], real[PATH_MAX];

	ASSERT(realpath(path, real) != NULL);
	snprintf(want, sizeof(want), "starting libnccl-net-gdx %s, loaded from \"%s\"", GDX_VERSION,
		 real);
	if (gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, want) != 1 ||
	    gdx_test_log_index(NCCL_LOG_INFO, want) != 0) {
		gdx_test_log_print(NCCL_LOG_INFO, NCCL_INIT);
		gdx_test_log_print(NCCL_LOG_WARN, NCCL_INIT);
		gdx_test_fail(__FILE__, __LINE__, "not one first INFO line \"%s\"", want);
	}
}

static void test_init_says_version_and_path_first(void)
{
	struct gdx_plugin p;

	unsetenv("NCCL_NET");
	/* refused at the parameters, the first step */
	setenv("NCCL_GDX_RETRY_CNT", "8", 1);
	gdx_test_log_clear();
	gdx_plugin_load(&p);
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
	expect_version_first(getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN")
						  : "build/libnccl-net-gdx.so");
	/* again at the next init of the same load, now failing at the devices */
	unsetenv("NCCL_GDX_RETRY_CNT");
	gdx_test_log_clear();
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "no RDMA device found");
	expect_version_first(getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN")
						  : "build/libnccl-net-gdx.so");
	gdx_plugin_unload(&p);
}

/* The path as a log line may show it: a quote and a newline in a directory's
 * name escaped, the line still one line. */
static void test_version_line_escapes_the_path(void)
{
	char dir[] = "/tmp/gdx-plugin-XXXXXX", sub[256], so[300], cmd[700], want[600];
	struct gdx_plugin p;

	ASSERT(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/a \"b\"\nc", dir);
	snprintf(so, sizeof(so), "%s/libnccl-net-gdx.so", sub);
	ASSERT_EQ(mkdir(sub, 0700), 0);
	snprintf(cmd, sizeof(cmd), "cp build/libnccl-net-gdx.so '%s'", so);
	ASSERT_EQ(system(cmd), 0);
	setenv("GDX_PLUGIN", so, 1);
	gdx_test_log_clear();
	gdx_plugin_load(&p);
	ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
	gdx_plugin_unload(&p);
	unsetenv("GDX_PLUGIN");
	unlink(so);
	rmdir(sub);
	rmdir(dir);
	snprintf(want, sizeof(want), "loaded from \"%s/a \\\"b\\\"\\x0ac/libnccl-net-gdx.so\"",
		 dir);
	ASSERT_STR_CONTAINS(gdx_test_infos(), want);
}

/* ---- libnccl-net-gdx-diagnostics(7)'s DIAGNOSTICS against what init really says ---- */

#define DIAG_MAX 128

/* A tag of DIAGNOSTICS (a ".B" line after ".TP") as a reader sees it: the
 * font changes gone, \- and \(dq as - and ". Alternatives in one tag
 * ("\fR, \fB") each a pattern of their own. */
static int diag_patterns(char pats[][1024], int max)
{
	FILE *f = fopen("plugin/libnccl-net-gdx-diagnostics.7", "r");
	char line[2048], prev[2048] = "";
	bool in = false;
	int n = 0;

	ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SH ", 4))
			in = !strcmp(line, ".SH DIAGNOSTICS");
		if (in && !strcmp(prev, ".TP") && !strncmp(line, ".B ", 3)) {
			for (char *alt = line + 3; alt && n < max;) {
				char *next = strstr(alt, "\\fR, \\fB"), *o = pats[n++];

				if (next)
					*next = '\0';
				for (const char *c = alt; *c;) {
					if (!strncmp(c, "\\f", 3)) {
						c += 4;
					} else if (!strncmp(c, "\\-", 2)) {
						*o++ = '-';
						c += 2;
					} else if (!strncmp(c, "\\(dq", 4)) {
						*o++ = '"';
						c += 4;
					} else {
						*o++ = *c++;
					}
				}
				*o = '\0';
				alt = next ? next + 8 : NULL;
			}
		}
		snprintf(prev, sizeof(prev), "%s", line);
	}
	fclose(f);
	return n;
}

/* Whether text is pattern, where "..." stands for any run of characters. */
static bool diag_match(const char *pat, const char *text)
{
	if (!strncmp(pat, "...", 3)) {
		for (const char *t = text;; t++) {
			if (diag_match(pat + 3, t))
				return true;
			if (!*t)
				return false;
		}
	}
	if (!*pat)
		return !*text;
	return *pat == *text && diag_match(pat + 1, text + 1);
}

/*
 * Each WARN an init can give on this machine, as it gives it, is one of
 * DIAGNOSTICS' examples word for word (a "..." of the page standing for
 * what differs by machine and value): the page shows users the text they
 * will search their log for.
 */
static void test_diagnostics_are_the_real_lines(void)
{
	static const struct {
		const char *var, *value;
	} cases[] = {
		{NULL, NULL}, /* no device */
		{"NCCL_GDX_TIMEOUT", "99"},
		{"NCCL_GDX_HCA", "mlx5_0:x"},
		{"NCCL_GDX_SOCKET_IFNAME", "nope"},
		{"NCCL_NET", "GDX"},
	};
	static char pats[DIAG_MAX][1024];
	int npats = diag_patterns(pats, DIAG_MAX), checked = 0;
	struct gdx_plugin p;

	ASSERT(npats > 10);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].var)
			setenv(cases[i].var, cases[i].value, 1);
		gdx_test_log_clear();
		gdx_plugin_load(&p);
		ASSERT_NE(p.v7->init(gdx_test_logger), ncclSuccess);
		gdx_plugin_unload(&p);
		if (cases[i].var)
			unsetenv(cases[i].var);
		for (const char *w = gdx_test_warnings(); *w;) {
			char line[1024];
			size_t len = strcspn(w, "\n");
			bool found = false;

			snprintf(line, sizeof(line), "%.*s", (int)len, w);
			w += len + (w[len] == '\n');
			ASSERT(!strncmp(line, GDX_LOG_PREFIX, strlen(GDX_LOG_PREFIX)));
			for (int k = 0; k < npats && !found; k++)
				found = diag_match(pats[k], line + strlen(GDX_LOG_PREFIX));
			if (!found)
				gdx_test_fail(
					__FILE__, __LINE__,
					"no DIAGNOSTICS entry of libnccl-net-gdx-diagnostics.7 reads as the "
					"WARN \"%s\"",
					line + strlen(GDX_LOG_PREFIX));
			checked++;
		}
	}
	ASSERT(checked >= 5);
	printf("  %d WARN lines, each an entry of DIAGNOSTICS (%d entries)\n", checked, npats);
}

static void test_calls_without_devices_are_refused(void)
{
	ncclNetProperties_v7_t props;
	struct gdx_plugin p;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	void *comm = NULL;

	gdx_plugin_load(&p);
	p.v7->init(gdx_test_logger);
	gdx_test_log_clear();
	ASSERT_EQ(p.v7->getProperties(0, &props), ncclInternalError);
	ASSERT_EQ(p.v7->getProperties(-1, &props), ncclInternalError);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "device -1 does not exist");
	ASSERT_EQ(p.v7->listen(0, handle, &comm), ncclInternalError);
	ASSERT_EQ(p.v7->connect(0, handle, &comm, NULL), ncclInternalError);
	ASSERT_EQ(p.v7->closeSend(NULL), ncclInternalError);
	ASSERT_EQ(p.v7->closeRecv(handle), ncclInternalError);
	ASSERT_EQ(p.v7->closeListen(handle), ncclInternalError);
	ASSERT_EQ(p.v7->test(NULL, NULL, NULL), ncclInternalError);
	gdx_plugin_unload(&p);
}

GDX_TESTS_MAIN(TEST(test_table_is_complete, 10), TEST(test_init_without_devices_fails_cleanly, 10),
	       TEST(test_init_failure_says_what_nccl_does, 10),
	       TEST(test_init_without_interface_fails_cleanly, 10),
	       TEST(test_bad_parameter_fails_init, 10),
	       TEST(test_refused_setting_is_invalid_usage, 10),
	       TEST(test_init_says_version_and_path_first, 10),
	       TEST(test_version_line_escapes_the_path, 10),
	       TEST(test_diagnostics_are_the_real_lines, 20),
	       TEST(test_calls_without_devices_are_refused, 10))
