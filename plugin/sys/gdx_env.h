/* SPDX-License-Identifier: MIT */
/*
 * Every environment variable the plugin and its programs read that is not
 * one of its own NCCL_GDX_* knobs (those are the table in gdx_param.h): NCCL's
 * own variables, read to behave as NCCL does or to predict what NCCL will do,
 * and the hooks only the tests set. (NCCL's variables that have an NCCL_GDX_
 * twin, such as NCCL_IB_TIMEOUT, are in the table of gdx_param.h.) No
 * getenv() elsewhere but in gdx_param.c, so this list and that table are the
 * whole of what the environment can change.
 */
#ifndef GDX_ENV_H
#define GDX_ENV_H

/*      id             variable              owner   why it is read */
#define GDX_ENV_TABLE(X)                                                                        \
	X(SOCKET_FAMILY, "NCCL_SOCKET_FAMILY", "NCCL",                                          \
	  "the out-of-band address family, AF_INET or AF_INET6, as NCCL picks its own")         \
	X(NET_GDR_LEVEL, "NCCL_NET_GDR_LEVEL", "NCCL",                                          \
	  "the GPU-NIC distance up to which NCCL uses GPUDirect RDMA: the verdicts predict it") \
	X(NET_GDR_C2C, "NCCL_NET_GDR_C2C", "NCCL",                                              \
	  "whether NCCL uses GPUDirect RDMA from a GPU on NVLink-C2C to its CPU's NICs (P2C)")  \
	X(DEBUG, "NCCL_DEBUG", "NCCL", "the log level when there is no NCCL logger (programs)") \
	X(NET_PLUGIN, "NCCL_NET_PLUGIN", "NCCL", "gdx-doctor: which plugin NCCL would load")    \
	X(NET, "NCCL_NET", "NCCL",                                                              \
	  "the network NCCL is told to use: what it does when init fails")                      \
	X(RMA_PLUGIN, "NCCL_RMA_PLUGIN", "NCCL",                                                \
	  "gdx-doctor: the RMA plugins NCCL tries before the net plugin's tables")              \
	X(CROSS_NIC, "NCCL_CROSS_NIC", "NCCL", "gdx-doctor: 0 leaves NCCL without RMA at all")  \
	X(NUM_RMA_CTX, "NCCL_NUM_RMA_CTX", "NCCL", "gdx-doctor: 0 turns NCCL's host RMA off")   \
	X(WIN_ENABLE, "NCCL_WIN_ENABLE", "NCCL",                                                \
	  "gdx-doctor: 0 turns NCCL's symmetric windows, and with them its RMA, off")           \
	X(SLURM_JOB_ID, "SLURM_JOB_ID", "Slurm",                                                \
	  "the job, in the live file: gdx-doctor hang --merge names it")                        \
	X(SLURM_PROCID, "SLURM_PROCID", "Slurm", "the process's rank, in the live file")        \
	X(OMPI_RANK, "OMPI_COMM_WORLD_RANK", "Open MPI", "likewise, under mpirun")              \
	X(PMI_RANK, "PMI_RANK", "MPICH, Intel MPI", "likewise, under mpiexec")                  \
	X(RANK, "RANK", "torchrun", "likewise, under torchrun")                                 \
	X(SLURM_LOCALID, "SLURM_LOCALID", "Slurm", "the rank on its node, in the live file")    \
	X(OMPI_LOCAL_RANK, "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI", "likewise")                \
	X(LOCAL_RANK, "LOCAL_RANK", "torchrun", "likewise")                                     \
	X(TOPO_FILE, "NCCL_TOPO_FILE", "NCCL",                                                  \
	  "NCCL's topology XML: the GPU-NIC pairing NCCL takes from it, the plugin follows")    \
	X(CONF_FILE, "NCCL_CONF_FILE", "NCCL",                                                  \
	  "gdx-doctor: the configuration file NCCL reads instead of ~/.nccl.conf")              \
	X(HOME, "HOME", "the user", "gdx-doctor: where ~/.nccl.conf is")                        \
	X(NCCL_CONF_SYSTEM, "GDX_NCCL_CONF_SYSTEM", "tests",                                    \
	  "tests only: a file gdx-doctor reads instead of /etc/nccl.conf")                      \
	X(SYSFS_ROOT, "GDX_SYSFS_ROOT", "tests",                                                \
	  "tests only: a fixture tree read instead of /sys")                                    \
	X(GDR_FACTS, "GDX_GDR_FACTS", "tests",                                                  \
	  "tests only: a facts file instead of the live GPUDirect probes (gdx_gdr.h)")

enum gdx_env_var {
#define GDX_ENV_ID(id, name, owner, why) GDX_ENV_##id,
	GDX_ENV_TABLE(GDX_ENV_ID)
#undef GDX_ENV_ID
};

/* The variable's value; NULL when it is unset or empty (NCCL reads "" as unset). */
const char *gdx_env(enum gdx_env_var v);
/* Its name, for messages and the live file (which rank variable it was). */
const char *gdx_env_name(enum gdx_env_var v);

#endif
