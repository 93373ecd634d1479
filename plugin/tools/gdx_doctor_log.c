/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor log: what a job really did, from its NCCL_DEBUG=INFO output.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdx_doctor.h"

/*
 * What a job really did, from its NCCL_DEBUG=INFO output: the plugin's line
 * per NIC (direct or staged, and why) and the byte counts each comm logs when
 * it closes. Bytes through host memory on a NIC that advertises GPUDirect RDMA
 * mean NCCL staged them anyway (NCCL_NET_GDR_LEVEL, or host buffers): the
 * silent slowdown this command exists to show.
 */
#define LOG_MAX_NICS  64
#define LOG_MAX_RAILS 64

struct log_nic {
	char name[64];
	char verdict[256];
	unsigned long long gpu, host;
	int comms;
};

/* A NIC's rail in fused connections: how often it was taken out and came
 * back (gdx_failover.c's WARN and INFO lines). */
struct log_rail {
	char nic[64];
	int downs, backs;
	double down_s; /* summed from the "back ... after X s down" lines */
	char cause[160];
};

static struct log_nic *log_nic(struct log_nic *nics, int *n, const char *name, size_t len)
{
	for (int i = 0; i < *n; i++)
		if (strlen(nics[i].name) == len && !strncmp(nics[i].name, name, len))
			return &nics[i];
	if (*n == LOG_MAX_NICS || len >= sizeof(nics[0].name))
		return NULL;
	memset(&nics[*n], 0, sizeof(nics[0]));
	memcpy(nics[*n].name, name, len);
	return &nics[(*n)++];
}

static int log_on_opt(void *ctx, int key, const char *arg)
{
	(void)ctx;
	(void)key;
	(void)arg;
	return DOCTOR_OK; /* no options but --help */
}

/* What the plugin's lines in a log add up to. */
struct log_scan {
	struct log_nic nics[LOG_MAX_NICS];
	int n;
	int plugin_lines; /* any NET/GDX line */
	int connections;  /* "connected ..." and "accepted ..." */
	int counts;	  /* "... closed: N bytes GPU-direct, M bytes ..." */
	struct log_rail rails[LOG_MAX_RAILS];
	int nrails;
	int all_down; /* connections that lost every rail */
};

static struct log_rail *log_rail(struct log_scan *ls, const char *nic)
{
	for (int i = 0; i < ls->nrails; i++)
		if (!strcmp(ls->rails[i].nic, nic))
			return &ls->rails[i];
	if (ls->nrails == LOG_MAX_RAILS)
		return NULL;
	memset(&ls->rails[ls->nrails], 0, sizeof(ls->rails[0]));
	snprintf(ls->rails[ls->nrails].nic, sizeof(ls->rails[0].nic), "%s", nic);
	return &ls->rails[ls->nrails++];
}

/* "<dev>: rail N (<nic> port P, peer ...) taken out of the connection with
 * <addr> at <time>: <cause>; ..." and "<dev>: rail N (<nic>) back in the
 * connection with <addr> at <time> after X s down ...". */
static void log_rail_line(struct log_scan *ls, const char *colon)
{
	const char *c;
	struct log_rail *rail;
	char nic[64];
	double secs;
	int r;

	if (strstr(colon, ": every rail of the connection with ") == colon) {
		ls->all_down++;
		return;
	}
	if (sscanf(colon, ": rail %d (%63[^ )]", &r, nic) != 2)
		return;
	if (strstr(colon, ") taken out of the connection with ")) {
		rail = log_rail(ls, nic);
		if (!rail)
			return;
		rail->downs++;
		c = strstr(colon, " at ");
		c = c ? strstr(c + 4, ": ") : NULL;
		if (c)
			snprintf(rail->cause, sizeof(rail->cause), "%.*s",
				 (int)strcspn(c + 2, ";\n"), c + 2);
	} else if ((c = strstr(colon, ") back in the connection with "))) {
		rail = log_rail(ls, nic);
		if (!rail)
			return;
		rail->backs++;
		c = strstr(c, " after ");
		if (c && sscanf(c, " after %lf s down", &secs) == 1)
			rail->down_s += secs;
	}
}

