/* SPDX-License-Identifier: MIT */
/*
 * Reading a topology into hwloc (gdx_topo_read.c), for gdx_topo_load(): this
 * machine's, or an hwloc XML file's, with the I/O objects the placement
 * needs, and one line saying why when it cannot be read.
 */
#ifndef GDX_TOPO_READ_H
#define GDX_TOPO_READ_H

#include <stddef.h>

#include <hwloc.h>

/* Writes fmt's line into why (len bytes), unless why is NULL or len 0. */
void gdx_topo_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Loads this machine's topology (xml NULL) or that of the hwloc XML file xml
 * into *h, keeping every I/O object. The file is read here (from fd when it
 * is not -1: xml opened and checked by the caller, xml its name) as a
 * hostile input, its nesting depth checked, and handed to hwloc as a
 * buffer, without what hwloc's built-in XML parser refuses
 * (see gdx_topo_load()). Returns 0, or gdx_topo_load()'s errors with why set; *h, when not NULL, is
 * the caller's to destroy, on failure too.
 */
int gdx_topo_read(hwloc_topology_t *h, int fd, const char *xml, char *why, size_t why_len);

#endif
