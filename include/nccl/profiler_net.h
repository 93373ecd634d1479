/* SPDX-License-Identifier: MIT */
/*
 * The events a net plugin reports through the profiler callback NCCL hands
 * to init from net API v10 on (ncclProfilerCallback_t, net_common.h): what
 * the callback's type and pluginId arguments mean, and the event descriptor
 * of an IB plugin, as NCCL's net_ib fills it. NCCL passes the descriptor to
 * the profiler plugin as a ncclProfileNetPlugin event's data. Written from
 * the ABI facts (values and layouts), not copied from NCCL.
 */
#ifndef NCCL_PROFILER_NET_H
#define NCCL_PROFILER_NET_H

#include <stddef.h>
#include <stdint.h>

/* The callback's type argument. Start: phandle is the one NCCL gave isend or
 * irecv (never NULL: NCCL reads through it), extData the descriptor, and
 * NCCL sets *eHandle (left alone when no profiler takes the event). Stop:
 * *eHandle is the event started; phandle, pluginId and extData unused. */
enum {
	ncclProfilerNetEventStart = 0,
	ncclProfilerNetEventStop = 1,
	ncclProfilerNetEventUpdate = 2,	       /* extData: the descriptor again */
	ncclProfilerNetEventUpdateAndStop = 3, /* both at once */
};

/* pluginId: the descriptor's version in the low 16 bits, the kind of network
 * in the next 16; the rest is unused. */
#define NCCL_PROFILER_NET_VER_BITS  16
#define NCCL_PROFILER_NET_VER_MASK  (~0U >> NCCL_PROFILER_NET_VER_BITS)
#define NCCL_PROFILER_NET_TYPE_MASK (~0U << NCCL_PROFILER_NET_VER_BITS)

typedef enum {
	NCCL_PROFILER_NET_TYPE_IB = 1U << NCCL_PROFILER_NET_VER_BITS,
	NCCL_PROFILER_NET_TYPE_SOCK = 2U << NCCL_PROFILER_NET_VER_BITS,
} ncclProfilerNetType;

/* The profiler API's event type these reach a profiler plugin as. */
#define NCCL_PROFILE_NET_PLUGIN (1 << 7) /* NCCL's ncclProfileNetPlugin */

/* The IB descriptor, version 1: pluginId NCCL_PROFILER_NET_TYPE_IB | 1. */
#define NCCL_PROFILER_NET_IB_VER 1

enum {
	ncclProfileQp = 1 << 0, /* a work request on a QP */
};

typedef struct {
	uint8_t type; /* ncclProfileQp */
	union {
		struct {
			int device;	/* the NIC's index within the (fused) device */
			uint64_t wr_id; /* the work request's id */
			int opcode;	/* enum ibv_wr_opcode */
			int qpNum;	/* the QP's number */
			size_t length;	/* bytes the work request carries */
		} qp;
	};
} ncclProfilerNetIbDescr_v1_t;

_Static_assert(sizeof(ncclProfilerNetIbDescr_v1_t) == 40, "IB descriptor v1 is 40 bytes");
_Static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.device) == 8, "IB descriptor v1 layout");
_Static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.wr_id) == 16, "IB descriptor v1 layout");
_Static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.opcode) == 24, "IB descriptor v1 layout");
_Static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.qpNum) == 28, "IB descriptor v1 layout");
_Static_assert(offsetof(ncclProfilerNetIbDescr_v1_t, qp.length) == 32, "IB descriptor v1 layout");

#endif
