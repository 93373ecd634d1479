/* SPDX-License-Identifier: MIT */
/*
 * NCCL's configuration files, read as NCCL reads them at its first getenv
 * (src/misc/param.cc, initEnvFunc and setEnvFile, NCCL 2.18 to 2.29): the
 * file NCCL_CONF_FILE names when it is set and not empty, else the user's
 * ~/.nccl.conf; then /etc/nccl.conf. A line starting with '#' is skipped;
 * the name is everything before the first '=' and the value everything
 * after, untrimmed, each cut at 1023 bytes; a line without '=' is skipped;
 * each is applied with setenv(name, value, 0), so the environment wins, then
 * the first file, then the system's, and within a file its first line.
 * NCCL's master after 2.29 differs in three ways this follows only in notes:
 * it reads $HOME (2.29 and earlier the password database's home: $HOME here,
 * with a note when the two differ), drops a line's trailing CR (a note on
 * each such line), and reads lines through a 4096-byte fgets, so that a
 * longer line's rest is read as a line of its own (no such file is real).
 * gdx-doctor applies them at its start so that every later read (the
 * plugin's parameters, gdx_env()) sees what NCCL would, and keeps where
 * each value came from.
 *
 * Where the doctor parts from NCCL, on purpose: a file is opened as a
 * hostile input (gdx_file_open(): no FIFO, device or directory, at most
 * GDX_NCCL_CONF_MAX bytes), and one owned by neither the user nor root is
 * not applied: another user could set this user's variables through it.
 * NCCL reads such a file all the same; the doctor says so in a note.
 */
#ifndef GDX_NCCL_CONF_H
#define GDX_NCCL_CONF_H

#include <stddef.h>

#define GDX_NCCL_CONF_MAX    ((size_t)1 << 20)
#define GDX_NCCL_CONF_STRLEN 1023 /* NCCL's envVar and envValue less their NUL */

/* Where a file stands in NCCL's order. */
enum gdx_nccl_conf_kind {
	GDX_NCCL_CONF_NAMED,  /* NCCL_CONF_FILE's */
	GDX_NCCL_CONF_USER,   /* $HOME/.nccl.conf */
	GDX_NCCL_CONF_SYSTEM, /* /etc/nccl.conf */
};

struct gdx_nccl_conf_file {
	enum gdx_nccl_conf_kind kind;
	char path[1024];
	int err; /* 0 read; -ENOENT not there (NCCL skips it too); other -errno: refused */
	char why[320];
};

/* One line that set something, or would have. */
struct gdx_nccl_conf_var {
	char *name, *value;
	int file;    /* index in files[] */
	int line;    /* 1-based */
	int applied; /* 1: this line's value is the one set; 0: shadowed (the
		      * environment, an earlier file or line had it) */
};

struct gdx_nccl_conf {
	struct gdx_nccl_conf_file files[2];
	int nfiles;
	struct gdx_nccl_conf_var *vars;
	int nvars;
	char **notes; /* lines NCCL treats oddly, refused files: one line each */
	int nnotes;
};

/* Where the files are. NULL members: NCCL's (NCCL_CONF_FILE, $HOME, and
 * /etc/nccl.conf, or GDX_NCCL_CONF_SYSTEM's path: tests only). */
struct gdx_nccl_conf_paths {
	const char *named;  /* NCCL_CONF_FILE's value */
	const char *home;   /* the user's directory */
	const char *system; /* /etc/nccl.conf */
};

/*
 * Reads the files and applies them (setenv(name, value, 0)) into *c, the
 * caller's to release with gdx_nccl_conf_free(). Returns 0, or -ENOMEM;
 * a file that cannot be read is in files[] and the notes, not an error.
 */
int gdx_nccl_conf_load(const struct gdx_nccl_conf_paths *p, struct gdx_nccl_conf *c);

/* Where name's value comes from, for "(from ...)": the file's path (and
 * line) that set it, "environment" when it was set before the files, NULL
 * when it is not set at all. buf holds the text. */
const char *gdx_nccl_conf_source(const struct gdx_nccl_conf *c, const char *name, char *buf,
				 size_t len);

/* For the tests only: gdx-doctor keeps what it loaded to its end. */

void gdx_nccl_conf_free(struct gdx_nccl_conf *c);

#endif
