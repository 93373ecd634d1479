/* SPDX-License-Identifier: MIT */
/*
 * A fused device that pairs a near NIC with a far one (NCCL issue 2310),
 * over rxe (--pairs 2): the topology fixture vm-far-rail puts rxe1 on its
 * GPU's PCIe switch and rxe3 behind the host bridge (NCCL_GDX_TOPO_FILE), so
 * the sender's rxe1+rxe3 has rxe3 far. tc stands in for what the far path
 * costs: the GPU's upstream link, which both paths share (one 40 Mbit/s
 * shaper that both veths' packets go through, an ifb), and the far path's
 * own lower bandwidth within it (10 Mbit/s). 1 MiB messages, 4 in flight,
 * the receiver a process of its own:
 * - standing by (the default), the far rail carries nothing while the near
 *   one is up, and the stream gets the shared link;
 * - weighted striping (NCCL_GDX_STANDBY=0) gets no more, with the far
 *   path's WRs and completions on top;
 * - even striping (and NCCL_GDX_STRIPE_WEIGHTED=0, net_ib's split) is
 *   paced by the far path;
 * - the near rail's wire down (failover on): the far rail carries the
 *   stream; back up, it stands by again.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

#define FUSED_LISTEN  0 /* rxe0+rxe2 */
#define FUSED_CONNECT 1 /* rxe1+rxe3: sends by veth1 (near) and veth3 (far) */
#define MSG	      (1 << 20)

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		gdx_test_fail(__FILE__, __LINE__, "failed: %s", cmd);
}

/* Both of the sender's veths through one 40 Mbit/s shaper (the shared
 * upstream), the far one's packets held to 10 Mbit/s within it. */
static void shape(void)
{
	/* queues long enough that the shaper delays and never drops: a packet
	 * rxe loses costs it a retransmit timeout */
	sh("ip link add ifb0 type ifb 2>/dev/null; ip link set ifb0 txqueuelen 10000 up && "
	   "tc qdisc replace dev ifb0 root handle 1: htb default 10 && "
	   "tc class add dev ifb0 parent 1: classid 1:1 htb rate 40mbit ceil 40mbit "
	   "burst 64k cburst 64k && "
	   "tc class add dev ifb0 parent 1:1 classid 1:10 htb rate 30mbit ceil 40mbit "
	   "burst 64k cburst 64k && "
	   "tc class add dev ifb0 parent 1:1 classid 1:20 htb rate 10mbit ceil 10mbit "
	   "burst 64k cburst 64k && "
	   "tc qdisc add dev ifb0 parent 1:10 pfifo limit 8000 && "
	   "tc qdisc add dev ifb0 parent 1:20 pfifo limit 8000 && "
	   "tc filter add dev ifb0 parent 1: protocol ip u32 match ip src 198.18.1.2/32 "
	   "flowid 1:20");
	for (int i = 1; i <= 3; i += 2) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "tc qdisc replace dev veth%d root handle 1: prio && tc filter add dev "
			 "veth%d parent 1: protocol all matchall action mirred egress redirect "
			 "dev ifb0",
			 i, i);
		sh(cmd);
	}
}

static void unshape(void)
{
	sh("tc qdisc del dev veth1 root; tc qdisc del dev veth3 root; ip link del ifb0; true");
}

struct run {
	double mbps;
	unsigned long long near, far; /* bytes the veths sent meanwhile */
};

/* One mode, in a process of its own (its environment, its plugin): Mbit/s
 * over 10 s once the rates have settled, into wr. */
static void run_child(const char *standby, const char *weighted, int wr)
{
	struct gdx_stream st;
	struct run out;
	uint64_t b0;
	double t0;

	setenv("NCCL_GDX_STANDBY", standby, 1);
	setenv("NCCL_GDX_STRIPE_WEIGHTED", weighted, 1);
	gdx_stream_start(&st, FUSED_CONNECT, FUSED_LISTEN, MSG);
	ASSERT(gdx_stream_moves(&st, 4, 60));
	sleep(3);
	b0 = __atomic_load_n(&st.bytes, __ATOMIC_RELAXED);
	out.near = gdx_tx_bytes("veth1");
	out.far = gdx_tx_bytes("veth3");
	t0 = gdx_now_s();
	sleep(10);
	out.mbps = (double)(__atomic_load_n(&st.bytes, __ATOMIC_RELAXED) - b0) * 8 / 1e6 /
		   (gdx_now_s() - t0);
	out.near = gdx_tx_bytes("veth1") - out.near;
	out.far = gdx_tx_bytes("veth3") - out.far;
	gdx_stream_stop(&st);
	ASSERT_EQ(st.res, ncclSuccess);
	/* the device's INFO line names the far member and why */
	if (!strcmp(standby, "1"))
		ASSERT_STR_CONTAINS(gdx_test_infos(),
				    "rxe1+rxe3: rxe3 (PHB) stand(s) by for GPU 0000:1e:00.0, where "
				    "rxe1 (PIX) share(s) its PCIe switch");
	ASSERT_EQ(write(wr, &out, sizeof(out)), (ssize_t)sizeof(out));
	exit(0);
}

