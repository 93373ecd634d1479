/* SPDX-License-Identifier: MIT */
/*
 * The exit statuses of both tools, gdx-doctor and gdx-bench: one table, so
 * that a status means one thing whichever program gives it. A script reads
 * 0 as "go", and no verdict shares a code with a bad command line or an
 * internal error (sysexits.h's EX_USAGE and EX_SOFTWARE).
 */
#ifndef GDX_EXIT_H
#define GDX_EXIT_H

enum gdx_exit {
	GDX_EXIT_OK = 0,	/* doctor: healthy; bench: every size ran */
	GDX_EXIT_DEGRADED = 1,	/* doctor check, log: it works, slower than it could;
				 * bench gives it never */
	GDX_EXIT_BROKEN = 2,	/* it does not work: doctor check: the plugin would not
				 * load or not work; log: it did not start (a problem
				 * found, where 8 is a log that cannot tell); bench:
				 * the run failed (the plugin, a device, the other end;
				 * 1 up to 0.4.5) */
	GDX_EXIT_NO_INPUT = 3,	/* an input file or tree cannot be read, or is not one */
	GDX_EXIT_USAGE = 64,	/* bad command line (EX_USAGE) */
	GDX_EXIT_SOFTWARE = 70, /* out of memory, the output cannot be written (EX_SOFTWARE) */
};

#endif
