/* SPDX-License-Identifier: MIT */
/*
 * The reuse matrix's round (gdx_reuse.c), for tests/vm/reuse.c (two rails)
 * and tests/vm/switch_reuse.c (three): buffers reused the moment test says
 * a request is done, as NCCL does. The sender scribbles over each send
 * buffer as its request is done (NCCL refills its FIFO slot then); the
 * receiver checks every byte of each message and the bytes around it,
 * scribbles over the buffer as it hands it back, and checks before posting
 * it again that nothing wrote into it meanwhile.
 *
 * The proxy loop is NCCL's (src/transport/net.cc) by default: receives
 * posted 8 ahead, only the oldest request of each side tested, one thread.
 * A mode can post more ahead and test in another order (newest first, at
 * random), share one comm among several senders that each test their own
 * oldest (PXN, NCCL_NET_SHARED_COMMS), send one large message then small
 * ones, and take rails' wires down and up during each round.
 */
#ifndef GDX_REUSE_H
#define GDX_REUSE_H

#include <stdbool.h>
#include <stddef.h>

enum reuse_order {
	REUSE_OLDEST = 0, /* NCCL's proxy: the oldest request of each side */
	REUSE_NEWEST,	  /* every request in flight each turn, newest first */
	REUSE_RANDOM,	  /* every request in flight each turn, in a random order */
};

/* What the receive side does across a flap (flaps == 1): NCCL calls a
 * receive comm only while it has work on it. */
enum reuse_pause {
	REUSE_RUNS = 0, /* called throughout */
	REUSE_STOPPED,	/* not called from before the wire goes down until the
			 * sender has restored the rail, its receives posted:
			 * their immediates wait in its CQ (a process stopped) */
	REUSE_IDLE,	/* every receive done first, then not called: nothing
			 * posted while the sender spins in isend */
};

struct reuse_mode {
	const char *env; /* "VAR=value VAR=value", set before the plugin loads */
	int v;		 /* the table NCCL uses (0: the newest) */
	int fused;	 /* 0; 2: rxe1+rxe3 -> rxe0+rxe2; 3: rxe1+rxe3+rxe5 -> rxe0+rxe2+rxe4,
			  * each fused by makeVDevice */
	int group;	 /* buffers per receive: 1, or 2 to this many */
	int flaps;	 /* wires taken down and brought back in each round: 0, 1
			  * (veth1), or 2 (veth1, then veth3 while it is down) */
	bool flush;	 /* iflush after each receive, as NCCL does for GPU memory */
	int window;	 /* receives in flight (and send buffers): 8 when 0, at most 32 */
	enum reuse_order order; /* which requests are tested, both sides */
	int senders;		/* ranks sharing the comms, each with its tag: 1 when 0 */
	bool big_first;		/* every window-th message 4 MiB, the others small */
	size_t max_msg;		/* the largest message (a grouped receive's buffer: at most
				 * 2 MiB): 16 MiB when 0 */
	enum reuse_pause pause; /* with flaps == 1 */
	int flap_rail;		/* with flaps == 1: the rail whose wire goes (0: the
				 * control rail, veth1; 1: veth3) */
};

/* Runs the mode: its environment, the plugin loaded, each round on a new
 * connection (GDX_REUSE_ROUNDS, default rounds), every byte checked. */
void reuse_run_mode(const struct reuse_mode *m, int rounds);

#endif