static void log_line(struct log_scan *ls, const char *line)
{
	const char *p = strstr(line, "NET/GDX : "), *colon, *c;
	unsigned long long gpu, host;
	struct log_nic *nic;

	if (!p)
		return;
	ls->plugin_lines++;
	p += strlen("NET/GDX : ");
	if (!strncmp(p, "connected ", strlen("connected ")) ||
	    !strncmp(p, "accepted ", strlen("accepted ")))
		ls->connections++;
	colon = strchr(p, ':');
	if (!colon || strchr(p, ' ') < colon)
		return; /* not "<nic>: ..." */
	c = strstr(colon, " closed: ");
	if (c && sscanf(c, " closed: %llu bytes GPU-direct, %llu bytes", &gpu, &host) == 2) {
		ls->counts++;
		nic = log_nic(ls->nics, &ls->n, p, (size_t)(colon - p));
		if (nic) {
			nic->gpu += gpu;
			nic->host += host;
			nic->comms++;
		}
	} else if (strstr(colon, ": rail ") == colon ||
		   strstr(colon, ": every rail of the connection") == colon) {
		log_rail_line(ls, colon);
	} else if (strstr(colon, ": GPUDirect RDMA via ") == colon ||
		   strstr(colon, ": staged through host memory") == colon) {
		nic = log_nic(ls->nics, &ls->n, p, (size_t)(colon - p));
		if (nic)
			snprintf(nic->verdict, sizeof(nic->verdict), "%.*s",
				 (int)strcspn(colon + 2, "\n"), colon + 2);
	}
}

static int doctor_log(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct log_scan *ls;
	int ret, staged_direct = 0;
	char line[2048];
	FILE *f;

	ret = doctor_args(cmd, argc, argv, log_on_opt, NULL);
	if (ret != DOCTOR_OK)
		return ret;
	f = strcmp(argv[optind], "-") ? fopen(argv[optind], "r") : stdin;
	if (!f) {
		fprintf(stderr, "gdx-doctor log: %s: %s\n", argv[optind], strerror(errno));
		return DOCTOR_NO_INPUT;
	}
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		fprintf(stderr, "gdx-doctor log: out of memory\n");
		if (f != stdin)
			fclose(f);
		return DOCTOR_ERROR;
	}
	while (fgets(line, sizeof(line), f))
		log_line(ls, line);
	if (f != stdin)
		fclose(f);
	if (!ls->plugin_lines) {
		printf("no NET/GDX lines: was the plugin loaded (NCCL_NET_PLUGIN=gdx) and the log "
		       "written with NCCL_DEBUG=INFO?\n");
		free(ls);
		return DOCTOR_LOG_NO_PLUGIN;
	}
	/* The byte counts are the data this report is made of; without them a
	 * clean table would say nothing about what the job did. */
	if (!ls->counts) {
		printf("no plugin data lines in this log: rerun with NCCL_DEBUG=INFO and "
		       "NCCL_DEBUG_SUBSYS unset or holding INIT or NET (this plugin logs its "
		       "connections and byte counts at both), and let the job destroy its "
		       "communicators: each connection logs its byte counts when it closes "
		       "(%d connection line(s) here, no byte counts)\n",
		       ls->connections);
		free(ls);
		return DOCTOR_LOG_NO_DATA;
	}
	printf("%-12s %6s %18s %18s  %s\n", "NIC", "comms", "GPU-direct bytes", "host bytes",
	       "the plugin's verdict at init");
	for (int i = 0; i < ls->n; i++) {
		const struct log_nic *nic = &ls->nics[i];
		bool direct = !strncmp(nic->verdict, "GPUDirect", 9);

		printf("%-12s %6d %18llu %18llu  %s\n", nic->name, nic->comms, nic->gpu, nic->host,
		       nic->verdict[0] ? nic->verdict : "(no verdict line)");
		if (direct && nic->host)
			staged_direct++;
	}
	ret = DOCTOR_OK;
	if (staged_direct) {
		printf("\n%d NIC(s) advertise GPUDirect RDMA but moved bytes through host memory: "
		       "NCCL staged them (GPU-NIC path beyond NCCL_NET_GDR_LEVEL, or host "
		       "buffers); see gdx-doctor check\n",
		       staged_direct);
		ret = DOCTOR_DEGRADED;
	}
	if (ls->nrails) {
		printf("\nrails taken out of fused connections (the others carried their traffic, "
		       "slower)\n%-12s %6s %6s %8s  %s\n",
		       "NIC", "downs", "backs", "down s", "the last cause");
		for (int i = 0; i < ls->nrails; i++) {
			const struct log_rail *rl = &ls->rails[i];

			printf("%-12s %6d %6d %8.1f  %s\n", rl->nic, rl->downs, rl->backs,
			       rl->down_s, rl->cause[0] ? rl->cause : "?");
		}
		printf("a rail that goes down again and again is a cable, a transceiver or a "
		       "switch port: check it with ibv_devinfo -d NIC and the switch's counters\n");
		ret = DOCTOR_DEGRADED;
	}
	if (ls->all_down)
		printf("\n%d connection(s) lost every rail and failed\n", ls->all_down);
	free(ls);
	return ret;
}

static const struct doctor_opt log_opts[] = {
	{0},
};

const struct doctor_cmd doctor_cmd_log = {
	.name = "log",
	.summary = "what a job did, from its NCCL_DEBUG=INFO log: bytes GPU-direct vs host per "
		   "NIC, rails taken out",
	.opts = log_opts,
	.run = doctor_log,
	.min_operands = 1,
	.max_operands = 1,
	.operands_usage = "give one log file ('-' for standard input)",
};
