/* SPDX-License-Identifier: MIT */
/*
 * Setting a comm up and taking it down (gdx_setup.c): its requests and
 * control region, its rails and their QPs, and what each end tells the other
 * about them in the handshake, which gdx_connect.c and gdx_listen.c drive.
 */
#ifndef GDX_SETUP_H
#define GDX_SETUP_H

#include <stddef.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "wire/gdx_wire.h"

/* Its requests; rails come later. */
int gdx_setup_base_init(struct gdx_comm *c, uint32_t kind, int dev, int fd, const char *peer,
			struct gdx_ctx *ctx, int tc);
/* Everything the comm holds, its socket too. */
void gdx_setup_base_fini(struct gdx_comm *c);
/* The connection's rail count: net_ib's max(local, remote) QPs. */
int gdx_setup_rails_for(int local, uint32_t remote);
/* QPs per rail: the larger of NCCL_GDX_QPS_PER_CONNECTION and the peer's,
 * within GDX_MAX_QPS for the connection. */
int gdx_setup_qps_for(int nrails, uint32_t remote);
/* nrails rails of qps QPs over the members of the (possibly fused) device,
 * rail i on member i % members, each with the connection's service level
 * and class and the queue depths of the comm's kind; its control region. */
int gdx_setup_rails_create(struct gdx_comm *c, struct gdx_vdev *v, int nrails, int qps, uint8_t sl,
			   uint8_t tc);
/* What this end tells the other in the handshake. */
void gdx_setup_meta_fill(struct gdx_wire_meta *m, const struct gdx_comm *c);
/* Every rail to RTS towards the peer's, from its metadata (kept for the
 * restores of failed rails); ECE as net_ib negotiates it. */
int gdx_setup_rails_connect(struct gdx_comm *c, const struct gdx_wire_meta *remote);
/* "2 rail(s) x 4 QP(s), AR off, relaxed ordering on, ECE off", for the INFO
 * lines. */
const char *gdx_setup_features(const struct gdx_comm *c, char *buf, size_t len);

#endif
