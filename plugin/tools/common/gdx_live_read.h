/* SPDX-License-Identifier: MIT */
/*
 * Live counters, the reader's side (gdx_live_read.c): gdx-doctor top and
 * hang read every process's file (the layout: gdx_live_layout.h; the
 * writer: gdx_live.h).
 */
#ifndef GDX_LIVE_READ_H
#define GDX_LIVE_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "stats/gdx_live.h"

/* Reader side (gdx-doctor). Nothing in a file is trusted: its owner may
 * write anything there, change it or cut it short at any time. A file is
 * read whole into the reader's memory and closed at once: a scan holds no
 * descriptor, whatever the number of files. */

/* What a scan takes from one user's directory at most: the files (each a
 * process: far more than a node runs with the plugin), and the slots in
 * use copied out of them (8 processes whose every slot is in use). One
 * user's files cannot crowd out another user's processes, nor take the
 * reader's memory: past a cap, what is left out is said (struct
 * gdx_live_user). */
#define GDX_LIVE_USER_FILES 1024
#define GDX_LIVE_USER_SLOTS (8 * GDX_LIVE_COMMS)

/* A slot in use, copied at the scan; every string in it terminated, its
 * rails within GDX_LIVE_RAILS. */
struct gdx_live_slot {
	int slot;
	struct gdx_live_comm c;
};

struct gdx_live_view {
	char name[GDX_LIVE_NAME_MAX]; /* the file's, in its user's directory */
	unsigned uid;		      /* the file's owner, and its process's */
	struct gdx_live_hdr hdr;      /* a copy, its strings terminated */
	bool stopped;		      /* the process is stopped (SIGSTOP, a debugger) */
	int nslots;		      /* the slots in use, copied in slot order */
	struct gdx_live_slot *slots;
	bool slots_cut; /* its user's slot cap reached: some of its slots not read */
	/* its NIC ports' counters (slots of role GDX_LIVE_NIC), in slot
	 * order, apart from the comms'; malloc'd */
	int nnics;
	struct gdx_live_nic *nics;
};

/* A user's directory a scan has something to say about. */
struct gdx_live_user {
	unsigned uid;
	/* the directory is not that user's alone (another user made it, or it
	 * is open to others): none of its files read */
	bool foreign;
	unsigned owner, mode; /* foreign: the directory's owner and mode */
	int files_left;	      /* files past GDX_LIVE_USER_FILES, not read */
	int procs_cut;	      /* processes shown without all their slots */
};

/* At most this many users said; the others counted in more_users. */
#define GDX_LIVE_USERS_SAID 16

struct gdx_live_scan {
	struct gdx_live_view *v; /* malloc'd */
	int n;
	/* files left out: of ended processes, of another layout or
	 * namespace, of a process another user runs, a second file of a
	 * process, files of older plugins in the directory itself */
	int skipped;
	struct gdx_live_user users[GDX_LIVE_USERS_SAID];
	int nusers, more_users;
};

/*
 * The live files in dir (NULL: the default) this user may read: root reads
 * every user's directory, any other user only their own. A file is taken when its
 * directory and the file are its user's alone, it is a regular file of this
 * layout, the pid in its header is the one in its name, that process runs in
 * this pid namespace, is the file owner's and started when the header says;
 * one file a process (of two naming it, the newer by created_ms). Each
 * file's slots in use are copied consistently (a slot being claimed or
 * released is read again, a few times) and the file closed. Returns 0, or
 * -errno when dir cannot be read, or when a descriptor or memory runs out
 * (-EMFILE, -ENFILE, -ENOMEM: never a file silently left out).
 */
int gdx_live_scan(const char *dir, struct gdx_live_scan *s);
void gdx_live_scan_free(struct gdx_live_scan *s);
const char *gdx_live_wait_name(uint32_t wait);
/* A slot's role in a word: "send", "receive", "rma" (one-sided RMA's
 * collective comm). */
const char *gdx_live_role_name(uint32_t role);
/* The same as a report's key: idle, cts, completion, data, peer_closed, failed. */
const char *gdx_live_wait_key(uint32_t wait);
#endif
