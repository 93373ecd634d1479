/* SPDX-License-Identifier: MIT */
/*
 * What the GPU programs (tests/gpu) share: their checks, and two processes
 * finding each other through NCCL's unique id in a file that rank 0 writes.
 */
#ifndef GDX_GPU_PAIR_H
#define GDX_GPU_PAIR_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK_CUDA(call)                                                            \
	do {                                                                        \
		cudaError_t e_ = (call);                                            \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)
#define CHECK_NCCL(call)                                                                \
	do {                                                                            \
		ncclResult_t r_ = (call);                                               \
		if (r_ != ncclSuccess) {                                                \
			fprintf(stderr, "%s: %s (%s)\n", #call, ncclGetErrorString(r_), \
				ncclGetLastError(NULL));                                \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rank 0 writes the id (to a temporary name, then renames it); rank 1 waits
 * for the file, up to a minute. */
static inline void exchange_id(int rank, const char *file, ncclUniqueId *id)
{
	char tmp[4096];
	FILE *f;

	if (rank == 0) {
		CHECK_NCCL(ncclGetUniqueId(id));
		snprintf(tmp, sizeof(tmp), "%s.tmp", file);
		f = fopen(tmp, "wb");
		if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) || rename(tmp, file)) {
			perror(file);
			exit(1);
		}
		return;
	}
	for (double t0 = now_s(); !(f = fopen(file, "rb")); usleep(10000))
		if (now_s() - t0 > 60) {
			fprintf(stderr, "no %s from rank 0 after 60 s\n", file);
			exit(1);
		}
	if (fread(id, sizeof(*id), 1, f) != 1) {
		fprintf(stderr, "%s: short\n", file);
		exit(1);
	}
	fclose(f);
}

#endif
