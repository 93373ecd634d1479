/* SPDX-License-Identifier: MIT */
/*
 * The GPUDirect probe's facts in words, for gdx-doctor check
 * (gdx_gdr_names.c); the plugin's log lines name them otherwise.
 */
#ifndef GDX_GDR_NAMES_H
#define GDX_GDR_NAMES_H

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"

/* "n/a", "off", "on", "unknown". */
const char *gdx_gdr_acs_name(enum gdx_gdr_acs a);
/* "off", "identity", "translating", "unknown". */
const char *gdx_gdr_iommu_name(enum gdx_gdr_iommu i);
/* "EBADF", "EOPNOTSUPP", ... for the errnos a DMA-BUF probe or registration
 * sees; NULL for others. */
const char *gdx_gdr_errno_name(int err);
/* "auto", "on", "off". */
const char *gdx_gdr_policy_name(enum gdx_gdr_policy p);
/* "HOST,CUDA,DMABUF" of NCCL_PTR_* bits, into buf. */
void gdx_gdr_ptr_name(int ptr, char *buf, size_t len);
/* "direct", "staged", "broken". */
const char *gdx_gdr_mode_name(enum gdx_gdr_mode m);

#endif
