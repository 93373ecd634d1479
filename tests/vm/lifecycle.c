/* SPDX-License-Identifier: MIT */
/*
 * Nothing is left behind: many connect/transfer/close cycles in one process,
 * and many dlopen/init/connect/transfer/close/dlclose cycles, after which open
 * descriptors, threads, verbs objects (rdma resource) and RSS are back where
 * they were after the first cycles; and, through v11 and v12, a finalize of
 * the last context, then init again in the same load, cycle after cycle
 * (NCCL #1978). Runs inside the VM with --pairs 2:
 * scripts/vm-run.sh --pairs 2 -- build/tests/vm/lifecycle
 *
 *   GDX_LIFECYCLE_CYCLES   connect/transfer/close cycles (default 1000)
 *   GDX_LIFECYCLE_RELOADS  dlopen ... dlclose cycles (default 100)
 */
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* Under ASan, freed memory waits in a quarantine and the shadow grows with
 * the heap: RSS says nothing about leaks there (LeakSanitizer does). */
#if defined(__SANITIZE_ADDRESS__)
#define LIFECYCLE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIFECYCLE_ASAN 1
#endif
#endif
#ifndef LIFECYCLE_ASAN
#define LIFECYCLE_ASAN 0
#endif

/* RSS may end this much above its baseline. glibc keeps freed memory in its
 * arenas (trimmed only past M_TRIM_THRESHOLD, and the mmap threshold moves
 * up after the first large free), so the heap's resident size wobbles by a
 * few hundred KiB between otherwise identical cycles. A leak of even 1 KiB a
 * cycle shows as 1 MiB over 1,000 cycles; one comm a cycle, far more. */
#define RSS_SLACK_KIB 1024

/* Under LeakSanitizer a leak fails the test: the runner's children end with
 * _exit(), which skips the check LeakSanitizer makes at exit. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void leak_check(void)
{
	if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check())
		gdx_test_fail(__FILE__, __LINE__, "LeakSanitizer found leaks (above)");
}

struct usage {
	int fds;
	int threads;
	long rss_kib;
	int plugin_maps; /* mappings of the plugin's file */
	char rdma[2048]; /* `rdma resource show`, one line per device */
};

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	ASSERT(d != NULL);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static long rss_kib(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	ASSERT(f != NULL);
	ASSERT_EQ(fscanf(f, "%ld %ld", &size, &resident), 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int plugin_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "libnccl-net-gdx") != NULL;
	fclose(f);
	return n;
}

static void usage_read(struct usage *u)
{
	/* descriptors and threads first: popen makes a pipe and a child */
	u->fds = count_dir("/proc/self/fd") - 1; /* opendir's own */
	u->threads = count_dir("/proc/self/task");
	u->rss_kib = rss_kib();
	u->plugin_maps = plugin_maps();
	gdx_rdma_counts(u->rdma, sizeof(u->rdma));
}

static void usage_print(const char *what, const struct usage *u)
{
	printf("  %s: %d fds, %d threads, RSS %ld KiB, %d plugin mappings, verbs objects:\n%s",
	       what, u->fds, u->threads, u->rss_kib, u->plugin_maps, u->rdma);
	fflush(stdout);
}

