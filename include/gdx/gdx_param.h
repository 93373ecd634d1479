/* SPDX-License-Identifier: MIT */
/*
 * Every NCCL_GDX_* environment variable, in one table. The same list gives the
 * fields of struct gdx_params, the parser, and the printed reference.
 */
#ifndef GDX_PARAM_H
#define GDX_PARAM_H

#include <limits.h>
#include <stdint.h>

/*
 * type: int, str, or family (4, 6, AF_INET or AF_INET6: an int field holding
 * 4 or 6). twin: NCCL's own variable for the same thing, read when ours is
 * unset, as NCCL reads it (a site's existing NCCL_IB_* settings carry over).
 * lo..hi: the accepted range of an int (lo > hi: any). Ours out of range or
 * malformed fails init; a twin's is NCCL's to judge, so it only WARNs and
 * leaves the default.
 *
 *        type  field  NCCL_GDX_<name>  default  twin  lo  hi  help */
#define GDX_PARAM_TABLE(X)                                                                        \
	X(str, hca, "HCA", "", "NCCL_IB_HCA", 0, -1,                                              \
	  "devices to use, NCCL_IB_HCA syntax: name[:port[:rail[:plane]]],... ; ^ excludes, = "   \
	  "exact names; rail and plane give v12's railId and planeId")                            \
	X(str, socket_ifname, "SOCKET_IFNAME", "", "NCCL_SOCKET_IFNAME", 0, -1,                   \
	  "out-of-band interface, NCCL_SOCKET_IFNAME syntax; unset: ib* first, then any but "     \
	  "docker*, lo and virbr*, as NCCL picks")                                                \
	X(int, gid_index, "GID_INDEX", "-1", "NCCL_IB_GID_INDEX", -1, 255,                        \
	  "RoCE GID index; -1 chooses automatically (ADDR_FAMILY, ADDR_RANGE, ROCE_VERSION)")     \
	X(family, addr_family, "ADDR_FAMILY", "AF_INET", "NCCL_IB_ADDR_FAMILY", 0, -1,            \
	  "preferred GID address family when choosing automatically: AF_INET or AF_INET6 (or 4, " \
	  "6)")                                                                                   \
	X(str, addr_range, "ADDR_RANGE", "", "NCCL_IB_ADDR_RANGE", 0, -1,                         \
	  "choose the GID automatically only within this CIDR range, e.g. 10.0.0.0/8")            \
	X(int, roce_version, "ROCE_VERSION", "2", "NCCL_IB_ROCE_VERSION_NUM", 1, 2,               \
	  "preferred RoCE version when choosing a GID")                                           \
	X(int, timeout, "TIMEOUT", "20", "NCCL_IB_TIMEOUT", 0, 31,                                \
	  "QP local ack timeout exponent: 4.096 us * 2^n per retry (0: no timeout)")              \
	X(int, retry_cnt, "RETRY_CNT", "6", "NCCL_IB_RETRY_CNT", 0, 7,                            \
	  "QP transport retries (NCCL's default is 7, which rxe and some providers take as "      \
	  "retrying forever)")                                                                    \
	X(int, sl, "SL", "-1", "NCCL_IB_SL", -1, 15,                                              \
	  "InfiniBand service level; -1: NCCL's traffic class for the communicator, else 0")      \
	X(int, tc, "TC", "-1", "NCCL_IB_TC", -1, 255,                                             \
	  "RoCE traffic class; -1: NCCL's traffic class for the communicator, else 0")            \
	X(int, fifo_tc, "FIFO_TC", "-1", "NCCL_IB_FIFO_TC", -1, 255,                              \
	  "RoCE traffic class of the receiver's clear-to-sends; -1: the connection's")            \
	X(int, pkey, "PKEY", "0", "NCCL_IB_PKEY", 0, 65535, "partition key index of the QPs")     \
	X(str, rails, "RAILS", "auto", NULL, 0, -1,                                               \
	  "NICs fused into one device where NCCL cannot fuse them (net API v6-v8, NCCL "          \
	  "2.13-2.23; from 2.24 NCCL does, see Multi-rail): auto (the ports of one NIC), gpu (a " \
	  "GPU's equally near NICs), off, or groups such as mlx5_0+mlx5_1,mlx5_2+mlx5_3")         \
	X(str, topo_file, "TOPO_FILE", "", NULL, 0, -1,                                           \
	  "hwloc XML (lstopo --of xml) to read instead of the live machine's topology")           \
	X(int, stripe_min, "STRIPE_MIN", "65536", NULL, 0, INT_MAX,                               \
	  "messages of at least this many bytes are split over every rail of a fused device; "    \
	  "smaller ones go to the rail that would deliver them first")                            \
	X(int, stripe_weighted, "STRIPE_WEIGHTED", "1", NULL, 0, 1,                               \
	  "1: split by what each rail has been delivering; 0: evenly, as net_ib does")            \
	X(str, gdr, "GDR", "auto", NULL, 0, -1,                                                   \
	  "GPUDirect RDMA: auto (advertise GPU memory where registering it works), on (fail "     \
	  "init where it does not), off (host memory only)")                                      \
	X(int, gdr_flush, "GDR_FLUSH", "1", NULL, 0, 2,                                           \
	  "1: flush receives into GPU memory with a 1-byte RDMA read; 0: never; 2: host "         \
	  "memory too (diagnostics)")                                                             \
	X(int, handshake_timeout_ms, "HANDSHAKE_TIMEOUT_MS", "30000", NULL, 1, INT_MAX,           \
	  "drop an out-of-band handshake, either end, that has not finished by then")             \
	X(int, hello_timeout_ms, "HELLO_TIMEOUT_MS", "5000", NULL, 1, INT_MAX,                    \
	  "close an incoming out-of-band connection that has not sent its whole hello by then "   \
	  "(at most HANDSHAKE_TIMEOUT_MS), unread; its connector connects again")                 \
	X(int, cts_batch, "CTS_BATCH", "8", NULL, 1, 32,                                          \
	  "clear-to-sends of receives under 64 KiB written together while the sender still "      \
	  "holds two or more; 1 writes each at once, for a driver that does not keep testing "    \
	  "its receives as NCCL does")                                                            \
	X(int, qps_per_connection, "QPS_PER_CONNECTION", "1", "NCCL_IB_QPS_PER_CONNECTION", 1,    \
	  128,                                                                                    \
	  "QPs per rail of each connection, for more ECMP flows; ends that differ use the "       \
	  "larger count, and a connection has at most 128 in all")                                \
	X(int, split_data_on_qps, "SPLIT_DATA_ON_QPS", "0", "NCCL_IB_SPLIT_DATA_ON_QPS", 0, 1,    \
	  "0: each message on one QP of a rail, in turn; 1: each message split over all of them") \
	X(int, adaptive_routing, "ADAPTIVE_ROUTING", "-2", "NCCL_IB_ADAPTIVE_ROUTING", -2, 1,     \
	  "-2: on for InfiniBand ports, off for RoCE (as net_ib); 0 off; 1 on: messages above "   \
	  "AR_THRESHOLD go as RDMA WRITEs then a zero-byte WRITE_WITH_IMM")                       \
	X(int, ar_threshold, "AR_THRESHOLD", "8192", "NCCL_IB_AR_THRESHOLD", 0, INT_MAX,          \
	  "messages larger than this many bytes use adaptive routing where it is on")             \
	X(int, pci_relaxed_ordering, "PCI_RELAXED_ORDERING", "2", "NCCL_IB_PCI_RELAXED_ORDERING", \
	  0, 2,                                                                                   \
	  "PCIe relaxed ordering on data registrations: 2 where the NIC's provider takes it, 1 "  \
	  "always (registration fails where it cannot), 0 never")                                 \
	X(int, ece_enable, "ECE_ENABLE", "1", "NCCL_IB_ECE_ENABLE", 0, 1,                         \
	  "negotiate Enhanced Connection Establishment options where both providers have them")   \
	X(int, failover, "FAILOVER", "0", "NCCL_IB_RESILIENCY_PORT_FAILOVER", 0, 1,               \
	  "1: on a device of two or more rails, take a rail that fails out of the connection "    \
	  "and re-send its traffic on the others, instead of failing the connection (off by "     \
	  "default, as net_ib)")                                                                  \
	X(int, recovery_max_ms, "RECOVERY_MAX_MS", "2000", NULL, 0, INT_MAX,                      \
	  "longest wait between attempts to bring a failed rail back (from 100 ms, doubling, "    \
	  "never giving up); 0 never brings it back")                                             \
	X(int, live, "LIVE", "1", NULL, 0, 1,                                                     \
	  "1: live counters in a shared-memory file per process, for gdx-doctor top and hang "    \
	  "(plain stores on the data path); 0: none")                                             \
	X(int, stall_ms, "STALL_MS", "2000", NULL, 0, INT_MAX,                                    \
	  "a QP whose oldest work request has waited this long logs one WARN (NIC, QP, peer), "   \
	  "and one INFO when it drains; 0: never")                                                \
	X(str, live_dir, "LIVE_DIR", "/dev/shm", NULL, 0, -1,                                     \
	  "where the live counter files go, each user's in a directory of theirs "                \
	  "(nccl-net-gdx-UID/nccl-net-gdx.PID.PIDNS.RANDOM), and gdx-doctor looks")               \
	X(int, rma, "RMA", "0", NULL, 0, 1,                                                       \
	  "1: one-sided RMA through this plugin (ncclRmaPlugin_v14-v16, NCCL 2.30.7 and later): " \
	  "puts, signals and gets over RC verbs, striped over the rails of a fused device; 0: "   \
	  "the RMA tables' init declines and NCCL keeps its own RMA proxy")

