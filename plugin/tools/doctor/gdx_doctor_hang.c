/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang: the comms on this node that have waited longer than a
 * threshold without progress, one line each: the process, the peer and NIC,
 * what it waits for since when, and the likely cause. Run on every node of a
 * job that hangs, the lines name the pair of ranks and the side that stopped.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/gdx_failover.h"
#include "sys/gdx_sysfs.h"

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"

struct hang_opts {
	const char *dir;
	double threshold_s;
	bool json, merge, dot;
};

static int hang_on_opt(void *ctx, int key, const char *arg)
{
	struct hang_opts *o = ctx;
	char *end;

	switch (key) {
	case 'd': o->dir = arg; break;
	case 'j': o->json = true; break;
	case 'm': o->merge = true; break;
	case 'D': o->dot = true; break;
	case 't':
		errno = 0;
		o->threshold_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->threshold_s >= 0) || o->threshold_s > 1e6) {
			fprintf(stderr,
				"gdx-doctor hang: --threshold '%s' is not a number of "
				"seconds\n",
				arg);
			return DOCTOR_USAGE;
		}
		break;
	}
	return DOCTOR_OK;
}

/* Whether name can be a NIC's: letters, digits, '_' and '-'. A live file's
 * owner wrote it: a '/' would make it a path of theirs to open. */
static bool hang_nic_name_ok(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && *name != '_' && *name != '-')
			return false;
	return true;
}

/* Whether a NIC port is down, from sysfs ("4: ACTIVE" is up); false when it
 * cannot be read (then it says nothing). */
static bool hang_port_down(const char *ibdev, uint32_t port)
{
	char path[256], state[64];

	if (!hang_nic_name_ok(ibdev))
		return false;
	snprintf(path, sizeof(path), "class/infiniband/%s/ports/%u/state", ibdev, port);
	return gdx_sysfs_read_line_in(gdx_sysfs_root(), path, state, sizeof(state)) == 0 &&
	       !strstr(state, "ACTIVE");
}

/* The likely cause of a wait, in words, into buf; the names in it are the
 * file's, as they are (the caller escapes the whole). */
static const char *hang_cause(const struct gdx_live_comm *c, char *buf, size_t len)
{
	for (uint32_t r = 0; r < c->nrails; r++) {
		if (hang_port_down(c->rails[r].ibdev, c->rails[r].port)) {
			snprintf(buf, len,
				 "the local NIC's port is down (%s port %u): check the link "
				 "with ibv_devinfo -d %s",
				 c->rails[r].ibdev, c->rails[r].port, c->rails[r].ibdev);
			return buf;
		}
		if (c->rails[r].state != GDX_RAIL_UP) {
			snprintf(buf, len, "rail %u (%s) is %s", r, c->rails[r].ibdev,
				 gdx_rail_state_name(c->rails[r].state));
			return buf;
		}
	}
	if (c->role == GDX_LIVE_RMA && c->wait == GDX_LIVE_WAIT_SIGNAL) {
		snprintf(buf, len,
			 "one-sided RMA holds a signal until the puts it covers are placed (%s): "
			 "the NIC has not had their acknowledgements, the peer's NIC or the path "
			 "does not answer",
			 c->peer_dev);
		return buf;
	}
	if (c->role == GDX_LIVE_RMA && c->wait == GDX_LIVE_WAIT_COMPLETION) {
		snprintf(buf, len,
			 "one-sided RMA's oldest request (%s) has no completion: the peer's NIC "
			 "or the path does not answer",
			 c->peer_dev);
		return buf;
	}
	switch (c->wait) {
	case GDX_LIVE_WAIT_CTS:
		snprintf(buf, len,
			 "the peer never posted the receive: its rank is behind, stuck "
			 "elsewhere, or stopped (look at %s's process)",
			 c->peer);
		break;
	case GDX_LIVE_WAIT_COMPLETION:
		snprintf(buf, len,
			 "the peer is not reachable: the NIC has not had an answer from "
			 "%s (routing, its port, or the process is gone)",
			 c->peer);
		break;
	case GDX_LIVE_WAIT_DATA:
		snprintf(buf, len,
			 "the peer never sent: its rank has not reached this send, or "
			 "is stuck (look at %s's process)",
			 c->peer);
		break;
	case GDX_LIVE_PEER_CLOSED:
		snprintf(buf, len, "the peer process closed the connection or exited");
		break;
	case GDX_LIVE_FAILED:
		snprintf(buf, len,
			 "the comm failed (error %d): its WARN line in the job's log "
			 "names the cause",
			 c->err);
		break;
	default: snprintf(buf, len, "unknown"); break;
	}
	return buf;
}