static void usage_compare(const struct usage *base, const struct usage *now)
{
	ASSERT_EQ(now->fds, base->fds);
	ASSERT_EQ(now->threads, base->threads);
	ASSERT_EQ(now->plugin_maps, base->plugin_maps);
	if (strcmp(base->rdma, now->rdma))
		gdx_test_fail(__FILE__, __LINE__, "rdma resources changed:\n%s--- to ---\n%s",
			      base->rdma, now->rdma);
	if (LIFECYCLE_ASAN)
		printf("  RSS not compared under AddressSanitizer (quarantine and shadow)\n");
	else if (now->rss_kib > base->rss_kib + RSS_SLACK_KIB)
		gdx_test_fail(__FILE__, __LINE__, "RSS grew from %ld to %ld KiB (slack %d KiB)",
			      base->rss_kib, now->rss_kib, RSS_SLACK_KIB);
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

/* Devices of cycle i: both rxe pairs when there are two, both directions. */
static void cycle_devs(int i, int ndev, int *listen_dev, int *connect_dev)
{
	int pair = ndev >= 4 ? (i / 2) % 2 : 0;

	*listen_dev = 2 * pair + i % 2;
	*connect_dev = 2 * pair + 1 - i % 2;
}

static void one_cycle(const ncclNet_v7_t *n, int i, int ndev)
{
	static const size_t sizes[] = {0, 1, 4097, 65543, 1 << 20};
	struct gdx_pair p;
	int l, c;

	cycle_devs(i, ndev, &l, &c);
	gdx_pair_connect(n, l, c, &p);
	gdx_transfer(&p, sizes[i % 5], sizes[i % 5], (size_t)i % 8, (uint32_t)i);
	gdx_pair_close(&p);
}

static void test_connect_cycles(void)
{
	int cycles = env_int("GDX_LIFECYCLE_CYCLES", 1000);
	int warm = cycles >= 100 ? 10 : 4;
	struct gdx_plugin plugin;
	struct usage base, now;
	double start = gdx_now_s();
	int ndev = 0;

	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(plugin.v7->devices(&ndev), ncclSuccess);
	ASSERT(ndev >= 2);
	/* The baseline comes after a few cycles: the PD, the provider's
	 * caches and malloc's arenas are set up by then. */
	for (int i = 0; i < cycles; i++) {
		if (i == warm) {
			usage_read(&base);
			usage_print("baseline", &base);
		}
		one_cycle(plugin.v7, i, ndev);
		if (i == cycles / 2) {
			usage_read(&now);
			usage_print("halfway", &now);
		}
	}
	usage_read(&now);
	printf("  %d connect/transfer/close cycles in %.1f s\n", cycles, gdx_now_s() - start);
	usage_print("after", &now);
	usage_compare(&base, &now);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	gdx_plugin_unload(&plugin);
	leak_check();
}

static void test_reload_cycles(void)
{
	int reloads = env_int("GDX_LIFECYCLE_RELOADS", 100);
	int warm = reloads >= 20 ? 2 : 1;
	struct usage base, now;
	double start = gdx_now_s();

	for (int i = 0; i < reloads; i++) {
		struct gdx_plugin plugin;
		int ndev = 0;

		if (i == warm) {
			usage_read(&base);
			usage_print("baseline (unloaded)", &base);
		}
		gdx_plugin_load(&plugin);
		ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
		ASSERT_EQ(plugin.v7->devices(&ndev), ncclSuccess);
		ASSERT(ndev >= 2);
		one_cycle(plugin.v7, i, ndev);
		gdx_plugin_unload(&plugin);
		if (i == reloads / 2) {
			usage_read(&now);
			usage_print("halfway", &now);
		}
	}
	usage_read(&now);
	printf("  %d dlopen/init/connect/transfer/close/dlclose cycles in %.1f s\n", reloads,
	       gdx_now_s() - start);
	usage_print("after", &now);
	/* dlclose really unloaded it, and the devices were closed. */
	ASSERT_EQ(now.plugin_maps, 0);
	usage_compare(&base, &now);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	leak_check();
}

/* An init that fails after the devices were opened (here on a rails spec
 * naming no device) must not keep them: NCCL unloads the plugin then. */
static void test_failed_init_cycles(void)
{
	struct usage base, now;

	setenv("NCCL_GDX_RAILS", "rxe0+nosuch", 1);
	for (int i = 0; i < 20; i++) {
		struct gdx_plugin plugin;

		if (i == 1)
			usage_read(&base);
		gdx_plugin_load(&plugin);
		ASSERT_NE(plugin.v7->init(gdx_test_logger), ncclSuccess);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "nosuch");
		gdx_plugin_unload(&plugin);
	}
	usage_read(&now);
	usage_print("after 20 failed inits", &now);
	ASSERT_EQ(now.plugin_maps, 0);
	usage_compare(&base, &now);
	leak_check();
}

/*
 * NCCL #1978: a communicator destroyed (its context finalized), another made
 * later in the same process, the plugin never unloaded. After each finalize
 * of the last context the plugin holds nothing: no verbs object (the rdma
 * resource counts are those from before it was loaded), no descriptor or
 * thread more than after the first; and each init after it works as the
 * first did. Through v11 and v12, 10 cycles each.
 */
static void finalize_then_init(int v)
{
	struct usage before, first = {0}, now;
	struct gdx_drv d;
	struct gdx_dpair p;

	usage_read(&before);
	gdx_drv_load(&d, v);
	for (int i = 0; i < 10; i++) {
		if (i)
			gdx_drv_init(&d);
		ASSERT(gdx_drv_devices(&d) >= 2);
		gdx_drv_pair(&d, i % 2, 1 - i % 2, &p);
		gdx_drv_transfer(&d, &p, (size_t)65543 * (size_t)(i + 1), (uint32_t)i, 0);
		gdx_drv_unpair(&d, &p);
		ASSERT_EQ(gdx_drv_finalize(&d), ncclSuccess);
		ASSERT_STR_CONTAINS(gdx_test_infos(), "every resource released");
		usage_read(&now);
		if (strcmp(before.rdma, now.rdma))
			gdx_test_fail(__FILE__, __LINE__,
				      "after finalize %d, verbs objects are held:\n%s--- against "
				      "before the load ---\n%s",
				      i, now.rdma, before.rdma);
		if (i == 0)
			first = now;
		ASSERT_EQ(now.fds, first.fds);
		ASSERT_EQ(now.threads, first.threads);
	}
	usage_print("after 10 init/connect/transfer/close/finalize cycles", &now);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_EQ(dlclose(d.lib), 0);
	leak_check();
}

static void test_finalize_then_init_again_v11(void)
{
	finalize_then_init(11);
}

static void test_finalize_then_init_again_v12(void)
{
	finalize_then_init(12);
}

GDX_TESTS_MAIN(TEST(test_connect_cycles, 1800), TEST(test_reload_cycles, 1200),
	       TEST(test_failed_init_cycles, 300), TEST(test_finalize_then_init_again_v11, 300),
	       TEST(test_finalize_then_init_again_v12, 300))