struct gdx_params {
#define GDX_PARAM_FIELD_int(field)				    int field;
#define GDX_PARAM_FIELD_family(field)				    int field;
#define GDX_PARAM_FIELD_str(field)				    const char *field;
#define GDX_PARAM_FIELD(type, field, name, def, twin, lo, hi, help) GDX_PARAM_FIELD_##type(field)
	GDX_PARAM_TABLE(GDX_PARAM_FIELD)
#undef GDX_PARAM_FIELD
};

struct gdx_param_info {
	const char *name; /* without the NCCL_GDX_ prefix */
	const char *type; /* "int", "str" or "family" */
	const char *def;
	const char *twin; /* NCCL's own variable, or NULL */
	long long lo, hi; /* ints: the accepted range */
	const char *help;
};

/* Where each parameter's value came from, after gdx_params_load(). */
enum gdx_param_src { GDX_PARAM_DEFAULT, GDX_PARAM_OURS, GDX_PARAM_TWIN };

extern struct gdx_params gdx_params;
extern const struct gdx_param_info gdx_param_infos[];
extern const int gdx_param_count;

/* The raw value of NCCL_GDX_<name> (name without the prefix), NULL when
 * unset: for gdx-doctor, which shows and checks what the table will read.
 * The plugin's only other environment reads are the twins above and the
 * variables listed in gdx_env.h. */
const char *gdx_param_env(const char *name);
/* The twin's raw value when NCCL would use it (set, and for
 * NCCL_SOCKET_IFNAME longer than one character), else NULL. */
const char *gdx_param_twin_env(const struct gdx_param_info *p);

/* Where the parameter (name without NCCL_GDX_) got its value. */
enum gdx_param_src gdx_param_src(const char *name);

/* Parses the environment into gdx_params. Logs each value set, and which
 * variable set it, at INFO; returns -EINVAL (after a WARN naming the
 * variable) for a malformed or out-of-range NCCL_GDX_* value. */
int gdx_params_load(void);

#endif
