/* SPDX-License-Identifier: MIT */
/*
 * What the files of gdx-doctor log share (gdx_doctor_log.c reads NCCL's
 * output into a scan, _log_report.c prints it, as a table or JSON, and is
 * the command): the scan's tables, fixed in size whatever the input.
 */
#ifndef GDX_DOCTOR_LOG_H
#define GDX_DOCTOR_LOG_H

#include <stdbool.h>
#include <stdio.h>

/* The rows kept: one per host and NIC, enough for a job of 512 nodes of 8
 * NICs; the index's slots, twice as many, keep its chains short. */
#define LOG_MAX_NICS  4096
#define LOG_NIC_SLOTS (2 * LOG_MAX_NICS)
#define LOG_MAX_RAILS 64
/* (process, NIC) pairs whose comm counts wait for the process's summary. */
#define LOG_MAX_PENDING 1024
#define LOG_NAME_MAX	64
/* The networks of NCCL's "Using network X" lines kept, and the bytes kept
 * of the WARN that says why the plugin did not start. */
#define LOG_MAX_NETS 4
#define LOG_WHY_MAX  512
/* The distinct WARNs kept of a log that holds nothing else of the plugin
 * (NCCL_DEBUG=WARN, NCCL's default), each with a process that said it. */
#define LOG_MAX_WARNS 4

/* The plugin's lines are a few hundred bytes; a longer line is not one of
 * them, and is skipped whole. */
#define LOG_MAX_LINE 4096

/* The seconds a rail can have been down in one "back ... after X s down". */
#define LOG_MAX_DOWN_S 1e9

struct log_nic {
	char node[LOG_NAME_MAX]; /* the host of NCCL's head, "" without one */
	char name[LOG_NAME_MAX];
	char verdict[256];
	bool direct; /* it advertises GPUDirect RDMA */
	unsigned long long gpu, host;
	unsigned long comms;
};

/* The counts a process's comms logged on one NIC since its last summary,
 * which its next summary replaces. */
struct log_pending {
	char proc[LOG_NAME_MAX]; /* "host:pid"; "" for lines without NCCL's head */
	char nic[LOG_NAME_MAX];
	unsigned long long gpu, host;
	unsigned long comms;
};

/* A NIC's rail in fused connections: how often it was taken out and came
 * back (gdx_failover.c's WARN and INFO lines). */
struct log_rail {
	char host[LOG_NAME_MAX];
	char nic[64];
	unsigned long downs, backs;
	double down_s; /* summed from the "back ... after X s down" lines */
	char cause[160];
};

/* What the plugin's lines in a log add up to. */
struct log_scan {
	struct log_nic nics[LOG_MAX_NICS];
	int n;
	int nic_index[LOG_NIC_SLOTS]; /* a row's index + 1 by (host, name); 0: empty */
	unsigned long plugin_lines;   /* any line of the plugin */
	unsigned long connections;    /* "connected ..." and "accepted ..." */
	unsigned long counts;	      /* comms' "closed: N bytes ..." and NICs' summaries */
	struct log_pending pending[LOG_MAX_PENDING];
	int npending;
	unsigned long more_pending; /* comm lines past LOG_MAX_PENDING pairs */
	struct log_rail rails[LOG_MAX_RAILS];
	int nrails;
	unsigned long all_down;	  /* connections that lost every rail */
	unsigned long more_nics;  /* lines about NICs past the table's LOG_MAX_NICS */
	unsigned long more_rails; /* likewise, rails */
	unsigned long long_lines; /* lines longer than LOG_MAX_LINE, skipped */
	unsigned long refused;	  /* count lines whose sums would pass 2^64-1 */
	/* The plugin's init failed: its "plugin disabled (...)" lines, and the
	 * WARN before the first, which says why. */
	unsigned long disabled;
	char disabled_why[LOG_WHY_MAX];
	char disabled_node[LOG_NAME_MAX]; /* the host of the first, "" when none said */
	char last_warn[LOG_WHY_MAX], last_warn_proc[LOG_NAME_MAX];
	/* The networks NCCL says it uses ("Using network IB"). */
	char nets[LOG_MAX_NETS][LOG_NAME_MAX];
	int nnets;
	/* The plugin's lines by level, and its first distinct WARNs. */
	unsigned long warn_lines, info_lines;
	char warns[LOG_MAX_WARNS][LOG_WHY_MAX], warn_procs[LOG_MAX_WARNS][LOG_NAME_MAX];
	unsigned long warn_times[LOG_MAX_WARNS]; /* the lines that said it */
	int nwarns;
	unsigned long more_warns; /* distinct ones past LOG_MAX_WARNS */
	int files;		  /* the files read into it */
};

/* Reads every line of in into ls (which starts zeroed, and may hold other
 * files' lines already). 0, or an errno when in cannot be read. */
int log_scan_stream(struct log_scan *ls, FILE *in);

#endif
