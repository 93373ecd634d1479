/* SPDX-License-Identifier: MIT */
/*
 * NCCL's one-sided host API between two processes on one GPU, each told it
 * is a host of its own (NCCL_HOSTID), for a machine with a GPU
 * (scripts/gpu-check.sh runs it with NCCL_GDX_RMA=1, so that NCCL's RMA
 * proxy drives this plugin's ncclRmaPlugin table): rank 0 puts ROUNDS
 * buffers into rank 1's symmetric window with ncclPutSignal; rank 1 waits
 * on each signal with ncclWaitSignal, checks every element, and answers
 * with ncclSignal before rank 0 overwrites the window.
 *
 *   rma RANK IDFILE [COUNT [ROUNDS]]
 *
 * The three calls are looked up at run time: NCCL before 2.29 has none, and
 * the program says so and exits 3 (not run) rather than failing to build.
 * Exit status 0 when every element of every round is right, 1 otherwise,
 * 2 for bad usage, 3 when this NCCL has no one-sided API.
 */
#include <dlfcn.h>
#include <string.h>

#include "nccl_pair.h"

/* NCCL 2.29's ncclWaitSignal descriptor (nccl.h): wait until opCnt signals
 * from peer have arrived on signal sigIdx of context ctx. */
struct wait_desc {
	int opCnt;
	int peer;
	int sigIdx;
	int ctx;
};

typedef ncclResult_t (*put_signal_fn)(const void *localbuff, size_t count, ncclDataType_t datatype,
				      int peer, ncclWindow_t peerWin, size_t peerWinOffset,
				      int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
				      cudaStream_t stream);
typedef ncclResult_t (*signal_fn)(int peer, int sigIdx, int ctx, unsigned int flags,
				  ncclComm_t comm, cudaStream_t stream);
typedef ncclResult_t (*wait_signal_fn)(int nDesc, struct wait_desc *descs, ncclComm_t comm,
				       cudaStream_t stream);

static float value_of(int round, size_t i)
{
	return (float)((i * 7 + (size_t)round * 131) % 4093);
}

int main(int argc, char **argv)
{
	size_t count = argc > 3 ? strtoull(argv[3], NULL, 0) : (4u << 20);
	int rounds = argc > 4 ? atoi(argv[4]) : 20, rank, version = 0;
	put_signal_fn put_signal = (put_signal_fn)dlsym(RTLD_DEFAULT, "ncclPutSignal");
	signal_fn signal_only = (signal_fn)dlsym(RTLD_DEFAULT, "ncclSignal");
	wait_signal_fn wait_signal = (wait_signal_fn)dlsym(RTLD_DEFAULT, "ncclWaitSignal");
	ncclUniqueId id;
	ncclComm_t comm;
	ncclWindow_t win;
	cudaStream_t stream;
	float *src, *dst, *host;
	long bad = 0;
	double t0, secs;

	if (argc < 3 || (argv[1][0] != '0' && argv[1][0] != '1') || argv[1][1] || !count ||
	    rounds < 1) {
		fprintf(stderr, "usage: %s RANK(0|1) IDFILE [COUNT [ROUNDS]]\n", argv[0]);
		return 2;
	}
	rank = argv[1][0] - '0';
	CHECK_NCCL(ncclGetVersion(&version));
	if (!put_signal || !signal_only || !wait_signal) {
		printf("rank %d: NCCL %d has no ncclPutSignal/ncclSignal/ncclWaitSignal (2.29 and "
		       "later have them): not run\n",
		       rank, version);
		return 3;
	}
	exchange_id(rank, argv[2], &id);
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaStreamCreate(&stream));
	/* symmetric windows want NCCL's own (cuMem) allocations */
	CHECK_NCCL(ncclMemAlloc((void **)&src, count * sizeof(float)));
	CHECK_NCCL(ncclMemAlloc((void **)&dst, count * sizeof(float)));
	host = malloc(count * sizeof(float));
	if (!host)
		return 1;
	CHECK_NCCL(ncclCommInitRank(&comm, 2, id, rank));
	CHECK_NCCL(ncclCommWindowRegister(comm, dst, count * sizeof(float), &win,
					  NCCL_WIN_COLL_SYMMETRIC));
	t0 = now_s();
	for (int r = 0; r < rounds && !bad; r++) {
		if (rank == 0) {
			struct wait_desc ack = {.opCnt = 1, .peer = 1, .sigIdx = 0, .ctx = 0};

			for (size_t i = 0; i < count; i++)
				host[i] = value_of(r, i);
			CHECK_CUDA(cudaMemcpy(src, host, count * sizeof(float),
					      cudaMemcpyHostToDevice));
			CHECK_NCCL(put_signal(src, count, ncclFloat, 1, win, 0, 0, 0, 0, comm,
					      stream));
			CHECK_NCCL(wait_signal(1, &ack, comm, stream));
			CHECK_CUDA(cudaStreamSynchronize(stream));
		} else {
			struct wait_desc put = {.opCnt = 1, .peer = 0, .sigIdx = 0, .ctx = 0};

			CHECK_NCCL(wait_signal(1, &put, comm, stream));
			CHECK_CUDA(cudaStreamSynchronize(stream));
			CHECK_CUDA(cudaMemcpy(host, dst, count * sizeof(float),
					      cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < count; i++)
				if (host[i] != value_of(r, i) && bad++ < 5)
					fprintf(stderr,
						"rank 1: round %d element %zu is %g, not %g\n", r,
						i, host[i], (double)value_of(r, i));
			CHECK_NCCL(signal_only(0, 0, 0, 0, comm, stream));
			CHECK_CUDA(cudaStreamSynchronize(stream));
		}
	}
	secs = now_s() - t0;
	printf("rank %d: NCCL %d, %d round(s) of ncclPutSignal of %zu floats, each waited on and "
	       "answered, in %.3f s: %s\n",
	       rank, version, rounds, count, secs,
	       rank == 0 ? "sent"
	       : bad	 ? "WRONG RESULT"
			 : "every element of every round right");
	CHECK_NCCL(ncclCommWindowDeregister(comm, win));
	CHECK_NCCL(ncclCommDestroy(comm));
	CHECK_NCCL(ncclMemFree(src));
	CHECK_NCCL(ncclMemFree(dst));
	free(host);
	return bad ? 1 : 0;
}
