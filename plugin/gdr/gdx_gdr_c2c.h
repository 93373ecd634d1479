/* SPDX-License-Identifier: MIT */
/*
 * Which GPUs reach their CPU over NVLink-C2C (Grace Hopper, Grace
 * Blackwell), which hwloc cannot show and NCCL's GPUDirect rule depends on
 * (gdx_gdr_rule.h). Asked of the driver as NCCL asks it: NVML's C2C link
 * count and each link's status, through dlopen("libnvidia-ml.so.1"), never
 * linked; no NVML, or a GPU it does not know, leaves the GPU unknown.
 */
#ifndef GDX_GDR_C2C_H
#define GDX_GDR_C2C_H

/* For each of the n GPUs by bus id ("0009:01:00.0"), c2c[i] = 1 with an
 * active C2C link, 0 with none; left as it is when NVML cannot say. lib
 * NULL: libnvidia-ml.so.1. */
void gdx_gdr_c2c_probe(const char *lib, const char *const *pci, int n, int *c2c);

#endif
