/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang: the comms on this node that have waited longer than a
 * threshold without progress, one line each: the process, the peer and NIC,
 * what it waits for since when, and the likely cause. Run on every node of a
 * job that hangs, the lines name the pair of ranks and the side that stopped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gdx/gdx_failover.h>
#include <gdx/gdx_sysfs.h>

#include "gdx_doctor.h"

struct hang_opts {
	const char *dir;
	double threshold_s;
	bool json;
};

static int hang_on_opt(void *ctx, int key, const char *arg)
{
	struct hang_opts *o = ctx;
	char *end;

	switch (key) {
	case 'd': o->dir = arg; break;
	case 'j': o->json = true; break;
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
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/state", gdx_sysfs_root(),
		 ibdev, port);
	return gdx_sysfs_read_line(path, state, sizeof(state)) == 0 && !strstr(state, "ACTIVE");
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

static int doctor_hang(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct hang_opts o = {.threshold_s = 1.0};
	struct live_snap s;
	int ret, stuck = 0, waiting = 0;

	ret = doctor_args(cmd, argc, argv, hang_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	ret = live_snap_take(o.dir, &s);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.json) {
		printf("{");
		json_report_origin(stdout, "hang");
		printf(", \"threshold_s\": %.3f, \"processes\": %d, \"stuck\": [", o.threshold_s,
		       s.nprocs);
	}
	for (int i = 0; i < s.nprocs; i++) {
		const struct live_proc *p = &s.procs[i];

		for (int k = 0; k < p->ncomms; k++) {
			const struct gdx_live_comm *c = &p->comms[k].c;
			uint64_t stalled = live_comm_stalled_ms(&s, c);
			char cause[256], when[16];
			const char *role = c->role == GDX_LIVE_SEND ? "send" : "receive";

			if (c->wait != GDX_LIVE_IDLE)
				waiting++;
			if (!stalled || (double)stalled / 1e3 < o.threshold_s)
				continue;
			if (p->stopped)
				snprintf(cause, sizeof(cause),
					 "this process is stopped (SIGSTOP or a "
					 "debugger): it does not drive its comms");
			else
				hang_cause(c, cause, sizeof(cause));
			hang_when(s.now_ms, c->stall_ms, when, sizeof(when));
			if (o.json) {
				printf("%s\n  {\"pid\": %d, \"cmd\": ", stuck ? "," : "", p->pid);
				json_str(stdout, p->hdr.cmd);
				printf(", \"comm\": \"%s\", \"device\": ", role);
				json_str(stdout, c->dev);
				printf(", \"peer\": ");
				json_str(stdout, c->peer);
				printf(", \"peer_device\": ");
				json_str(stdout, c->peer_dev);
				printf(", \"waits_for\": \"%s\", \"since\": \"%s\", \"waited_s\": %.3f, "
				       "\"outstanding\": %u, \"stopped\": %s, \"cause\": ",
				       gdx_live_wait_name(c->wait), when, (double)stalled / 1e3,
				       c->outstanding, p->stopped ? "true" : "false");
				json_str(stdout, cause);
				printf("}");
			} else {
				char cmdline[GDX_ESCAPE_LEN(sizeof(p->hdr.cmd))];
				char dev[GDX_ESCAPE_LEN(sizeof(c->dev))];
				char peer[GDX_ESCAPE_LEN(sizeof(c->peer))];
				char peer_dev[GDX_ESCAPE_LEN(sizeof(c->peer_dev))];
				char why[GDX_ESCAPE_LEN(sizeof(cause))];

				/* what the file says reaches the terminal escaped */
				gdx_escape(GDX_ESCAPE_TEXT, p->hdr.cmd, cmdline, sizeof(cmdline));
				gdx_escape(GDX_ESCAPE_TEXT, c->dev, dev, sizeof(dev));
				gdx_escape(GDX_ESCAPE_TEXT, c->peer, peer, sizeof(peer));
				gdx_escape(GDX_ESCAPE_TEXT, c->peer_dev, peer_dev,
					   sizeof(peer_dev));
				gdx_escape(GDX_ESCAPE_TEXT, cause, why, sizeof(why));
				printf("pid %d (%s): %s comm on %s with %s (%s): %s since %s (%.1f s, %u "
				       "request(s) outstanding): %s\n",
				       p->pid, cmdline, role, dev, peer, peer_dev,
				       gdx_live_wait_name(c->wait), when, (double)stalled / 1e3,
				       c->outstanding, why);
			}
			stuck++;
		}
	}
	if (o.json)
		printf("\n], \"waiting\": %d}\n", waiting);
	else if (!stuck)
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
	{"dir", 'd', "DIR", "where the live files are (NCCL_GDX_LIVE_DIR, else /dev/shm)"},
	{0},
};

const struct doctor_cmd doctor_cmd_hang = {
	.name = "hang",
	.summary = "the comms of this node that wait without progress, what for, and the likely "
		   "cause",
	.opts = hang_opts,
	.run = doctor_hang,
};
