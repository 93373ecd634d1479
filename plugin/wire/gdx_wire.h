/* SPDX-License-Identifier: MIT */
/*
 * Everything that crosses the wire: the listen handle NCCL carries to the
 * peer, the out-of-band handshake, and the clear-to-send entries the receiver
 * RDMA-writes into the sender's FIFO. All integers are little-endian on the
 * wire; pack/unpack convert, and unpack validates before anything is trusted.
 */
#ifndef GDX_WIRE_H
#define GDX_WIRE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl/net_common.h>

#define GDX_WIRE_MAGIC	 0x31307465786e6467ULL /* "gdxnet01" */
#define GDX_WIRE_VERSION 4
#define GDX_WIRE_READY	 0x59444552u /* "REDY": connector's QPs are at RTS */
#define GDX_MAX_RAILS	 8
/* QPs of one connection over all its rails, net_ib's NCCL_IB_MAX_QPS. */
#define GDX_MAX_QPS	 128
#define GDX_DEV_NAME_MAX 64

/* The listen handle: fits NCCL's 128-byte buffer, holds no pointers. */
#define GDX_HANDLE_GIDS 4
struct gdx_handle {
	uint64_t magic;
	uint32_t version;
	uint16_t family;   /* AF_INET or AF_INET6 */
	uint16_t port;	   /* network byte order, as in sockaddr */
	uint8_t addr[16];  /* IPv4 in the first 4 bytes */
	uint32_t scope_id; /* IPv6 link-local scope */
	uint16_t nrails;   /* NICs of the listener's device: the connector makes
			    * max(its own, these) rails, as net_ib does */
	uint16_t qps;	   /* the listener's QPs per rail: the connector makes
			    * max(its own, these) on every rail */
	uint64_t nonce;	   /* random per listen comm; echoed in the hello */
	/* NCCL_GDX_SUBNET_AWARE_ROUTING: the GIDs of the listener's RoCE ports
	 * (its device's members, in order), for the connector to find a device
	 * on their subnets (gdx_subnet.c); all zero otherwise (0.4.1 and
	 * earlier end before them: a job runs one release on every node). */
	uint8_t gids[GDX_HANDLE_GIDS][16];
};
_Static_assert(sizeof(struct gdx_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle fits NCCL's buffer");

/*
 * First bytes each way on the out-of-band socket. The connector's carries
 * the nonce of the handle it was given, which proves it has the handle; the
 * listener answers a connector that proved it with its own hello (the same
 * nonce) and metadata, and any other with a refusal: its magic and version,
 * no nonce, and why in refused, so that nobody learns the nonce from it.
 */
struct gdx_wire_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t meta_len; /* bytes of struct gdx_wire_meta that follow */
	uint64_t nonce;	   /* the listener's nonce from the handle; 0 in a refusal */
	uint32_t nrails;   /* NICs of the sender's device */
	uint32_t refused;  /* 0; in a listener's refusal, why (GDX_REFUSED_*) */
};

/* Why a listener refused a connection, as its refusal says. */
enum gdx_refusal {
	GDX_REFUSED_VERSION = 1, /* another magic or protocol version (the refusal
				  * carries the listener's) */
	GDX_REFUSED_HELLO,	 /* a malformed hello */
	GDX_REFUSED_NONCE,	 /* not the nonce of the listener's handle */
	GDX_REFUSED_META,	 /* malformed metadata */
	GDX_REFUSED_RAILS,	 /* rail or QP counts the two ends cannot agree on */
	GDX_REFUSED_LOCAL,	 /* the listener could not make its end (its log says why) */
	GDX_REFUSED_BUSY,	 /* closed unread: the oldest of too many connections
				  * without a hello (from that address, or in all) */
	GDX_REFUSED_SILENT,	 /* closed unread: no hello within the listener's deadline */
};
#define GDX_REFUSED_LAST GDX_REFUSED_SILENT

/* A QP's Enhanced Connection Establishment options (ibv_ece). */
struct gdx_wire_ece {
	uint32_t vendor_id;
	uint32_t options;
	uint32_t comp_mask;
	uint32_t supported; /* 0: the provider has none, or ECE is off */
};

/* One rail's address: its QPs are in the meta's qpn[], rail-major. */
struct gdx_wire_rail {
	uint8_t gid[16];
	uint32_t psn; /* every QP of the rail starts at it */
	uint16_t lid;
	uint8_t link_layer; /* IBV_LINK_LAYER_INFINIBAND (1) or _ETHERNET (2) */
	uint8_t mtu;	    /* enum ibv_mtu of the port, 1..5 */
	uint32_t ctrl_rkey; /* rkey of the end's control region on this rail's NIC */
	uint32_t reserved;
	struct gdx_wire_ece ece; /* connector: its own; acceptor: what it set */
};

struct gdx_wire_meta {
	uint32_t nrails;       /* rails of the connection, 1..GDX_MAX_RAILS: rail i uses
				* NIC i % (NICs of each end's device) */
	uint32_t qps_per_rail; /* 1..GDX_MAX_QPS / nrails: the connector's choice */
	uint32_t max_recvs;    /* largest grouped receive this end posts or accepts */
	uint8_t sl, tc;	       /* sender: the connection's service level and traffic class,
				* which the receiver's QPs use too */
	uint16_t flags;	       /* GDX_META_F_*; unknown bits are ignored */
	uint64_t ctrl_addr;    /* the end's control region (gdx_comm.h): the sender's FIFO,
				* the receiver's records, and both ends' rail notes */
	char dev_name[GDX_DEV_NAME_MAX]; /* for error messages; NUL-terminated */
	struct gdx_wire_rail rails[GDX_MAX_RAILS];
	uint32_t qpn[GDX_MAX_QPS]; /* QP q of rail r at r * qps_per_rail + q */
};

/* A debug build (gdx_req.h): its control region has room for each piece's
 * record, and its sender writes them. Records go only between two ends that
 * both say so, so that a debug build and a release build still talk. */
#define GDX_META_F_RECORDS 0x1
/* The end runs failover on the connection (gdx_failover.h): only where both
 * say so (0.4.3 on; an older peer says nothing, so the two stay off). */
#define GDX_META_F_FAILOVER 0x2

_Static_assert(sizeof(struct gdx_wire_hello) % 8 == 0 && sizeof(struct gdx_wire_meta) % 8 == 0,
	       "hello and meta are sent back to back without padding");

/*
 * A clear-to-send entry: the receiver has posted a buffer. 64 bytes; seq is
 * the last field and the sender polls it.
 */
struct gdx_cts {
	uint64_t addr;
	uint64_t size;
	uint32_t rkeys[GDX_MAX_RAILS]; /* the buffer's key on each rail's NIC */
	uint32_t reserved;
	uint32_t tag;
	uint32_t nreqs; /* buffers of this grouped receive, 1..GDX_MAX_RECVS */
	uint32_t seq;	/* sequence number + 1; 0 = never written */
};
_Static_assert(sizeof(struct gdx_cts) == 64, "a CTS entry is 64 bytes");

/* A grouped receive posts up to this many buffers in one FIFO slot, one
 * clear-to-send entry each. */
#define GDX_MAX_RECVS 8

/*
 * The immediate of a WRITE_WITH_IMM names the receive it completes, never
 * relies on which QP it came by: a message may be split over rails and QPs,
 * and one re-sent after a rail failed arrives by another. Two forms:
 *
 * small:   [31] 0  [30:24] seq mod 128  [23:0] the byte count
 *          a message in one piece, under 16 MiB, without adaptive routing:
 *          the common case costs one WRITE_WITH_IMM, as before.
 * chunked: [31] 1  [30:24] seq mod 128  [23:17] piece  [16:10] pieces - 1
 *          [9] group  [8] refused  [7:0] 0
 *          every other message: the byte count (for a group, each buffer's)
 *          is in the receiver's record of the slot, written on the first
 *          piece's QP before that piece's immediate; a piece counts once, so
 *          a copy that arrives twice cannot complete anything twice.
 */
#define GDX_IMM_SMALL_MAX  ((1u << 24) - 1)
#define GDX_IMM_MAX_PIECES 128
#define GDX_IMM_SEQ_MASK   127u
#define GDX_IMM_F_GROUP	   (1u << 9)
#define GDX_IMM_F_REFUSED  (1u << 8)
/* A restored rail's probe (gdx_failover.c): no receive, no piece; the
 * receiver learns that the rail carries again. Outside both forms. */
#define GDX_IMM_PROBE 0xffffffffu

struct gdx_imm {
	uint32_t seq; /* the receive's sequence number mod 128 */
	bool chunked;
	uint32_t size;	 /* small */
	uint32_t piece;	 /* chunked: 0..pieces-1 */
	uint32_t pieces; /* 1 for small */
	uint32_t flags;	 /* GDX_IMM_F_* */
};

static inline uint32_t gdx_imm_small(uint64_t seq, uint32_t size)
{
	return (uint32_t)(seq & GDX_IMM_SEQ_MASK) << 24 | (size & GDX_IMM_SMALL_MAX);
}

static inline uint32_t gdx_imm_chunk(uint64_t seq, uint32_t piece, uint32_t pieces, uint32_t flags)
{
	return 1u << 31 | (uint32_t)(seq & GDX_IMM_SEQ_MASK) << 24 | (piece & 127u) << 17 |
	       ((pieces - 1) & 127u) << 10 | (flags & (GDX_IMM_F_GROUP | GDX_IMM_F_REFUSED));
}

/* Returns 0, or -EPROTO for bits no sender sets (piece beyond pieces, the
 * low byte, a group refused). Inline: every immediate a receiver takes. */
static inline int gdx_imm_decode(uint32_t imm, struct gdx_imm *out)
{
	out->seq = (imm >> 24) & GDX_IMM_SEQ_MASK;
	out->chunked = imm >> 31;
	if (!out->chunked) {
		out->size = imm & GDX_IMM_SMALL_MAX;
		out->piece = out->flags = 0;
		out->pieces = 1;
		return 0;
	}
	out->size = 0;
	out->piece = (imm >> 17) & 127u;
	out->pieces = ((imm >> 10) & 127u) + 1;
	out->flags = imm & (GDX_IMM_F_GROUP | GDX_IMM_F_REFUSED);
	if ((imm & 0xffu) || out->piece >= out->pieces ||
	    ((out->flags & GDX_IMM_F_GROUP) &&
	     (out->pieces != 1 || (out->flags & GDX_IMM_F_REFUSED))) ||
	    ((out->flags & GDX_IMM_F_REFUSED) && out->pieces != 1))
		return -EPROTO;
	return 0;
}

void gdx_handle_pack(struct gdx_handle *h, int family, const void *addr, uint16_t port_be,
		     uint32_t scope_id, uint64_t nonce, uint32_t nrails, uint32_t qps);
/* Returns 0, -EPROTONOSUPPORT for another magic or version (*why_p names both),
 * -EINVAL for a malformed address, rail or QP count. */
int gdx_handle_check(const struct gdx_handle *h, char *why, size_t why_len);

void gdx_wire_hello_pack(struct gdx_wire_hello *h, uint64_t nonce, uint32_t nrails);
/* A listener's refusal (enum gdx_refusal): its magic and version, no nonce. */
void gdx_wire_refusal_pack(struct gdx_wire_hello *h, uint32_t why);
/* What a refusal's reason means, from the refused end's side. */
const char *gdx_wire_refusal_str(uint32_t why);
/* The rail count a validated hello announces. */
uint32_t gdx_wire_hello_rails(const struct gdx_wire_hello *h);
/* Validates a peer's hello. Returns 0; -EPROTONOSUPPORT for another magic or
 * version; -ECONNREFUSED for a refusal; -EACCES when it does not carry nonce
 * (neither value is ever written to why); -EPROTO for anything else
 * malformed. why gets a full sentence. */
int gdx_wire_hello_check(const void *buf, size_t len, uint64_t nonce, char *why, size_t why_len);

void gdx_wire_meta_pack(struct gdx_wire_meta *out, const struct gdx_wire_meta *in);
/* Unpacks and validates. Returns 0 or -EPROTO with why filled in. */
int gdx_wire_meta_unpack(const void *buf, size_t len, struct gdx_wire_meta *out, char *why,
			 size_t why_len);

#endif
