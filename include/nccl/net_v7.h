/* SPDX-License-Identifier: MIT */
/*
 * ncclNet_v7_t: the net plugin API loaded by NCCL 2.19 and later.
 * Written from the ABI facts; the static asserts pin the x86-64 layout.
 */
#ifndef NCCL_NET_V7_H
#define NCCL_NET_V7_H

#include "net_common.h"

typedef struct {
	char *name;	/* unique; also the key of NCCL's topology node */
	char *pciPath;	/* sysfs path of the PCI function, or NULL */
	uint64_t guid;	/* NIC ASIC identity (sys_image_guid) */
	int ptrSupport; /* NCCL_PTR_* bitmask */
	int speed;	/* Mbps */
	int port;
	float latency; /* microseconds, 0 = NCCL default */
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v7_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v7_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v7_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v7_t **recvDevComm);
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
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v7_t;

_Static_assert(sizeof(ncclNetProperties_v7_t) == 56, "v7 properties are 56 bytes");
_Static_assert(offsetof(ncclNetProperties_v7_t, pciPath) == 8, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, guid) == 16, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, ptrSupport) == 24, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, speed) == 28, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, port) == 32, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, latency) == 36, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, maxComms) == 40, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, maxRecvs) == 44, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, netDeviceType) == 48, "v7 properties layout");
_Static_assert(offsetof(ncclNetProperties_v7_t, netDeviceVersion) == 52, "v7 properties layout");

_Static_assert(sizeof(ncclNet_v7_t) == 152, "v7 table is 152 bytes");
_Static_assert(offsetof(ncclNet_v7_t, init) == 8, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, listen) == 32, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, regMr) == 56, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, isend) == 80, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, test) == 104, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, closeListen) == 128, "v7 table layout");
_Static_assert(offsetof(ncclNet_v7_t, irecvConsumed) == 144, "v7 table layout");

#endif
