/* SPDX-License-Identifier: MIT */
/*
 * ncclNet_v8_t (NCCL 2.20): v7 plus regIsGlobal in the properties and a
 * size_t regMr. Written from the ABI facts; the asserts pin the layout.
 */
#ifndef NCCL_NET_V8_H
#define NCCL_NET_V8_H

#include "net_common.h"

typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal; /* registrations are not tied to one comm, and cached */
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v8_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v8_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
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
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

_Static_assert(sizeof(ncclNetProperties_v8_t) == 64, "v8 properties are 64 bytes");
_Static_assert(offsetof(ncclNetProperties_v8_t, regIsGlobal) == 28, "v8 properties layout");
_Static_assert(offsetof(ncclNetProperties_v8_t, speed) == 32, "v8 properties layout");
_Static_assert(offsetof(ncclNetProperties_v8_t, latency) == 40, "v8 properties layout");
_Static_assert(offsetof(ncclNetProperties_v8_t, netDeviceVersion) == 56, "v8 properties layout");
_Static_assert(sizeof(ncclNet_v8_t) == 152, "v8 table is 152 bytes");
_Static_assert(offsetof(ncclNet_v8_t, regMr) == 56, "v8 table layout");
_Static_assert(offsetof(ncclNet_v8_t, irecvConsumed) == 144, "v8 table layout");

#endif
