/* SPDX-License-Identifier: MIT */
/*
 * ncclRma_v16_t (NCCL 2.32.3): v15 with getRmaProperties inserted after
 * devices, every later member one slot down.
 */
#ifndef NCCL_RMA_V16_H
#define NCCL_RMA_V16_H

#include "rma_v15.h"

typedef ncclRmaConfig_v14_t ncclRmaConfig_v16_t;

typedef struct {
	/* true only if, on this collComm, any signal arriving from any peer
	 * makes every put received before it visible, on every NIC it uses:
	 * the device barrier then skips its per-peer flush */
	bool flushesAllPutsOnAnySignal;
} ncclRmaProperties_v16_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getRmaProperties)(void *collComm, ncclRmaProperties_v16_t *rmaProps);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(void *ctx, void *handles[], int nranks, int rank, void *listenComm,
				void **collComm);
	ncclResult_t (*createContext)(void *collComm, ncclRmaConfig_v16_t *config, void **rmaCtx);
	ncclResult_t (*regMrSym)(void *collComm, void *data, size_t size, int type,
				 uint64_t mrFlags, void **mhandle);
	ncclResult_t (*regMrSymDmaBuf)(void *collComm, void *data, size_t size, int type,
				       uint64_t offset, int fd, uint64_t mrFlags, void **mhandle);
	ncclResult_t (*deregMrSym)(void *collComm, void *mhandle);
	ncclResult_t (*destroyContext)(void *rmaCtx);
	ncclResult_t (*closeColl)(void *collComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*iput)(void *rmaCtx, int context, uint64_t srcOff, void *srcMhandle,
			     size_t size, uint64_t dstOff, void *dstMhandle, uint32_t rank,
			     uint32_t optFlags, void **request);
	ncclResult_t (*iputSignal)(void *rmaCtx, int context, uint64_t srcOff, void *srcMhandle,
				   size_t size, uint64_t dstOff, void *dstMhandle, uint32_t rank,
				   uint64_t signalOff, void *signalMhandle, uint64_t signalValue,
				   uint32_t signalOp, bool isStrongSignal, uint32_t optFlags,
				   void **request);
	ncclResult_t (*iget)(void *rmaCtx, int context, uint64_t remoteOff, void *remoteMhandle,
			     size_t size, uint64_t localOff, void *localMhandle, uint32_t rank,
			     uint32_t optFlags, void **request);
	ncclResult_t (*iflush)(void *rmaCtx, int context, void *mhandle, uint32_t rank,
			       void **request);
	ncclResult_t (*test)(void *collComm, void *request, int *done);
	ncclResult_t (*rmaProgress)(void *rmaCtx);
	ncclResult_t (*queryLastError)(void *rmaCtx, bool *hasError);
	ncclResult_t (*finalize)(void *ctx);
} ncclRma_v16_t;

_Static_assert(sizeof(ncclRmaProperties_v16_t) == 1, "v16 RMA properties are one bool");
_Static_assert(sizeof(ncclRma_v16_t) == 176, "v16 table is 22 pointers");
_Static_assert(offsetof(ncclRma_v16_t, getRmaProperties) == 24, "v16 table layout");
_Static_assert(offsetof(ncclRma_v16_t, getProperties) == 32, "v16 table layout");
_Static_assert(offsetof(ncclRma_v16_t, iput) == 112, "v16 table layout");
_Static_assert(offsetof(ncclRma_v16_t, test) == 144, "v16 table layout");
_Static_assert(offsetof(ncclRma_v16_t, finalize) == 168, "v16 table layout");

#endif
