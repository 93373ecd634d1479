/* SPDX-License-Identifier: MIT */
/*
 * Every NCCL_GDX_* environment variable, in one table. The same list gives the
 * fields of struct gdx_params, the parser, and the printed reference.
 */
#ifndef GDX_PARAM_H
#define GDX_PARAM_H

#include <stdint.h>

/*        type  field           NCCL_GDX_<name>   default  help */
#define GDX_PARAM_TABLE(X)                                                                       \
	X(str, hca, "HCA", "",                                                                   \
	  "devices to use, NCCL_IB_HCA syntax: name[:port],... ; ^ excludes, = exact names")     \
	X(str, socket_ifname, "SOCKET_IFNAME", "",                                               \
	  "out-of-band interface (NCCL_SOCKET_IFNAME syntax); else NCCL_SOCKET_IFNAME, "         \
	  "else the first up, non-loopback interface")                                           \
	X(int, gid_index, "GID_INDEX", "-1", "RoCE GID index; -1 chooses RoCE v2 automatically") \
	X(int, addr_family, "ADDR_FAMILY", "4",                                                  \
	  "preferred GID address family when choosing automatically: 4 or 6")                    \
	X(int, roce_version, "ROCE_VERSION", "2", "preferred RoCE version when choosing a GID")  \
	X(int, timeout, "TIMEOUT", "20",                                                         \
	  "QP local ack timeout exponent: 4.096 us * 2^n per retry (1-31)")                      \
	X(int, retry_cnt, "RETRY_CNT", "6",                                                      \
	  "QP transport retries (0-6; 7 means forever on some devices, so it is refused)")       \
	X(int, sl, "SL", "0", "InfiniBand service level (0-15)")                                 \
	X(int, tc, "TC", "0", "RoCE traffic class (0-255)")                                      \
	X(str, rails, "RAILS", "auto",                                                           \
	  "fused devices striping over several NICs: auto (a GPU's equally near NICs), off, "    \
	  "or groups such as mlx5_0+mlx5_1,mlx5_2+mlx5_3")                                       \
	X(str, topo_file, "TOPO_FILE", "",                                                       \
	  "hwloc XML (lstopo --of xml) to read instead of the live machine's topology")          \
	X(int, stripe_min, "STRIPE_MIN", "65536",                                                \
	  "messages of at least this many bytes are split over every rail of a fused device; "   \
	  "smaller ones go to one rail, round-robin")                                            \
	X(str, gdr, "GDR", "auto",                                                               \
	  "GPUDirect RDMA: auto (advertise GPU memory where registering it works), on (fail "    \
	  "init where it does not), off (host memory only)")                                     \
	X(int, gdr_flush, "GDR_FLUSH", "1",                                                      \
	  "1: flush receives into GPU memory with a 1-byte RDMA read; 0: never; 2: host "        \
	  "memory too (diagnostics)")                                                            \
	X(int, handshake_timeout_ms, "HANDSHAKE_TIMEOUT_MS", "30000",                            \
	  "drop an incoming out-of-band connection that has not finished its handshake by then") \
	X(int, cts_batch, "CTS_BATCH", "8",                                                      \
	  "clear-to-sends written together while the sender still holds two or more (1-32); 1 "  \
	  "writes each at once, for a driver that does not keep testing its receives as NCCL "   \
	  "does")

struct gdx_params {
#define GDX_PARAM_FIELD_int(field)		      int field;
#define GDX_PARAM_FIELD_str(field)		      const char *field;
#define GDX_PARAM_FIELD(type, field, name, def, help) GDX_PARAM_FIELD_##type(field)
	GDX_PARAM_TABLE(GDX_PARAM_FIELD)
#undef GDX_PARAM_FIELD
};

struct gdx_param_info {
	const char *name; /* without the NCCL_GDX_ prefix */
	const char *type; /* "int" or "str" */
	const char *def;
	const char *help;
};

extern struct gdx_params gdx_params;
extern const struct gdx_param_info gdx_param_infos[];
extern const int gdx_param_count;

/* The raw value of NCCL_GDX_<name> (name without the prefix), NULL when
 * unset: for gdx-doctor, which shows and checks what the table will read.
 * The plugin's only other environment reads are listed in gdx_env.h. */
const char *gdx_param_env(const char *name);

/* Parses the environment into gdx_params. Logs each value the user set once at
 * INFO; returns -EINVAL (after a WARN naming the variable) for a malformed value. */
int gdx_params_load(void);

#endif
