/* SPDX-License-Identifier: MIT */
/*
 * The gate says what the plugin will do: each row sets up a node (NCCL_*
 * settings, a link taken down), starts the plugin as NCCL does (init, then
 * devices: through v11, as the VM's NCCL 2.28 loads it, and through v7 in
 * a process of its own, which must agree but where its view differs) and
 * runs `gdx-doctor check --quiet` with the same environment, on the same
 * node. Check must be
 * broken exactly where the plugin does not start, naming the plugin's own
 * reason; degraded where it starts having lost a rail, naming each port;
 * healthy only where it starts on every rail it was given. Each row also
 * says what the plugin must do there, so that a row tests what it says.
 * --pairs 2: rxe0 <-> rxe1 over veth0/veth1, rxe2 <-> rxe3 over
 * veth2/veth3; a veth taken down takes both ends' ports down.
 *
 * A new refusal in the plugin is a new row here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

enum outcome { STARTS, FAILS };

struct row {
	const char *name;
	const char *env[3]; /* VAR=VALUE */
	const char *down;   /* a veth taken down for the row, NULL none */
	enum outcome plugin;
	int ndev;	  /* the devices the plugin numbers, when it starts */
	const char *lost; /* the rails lost, named by check: "rxe0 port 1,rxe1 port 1" */
	bool warn_free;	  /* the plugin's start-up says no WARN */
	/* what only the tool sees and degrades the node for, beside what the
	 * plugin does (a topology's GPUs without a CUDA driver) */
	const char *tool_only;
	int v7_ndev; /* the devices v7 numbers where its view differs, else 0 */
};

#define TOPO "tests/lib/fixtures/topo/"

