/* SPDX-License-Identifier: MIT */
/*
 * The GPUDirect facts file: what the live probes would find, written down,
 * so that the verdicts can be driven on a machine without a GPU, and a saved
 * tree can carry what sysfs does not hold (gdx-doctor check --sysfs-root
 * reads DIR/facts; tests point GDX_GDR_FACTS at one). One fact per line, '#'
 * starts a comment:
 *   kernel 6.8.0-45-generic       uname's release
 *   memlock unlimited | 8M | 65536 RLIMIT_MEMLOCK (bytes, K/M/G suffixes)
 *   cuda none | 12040 | error 100 no libcuda.so.1 / driver version / cuInit error
 *   gpu 0000:1b:00.0 gdr=1 dmabuf=1 c2c=1   one CUDA device, in CUDA's order;
 *                                 c2c: on NVLink-C2C to its CPU (NVML's C2C links)
 *   dmabuf mlx5_0 EBADF           errno of the NIC's DMA-BUF probe (name or number)
 *   hostname node17               the name of the node the facts are of
 *   nccl this-machine             check judges this machine's NCCL and plugin files
 *                                 with the tree (a test's stand-in node)
 *   nccl 2.28.9                   the NCCL the node's jobs load, whose rules judge it
 *   datadirect mlx5_0 0008:04:00.0  the NIC's Data Direct DMA function (mlx5dv), where
 *                                 NCCL and the plugin place it (NCCL_IB_DATA_DIRECT)
 * The parser only reads; what each fact means is the probe's (gdx_gdr.c),
 * which takes them through these callbacks.
 */
#ifndef GDX_GDR_FACTS_H
#define GDX_GDR_FACTS_H

#include <stddef.h>
#include <stdint.h>

#define GDX_GDR_FACT_UNLIMITED UINT64_MAX /* "memlock unlimited" */

/* Each callback may be NULL: its lines are checked, then skipped. */
struct gdx_gdr_fact_ops {
	void (*kernel)(void *arg, const char *release);
	void (*memlock)(void *arg, uint64_t bytes);
	/* version 0: "cuda none"; err != 0: "cuda error ERR". */
	void (*cuda)(void *arg, int version, int err);
	/* gdr, dmabuf and c2c: 1, 0, or -1 when the line leaves them out.
	 * Returns 0, or -EINVAL for a bus id the probe does not take. */
	int (*gpu)(void *arg, const char *busid, int gdr, int dmabuf, int c2c);
	int (*dmabuf)(void *arg, const char *nic, int err);
	void (*hostname)(void *arg, const char *name);
	void (*nccl_here)(void *arg);
	/* "nccl 2.28.9": NCCL's version code, 22809. */
	void (*nccl_version)(void *arg, int code);
	/* 0 or -EINVAL. */
	int (*data_direct)(void *arg, const char *nic, const char *pci);
};

/* A facts file is a few lines; a larger file is not one. */
#define GDX_GDR_FACTS_MAX (1 << 20)

/* Reads file (root NULL), or file inside the saved tree root, resolved
 * there (gdx_sysfs.h), as a hostile input, calling ops per fact. Returns
 * 0, -errno when it cannot be read (-EINVAL: not a regular file; -EFBIG:
 * past GDX_GDR_FACTS_MAX), or -EINVAL for a line that is not a fact; why
 * says which. */
int gdx_gdr_facts_read(const char *root, const char *file, const struct gdx_gdr_fact_ops *ops,
		       void *arg, char *why, size_t why_len);

/* The errnos a DMA-BUF probe or registration sees, by name: the facts
 * file's, and gdx-doctor's (tools/common/gdx_gdr_names.h). */
struct gdx_gdr_errno {
	const char *name; /* "EBADF" */
	int value;
};
extern const struct gdx_gdr_errno gdx_gdr_errnos[];
extern const size_t gdx_gdr_nerrnos;

#endif
