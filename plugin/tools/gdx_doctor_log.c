/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor log: what a job really did, from its NCCL_DEBUG=INFO output.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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
#define LOG_MAX_NICS 64

struct log_nic {
	char name[64];
	char verdict[256];
	unsigned long long gpu, host;
	int comms;
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

static int doctor_log(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct log_nic nics[LOG_MAX_NICS];
	int n = 0, ret, staged_direct = 0;
	char line[2048];
	FILE *f;

	ret = doctor_args(cmd, argc, argv, log_on_opt, NULL);
	if (ret != DOCTOR_OK)
		return ret;
	f = strcmp(argv[optind], "-") ? fopen(argv[optind], "r") : stdin;
	if (!f) {
		fprintf(stderr, "gdx-doctor log: %s: %s\n", argv[optind], strerror(errno));
		return DOCTOR_NO_TOPO;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "NET/GDX : "), *colon, *c;
		unsigned long long gpu, host;
		struct log_nic *nic;

		if (!p)
			continue;
		p += strlen("NET/GDX : ");
		colon = strchr(p, ':');
		if (!colon || strchr(p, ' ') < colon)
			continue; /* not "<nic>: ..." */
		c = strstr(colon, " closed: ");
		if (c &&
		    sscanf(c, " closed: %llu bytes GPU-direct, %llu bytes", &gpu, &host) == 2) {
			nic = log_nic(nics, &n, p, (size_t)(colon - p));
			if (nic) {
				nic->gpu += gpu;
				nic->host += host;
				nic->comms++;
			}
		} else if (strstr(colon, ": GPUDirect RDMA via ") == colon ||
			   strstr(colon, ": staged through host memory") == colon) {
			nic = log_nic(nics, &n, p, (size_t)(colon - p));
			if (nic)
				snprintf(nic->verdict, sizeof(nic->verdict), "%.*s",
					 (int)strcspn(colon + 2, "\n"), colon + 2);
		}
	}
	if (f != stdin)
		fclose(f);
	if (n == 0) {
		printf("no NET/GDX lines: was the plugin loaded (NCCL_NET_PLUGIN=gdx) and the log "
		       "written with NCCL_DEBUG=INFO?\n");
		return DOCTOR_NO_NIC;
	}
	printf("%-12s %6s %18s %18s  %s\n", "NIC", "comms", "GPU-direct bytes", "host bytes",
	       "the plugin's verdict at init");
	for (int i = 0; i < n; i++) {
		bool direct = !strncmp(nics[i].verdict, "GPUDirect", 9);

		printf("%-12s %6d %18llu %18llu  %s\n", nics[i].name, nics[i].comms, nics[i].gpu,
		       nics[i].host, nics[i].verdict[0] ? nics[i].verdict : "(no verdict line)");
		if (direct && nics[i].host)
			staged_direct++;
	}
	if (staged_direct) {
		printf("\n%d NIC(s) advertise GPUDirect RDMA but moved bytes through host memory: "
		       "NCCL staged them (GPU-NIC path beyond NCCL_NET_GDR_LEVEL, or host "
		       "buffers); see gdx-doctor check\n",
		       staged_direct);
		return 1;
	}
	return DOCTOR_OK;
}

static const struct doctor_opt log_opts[] = {
	{0},
};

const struct doctor_cmd doctor_cmd_log = {
	.name = "log",
	.summary = "what a job did, from its NCCL_DEBUG=INFO log: bytes GPU-direct vs host per NIC",
	.opts = log_opts,
	.run = doctor_log,
	.min_operands = 1,
	.max_operands = 1,
	.operands_usage = "give one log file ('-' for standard input)",
};
