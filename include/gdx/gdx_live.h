/* SPDX-License-Identifier: MIT */
/*
 * Live counters in a shared-memory file per process (the layout and what
 * writes it when: gdx_live_layout.h): the plugin's side, which makes the
 * file and gives each comm a slot, and the reader's, gdx-doctor's.
 */
#ifndef GDX_LIVE_H
#define GDX_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include <gdx/gdx_live_layout.h>

struct gdx_comm;

/* Plugin side. At init: the process's file, made once; files that ended
 * processes of this user left removed. Nothing fails init: without a file
 * (said in one INFO line) every comm counts into a slot of its own memory.
 * It takes no lock but its own, and must not be called with one held that
 * other inits wait for: it may have files to remove. */
void gdx_live_open(void);
/* At finalize and unload: the file goes; its mapping too when unmap (no
 * comm is left to write its slot). In a process forked after the open it
 * does nothing: the file is the parent's. */
void gdx_live_close(bool unmap);
/* A comm claims a slot (c->live; its own when none is free) once it is
 * connected, and gives it back as it closes. */
void gdx_live_comm_open(struct gdx_comm *c);
void gdx_live_comm_close(struct gdx_comm *c);
/* While the comm waits (its clock read): the tick's fields. */
void gdx_live_tick(struct gdx_comm *c, uint64_t now_ms);
/* A signaled send on rail r took ticks (gdx_stamp) from post to completion:
 * into its histogram, with plain stores (the data path's). */
static inline void gdx_live_latency(struct gdx_live_rail *r, uint64_t ticks)
{
	unsigned b = ticks ? 63u - (unsigned)__builtin_clzll(ticks) : 0;

	r->lat[b < GDX_LIVE_LAT_BUCKETS ? b : GDX_LIVE_LAT_BUCKETS - 1]++;
	r->lat_count++;
	r->lat_sum += ticks;
}
/* A rail changed state (gdx_failover.c). */
void gdx_live_rail(struct gdx_comm *c, int rail, uint32_t state, uint64_t now_ms, uint32_t downs);

/* Reader side (gdx-doctor). Nothing in a file is trusted: its owner may
 * write anything there, change it or cut it short at any time. */
struct gdx_live_view {
	char name[GDX_LIVE_NAME_MAX]; /* the file's, in its user's directory */
	unsigned uid;		      /* the file's owner, and its process's */
	int fd;			      /* read-only, for gdx_live_copy */
	struct gdx_live_hdr hdr;      /* a copy, read at the scan */
	bool stopped;		      /* the process is stopped (SIGSTOP, a debugger) */
};
/*
 * The live files in dir (NULL: the default) this user may read: root reads
 * every user's directory, any other user only their own. A file is taken when its
 * directory and the file are its user's alone, it is a regular file of this
 * layout, the pid in its header is the one in its name, that process runs in
 * this pid namespace, is the file owner's and started when the header says;
 * one file a process (of two naming it, the newer by created_ms). *out gets
 * a malloc'd array. Returns how many, or -errno (dir unreadable). Those left
 * out are counted in *skipped: files of ended processes, of another layout
 * or namespace, of a process another user runs, a second file of a process,
 * and the files of older plugins, in dir itself (never opened).
 */
int gdx_live_scan(const char *dir, struct gdx_live_view **out, int *skipped);
void gdx_live_unscan(struct gdx_live_view *v, int n);
/* A consistent copy of slot i, read from the file: false when it is free,
 * changed meanwhile (read it again) or cannot be read whole (the file was
 * cut). */
bool gdx_live_copy(const struct gdx_live_view *v, int i, struct gdx_live_comm *out);
const char *gdx_live_wait_name(uint32_t wait);
/* The same as a report's key: idle, cts, completion, data, peer_closed, failed. */
const char *gdx_live_wait_key(uint32_t wait);
/* The directory in use: NCCL_GDX_LIVE_DIR or /dev/shm. */
const char *gdx_live_dir(void);

#endif
