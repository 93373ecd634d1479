/* SPDX-License-Identifier: MIT */
/*
 * A stream between two processes, as between two nodes: a receiver forked
 * with a plugin of its own, taking messages and checking every byte until
 * the sender closes, and the sender in a thread of the test's process, so
 * that the test can look at both from outside meanwhile (gdx-doctor top,
 * hang) or stop the receiver.
 */
#ifndef GDX_STREAM_H
#define GDX_STREAM_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "gdx_pair.h"

#define GDX_STREAM_DEPTH 4

struct gdx_stream {
	const ncclNet_v7_t *n;
	void *sc;
	size_t size;
	struct gdx_buf b[GDX_STREAM_DEPTH];
	pthread_t thread;
	pid_t child;
	int handle_fd; /* the receiver's listen handle comes on it */
	volatile int stop;
	uint64_t bytes, msgs; /* completed, as the sender saw them (atomic) */
	ncclResult_t res;
};

/* The plugin, loaded and initialised once in this process. */
const ncclNet_v7_t *gdx_stream_net(void);
/* Forks the receiver, listening on rdev; connects to it from sdev; starts
 * sending messages of size bytes, GDX_STREAM_DEPTH in flight. */
void gdx_stream_start(struct gdx_stream *st, int sdev, int rdev, size_t size);
/* The same in two steps, for streams whose receivers are all forked before
 * this process loads the plugin (a child then starts from a clean one). */
void gdx_stream_fork(struct gdx_stream *st, int rdev, size_t size);
void gdx_stream_connect(struct gdx_stream *st, int sdev);
/* The sender stops posting; what it had in flight completes. The comm stays
 * open (its live slot too). */
void gdx_stream_pause(struct gdx_stream *st);
/* Paused if not yet, then closed; the receiver exits cleanly. */
void gdx_stream_stop(struct gdx_stream *st);
/* Waits until the stream has completed n more messages than now, up to
 * timeout_s; whether it did. */
int gdx_stream_moves(struct gdx_stream *st, uint64_t n, double timeout_s);

/* Runs cmd; its standard output into out (NUL-terminated); its exit status. */
int gdx_run(const char *cmd, char *out, size_t len);

#endif
