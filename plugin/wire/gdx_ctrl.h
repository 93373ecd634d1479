/* SPDX-License-Identifier: MIT */
/*
 * The control region: what a peer writes into a comm by RDMA (the
 * clear-to-send FIFO, a slot's sizes, the rails' notes, debug records), and
 * the staging this end writes from, laid out as it. Both ends agree on it
 * byte for byte: the offsets a write names are this layout's.
 */
#ifndef GDX_CTRL_H
#define GDX_CTRL_H

#include <stdint.h>

#include <nccl/net_common.h>
#include "wire/gdx_wire.h"

/* Receives in flight on a comm (NCCL's rule). */
#define GDX_MAX_REQUESTS NCCL_NET_MAX_REQUESTS
/* FIFO entries: one slot of GDX_MAX_RECVS entries per receive in flight. */
#define GDX_FIFO_ENTRIES (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
/* The FIFO is stored entry-major: entry i of slot s at GDX_FIFO_INDEX(s, i).
 * The first entries of consecutive slots are then adjacent, and one RDMA
 * WRITE of a packet or less carries a batch of single-buffer clear-to-sends. */
#define GDX_FIFO_INDEX(s, i) ((uint32_t)(i)*GDX_MAX_REQUESTS + (uint32_t)(s))

/*
 * What one end says to the other about a rail, written by RDMA into the
 * other's control region on a rail that works, so that a rail can be taken
 * out and brought back whatever the out-of-band network does. Each end keeps
 * one note per rail, rewritten whole on every change; epoch counts the
 * changes and stamp, the last field, repeats it: a note is read once its
 * stamp equals its epoch, and acted on once per epoch (gdx_failover.c).
 */
enum gdx_note_says {
	GDX_NOTE_NONE = 0,
	GDX_NOTE_DOWN,	  /* the rail is out; from the receiver, with its counts */
	GDX_NOTE_RESTORE, /* sender: my QPs are reset, here is my PSN and GID */
	GDX_NOTE_READY,	  /* receiver: mine are at RTS towards yours */
	GDX_NOTE_REFUSE,  /* receiver: not now (my port is down) */
};
#define GDX_NOTE_PORT_DOWN (1u << 31)
/* QPs per rail a note counts: a rail is taken out only where there are two
 * or more, so at most GDX_MAX_QPS / 2 each. */
#define GDX_NOTE_COUNTS (GDX_MAX_QPS / 2)

struct gdx_note {
	uint32_t epoch;
	uint32_t says;	  /* enum gdx_note_says */
	uint32_t answers; /* READY and REFUSE: the epoch of the RESTORE they answer,
			   * with GDX_NOTE_PORT_DOWN when the refusal is for that;
			   * DOWN: the rail's life (gdx_rail_run.life) */
	uint32_t psn;
	uint8_t gid[16];
	char why[80]; /* DOWN: what the writer saw, for the other end's log */
	/* DOWN from the receiver: the immediates each QP of the rail took since
	 * it last started, after it stopped taking any. Per QP, as RC orders
	 * only within one: the n-th immediate on a QP says everything posted
	 * on it before was placed, which the sender matches to its log
	 * (gdx_seglog_entry.imm_ord, counted from the QP's start too). */
	uint32_t counts[GDX_NOTE_COUNTS];
	uint32_t reserved;
	uint32_t stamp;
};

#ifdef GDX_DEBUG
/* Debug builds only (gdx_req.h): what a piece's bytes hold, written by the
 * sender on the piece's QP just before its immediate, so that the receiver
 * checks, as the immediate arrives, that the bytes are in its buffer. */
struct gdx_dbg_piece {
	uint64_t seq;	   /* the message's sequence number + 1; 0: never written */
	uint64_t off, len; /* in the receive's buffer (grouped: buffer i's whole) */
	uint64_t sum;	   /* gdx_req_sum of those bytes, as the sender posted them */
	uint16_t rail, q;  /* the QP the bytes and the immediate go on */
	uint32_t reserved;
};
#endif

/* What the peer writes into a comm, at the offsets its writes name (the wire's
 * layout: the peer adds them to the ctrl_addr of the handshake). Registered
 * remote-writable on every NIC of the device, each kind only over the part
 * its peer writes (gdx_ctrl_span): a send comm's FIFO, which the receiver's
 * clear-to-sends fill, and its notes; a receive comm's records of a slot's
 * sizes ([slot][buffer]; a single receive's size in the first two words),
 * its notes, and in debug builds each piece's record ([slot][piece], or
 * [slot][buffer] for a group; only where both ends are debug builds,
 * GDX_META_F_RECORDS). Nothing the receiver trusts is kept here: what it
 * reads back is checked against its own copy. */
struct gdx_ctrl {
	struct gdx_cts fifo[GDX_FIFO_ENTRIES];
	uint32_t sizes[GDX_MAX_REQUESTS][GDX_MAX_RECVS];
	struct gdx_note notes_in[GDX_MAX_RAILS];
#ifdef GDX_DEBUG
	struct gdx_dbg_piece dbg[GDX_MAX_REQUESTS][GDX_IMM_MAX_PIECES];
#endif
};

/* What a comm writes from into the peer's gdx_ctrl, laid out as it: a
 * receive comm's clear-to-sends, a send comm's size records (and debug
 * records), either's notes. Registered for local access only, so that no
 * peer can change what this end staged, and reads back (gdx_cts.c). */
struct gdx_stage {
	struct gdx_cts fifo[GDX_FIFO_ENTRIES];
	uint32_t sizes[GDX_MAX_REQUESTS][GDX_MAX_RECVS];
	struct gdx_note notes_out[GDX_MAX_RAILS];
#ifdef GDX_DEBUG
	struct gdx_dbg_piece dbg[GDX_MAX_REQUESTS][GDX_IMM_MAX_PIECES];
#endif
};

#endif
