/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdx_pair.h"
#include "gdx_test.h"

double gdx_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gdx_pair_connect(const ncclNet_v7_t *net, int listen_dev, int connect_dev, struct gdx_pair *p)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	ncclNetDeviceHandle_v7_t *dev_send = NULL;
	double start = gdx_now_s();

	memset(p, 0, sizeof(*p));
	memset(handle, 0, sizeof(handle));
	p->net = net;
	ASSERT_EQ(net->listen(listen_dev, handle, &p->listen), ncclSuccess);
	ASSERT(p->listen != NULL);
	/* Both ends from this one thread, neither waiting for the other. */
	while (!p->send || !p->recv) {
		if (!p->send)
			ASSERT_EQ(net->connect(connect_dev, handle, &p->send, &dev_send),
				  ncclSuccess);
		if (!p->recv)
			ASSERT_EQ(net->accept(p->listen, &p->recv, NULL), ncclSuccess);
		if (gdx_now_s() - start > 20)
			gdx_test_fail(__FILE__, __LINE__, "connect/accept did not finish in 20 s");
	}
	ASSERT(dev_send == NULL);
}

void gdx_pair_close(struct gdx_pair *p)
{
	/* a test may have closed one end itself and set it to NULL */
	if (p->send)
		ASSERT_EQ(p->net->closeSend(p->send), ncclSuccess);
	if (p->recv)
		ASSERT_EQ(p->net->closeRecv(p->recv), ncclSuccess);
	ASSERT_EQ(p->net->closeListen(p->listen), ncclSuccess);
}

void gdx_buf_alloc(const ncclNet_v7_t *net, void *comm, size_t size, size_t offset,
		   struct gdx_buf *b)
{
	size_t reg = size ? size : 1;

	b->alloc = malloc(reg + offset + 64);
	ASSERT(b->alloc != NULL);
	b->mem = b->alloc + offset;
	b->size = size;
	memset(b->alloc, 0x5a, reg + offset + 64);
	ASSERT_EQ(net->regMr(comm, b->mem, (int)reg, NCCL_PTR_HOST, &b->mh), ncclSuccess);
}

void gdx_buf_free(const ncclNet_v7_t *net, void *comm, struct gdx_buf *b)
{
	ASSERT_EQ(net->deregMr(comm, b->mh), ncclSuccess);
	free(b->alloc);
}

void gdx_fill(char *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (char)(x >> 24);
	}
}

long gdx_check(const char *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (p[i] != (char)(x >> 24))
			return (long)i;
	}
	return -1;
}

ncclResult_t gdx_wait(const ncclNet_v7_t *net, void *req, int *size, double timeout_s)
{
	double start = gdx_now_s();
	int done = 0;

	while (!done) {
		ncclResult_t r = net->test(req, &done, size);

		if (r != ncclSuccess)
			return r;
		if (gdx_now_s() - start > timeout_s)
			gdx_test_fail(__FILE__, __LINE__, "request %p not done after %.0f s", req,
				      timeout_s);
	}
	return ncclSuccess;
}

void gdx_transfer(struct gdx_pair *p, size_t send_size, size_t recv_size, size_t offset,
		  uint32_t seed)
{
	const ncclNet_v7_t *n = p->net;
	struct gdx_buf s, r;
	void *sreq = NULL, *rreq = NULL;
	int tag = 7, rsize = (int)recv_size, got = -1, sent = -1;
	void *data = NULL;
	double start;
	long bad;

	gdx_buf_alloc(n, p->send, send_size, offset, &s);
	gdx_buf_alloc(n, p->recv, recv_size, offset + 1, &r);
	gdx_fill(s.mem, send_size, seed);
	data = r.mem;
	ASSERT_EQ(n->irecv(p->recv, 1, &data, &rsize, &tag, &r.mh, &rreq), ncclSuccess);
	ASSERT(rreq != NULL);
	start = gdx_now_s();
	while (!sreq) {
		ASSERT_EQ(n->isend(p->send, s.mem, (int)send_size, tag, s.mh, &sreq), ncclSuccess);
		if (gdx_now_s() - start > 20)
			gdx_test_fail(__FILE__, __LINE__, "no clear-to-send after 20 s");
	}
	ASSERT_EQ(gdx_wait(n, sreq, &sent, 60), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, rreq, &got, 60), ncclSuccess);
	ASSERT_EQ(sent, (int)send_size);
	ASSERT_EQ(got, (int)send_size);
	bad = gdx_check(r.mem, send_size, seed);
	if (bad >= 0)
		gdx_test_fail(__FILE__, __LINE__, "%zu-byte transfer: byte %ld differs", send_size,
			      bad);
	/* Nothing written past what was sent. */
	for (size_t i = send_size; i < recv_size + 64 && i < send_size + 64; i++)
		if (r.mem[i] != 0x5a)
			gdx_test_fail(__FILE__, __LINE__,
				      "byte %zu past a %zu-byte message written", i, send_size);
	gdx_buf_free(n, p->send, &s);
	gdx_buf_free(n, p->recv, &r);
}

