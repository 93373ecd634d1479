/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band ring of one-sided RMA's collective calls (gdx_rma_boot.c):
 * the listen handle, the ring a group makes in connect (each rank connects
 * to the next one's listen socket and takes the previous one's connection
 * on its own), and the all-gathers over it that connect, createContext and
 * regMrSym exchange their addresses and keys by. Blocking, as those calls
 * are: each waits on the sockets with poll(2) up to a deadline of ten
 * NCCL_GDX_HANDSHAKE_TIMEOUT_MS, and a neighbour that closes fails it at
 * once. Everything on the wire is little-endian.
 */
#ifndef GDX_RMA_BOOT_H
#define GDX_RMA_BOOT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rma/gdx_rma_comm.h"
#include "sys/gdx_door.h"
#include "sys/gdx_sock.h"

#define GDX_RMA_MAGIC	0x31306172786467ULL /* "gdxrma01" */
#define GDX_RMA_VERSION 1

/* The listen handle: fits NCCL's 128 bytes, holds no pointers. */
struct gdx_rma_handle {
	uint64_t magic;
	uint32_t version;
	uint16_t family;  /* AF_INET or AF_INET6 */
	uint16_t port;	  /* network byte order, as in sockaddr */
	uint8_t addr[16]; /* IPv4 in the first 4 bytes */
	uint32_t scope_id;
	uint32_t reserved;
	uint64_t nonce; /* random per listen comm: the ring's hello proves it */
};
_Static_assert(sizeof(struct gdx_rma_handle) <= NCCL_NET_HANDLE_MAXSIZE,
	       "the RMA handle fits NCCL's buffer");

/* The first bytes each way on a ring socket: the connector's proves it
 * holds the listener's handle (its nonce) and says who it is; the
 * listener's answer says it was taken. */
struct gdx_rma_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t rank;
	uint32_t nranks;
	uint32_t reserved;
	uint64_t nonce;
};

/* A listen socket on the out-of-band interface, and its handle. addr gets
 * "ip:port" for messages. */
int gdx_rma_boot_listen(void *handle, int *fd_p, uint64_t *nonce_p, char *addr, size_t len);
/* The ring of nranks ranks, this one rank (handles[i]: rank i's listen
 * handle, NCCL's all-gathered copies), over lfd (this rank's listen
 * socket, whose handle carries nonce). 0, or -errno after a WARN. */
int gdx_rma_boot_ring(struct gdx_rma_boot *b, int lfd, uint64_t nonce, void *const *handles,
		      int nranks, int rank);
/* buf holds nranks blocks of block bytes, this rank's at its index: every
 * rank's fills the others'. what names the call in messages. */
int gdx_rma_boot_allgather(struct gdx_rma_boot *b, void *buf, size_t block, const char *what);
void gdx_rma_boot_close(struct gdx_rma_boot *b);

/* For the tests only: no other file of the plugin uses what follows. */

/* The ring's previous side (gdx_rma_boot_ring makes it), one step at a
 * time: what comes to the listen socket, through the door. */
struct gdx_rma_prev {
	struct gdx_door door;
	int rank, nranks; /* this rank's */
	uint64_t nonce;	  /* this rank's handle's */
	int fd;		  /* the previous rank's connection, once its hello is checked */
	char from[64];
	struct gdx_rma_hello ack; /* the answer, sent on fd */
	struct gdx_xfer x_ack;
	bool rival; /* a second connection claimed to be the previous rank */
	char rival_from[64];
};

void gdx_rma_prev_open(struct gdx_rma_prev *p, int lfd, int rank, int nranks, uint64_t nonce,
		       int hello_ms);
/* Takes and reads what has come: 0 once the previous rank's connection is
 * taken and answered (p->fd), -EAGAIN, -EEXIST when a second one claimed
 * to be it, or a negative errno. */
int gdx_rma_prev_step(struct gdx_rma_prev *p, uint64_t now);
/* What to poll for the next step; at most 2 + GDX_DOOR_MAX. */
int gdx_rma_prev_pollfds(const struct gdx_rma_prev *p, struct pollfd *fds);
/* Closes what the door holds, and p->fd unless keep_fd. */
void gdx_rma_prev_close(struct gdx_rma_prev *p, bool keep_fd);

/* Little-endian fields of the exchanged records. */
static inline void gdx_rma_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gdx_rma_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t gdx_rma_get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static inline uint64_t gdx_rma_get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif
