/* SPDX-License-Identifier: MIT */
/*
 * Everything that crosses the wire: the listen handle NCCL carries to the
 * peer, the out-of-band handshake, and the clear-to-send entries the receiver
 * RDMA-writes into the sender's FIFO. All integers are little-endian on the
 * wire; pack/unpack convert, and unpack validates before anything is trusted.
 */
#ifndef GDX_WIRE_H
#define GDX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <nccl/net_common.h>

#define GDX_WIRE_MAGIC	 0x31307465786e6467ULL /* "gdxnet01" */
#define GDX_WIRE_VERSION 2
#define GDX_WIRE_READY	 0x59444552u /* "REDY": connector's QPs are at RTS */
#define GDX_MAX_RAILS	 8
#define GDX_DEV_NAME_MAX 64

/* The listen handle: fits NCCL's 128-byte buffer, holds no pointers. */
struct gdx_handle {
	uint64_t magic;
	uint32_t version;
	uint16_t family;   /* AF_INET or AF_INET6 */
	uint16_t port;	   /* network byte order, as in sockaddr */
	uint8_t addr[16];  /* IPv4 in the first 4 bytes */
	uint32_t scope_id; /* IPv6 link-local scope */
	uint16_t nrails;   /* NICs of the listener's device: the connector makes
			    * max(its own, these) QPs, as net_ib does */
	uint16_t reserved;
	uint64_t nonce; /* random per listen comm; echoed in the hello */
};
_Static_assert(sizeof(struct gdx_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle fits NCCL's buffer");

/* First bytes each way on the out-of-band socket. */
struct gdx_wire_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t meta_len; /* bytes of struct gdx_wire_meta that follow */
	uint64_t nonce;	   /* the listener's nonce from the handle */
	uint32_t nrails;   /* NICs of the sender's device */
	uint32_t reserved;
};

/* One rail's QP address. */
struct gdx_wire_rail {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t psn;
	uint16_t lid;
	uint8_t link_layer;  /* IBV_LINK_LAYER_INFINIBAND (1) or _ETHERNET (2) */
	uint8_t mtu;	     /* enum ibv_mtu of the port, 1..5 */
	uint32_t sizes_rkey; /* receiver: rkey of its group sizes on this rail's NIC */
};

struct gdx_wire_meta {
	uint32_t nrails;    /* QPs of the connection, 1..GDX_MAX_RAILS: rail i uses NIC
			     * i % (NICs of each end's device) */
	uint32_t max_recvs; /* largest grouped receive this end posts or accepts */
	uint64_t fifo_addr; /* sender: where the receiver writes clear-to-send entries */
	uint32_t fifo_rkey; /* sender: rkey of that FIFO on rail 0 */
	uint8_t sl, tc;	    /* sender: the connection's service level and traffic class,
			     * which the receiver's QPs use too */
	uint16_t reserved;
	uint64_t sizes_addr; /* receiver: GDX_MAX_REQUESTS x GDX_MAX_RECVS uint32_t, where
			      * a grouped receive's sizes are written */
	char dev_name[GDX_DEV_NAME_MAX]; /* for error messages; NUL-terminated */
	struct gdx_wire_rail rails[GDX_MAX_RAILS];
};

_Static_assert(sizeof(struct gdx_wire_hello) % 8 == 0 && sizeof(struct gdx_wire_meta) % 8 == 0,
	       "hello and meta are sent back to back without padding");

/*
 * A clear-to-send entry: the receiver has posted a buffer. 64 bytes; seq is
 * the last field and the sender polls it.
 */
struct gdx_cts {
	uint64_t addr;
	uint64_t size;
	uint32_t rkeys[GDX_MAX_RAILS];
	uint32_t rail_mask; /* rails the sender must write on */
	uint32_t tag;
	uint32_t nreqs; /* buffers of this grouped receive, 1..GDX_MAX_RECVS */
	uint32_t seq;	/* sequence number + 1; 0 = never written */
};
_Static_assert(sizeof(struct gdx_cts) == 64, "a CTS entry is 64 bytes");

/* A grouped receive posts up to this many buffers in one FIFO slot, one
 * clear-to-send entry each. */
#define GDX_MAX_RECVS 8

/*
 * The immediate of a WRITE_WITH_IMM: for a single receive, the byte count on
 * that rail. A grouped receive's buffers are written without one, then its
 * sizes (one uint32_t per buffer) into the receiver's sizes array at the
 * receive's slot by a WRITE_WITH_IMM of GDX_IMM_GROUP: RC places the writes
 * in order, so the sizes and the bytes are there when it completes.
 * GDX_IMM_REFUSED says the sender refused a message larger than its receive.
 */
#define GDX_IMM_REFUSED 0xffffffffu
#define GDX_IMM_GROUP	0xfffffffeu

void gdx_handle_pack(struct gdx_handle *h, int family, const void *addr, uint16_t port_be,
		     uint32_t scope_id, uint64_t nonce, uint32_t nrails);
/* Returns 0, -EPROTONOSUPPORT for another magic or version (*why_p names both),
 * -EINVAL for a malformed address or rail count. */
int gdx_handle_check(const struct gdx_handle *h, char *why, size_t why_len);

void gdx_wire_hello_pack(struct gdx_wire_hello *h, uint64_t nonce, uint32_t nrails);
/* The rail count a validated hello announces. */
uint32_t gdx_wire_hello_rails(const struct gdx_wire_hello *h);
/* Validates a peer's hello. Returns 0; -EPROTONOSUPPORT for another magic or
 * version; -EPROTO for a wrong nonce or length. why gets a full sentence. */
int gdx_wire_hello_check(const void *buf, size_t len, uint64_t nonce, char *why, size_t why_len);

void gdx_wire_meta_pack(struct gdx_wire_meta *out, const struct gdx_wire_meta *in);
/* Unpacks and validates. Returns 0 or -EPROTO with why filled in. */
int gdx_wire_meta_unpack(const void *buf, size_t len, struct gdx_wire_meta *out, char *why,
			 size_t why_len);

#endif
