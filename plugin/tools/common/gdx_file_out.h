/* SPDX-License-Identifier: MIT */
#ifndef GDX_FILE_OUT_H
#define GDX_FILE_OUT_H

#include <stddef.h>

/*
 * An output a user names (gdx-bench --plot): made as a new file of its own
 * in the same directory (a name no one can guess, O_EXCL, mode 0666 less
 * the umask), written there, then renamed onto the path in one step. What
 * was at the path (a file of another user's, a FIFO, a link into someone's
 * files) is never opened: it is replaced whole, or the rename fails (a
 * sticky directory keeps other users' names theirs) and nothing is written.
 */
struct gdx_file_out {
	int fd;	    /* the new file's, to write; -1 when none is open */
	char *path; /* where it goes */
	char *tmp;  /* where it is until then */
};
/* Makes the new file; out->fd is it. */
int gdx_file_out_open(const char *path, struct gdx_file_out *out, char *why, size_t why_len);
/* Renames it onto the path (after closing out->fd, which may already be
 * closed: -1) and frees what out holds. */
int gdx_file_out_commit(struct gdx_file_out *out, char *why, size_t why_len);
/* Removes the new file, the path untouched, and frees what out holds. */
void gdx_file_out_abandon(struct gdx_file_out *out);

#endif
