/* SPDX-License-Identifier: MIT */
/*
 * Types and constants shared by every version of NCCL's external net API.
 * Written from the ABI facts (values and layouts), not copied from NCCL.
 */
#ifndef NCCL_NET_COMMON_H
#define NCCL_NET_COMMON_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
	ncclNumResults = 8
} ncclResult_t;

typedef enum {
	NCCL_LOG_NONE = 0,
	NCCL_LOG_VERSION = 1,
	NCCL_LOG_WARN = 2,
	NCCL_LOG_INFO = 3,
	NCCL_LOG_ABORT = 4,
	NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
	NCCL_INIT = 1,
	NCCL_COLL = 2,
	NCCL_P2P = 4,
	NCCL_SHM = 8,
	NCCL_NET = 16,
	NCCL_GRAPH = 32,
	NCCL_TUNING = 64,
	NCCL_ENV = 128,
	NCCL_ALLOC = 256,
	NCCL_CALL = 512,
	NCCL_PROXY = 1024,
	NCCL_NVLS = 2048,
	NCCL_ALL = ~0
} ncclDebugLogSubSys;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
				  int line, const char *fmt, ...);

#define NCCL_NET_HANDLE_MAXSIZE 128
#define NCCL_NET_MAX_REQUESTS	32

#define NCCL_PTR_HOST	0x1
#define NCCL_PTR_CUDA	0x2
#define NCCL_PTR_DMABUF 0x4

/* GIN_PROXY and on (NCCL 2.30.7): what the RMA tables' getProperties reports;
 * NCCL's GIN takes its type from it (2: through NCCL's proxy thread). */
typedef enum {
	NCCL_NET_DEVICE_HOST = 0,
	NCCL_NET_DEVICE_UNPACK = 1,
	NCCL_NET_DEVICE_GIN_PROXY = 2,
	NCCL_NET_DEVICE_GIN_GDAKI = 3,
	NCCL_NET_DEVICE_GIN_GPI = 4
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0

/* Appeared with later API versions. */
#define NCCL_MAX_NET_SIZE_BYTES		  (1ULL << 40) /* v9: upper bound of maxP2pBytes */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1	       /* v9: *request on input to irecv */
#define NCCL_NET_TRAFFIC_CLASS_UNDEF	  -1	       /* v10 */
#define NCCL_NET_ID_UNDEF		  -1	       /* v12: railId, planeId */

/* v10: the profiler callback NCCL passes to init. */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *phandle,
					       int64_t pluginId, void *extData);

typedef struct {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;
	size_t size;
	int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;

_Static_assert(sizeof(ncclResult_t) == 4, "ncclResult_t is a 4-byte enum");
_Static_assert(sizeof(ncclNetDeviceType) == 4, "ncclNetDeviceType is a 4-byte enum");
_Static_assert(sizeof(ncclNetDeviceHandle_v7_t) == 32, "device handle layout");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, handle) == 8, "device handle layout");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, size) == 16, "device handle layout");
_Static_assert(offsetof(ncclNetDeviceHandle_v7_t, needsProxyProgress) == 24,
	       "device handle layout");

#endif