static const struct row rows[] = {
	{"control: nothing set", {NULL}, NULL, STARTS, 4, NULL, true},
	{"NCCL_GDX_HCA names no device here", {"NCCL_GDX_HCA=mlx5_0"}, NULL, FAILS},
	{"NCCL_IB_HCA, a prefix of no device", {"NCCL_IB_HCA=mlx5"}, NULL, FAILS},
	{"NCCL_IB_HCA excludes every device", {"NCCL_IB_HCA=^rxe"}, NULL, FAILS},
	{"NCCL_IB_HCA, an exact name of none", {"NCCL_IB_HCA==rxe"}, NULL, FAILS},
	{"NCCL_IB_HCA, a port no device has", {"NCCL_IB_HCA=rxe0:7"}, NULL, FAILS},
	{"NCCL_GDX_SOCKET_IFNAME, no such interface", {"NCCL_GDX_SOCKET_IFNAME=eth9"}, NULL, FAILS},
	{"NCCL_SOCKET_IFNAME (the twin), no such interface",
	 {"NCCL_SOCKET_IFNAME=eth9"},
	 NULL,
	 FAILS},
	{"NCCL_SOCKET_IFNAME, an exact name of none", {"NCCL_SOCKET_IFNAME==veth9"}, NULL, FAILS},
	{"NCCL_SOCKET_IFNAME, an exact name",
	 {"NCCL_SOCKET_IFNAME==veth0"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 true},
	{"NCCL_SOCKET_IFNAME excludes the veths",
	 {"NCCL_SOCKET_IFNAME=^veth"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 true},
	{"one NIC: NCCL_IB_HCA=rxe0", {"NCCL_IB_HCA=rxe0"}, NULL, STARTS, 1, NULL, true},
	{"two NICs: NCCL_IB_HCA=rxe0,rxe1", {"NCCL_IB_HCA=rxe0,rxe1"}, NULL, STARTS, 2, NULL, true},
	{"three NICs: NCCL_IB_HCA=^rxe3", {"NCCL_IB_HCA=^rxe3"}, NULL, STARTS, 3, NULL, true},
	{"an exact name and port: NCCL_IB_HCA==rxe2:1",
	 {"NCCL_IB_HCA==rxe2:1"},
	 NULL,
	 STARTS,
	 1,
	 NULL,
	 true},
	{"a link down: two of four ports DOWN",
	 {NULL},
	 "veth1",
	 STARTS,
	 2,
	 "rxe0 port 1,rxe1 port 1",
	 true},
	{"a filter keeping only a down port", {"NCCL_IB_HCA==rxe1"}, "veth1", FAILS},
	{"a link down that the filter leaves out",
	 {"NCCL_IB_HCA=rxe2,rxe3"},
	 "veth1",
	 STARTS,
	 2,
	 NULL,
	 true},
	{"a refused value: NCCL_GDX_TIMEOUT=99", {"NCCL_GDX_TIMEOUT=99"}, NULL, FAILS},
	{"GPUDirect RDMA demanded on a node without a GPU", {"NCCL_GDX_GDR=on"}, NULL, FAILS},
	/* check reads the file the plugin reads: its GPUs, which this VM has
	 * no driver for */
	{"a topology of 384 PUs as hwloc writes it",
	 {"NCCL_GDX_TOPO_FILE=" TOPO "genoa-h100.xml"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 true,
	 "GPU 0000:84:00.0 is staged through host memory on its nearest NIC"},
	{"a topology as hwloc 1.x writes it without NUMA nodes",
	 {"NCCL_GDX_TOPO_FILE=" TOPO "hwloc1-no-numa.xml"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 true,
	 "GPU 0000:00:05.0 is staged through host memory on its nearest NIC"},
	/* GPUs the facts file stands for (tests/lib/fixtures/facts), each
	 * with its NIC on its PCIe switch and another through the host bridge
	 * (topo/vm-far-rail.xml); the ports are the VM's own */
	{"GPUs with a near NIC each, every port up",
	 {"GDX_GDR_FACTS=tests/lib/fixtures/facts/vm-far-rail",
	  "NCCL_GDX_TOPO_FILE=" TOPO "vm-far-rail.xml"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 true},
	{"the GPUs' near NICs down: each GPU named with the NIC it has now",
	 {"GDX_GDR_FACTS=tests/lib/fixtures/facts/vm-far-rail",
	  "NCCL_GDX_TOPO_FILE=" TOPO "vm-far-rail.xml"},
	 "veth1",
	 STARTS,
	 2,
	 "rxe0 port 1,rxe1 port 1",
	 true,
	 "it was the nearest NIC of GPU 0000:19:00.0 (now rxe2, PHB)"},
	/* v6-v8 fuse the groups; v9+ leave that to NCCL (NCCL_NET_FORCE_MERGE)
	 * and say the setting is not applied: check judges for this NCCL */
	{"NCCL_GDX_RAILS groups, which NCCL 2.28 fuses itself",
	 {"NCCL_GDX_RAILS=rxe0+rxe2"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 false,
	 NULL,
	 3},
	{"a topology file that is not one",
	 {"NCCL_GDX_TOPO_FILE=" TOPO "gen_fixtures.py"},
	 NULL,
	 STARTS,
	 4,
	 NULL,
	 false},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const char *const ports[] = {"rxe0", "rxe1", "rxe2", "rxe3"};

static bool port_active(const char *dev)
{
	char path[128], line[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/state", dev);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strstr(line, "ACTIVE") != NULL;
}

/* Until every port is ACTIVE (want) or some is not (!want), 10 s at most. */
static bool ports_wait(bool want)
{
	for (int i = 0; i < 200; i++) {
		bool all = true;

		for (size_t p = 0; p < 4; p++)
			all &= port_active(ports[p]);
		if (all == want)
			return true;
		usleep(50000);
	}
	return false;
}

static const char *row_down;

static void link_up(void)
{
	char cmd[64];

	if (!row_down)
		return;
	snprintf(cmd, sizeof(cmd), "ip link set %s up", row_down);
	if (system(cmd) || !ports_wait(true))
		fprintf(stderr, "  could not bring %s back up\n", row_down);
}

/* check --quiet's exit status, its lines into out. */
static int doctor_check(char *out, size_t len)
{
	int fds[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		dup2(open("/dev/null", O_WRONLY), 1);
		close(fds[0]);
		execl("build/gdx-doctor", "gdx-doctor", "check", "--quiet", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got + 1 < len && (n = read(fds[0], out + got, len - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The devices the v7 table numbers once its init has run, in a child
 * (a load sets the plugin up for one table's view); -1 when init fails. */
static int v7_start(void)
{
	int status;
	pid_t pid = fork();

	ASSERT(pid >= 0);
	if (pid == 0) {
		struct gdx_plugin p;
		int n = -1;

		gdx_plugin_load(&p);
		if (p.v7->init(gdx_test_logger) != ncclSuccess || p.v7->devices(&n) != ncclSuccess)
			_exit(255);
		_exit(n);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}

static void run_row(const struct row *r)
{
	static char out[65536];
	char plugin[PATH_MAX], first[1024] = "";
	const ncclNet_v11_t *v11;
	struct gdx_plugin p;
	int ndev = -1, v7_ndev, exit_status, want;
	void *ctx = NULL;
	ncclResult_t rc;

	printf("  row: %s\n", r->name);
	/* every link up, whatever a row before left (a failed one exits
	 * without its clean-up) */
	ASSERT_EQ(system("for v in veth0 veth1 veth2 veth3; do ip link set $v up; done"), 0);
	ASSERT(ports_wait(true));
	for (int i = 0; i < 3 && r->env[i]; i++)
		ASSERT_EQ(putenv((char *)r->env[i]), 0);
	/* NCCL's part of the check is about this plugin, loaded by path */
	ASSERT(realpath("build/libnccl-net-gdx.so", plugin));
	setenv("NCCL_NET_PLUGIN", plugin, 1);
	if (r->down) {
		char cmd[64];

		row_down = r->down;
		atexit(link_up);
		snprintf(cmd, sizeof(cmd), "ip link set %s down", r->down);
		ASSERT_EQ(system(cmd), 0);
		ASSERT(ports_wait(false));
	}

	/* the plugin, as NCCL 2.13-2.19 starts it (v7, which fuses
	 * NCCL_GDX_RAILS's groups itself) in a process of its own, then as
	 * this VM's NCCL 2.28 does (v11, every port a device): check judges
	 * for the NCCL it finds */
	v7_ndev = v7_start();
	gdx_plugin_load(&p);
	v11 = dlsym(p.lib, "ncclNetPlugin_v11");
	ASSERT(v11);
	rc = v11->init(&ctx, 1, NULL, gdx_test_logger, NULL);
	if (rc == ncclSuccess)
		ASSERT_EQ(v11->devices(&ndev), ncclSuccess);
	printf("    through v7: %s, %d device(s)\n", v7_ndev < 0 ? "fails" : "starts", v7_ndev);
	ASSERT_EQ(v7_ndev >= 0, rc == ncclSuccess);
	if (r->v7_ndev)
		ASSERT_EQ(v7_ndev, r->v7_ndev);
	else if (rc == ncclSuccess)
		ASSERT_EQ(v7_ndev, ndev);
	if (gdx_test_warning_count()) {
		const char *w = strstr(gdx_test_warnings(), "NET/GDX plugin: ");

		snprintf(first, sizeof(first), "%s", w ? w + 16 : gdx_test_warnings());
		first[strcspn(first, "\n")] = '\0';
	}
	printf("    plugin: %s, %d device(s), %d WARN(s)%s%s\n",
	       rc == ncclSuccess ? "starts" : "fails", ndev, gdx_test_warning_count(),
	       first[0] ? ": " : "", first);
	/* the row means what it says */
	ASSERT_EQ(rc == ncclSuccess ? STARTS : FAILS, r->plugin);
	if (r->plugin == STARTS)
		ASSERT_EQ(ndev, r->ndev);
	if (r->warn_free)
		ASSERT_EQ(gdx_test_warning_count(), 0);

	/* the gate on the same node */
	exit_status = doctor_check(out, sizeof(out));
	printf("    check: exit %d\n", exit_status);
	for (char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		printf("      %.*s\n", (int)strcspn(l, "\n"), l);
	want = rc != ncclSuccess ? 2 : r->lost || !r->warn_free || r->tool_only ? 1 : 0;
	ASSERT_EQ(exit_status, want);
	if (rc != ncclSuccess) {
		/* the plugin's own words, and its first WARN is the cause */
		ASSERT(first[0]);
		ASSERT_STR_CONTAINS(out, first);
	}
	if (r->tool_only)
		ASSERT_STR_CONTAINS(out, r->tool_only);
	for (const char *l = r->lost; l && *l;) {
		size_t n = strcspn(l, ",");
		char one[64];

		snprintf(one, sizeof(one), "[degraded] %.*s is DOWN", (int)n, l);
		ASSERT_STR_CONTAINS(out, one);
		l += n + (l[n] == ',');
	}
	link_up();
	row_down = NULL;
}

#define ROW(i)                     \
	static void row_##i(void)  \
	{                          \
		run_row(&rows[i]); \
	}
ROW(0)
ROW(1)
ROW(2)
ROW(3)
ROW(4)
ROW(5)
ROW(6)
ROW(7)
ROW(8)
ROW(9)
ROW(10)
ROW(11)
ROW(12)
ROW(13)
ROW(14)
ROW(15)
ROW(16)
ROW(17)
ROW(18)
ROW(19)
ROW(20)
ROW(21)
ROW(22)
ROW(23)
ROW(24)
ROW(25)
_Static_assert(NROWS == 26, "a ROW() and a TEST() for every row");

GDX_TESTS_MAIN(TEST(row_0, 60), TEST(row_1, 60), TEST(row_2, 60), TEST(row_3, 60), TEST(row_4, 60),
	       TEST(row_5, 60), TEST(row_6, 60), TEST(row_7, 60), TEST(row_8, 60), TEST(row_9, 60),
	       TEST(row_10, 60), TEST(row_11, 60), TEST(row_12, 60), TEST(row_13, 60),
	       TEST(row_14, 60), TEST(row_15, 60), TEST(row_16, 60), TEST(row_17, 60),
	       TEST(row_18, 60), TEST(row_19, 60), TEST(row_20, 60), TEST(row_21, 60),
	       TEST(row_22, 60), TEST(row_23, 60), TEST(row_24, 60), TEST(row_25, 60))
