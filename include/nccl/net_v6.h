/* SPDX-License-Identifier: MIT */
/*
 * ncclNet_v6_t: the net plugin API of NCCL 2.13 to 2.18, still tried by every
 * later release after the newer versions. No device handles, no
 * getDeviceMr/irecvConsumed, no device type in the properties. Written from
 * the ABI facts; the static asserts pin the x86-64 layout.
 */
#ifndef NCCL_NET_V6_H
#define NCCL_NET_V6_H

#include "net_common.h"

/* Requests a v6 comm must take in flight (32 from v7 on). */
#define NCCL_NET_MAX_REQUESTS_V6 8

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int speed; /* Mbps */
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
} ncclNetProperties_v6_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm);
	ncclResult_t (*regMr)(void *comm, void *data, int size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
} ncclNet_v6_t;

_Static_assert(sizeof(ncclNetProperties_v6_t) == 48, "v6 properties are 48 bytes");
_Static_assert(offsetof(ncclNetProperties_v6_t, guid) == 16, "v6 properties layout");
_Static_assert(offsetof(ncclNetProperties_v6_t, ptrSupport) == 24, "v6 properties layout");
_Static_assert(offsetof(ncclNetProperties_v6_t, speed) == 28, "v6 properties layout");
_Static_assert(offsetof(ncclNetProperties_v6_t, latency) == 36, "v6 properties layout");
_Static_assert(offsetof(ncclNetProperties_v6_t, maxRecvs) == 44, "v6 properties layout");

_Static_assert(sizeof(ncclNet_v6_t) == 136, "v6 table is 136 bytes");
_Static_assert(offsetof(ncclNet_v6_t, connect) == 40, "v6 table layout");
_Static_assert(offsetof(ncclNet_v6_t, regMr) == 56, "v6 table layout");
_Static_assert(offsetof(ncclNet_v6_t, isend) == 80, "v6 table layout");
_Static_assert(offsetof(ncclNet_v6_t, test) == 104, "v6 table layout");
_Static_assert(offsetof(ncclNet_v6_t, closeListen) == 128, "v6 table layout");

#endif
