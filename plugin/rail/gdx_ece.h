/* SPDX-License-Identifier: MIT */
/*
 * Enhanced Connection Establishment: the connector reads its QPs' ECE
 * options and sends them; the acceptor sets the options both ends have on
 * its QPs before RTR and sends back what its device kept; the connector sets
 * that on its own. A provider without ECE (rxe) skips it, with one INFO line
 * per device; NCCL_GDX_ECE_ENABLE=0 turns it off.
 */
#ifndef GDX_ECE_H
#define GDX_ECE_H

#include <stddef.h>

#include "rail/gdx_rail.h"
#include "wire/gdx_wire.h"

/* The ECE of the rail's first QP (every QP of a rail gets the same), or
 * supported 0 when it is off or the provider has none. */
void gdx_ece_query(struct gdx_rail *r, struct gdx_wire_ece *out);
/* What to set, given ours and the peer's: the options both have, or none
 * when either has no ECE or their vendors differ. out may be local. */
void gdx_ece_common(const struct gdx_wire_ece *local, const struct gdx_wire_ece *remote,
		    struct gdx_wire_ece *out);
/* "vendor 0x..., options 0x..." or "off". */
const char *gdx_ece_str(const struct gdx_wire_ece *e, char *buf, size_t len);

#endif
