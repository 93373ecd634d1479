/* SPDX-License-Identifier: MIT */
/*
 * Every NCCL_GDX_* environment variable, in one table. The same list gives the
 * fields of struct gdx_params, the parser, and the printed reference.
 */
#ifndef GDX_PARAM_H
#define GDX_PARAM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/*
 * type: int, bool (0 or 1; a twin as NCCL reads its switches: any value but
 * 0 is 1), str, or family (4, 6, AF_INET or AF_INET6: an int field holding
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
	X(int, subnet_aware_routing, "SUBNET_AWARE_ROUTING", "0", "NCCL_IB_SUBNET_AWARE_ROUTING", \
	  0, 1,                                                                                   \
	  "1: on RoCE, a connect takes the device whose every port shares a subnet with one of "  \
	  "the listener's (their GIDs ride in the handle) where the device NCCL gives does not "  \
	  "(rings cabled without a switch)")                                                      \
	X(int, subnet_prefix_len, "SUBNET_PREFIX_LEN", "24", "NCCL_IB_SUBNET_PREFIX_LEN", 1, 128, \
	  "bits that make a GID's subnet: of its IPv4 address (32 at most), or of the whole GID " \
	  "for IPv6 and InfiniBand")                                                              \
	X(int, query_port_speed, "QUERY_PORT_SPEED", "1", "NCCL_IB_QUERY_PORT_SPEED", 0, 1,       \
	  "1: a port's speed from ibv_query_port_speed where libibverbs has it (rdma-core 57); "  \
	  "0: from its attributes and sysfs")                                                     \
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
	X(bool, standby, "STANDBY", "1", NULL, 0, 1,                                              \
	  "1: a fused device's far NICs (through a host bridge or another socket from the GPU "   \
	  "it serves, where another member shares a PCIe switch with it) carry data only while "  \
	  "none of its near ones is up; 0: every member carries")                                 \
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
	X(int, data_direct, "DATA_DIRECT", "1", "NCCL_IB_DATA_DIRECT", 0, 2,                      \
	  "an mlx5 NIC with a Data Direct DMA function (ConnectX-8), as net_ib: 1 advertises "    \
	  "it as <dev>_dma at that function's PCI path in place of the NIC's own, 2 both, 0 "     \
	  "only the NIC's own")                                                                   \
	X(int, ece_enable, "ECE_ENABLE", "1", "NCCL_IB_ECE_ENABLE", 0, 1,                         \
	  "negotiate Enhanced Connection Establishment options where both providers have them")   \
	X(bool, failover, "FAILOVER", "0", "NCCL_IB_RESILIENCY_PORT_FAILOVER", 0, 1,              \
	  "1: on a device of two or more rails, take a rail that fails out of the connection "    \
	  "and re-send its traffic on the others, instead of failing the connection (off by "     \
	  "default, as net_ib); only where both ends run it (0.4.3 on): one alone is a WARN "     \
	  "and off")                                                                              \
	X(bool, recovery, "RECOVERY", "1", "NCCL_IB_RESILIENCY_PORT_RECOVERY", 0, 1,              \
	  "1: a rail taken out comes back once its port is up, probed in the background for as "  \
	  "long as it takes (see RECOVERY_ATTEMPTS); 0: it stays out")                            \
	X(int, recovery_start_ms, "RECOVERY_START_MS", "100",                                     \
	  "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY", 0, INT_MAX,                             \
	  "first wait before an attempt to bring a failed rail back; it doubles after each "      \
	  "attempt that fails, up to RECOVERY_MAX_MS")                                            \
	X(int, recovery_max_ms, "RECOVERY_MAX_MS", "2000", NULL, 0, INT_MAX,                      \
	  "longest wait between attempts to bring a failed rail back (from RECOVERY_START_MS, "   \
	  "doubling); 0 never brings it back")                                                    \
	X(int, recovery_attempts, "RECOVERY_ATTEMPTS", "0",                                       \
	  "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX", 0, INT_MAX,                            \
	  "failed attempts after which a rail stays out until the connection closes; 0: never "   \
	  "give up (attempts while its port is down do not count)")                               \
	X(int, recovery_probes, "RECOVERY_PROBES", "1",                                           \
	  "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE", 1, 10,                      \
	  "zero-byte writes on each QP of a restored rail that must all be delivered before "     \
	  "traffic returns to it")                                                                \
	X(int, recovery_answer_ms, "RECOVERY_ANSWER_MS", "2000",                                  \
	  "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT", 1, INT_MAX,                             \
	  "how long an attempt waits for the receiver to answer that its QPs are ready")          \
	X(int, recovery_probe_ms, "RECOVERY_PROBE_MS", "2000",                                    \
	  "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT", 1, INT_MAX,                       \
	  "how long an attempt waits for its probes to be delivered")                             \
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

/*
 * Every NCCL_IB_* variable NCCL 2.31 reads (net_ib, and ibvwrap's
 * NCCL_IB_QUERY_PORT_SPEED and NCCL_IB_MQP_*), with NCCL's default and what
 * this plugin does with it: libnccl-net-gdx-nccl(7)'s compatibility table is made
 * from it (scripts/update-env-docs.sh), and tests/check/docs.sh holds it to
 * the twins above, both ways, and to NCCL 2.31's list of names.
 * kind: twin (read when its NCCL_GDX_* variable above is unset; what: how
 * NCCL's value maps where this plugin does more or other), noted (read when
 * set, and one INFO says that it is not applied and why), or nccl (NCCL's
 * own: read by NCCL, not by the plugin).
 *
 *        variable  NCCL's default  kind  what */
#define GDX_NCCL_IB_TABLE(X)                                                                      \
	X("NCCL_IB_HCA", "", twin, "the same syntax; rail and plane (NCCL 2.30) too")             \
	X("NCCL_IB_GID_INDEX", "-1", twin, "the same; -1 chooses as net_ib does")                 \
	X("NCCL_IB_ADDR_FAMILY", "AF_INET", twin, "anything but AF_INET6 is AF_INET, as NCCL")    \
	X("NCCL_IB_ADDR_RANGE", "", twin, "a malformed range is ignored with a note, as NCCL")    \
	X("NCCL_IB_ROCE_VERSION_NUM", "2", twin, "the same")                                      \
	X("NCCL_IB_TIMEOUT", "20", twin,                                                          \
	  "the same for 0-31; NCCL hands verbs a larger value as it is, here it gets a WARN and " \
	  "20")                                                                                   \
	X("NCCL_IB_RETRY_CNT", "7", twin,                                                         \
	  "the same; unset, 6 (rxe and some providers take 7 for retrying forever)")              \
	X("NCCL_IB_SL", "-1", twin, "the same; a value verbs refuses gets a WARN and -1")         \
	X("NCCL_IB_TC", "-1", twin, "the same")                                                   \
	X("NCCL_IB_FIFO_TC", "-1", twin, "the same")                                              \
	X("NCCL_IB_PKEY", "0", twin, "the same")                                                  \
	X("NCCL_IB_QPS_PER_CONNECTION", "1", twin,                                                \
	  "QPs per rail; ends that differ take the larger count, 128 in all")                     \
	X("NCCL_IB_SPLIT_DATA_ON_QPS", "0", twin, "the same; any value but 0 is on, as NCCL")     \
	X("NCCL_IB_ADAPTIVE_ROUTING", "-2", twin, "the same")                                     \
	X("NCCL_IB_AR_THRESHOLD", "-2", twin,                                                     \
	  "the same; NCCL's -2 (its 8192) gets a WARN and 8192")                                  \
	X("NCCL_IB_PCI_RELAXED_ORDERING", "2", twin, "the same")                                  \
	X("NCCL_IB_ECE_ENABLE", "1", twin, "the same; any value but 0 is on, as NCCL")            \
	X("NCCL_IB_SUBNET_AWARE_ROUTING", "0", twin,                                              \
	  "the same rule; the listener puts the GIDs of up to 4 ports in its handle (NCCL: 2)")   \
	X("NCCL_IB_SUBNET_PREFIX_LEN", "24", twin,                                                \
	  "the same for IPv4 GIDs; for others, bits of the whole GID")                            \
	X("NCCL_IB_QUERY_PORT_SPEED", "1", twin,                                                  \
	  "the same; a device speed change event asks the port again")                            \
	X("NCCL_IB_RESILIENCY_PORT_FAILOVER", "0", twin,                                          \
	  "any value but 0 is on, as NCCL; the failed rail's traffic goes to the others by what " \
	  "each delivers (weighted), not evenly")                                                 \
	X("NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS", "1", noted,                            \
	  "net_ib probes a failed request with RDMA reads to learn whether it landed; here the "  \
	  "receiver says what it took, so nothing is probed and no attempt can fail")             \
	X("NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY", "10", noted,                            \
	  "likewise: no probe to delay; what a failed rail carried goes again once the "          \
	  "receiver's receives on it are flushed")                                                \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY", "0", twin,                                          \
	  "any value but 0 is on, as NCCL; unset, on here (NCCL: off), and attempts never end "   \
	  "unless NCCL_GDX_RECOVERY_ATTEMPTS says")                                               \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY", "200", twin,                            \
	  "the first wait before an attempt, which here doubles after each failed one up to "     \
	  "NCCL_GDX_RECOVERY_MAX_MS (NCCL: then one batch every ALIVE_MSG_BATCH_INTERVAL)")       \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL", "500", noted,              \
	  "attempts are spaced by NCCL_GDX_RECOVERY_START_MS doubling up to "                     \
	  "NCCL_GDX_RECOVERY_MAX_MS instead")                                                     \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE", "5", noted,                    \
	  "NCCL 2.30 and 2.31 read it and use ALIVE_MSG_SEQUENCE_SIZE, as this plugin does")      \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE", "5", twin,                  \
	  "probes: zero-byte writes per QP of the restored rail, which must all be delivered "    \
	  "(NCCL: alive messages seen in order); 1-10, as NCCL takes")                            \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT", "4000", twin,                     \
	  "how long the probes may take (the sender's clock alone: the ends share no timer)")     \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT", "5000", twin,                           \
	  "how long the receiver may take to answer an attempt (the sender's clock alone)")       \
	X("NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX", "5", twin,                             \
	  "failed attempts of one outage before the rail stays out; NCCL's values up to 1 mean "  \
	  "1; unset, never (NCCL: 5); attempts while its port is down do not count")              \
	X("NCCL_IB_OOO_RQ", "0", noted,                                                           \
	  "an out-of-order receive queue (mlx5's OOO data placement) would break what this "      \
	  "protocol's receiver relies on: a WRITE_WITH_IMM's completion meaning the WRITEs "      \
	  "before it on its QP have landed (adaptive routing's zero-byte last write, a split "    \
	  "message's sizes sent ahead); the receives it consumes are alike and the immediate "    \
	  "names the receive, so completion order needs nothing from it")                         \
	X("NCCL_IB_DATA_DIRECT", "1", twin,                                                       \
	  "the same: 0, 1 or 2, the Data Direct device named <dev>_dma; a DMA-BUF registration "  \
	  "on it goes through mlx5dv_reg_dmabuf_mr, and NCCL is asked to flush its receives")     \
	X("NCCL_IB_USE_INLINE", "0", noted,                                                       \
	  "small sends and the clear-to-sends go inline wherever the provider takes it")          \
	X("NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "-2", noted,                                   \
	  "receives are always posted ahead, a batch per QP")                                     \
	X("NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME", "-2", noted,                                   \
	  "the receiver names the receive in each immediate; there is one scheme")                \
	X("NCCL_IB_RETURN_ASYNC_EVENTS", "1", noted,                                              \
	  "a fatal async event always fails the comms it names, or takes their rail out")         \
	X("NCCL_IB_ROUTABLE_FLID_GID_INDEX", "1", noted,                                          \
	  "InfiniBand routing by FLID is not done: the port's LID is used")                       \
	X("NCCL_IB_MERGE_VFS", "1", noted,                                                        \
	  "virtual functions are devices of their own; fuse them with NCCL_NET_FORCE_MERGE or "   \
	  "NCCL_GDX_RAILS")                                                                       \
	X("NCCL_IB_MERGE_NICS", "1", noted,                                                       \
	  "makeVDevice always fuses what NCCL asks (NCCL_NET_MERGE_LEVEL, NCCL_NET_FORCE_MERGE)") \
	X("NCCL_IB_DEVICE_PCI_ORDER", "1", noted,                                                 \
	  "devices are in libibverbs' order, the same on like nodes")                             \
	X("NCCL_IB_WARN_RAIL_LOCAL", "0", noted,                                                  \
	  "ends with different rail counts connect, with one INFO line under NET")                \
	X("NCCL_IB_MQP_RETRY_ALL", "0", noted, "a QP state change is not retried")                \
	X("NCCL_IB_MQP_RETRY_CNT", "34", noted, "likewise")                                       \
	X("NCCL_IB_MQP_RETRY_SLEEP_MSEC", "100", noted, "likewise")                               \
	X("NCCL_IB_DISABLE", "0", nccl,                                                           \
	  "NCCL's own IB transport, which NCCL falls back to where this plugin does not load")

enum gdx_nccl_kind { GDX_NCCL_twin, GDX_NCCL_noted, GDX_NCCL_nccl };

struct gdx_nccl_var {
	const char *name;
	const char *def; /* NCCL 2.31's */
	enum gdx_nccl_kind kind;
	const char *what;
};

extern const struct gdx_nccl_var gdx_nccl_vars[];
extern const int gdx_nccl_var_count;

struct gdx_params {
#define GDX_PARAM_FIELD_int(field)				    int field;
#define GDX_PARAM_FIELD_bool(field)				    int field;
#define GDX_PARAM_FIELD_family(field)				    int field;
#define GDX_PARAM_FIELD_str(field)				    const char *field;
#define GDX_PARAM_FIELD(type, field, name, def, twin, lo, hi, help) GDX_PARAM_FIELD_##type(field)
	GDX_PARAM_TABLE(GDX_PARAM_FIELD)
#undef GDX_PARAM_FIELD
};

struct gdx_param_info {
	const char *name; /* without the NCCL_GDX_ prefix */
	const char *type; /* "int", "bool", "str" or "family" */
	const char *def;
	const char *twin; /* NCCL's own variable, or NULL */
	long long lo, hi; /* ints: the accepted range */
	const char *help;
	size_t off; /* of its field in struct gdx_params */
};

/* Where each parameter's value came from, after gdx_params_load().
 * GDX_PARAM_TWIN_REFUSED: the twin is set, outside lo..hi, and the default
 * applies (one WARN and one INFO said so). */
enum gdx_param_src { GDX_PARAM_DEFAULT, GDX_PARAM_OURS, GDX_PARAM_TWIN, GDX_PARAM_TWIN_REFUSED };

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
 * variable set it, at INFO (a twin refused: the default it keeps), and each noted NCCL_IB_*
 * variable set (one INFO saying it is not applied, and why); returns -EINVAL (after a WARN naming
 * the variable) for a malformed or out-of-range NCCL_GDX_* value. NCCL's
 * values never fail it. */
int gdx_params_load(void);

#endif
