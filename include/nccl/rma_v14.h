/* SPDX-License-Identifier: MIT */
/*
 * ncclRma_v14_t (NCCL 2.30.7, the first RMA plugin loader): one-sided puts,
 * signals and gets between the ranks of a collective connection, which
 * NCCL's host RMA calls and the proxy of its GIN device API drive. NCCL
 * looks for ncclRmaPlugin_v* in the net plugin's library too. Written from
 * the ABI facts (members, their order and types), not copied from NCCL.
 */
#ifndef NCCL_RMA_V14_H
#define NCCL_RMA_V14_H

#include <stdbool.h>

#include "net_v12.h"

/* mrFlags of regMrSym and regMrSymDmaBuf. */
#define NCCL_NET_MR_FLAG_FORCE_SO	    (1ULL << 0) /* holds signals: strictly ordered */
#define NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET (1ULL << 1) /* signal words start at 0, never reset */

/* signalOp of iputSignal. */
#define NCCL_NET_SIGNAL_OP_INC 0x1 /* adds 1; signalValue ignored */
#define NCCL_NET_SIGNAL_OP_ADD 0x2 /* adds signalValue */

typedef struct {
	int nContexts;	  /* contexts of the block createContext makes */
	int trafficClass; /* NCCL_NET_TRAFFIC_CLASS_UNDEF: none */
	int rankStride;	  /* connect to ranks at a distance that is a multiple of it */
} ncclRmaConfig_v14_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	/* blocking and collective: handles[] holds every rank's listen handle */
	ncclResult_t (*connect)(void *ctx, void *handles[], int nranks, int rank, void *listenComm,
				void **collComm);
	ncclResult_t (*createContext)(void *collComm, ncclRmaConfig_v14_t *config, void **rmaCtx);
	/* collective, in the same order on every rank */
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
			     void **request);
	ncclResult_t (*iputSignal)(void *rmaCtx, int context, uint64_t srcOff, void *srcMhandle,
				   size_t size, uint64_t dstOff, void *dstMhandle, uint32_t rank,
				   uint64_t signalOff, void *signalMhandle, uint64_t signalValue,
				   uint32_t signalOp, bool isStrongSignal, void **request);
	ncclResult_t (*iget)(void *rmaCtx, int context, uint64_t remoteOff, void *remoteMhandle,
			     size_t size, uint64_t localOff, void *localMhandle, uint32_t rank,
			     void **request);
	ncclResult_t (*iflush)(void *rmaCtx, int context, void *mhandle, uint32_t rank,
			       void **request);
	ncclResult_t (*test)(void *collComm, void *request, int *done);
	ncclResult_t (*rmaProgress)(void *rmaCtx);		      /* optional (NULL) */
	ncclResult_t (*queryLastError)(void *rmaCtx, bool *hasError); /* optional (NULL) */
	ncclResult_t (*finalize)(void *ctx);
} ncclRma_v14_t;

_Static_assert(sizeof(ncclRmaConfig_v14_t) == 12, "v14 config is 12 bytes");
_Static_assert(offsetof(ncclRmaConfig_v14_t, rankStride) == 8, "v14 config layout");
_Static_assert(sizeof(bool) == 1, "isStrongSignal is one byte");
_Static_assert(sizeof(ncclRma_v14_t) == 168, "v14 table is 21 pointers");
_Static_assert(offsetof(ncclRma_v14_t, getProperties) == 24, "v14 table layout");
_Static_assert(offsetof(ncclRma_v14_t, connect) == 40, "v14 table layout");
_Static_assert(offsetof(ncclRma_v14_t, iput) == 104, "v14 table layout");
_Static_assert(offsetof(ncclRma_v14_t, test) == 136, "v14 table layout");
_Static_assert(offsetof(ncclRma_v14_t, queryLastError) == 152, "v14 table layout");
_Static_assert(offsetof(ncclRma_v14_t, finalize) == 160, "v14 table layout");

#endif