static struct run run_mode(const char *standby, const char *weighted)
{
	struct run r;
	int fds[2], status;
	pid_t child;

	fflush(stdout);
	ASSERT_EQ(pipe(fds), 0);
	child = fork();
	ASSERT(child >= 0);
	if (child == 0)
		run_child(standby, weighted, fds[1]);
	ASSERT_EQ(read(fds[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fds[0]);
	close(fds[1]);
	return r;
}

static void test_far_rail_stands_by(void)
{
	struct run sb, w, ev;

	gdx_vm_links_up();
	sh("for i in 0 1 2 3; do ip link set veth$i mtu 9000; done");
	gdx_vm_links_up();
	shape();
	setenv("NCCL_GDX_TOPO_FILE", "tests/lib/fixtures/topo/vm-far-rail.xml", 1);
	setenv("NCCL_GDX_RAILS", "rxe0+rxe2,rxe1+rxe3", 1);
	sb = run_mode("1", "1");
	w = run_mode("0", "1");
	ev = run_mode("0", "0");
	unshape();
	sh("for i in 0 1 2 3; do ip link set veth$i mtu 1500; done");
	gdx_vm_links_up();
	printf("  rxe1 near, rxe3 far behind the host bridge; both through one 40 Mbit/s "
	       "link, the far path 10 Mbit/s of it; 1 MiB messages:\n");
	printf("  standing by (default)      %5.1f Mbit/s  (near %llu bytes, far %llu)\n", sb.mbps,
	       sb.near, sb.far);
	printf("  weighted (STANDBY=0)       %5.1f Mbit/s  (near %llu bytes, far %llu)\n", w.mbps,
	       w.near, w.far);
	printf("  even (STRIPE_WEIGHTED=0)   %5.1f Mbit/s  (near %llu bytes, far %llu)\n", ev.mbps,
	       ev.near, ev.far);
	/* standing by, the far rail carried nothing but the handshake's bytes */
	ASSERT(sb.far * 100 < sb.near);
	ASSERT(w.far * 20 > w.near); /* striping used it */
	ASSERT(sb.mbps >= 0.9 * w.mbps);
	ASSERT(sb.mbps >= 1.5 * ev.mbps);
}

/* The near rail's wire goes down under a stream: the far one carries it;
 * back up, the far one stands by again. */
static void test_far_rail_takes_over(void)
{
	struct gdx_stream st;
	unsigned long long far;

	gdx_vm_links_up();
	setenv("NCCL_GDX_TOPO_FILE", "tests/lib/fixtures/topo/vm-far-rail.xml", 1);
	setenv("NCCL_GDX_RAILS", "rxe0+rxe2,rxe1+rxe3", 1);
	setenv("NCCL_GDX_FAILOVER", "1", 1);
	gdx_stream_start(&st, FUSED_CONNECT, FUSED_LISTEN, 256 << 10);
	ASSERT(gdx_stream_moves(&st, 20, 60));
	far = gdx_tx_bytes("veth3");
	ASSERT(gdx_stream_moves(&st, 20, 60));
	ASSERT(gdx_tx_bytes("veth3") - far < 64 << 10);
	sh("ip link set veth1 down");
	ASSERT(gdx_stream_moves(&st, 5, 30)); /* failover under way */
	far = gdx_tx_bytes("veth3");
	ASSERT(gdx_stream_moves(&st, 20, 60));
	printf("  near rail down: the far one carried %llu bytes of 20 messages of 256 KiB\n",
	       gdx_tx_bytes("veth3") - far);
	ASSERT(gdx_tx_bytes("veth3") - far >= 15ull * (256 << 10));
	sh("ip link set veth1 up");
	gdx_port_wait_active("rxe1");
	/* once the near rail is back, nothing more goes by the far one */
	for (int i = 0; i < 60; i++) {
		far = gdx_tx_bytes("veth3");
		ASSERT(gdx_stream_moves(&st, 10, 60));
		if (gdx_tx_bytes("veth3") - far < 64 << 10)
			break;
		ASSERT(i < 59);
	}
	ASSERT_STR_CONTAINS(gdx_test_infos(), "back in the connection");
	gdx_stream_stop(&st);
	ASSERT_EQ(st.res, ncclSuccess);
}

GDX_TESTS_MAIN(TEST(test_far_rail_stands_by, 240), TEST(test_far_rail_takes_over, 180))
