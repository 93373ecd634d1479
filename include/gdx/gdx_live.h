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

/* Plugin side. At init: the process's file, made once; files of dead
 * processes removed. Nothing fails init: without a file every
 * comm counts into a slot of its own memory. */
void gdx_live_open(void);
/* At finalize and unload: the file goes; its mapping too when unmap (no
 * comm is left to write its slot). */
void gdx_live_close(bool unmap);
/* A comm claims a slot (c->live; its own when none is free) once it is
 * connected, and gives it back as it closes. */
void gdx_live_comm_open(struct gdx_comm *c);
void gdx_live_comm_close(struct gdx_comm *c);
/* While the comm waits (its clock read): the tick's fields. */
void gdx_live_tick(struct gdx_comm *c, uint64_t now_ms);
/* A rail changed state (gdx_failover.c). */
void gdx_live_rail(struct gdx_comm *c, int rail, uint32_t state, uint64_t now_ms, uint32_t downs);

/* Reader side (gdx-doctor). */
struct gdx_live_view {
	char path[512];
	struct gdx_live *map; /* read-only, mapped */
	bool stopped;	      /* the process is stopped (SIGSTOP, a debugger) */
};
/* Maps every live file in dir (NULL: the default); *out gets a malloc'd
 * array. Returns how many, or -errno (dir unreadable). Files of dead
 * processes and of another layout are left out (*skipped counts them). */
int gdx_live_scan(const char *dir, struct gdx_live_view **out, int *skipped);
void gdx_live_unscan(struct gdx_live_view *v, int n);
/* A consistent copy of slot i: false when it is free or changed meanwhile
 * (read it again). */
bool gdx_live_copy(const struct gdx_live *map, int i, struct gdx_live_comm *out);
const char *gdx_live_wait_name(uint32_t wait);
/* The directory in use: NCCL_GDX_LIVE_DIR or /dev/shm. */
const char *gdx_live_dir(void);

#endif
