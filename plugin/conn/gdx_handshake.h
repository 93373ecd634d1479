/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band handshake. Its two ends, the connector (gdx_connect.h) and
 * the acceptor (gdx_listen.h), are resumable state machines over a
 * non-blocking TCP socket. Nothing ever waits: a step that cannot finish
 * returns -EAGAIN and the next call resumes from the saved offset, so NCCL
 * can drive connect and accept of one pair from a single thread.
 *
 * Connector                          Acceptor
 *   hello + meta (rails, FIFO)  -->    validate; QPs to RTS; post receives
 *                               <--    hello + meta (rails)
 *   QPs to RTS; ready           -->    comm returned
 *
 * What both ends share (gdx_handshake.c): the one move their states allow,
 * the clock of their deadlines, and the pieces of their log lines.
 */
#ifndef GDX_HANDSHAKE_H
#define GDX_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/gdx_comm.h"

/* Both handshakes are straight lines: a state may only move to the next one
 * (from + 1, below n). Logs "machine peer: old -> new" at TRACE, or a WARN
 * naming both states when the move is refused. */
bool gdx_conn_state_step(const char *machine, const char *const *names, int n, int from, int to,
			 const char *peer);

/* The clock of connection setup (the handshake deadlines and the sweep of
 * abandoned connects): gdx_now_ms(), or a test's (gdx_conn_test_clock). */
uint64_t gdx_conn_now(void);

/* The hello deadline of an incoming out-of-band connection, the listener's
 * and the RMA ring's: NCCL_GDX_HELLO_TIMEOUT_MS, within the handshake's. */
int gdx_hello_ms(void);

/* Sets x to move len bytes at buf, from the first. */
void gdx_xfer_set(struct gdx_xfer *x, void *buf, size_t len);

/* What to do about an error making a socket, for the end of its WARN ("" for
 * most): out of descriptors is the one a large job meets (each connection
 * keeps two, as NCCL's own transport). Returns buf. */
const char *gdx_fd_hint(int err, char *buf, size_t len);

/* The connection's INFO line: what it is made of, and what differed
 * between the ends. Returns buf. */
const char *gdx_rails_note(const struct gdx_comm *c, uint32_t peer_members, char *buf, size_t len);

/* For the tests only: no other file of the plugin uses what follows. */

/* The clock of connection setup becomes now_ms, so that a test decides what
 * time each call sees; NULL gives back gdx_now_ms() (tests/unit/conn_race.c). */
void gdx_conn_test_clock(uint64_t (*now_ms)(void));

#endif
