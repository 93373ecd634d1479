/* SPDX-License-Identifier: MIT */
/*
 * The version of the NCCL this process has loaded, which is the NCCL that
 * loaded the plugin: its rules (GPUDirect distance, gdx_gdr_rule.h) are
 * that version's. Found without linking NCCL: the loaded libnccl.so* is
 * looked up among the process's objects and asked through ncclGetVersion.
 */
#ifndef GDX_NCCL_VERSION_H
#define GDX_NCCL_VERSION_H

/* NCCL's version code (22809 for 2.28.9), or 0 when no NCCL is loaded (a
 * program driving the plugin itself, gdx-bench) or it cannot say. */
int gdx_nccl_version(void);

#endif
