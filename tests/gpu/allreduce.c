/* SPDX-License-Identifier: MIT */
/*
 * A real NCCL all-reduce between two processes, for a machine with a GPU
 * (scripts/gpu-check.sh runs it): rank 0 writes NCCL's unique id to a file,
 * rank 1 reads it; each process is told it is on a host of its own
 * (NCCL_HOSTID), so NCCL connects them through its network plugin, the
 * plugin given by NCCL_NET_PLUGIN. Every element of the result is checked.
 *
 *   allreduce RANK IDFILE [COUNT]
 *
 * Exit status 0 when every element is right, 1 otherwise, 2 for bad usage.
 */
#include <string.h>

#include "nccl_pair.h"

int main(int argc, char **argv)
{
	size_t count = argc > 3 ? strtoull(argv[3], NULL, 0) : (16u << 20);
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t stream;
	float *buf, *host;
	long bad = 0;
	int rank;
	double t0, secs;

	if (argc < 3 || (argv[1][0] != '0' && argv[1][0] != '1') || argv[1][1] || !count) {
		fprintf(stderr, "usage: %s RANK(0|1) IDFILE [COUNT]\n", argv[0]);
		return 2;
	}
	rank = argv[1][0] - '0';
	exchange_id(rank, argv[2], &id);
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaStreamCreate(&stream));
	CHECK_CUDA(cudaMalloc((void **)&buf, count * sizeof(float)));
	host = malloc(count * sizeof(float));
	if (!host)
		return 1;
	/* rank r contributes (i % 1000) * (r + 1): the sum is 3 * (i % 1000) */
	for (size_t i = 0; i < count; i++)
		host[i] = (float)(i % 1000) * (float)(rank + 1);
	CHECK_CUDA(cudaMemcpy(buf, host, count * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_NCCL(ncclCommInitRank(&comm, 2, id, rank));
	t0 = now_s();
	CHECK_NCCL(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream));
	CHECK_CUDA(cudaStreamSynchronize(stream));
	secs = now_s() - t0;
	CHECK_CUDA(cudaMemcpy(host, buf, count * sizeof(float), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < count; i++)
		if (host[i] != (float)(i % 1000) * 3.0f && bad++ < 5)
			fprintf(stderr, "rank %d: element %zu is %g, not %g\n", rank, i, host[i],
				(double)(i % 1000) * 3.0);
	printf("rank %d: all-reduce of %zu floats in %.3f s (%.3f GB/s algbw): %s\n", rank, count,
	       secs, (double)count * sizeof(float) / secs / 1e9,
	       bad ? "WRONG RESULT" : "every element right");
	CHECK_NCCL(ncclCommDestroy(comm));
	CHECK_CUDA(cudaFree(buf));
	free(host);
	return bad ? 1 : 0;
}
