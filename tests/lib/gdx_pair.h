/* SPDX-License-Identifier: MIT */
/*
 * Helpers for tests that move bytes through the plugin's NCCL table: connect a
 * send/receive pair from one thread (as NCCL's loopback probe does), register
 * buffers, transfer with byte-by-byte verification.
 */
#ifndef GDX_PAIR_H
#define GDX_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include <nccl/net.h>

struct gdx_pair {
	const ncclNet_v7_t *net;
	void *listen;
	void *send; /* on connect_dev */
	void *recv; /* on listen_dev */
};

struct gdx_buf {
	char *alloc;
	char *mem; /* alloc + offset: deliberately unaligned when asked */
	size_t size;
	void *mh;
};

/* Connects within timeout_s or fails the test. */
void gdx_pair_connect(const ncclNet_v7_t *net, int listen_dev, int connect_dev, struct gdx_pair *p);
void gdx_pair_close(struct gdx_pair *p);

/* Allocates size bytes at the given misalignment and registers them on comm. */
void gdx_buf_alloc(const ncclNet_v7_t *net, void *comm, size_t size, size_t offset,
		   struct gdx_buf *b);
void gdx_buf_free(const ncclNet_v7_t *net, void *comm, struct gdx_buf *b);

/* A pattern no two (seed, offset) pairs share in practice. */
void gdx_fill(char *p, size_t n, uint32_t seed);
/* Index of the first byte that differs from the pattern, or -1. */
long gdx_check(const char *p, size_t n, uint32_t seed);

/* Waits for a request; returns the final result (done or error) and the size. */
ncclResult_t gdx_wait(const ncclNet_v7_t *net, void *req, int *size, double timeout_s);

/* Posts a receive of recv_size and a send of send_size through p, waits for
 * both, and checks every byte that arrived plus a canary after it. */
void gdx_transfer(struct gdx_pair *p, size_t send_size, size_t recv_size, size_t offset,
		  uint32_t seed);

double gdx_now_s(void);

/* The verbs objects the kernel holds per device, from `rdma resource show`:
 * "0: rxe0: pd 1 cq 2 qp 2 cm_id 0 mr 3 ctx 1 srq 0". The VM runs nothing
 * else, so they are this process's. */
void gdx_rdma_counts(char *out, size_t len);

/* The TOS byte of the first RoCE v2 packet (UDP port 4791) that leaves
 * ifname while send_some(arg) runs; -1 when none does. */
int gdx_capture_tos(const char *ifname, void (*send_some)(void *), void *arg);

/* What a captured RoCE v2 packet says. */
struct gdx_roce_pkt {
	uint8_t tos;
	uint8_t opcode; /* BTH: 0x06-0x0b are RC RDMA WRITE First..Only with Immediate */
	uint16_t sport; /* UDP source port: one per QP */
	uint32_t dqpn, psn;
	int32_t reth_len; /* the RETH's DMA length, -1 where the opcode has none */
};

/* Up to max RoCE v2 packets that leave ifname while send_some(arg) runs, in
 * order; returns how many. */
int gdx_capture_roce(const char *ifname, void (*send_some)(void *), void *arg,
		     struct gdx_roce_pkt *out, int max);

/* /sys/class/net/IFNAME/statistics/tx_bytes. */
unsigned long long gdx_tx_bytes(const char *ifname);

/* Waits (up to 10 s) until the rxe port is ACTIVE with its IPv4 GID back,
 * as a veth brought up again makes it; fails the test otherwise. */
void gdx_port_wait_active(const char *ibdev);

/* In the VM: every veth up without a shaper, and every rxe active (2 x
 * GDX_VM_PAIRS of them), whatever an earlier test left. */
void gdx_vm_links_up(void);

#endif
