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
struct gdx_dev;

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
/* One-sided RMA's collective comm (gdx_rma_conn.c): a slot of role
 * GDX_LIVE_RMA (own when none is free), its rails the n NICs of its
 * device; dev, addr and peer as the layout says for that role. Given back
 * by gdx_live_rma_close(). */
struct gdx_live_comm *gdx_live_rma_open(struct gdx_live_comm *own, const char *dev,
					const char *addr, const char *peer, int n,
					struct gdx_dev *const *devs);
void gdx_live_rma_close(struct gdx_live_comm *l, struct gdx_live_comm *own);
/* A NIC port's counters (gdx_qpstat.c): a slot of role GDX_LIVE_NIC (own
 * when none is free), ibdev and port filled in; given back by
 * gdx_live_nic_close(), which leaves a slot of a file since closed alone. */
struct gdx_live_nic *gdx_live_nic_open(struct gdx_live_nic *own, const char *ibdev, int port);
void gdx_live_nic_close(struct gdx_live_nic *l, struct gdx_live_nic *own);
/* While the comm waits (its clock read): the tick's fields. */
void gdx_live_tick(struct gdx_comm *c, uint64_t now_ms);
/* A rail changed state (gdx_failover.c). */
void gdx_live_rail(struct gdx_comm *c, int rail, uint32_t state, uint64_t now_ms, uint32_t downs);

/* Shared with the reader (gdx_live_read.c). The start time of a process,
 * field 22 of its /proc/PID/stat (path), and its state (field 3) into
 * *state when state is not NULL: 0 when it cannot be read (errno says why). */
uint64_t gdx_proc_start(const char *path, char *state);
/* The inode of this process's pid namespace; 0 when /proc cannot say. */
unsigned long long gdx_live_pidns(void);
/* The pid and namespace of a live file's name; false for any other name. */
bool gdx_live_name_parse(const char *name, int *pid, unsigned long long *ns);
/* The directory in use: NCCL_GDX_LIVE_DIR or /dev/shm. */
const char *gdx_live_dir(void);

#endif