/* Wall-clock time of a monotonic stamp, for a person. */
static void hang_when(uint64_t now_ms, uint64_t then_ms, char *buf, size_t len)
{
	time_t t = time(NULL) - (time_t)((now_ms - then_ms) / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

/* How long the comm has waited, in ms, when that is past the threshold
 * (0: it is not stuck). */
static uint64_t hang_stuck_ms(const struct hang_opts *o, const struct live_snap *s,
			      const struct gdx_live_comm *c)
{
	uint64_t stalled = live_comm_stalled_ms(s, c);

	return stalled && (double)stalled / 1e3 >= o->threshold_s ? stalled : 0;
}

/* "rank 3" or "no rank", for a person. */
static const char *hang_rank(const struct gdx_live_hdr *h, char *buf, size_t len)
{
	if (h->rank >= 0)
		snprintf(buf, len, "rank %d", h->rank);
	else
		snprintf(buf, len, "no rank variable");
	return buf;
}

/* One process, every comm of it: what hang --merge follows the chains by. */
static void hang_json_proc(const struct hang_opts *o, const struct live_snap *s,
			   const struct live_proc *p, bool first)
{
	printf("%s\n  {\"pid\": %d, \"host\": ", first ? "" : ",", p->pid);
	json_str(stdout, p->hdr.host);
	printf(", \"job\": ");
	json_str_or_null(stdout, p->hdr.job[0] ? p->hdr.job : NULL);
	printf(", ");
	json_key_count(stdout, "rank", p->hdr.rank);
	printf(", \"rank_from\": ");
	json_str_or_null(stdout, p->hdr.rank >= 0 ? p->hdr.rank_var : NULL);
	printf(", ");
	json_key_count(stdout, "local_rank", p->hdr.local_rank);
	printf(", \"cmd\": ");
	json_str(stdout, p->hdr.cmd);
	printf(", \"version\": ");
	json_str(stdout, p->hdr.version);
	printf(", \"stopped\": %s, \"comms\": [", p->stopped ? "true" : "false");
	for (int k = 0; k < p->ncomms; k++) {
		const struct gdx_live_comm *c = &p->comms[k].c;

		printf("%s\n    {\"comm\": \"%s\", ", k ? "," : "", gdx_live_role_name(c->role));
		live_json_ends(stdout, c);
		printf(", \"wait\": \"%s\", \"waited_s\": %.3f, \"stuck\": %s, "
		       "\"outstanding\": %u, \"rails\": [",
		       gdx_live_wait_key(c->wait), (double)live_comm_stalled_ms(s, c) / 1e3,
		       hang_stuck_ms(o, s, c) ? "true" : "false", c->outstanding);
		for (uint32_t r = 0; r < c->nrails; r++) {
			printf("%s{\"nic\": ", r ? ", " : "");
			json_str(stdout, c->rails[r].ibdev);
			printf(", \"port\": %u, \"state\": \"%s\", \"port_down\": %s}",
			       c->rails[r].port, gdx_rail_state_name(c->rails[r].state),
			       hang_port_down(c->rails[r].ibdev, c->rails[r].port) ? "true"
										   : "false");
		}
		printf("]}");
	}
	printf("]}");
}

/* One stuck comm, in the flat shape of the first reports (a person's, jq's). */
static void hang_json_stuck(const struct live_proc *p, const struct gdx_live_comm *c,
			    uint64_t stalled, const char *when, const char *cause, bool first)
{
	printf("%s\n  {\"pid\": %d, \"host\": ", first ? "" : ",", p->pid);
	json_str(stdout, p->hdr.host);
	printf(", ");
	json_key_count(stdout, "rank", p->hdr.rank);
	printf(", \"cmd\": ");
	json_str(stdout, p->hdr.cmd);
	printf(", \"comm\": \"%s\", ", gdx_live_role_name(c->role));
	live_json_ends(stdout, c);
	printf(", \"waits_for\": \"%s\", \"wait\": \"%s\", \"since\": \"%s\", "
	       "\"waited_s\": %.3f, \"outstanding\": %u, \"stopped\": %s, \"cause\": ",
	       gdx_live_wait_name(c->wait), gdx_live_wait_key(c->wait), when, (double)stalled / 1e3,
	       c->outstanding, p->stopped ? "true" : "false");
	json_str(stdout, cause);
	printf("}");
}

static void hang_text_stuck(const struct live_proc *p, const struct gdx_live_comm *c,
			    uint64_t stalled, const char *when, const char *cause)
{
	char cmdline[GDX_ESCAPE_LEN(sizeof(p->hdr.cmd))];
	char host[GDX_ESCAPE_LEN(sizeof(p->hdr.host))];
	char dev[GDX_ESCAPE_LEN(sizeof(c->dev))];
	char addr[GDX_ESCAPE_LEN(sizeof(c->addr))];
	char peer[GDX_ESCAPE_LEN(sizeof(c->peer))];
	char peer_dev[GDX_ESCAPE_LEN(sizeof(c->peer_dev))];
	char why[GDX_ESCAPE_LEN(256)], rank[32], from[GDX_ESCAPE_LEN(sizeof(c->addr)) + 4] = "";

	/* what the file says reaches the terminal escaped */
	gdx_escape(GDX_ESCAPE_TEXT, p->hdr.cmd, cmdline, sizeof(cmdline));
	gdx_escape(GDX_ESCAPE_TEXT, p->hdr.host, host, sizeof(host));
	gdx_escape(GDX_ESCAPE_TEXT, c->dev, dev, sizeof(dev));
	gdx_escape(GDX_ESCAPE_TEXT, c->addr, addr, sizeof(addr));
	gdx_escape(GDX_ESCAPE_TEXT, c->peer, peer, sizeof(peer));
	gdx_escape(GDX_ESCAPE_TEXT, c->peer_dev, peer_dev, sizeof(peer_dev));
	gdx_escape(GDX_ESCAPE_TEXT, cause, why, sizeof(why));
	if (addr[0])
		snprintf(from, sizeof(from), " (%s)", addr);
	printf("pid %d (%s, %s on %s): %s comm on %s%s with %s (%s): %s since %s (%.1f s, %u "
	       "request(s) outstanding): %s\n",
	       p->pid, cmdline, hang_rank(&p->hdr, rank, sizeof(rank)), host,
	       gdx_live_role_name(c->role), dev, from, peer, peer_dev, gdx_live_wait_name(c->wait),
	       when, (double)stalled / 1e3, c->outstanding, why);
}

static int doctor_hang(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct hang_opts o = {.threshold_s = 1.0};
	struct live_snap s;
	int ret, stuck = 0, waiting = 0;

	ret = doctor_args(cmd, argc, argv, hang_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.merge && optind == argc) {
		fprintf(stderr, "gdx-doctor hang: --merge reads the nodes' hang --json reports: "
				"give their files, or - for standard input\n");
		return DOCTOR_USAGE;
	}
	if (o.merge)
		return hang_merge(argc - optind, argv + optind,
				  o.dot	   ? HANG_MERGE_DOT
				  : o.json ? HANG_MERGE_JSON
					   : HANG_MERGE_TEXT,
				  stdout, stderr);
	if (o.dot || optind < argc) {
		fprintf(stderr, "gdx-doctor hang: %s is for --merge\n",
			o.dot ? "--dot" : "a report file");
		return DOCTOR_USAGE;
	}
	ret = live_snap_take(o.dir, &s);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.json) {
		printf("{");
		json_report_origin(stdout, "hang");
		printf(", \"format\": %d, \"threshold_s\": %.3f, \"skipped_files\": %d, "
		       "\"processes\": [",
		       HANG_FORMAT, o.threshold_s, s.skipped);
		for (int i = 0; i < s.nprocs; i++)
			hang_json_proc(&o, &s, &s.procs[i], i == 0);
		printf("\n], \"stuck\": [");
	}
	for (int i = 0; i < s.nprocs; i++) {
		const struct live_proc *p = &s.procs[i];

		for (int k = 0; k < p->ncomms; k++) {
			const struct gdx_live_comm *c = &p->comms[k].c;
			uint64_t stalled = hang_stuck_ms(&o, &s, c);
			char cause[256], when[16];

			if (c->wait != GDX_LIVE_IDLE)
				waiting++;
			if (!stalled)
				continue;
			if (p->stopped)
				snprintf(cause, sizeof(cause),
					 "this process is stopped (SIGSTOP or a "
					 "debugger): it does not drive its comms");
			else
				hang_cause(c, cause, sizeof(cause));
			hang_when(s.now_ms, c->stall_ms, when, sizeof(when));
			if (o.json)
				hang_json_stuck(p, c, stalled, when, cause, !stuck);
			else
				hang_text_stuck(p, c, stalled, when, cause);
			stuck++;
		}
	}
	if (o.json) {
		printf("\n], \"waiting\": %d, ", waiting);
		live_snap_notes_json(stdout, &s);
		printf("}\n");
	} else {
		/* what the scan left out on purpose, apart from the lines */
		live_snap_notes_text(stderr, &s, o.dir);
	}
	if (!o.json && !stuck)
		printf("no comm has waited %.1f s or more (%d process(es) with the plugin, %d comm(s) "
		       "waiting less)\n",
		       o.threshold_s, s.nprocs, waiting);
	live_snap_free(&s);
	if (ferror(stdout))
		return DOCTOR_ERROR;
	return stuck ? DOCTOR_HANG : DOCTOR_OK;
}

static const struct doctor_opt hang_opts[] = {
	{"threshold", 't', "SECONDS", "report comms that have waited this long (1)"},
	{"json", 'j', NULL, "JSON"},
	{"merge", 'm', NULL,
	 "read the hang --json reports of every node (FILE..., or - for standard input, such as "
	 "srun -l output) and name the root causes of the waits across them"},
	{"dot", 'D', NULL, "with --merge: the wait-for graph in Graphviz dot, root causes marked"},
	{"dir", 'd', "DIR", "where the live files are (NCCL_GDX_LIVE_DIR, else /dev/shm)"},
	{0},
};

const struct doctor_cmd doctor_cmd_hang = {
	.name = "hang",
	.summary = "the comms of this node that wait without progress, what for, and the likely "
		   "cause; with --merge, the root causes across every node's report",
	.opts = hang_opts,
	.run = doctor_hang,
	.max_operands = INT_MAX, /* --merge's reports */
};