void gdx_rdma_counts(char *out, size_t len)
{
	FILE *f = popen("rdma resource show 2>&1", "r");
	size_t used = 0;
	char line[256];

	ASSERT(f != NULL);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f) && used + strlen(line) < len) {
		strcpy(out + used, line);
		used += strlen(line);
	}
	ASSERT_EQ(pclose(f), 0);
}

/* RoCE v2 packets leaving ifname while send_some(arg) runs, in the order
 * they left: IP, UDP to port 4791, then the BTH (and a RETH where the
 * opcode has one). The socket's buffer is made large enough to keep a few
 * MiB of them: they are read after send_some returns. */
int gdx_capture_roce(const char *ifname, void (*send_some)(void *), void *arg,
		     struct gdx_roce_pkt *out, int max)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	unsigned char pkt[128];
	int fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), got = 0, seen = 0,
	    rcvbuf = 64 << 20;

	ASSERT(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	ASSERT(sll.sll_ifindex > 0);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	send_some(arg);
	while (got < max) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		const struct iphdr *ip = (const struct iphdr *)pkt;
		const unsigned char *bth;
		struct sockaddr_ll from;
		socklen_t from_len;
		ssize_t n;

		if (poll(&pfd, 1, 500) <= 0)
			break;
		from_len = sizeof(from);
		n = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&from, &from_len);
		/* only what leaves: the peer's packets arrive on this veth too */
		if (n < (ssize_t)(sizeof(*ip) + sizeof(struct udphdr) + 12) ||
		    from.sll_pkttype != PACKET_OUTGOING || from.sll_protocol != htons(ETH_P_IP) ||
		    ip->protocol != IPPROTO_UDP)
			continue;
		seen++;
		if (ntohs(((const struct udphdr *)(pkt + ip->ihl * 4))->dest) != 4791)
			continue;
		bth = pkt + ip->ihl * 4 + sizeof(struct udphdr);
		out[got] = (struct gdx_roce_pkt){
			.tos = ip->tos,
			.sport = ntohs(((const struct udphdr *)(pkt + ip->ihl * 4))->source),
			.opcode = bth[0],
			.dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7],
			.psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11],
			.reth_len = -1};
		/* RC RDMA WRITE First (0x06), Only (0x0a), Only with Immediate (0x0b) */
		if ((bth[0] == 0x06 || bth[0] == 0x0a || bth[0] == 0x0b) &&
		    n >= (ssize_t)(bth - pkt) + 12 + 16)
			out[got].reth_len =
				(int32_t)((uint32_t)bth[24] << 24 | (uint32_t)bth[25] << 16 |
					  (uint32_t)bth[26] << 8 | bth[27]);
		got++;
	}
	close(fd);
	if (!got)
		printf("  %d outgoing UDP packets on %s, none to port 4791\n", seen, ifname);
	return got;
}

int gdx_capture_tos(const char *ifname, void (*send_some)(void *), void *arg)
{
	struct gdx_roce_pkt pkt;

	return gdx_capture_roce(ifname, send_some, arg, &pkt, 1) == 1 ? pkt.tos : -1;
}

unsigned long long gdx_tx_bytes(const char *ifname)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_bytes", ifname);
	f = fopen(path, "r");
	ASSERT(f != NULL);
	ASSERT_EQ(fscanf(f, "%llu", &v), 1);
	fclose(f);
	return v;
}

void gdx_port_wait_active(const char *ibdev)
{
	char path[128], line[128];

	for (int i = 0; i < 400; i++) {
		FILE *f;
		int active = 0, gid = 0;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/state", ibdev);
		if ((f = fopen(path, "r"))) {
			active = fgets(line, sizeof(line), f) && strstr(line, "ACTIVE");
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/1", ibdev);
		if ((f = fopen(path, "r"))) {
			gid = fgets(line, sizeof(line), f) &&
			      strncmp(line, "0000:0000:0000:0000:0000:0000", 29);
			fclose(f);
		}
		if (active && gid)
			return;
		usleep(25000);
	}
	gdx_test_fail(__FILE__, __LINE__, "%s did not come back", ibdev);
}

void gdx_vm_links_up(void)
{
	const char *pairs = getenv("GDX_VM_PAIRS");
	int n = pairs && atoi(pairs) > 0 ? 2 * atoi(pairs) : 4;
	char cmd[128];

	for (int i = 0; i < n; i++) {
		snprintf(
			cmd, sizeof(cmd),
			"ip link set veth%d up && { tc qdisc del dev veth%d root 2>/dev/null || true; }",
			i, i);
		ASSERT_EQ(system(cmd), 0);
	}
	for (int i = 0; i < n; i++) {
		snprintf(cmd, sizeof(cmd), "rxe%d", i);
		gdx_port_wait_active(cmd);
	}
}
