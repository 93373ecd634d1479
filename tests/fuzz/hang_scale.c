/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for gdx-doctor hang --merge at scale
 * (gdx_doctor_hang_merge.c, _graph.c, _print.c): the reports of a large
 * job, any of which another user may have forged. The input is not the
 * JSON (the json target fuzzes that) but a recipe for a job of up to 65,536
 * comms, which the target writes as the nodes' hang --json reports:
 *
 *   byte 0     processes, 2 + 16 * its value (up to 4,082)
 *   byte 1     nodes, 1 + its low 4 bits; bit 4: a node reported twice;
 *              bit 5: some pids twice on a host; bits 6-7: which processes
 *              are stopped
 *   byte 2     how many times each comm recipe below is made (1 to 256)
 *   then 4 bytes a comm recipe: its process, what it waits for and
 *   whether it is stuck, the process it waits on (or a peer no report
 *   has), and whether it claims the other end's address as its own (a
 *   forged claim); the n-th copy of a recipe is the recipe shifted by n.
 *
 * Every process also has an idle comm at its listen address, which comms
 * waiting on it name as their peer.
 *
 *   make fuzz && build/tests/fuzz/hang_scale -max_total_time=60 -timeout=10 \
 *           NEW_DIR tests/fuzz/corpus/hang_scale
 *
 * What must hold: the merge exits 0 or 10, within libFuzzer's timeout
 * whatever the graph's shape (its walks are bounded by the comms they
 * meet); its JSON parses; no root names a process claimed twice, or a
 * process of a node reported twice; no root explains more stuck comms than
 * there are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"
#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_COMMS 65536

struct fuzz_job {
	int nprocs, nnodes;
	bool node_twice, pid_twice;
	int stopped_mask;
};

static int fuzz_node_of(const struct fuzz_job *j, int p)
{
	return p % j->nnodes;
}

static int fuzz_pid_of(const struct fuzz_job *j, int p)
{
	/* pids twice: a process and the one nnodes after it, on its host */
	return j->pid_twice && p >= j->nnodes && p % 7 == 0 ? 1 + p - j->nnodes : 1 + p;
}

static void fuzz_listen(char *buf, size_t len, int p)
{
	snprintf(buf, len, "10.%d.%d.1:5000", p >> 8 & 255, p & 255);
}

/* The reports, one per node (a node twice: its second report, of the same
 * processes but for the first), with the comms of the recipes. */
static char *fuzz_reports(const struct fuzz_job *j, const uint8_t *recipes, size_t nrecipes,
			  int copies, size_t *len)
{
	static const char *const waits[] = {"idle",	   "cts",    "data", "completion",
					    "peer_closed", "failed", "cts",  "data"};
	char *text = NULL, addr[64], peer[64];
	FILE *f = open_memstream(&text, len);
	long ncomms = 0;

	FUZZ_CHECK(f != NULL);
	for (int n = 0; n < j->nnodes + j->node_twice; n++) {
		int node = n % j->nnodes;
		bool firstp = true;

		fprintf(f,
			"{\"command\": \"hang\", \"hostname\": \"n%d\", \"format\": 2, "
			"\"processes\": [",
			node);
		for (int p = node; p < j->nprocs; p += j->nnodes) {
			if (n >= j->nnodes && p > node + j->nnodes)
				break; /* the second report: a couple of processes */
			fuzz_listen(addr, sizeof(addr), p);
			fprintf(f,
				"%s{\"pid\": %d, \"host\": \"n%d\", \"rank\": %d, \"stopped\": %s, "
				"\"comms\": [{\"comm\": \"receive\", \"address\": \"%s\", \"peer\": "
				"\"10.255.255.1:1\", \"wait\": \"idle\", \"stuck\": false}",
				firstp ? "" : ", ", fuzz_pid_of(j, p), fuzz_node_of(j, p), p,
				(p * 2654435761u >> 7) % 4 < (unsigned)j->stopped_mask ? "true"
										       : "false",
				addr);
			firstp = false;
			for (int c = 0; c < copies; c++) {
				for (size_t r = 0; r < nrecipes && ncomms < FUZZ_MAX_COMMS; r++) {
					const uint8_t *x = recipes + 4 * r;
					int owner = (x[0] + c * 31) % j->nprocs, target;
					bool stuck = x[1] & 8, forge = x[1] & 16;

					if (owner != p || (n >= j->nnodes && c))
						continue;
					target = (x[2] | x[3] << 8 >> 2) % (j->nprocs + 1);
					target =
						target == j->nprocs ? -1 : (target + c) % j->nprocs;
					if (target >= 0)
						fuzz_listen(peer, sizeof(peer), target);
					else
						snprintf(peer, sizeof(peer), "10.254.%d.%d:%d",
							 x[2], x[3], 1 + c);
					if (forge && target >= 0)
						snprintf(addr, sizeof(addr), "%s", peer);
					else
						snprintf(addr, sizeof(addr), "10.%d.%d.%d:%d",
							 p >> 8 & 255, p & 255, 2 + (int)(r & 250),
							 40000 + c);
					fprintf(f,
						", {\"comm\": \"send\", \"address\": \"%s\", \"peer\": "
						"\"%s\", \"wait\": \"%s\", \"stuck\": %s, \"rails\": "
						"[{\"nic\": \"mlx5_0\", \"port\": 1, \"state\": \"%s\", "
						"\"port_down\": false}]}",
						addr, target >= 0 && forge ? "10.253.0.1:1" : peer,
						waits[x[1] & 7], stuck ? "true" : "false",
						x[3] & 64 ? "down" : "up");
					ncomms++;
				}
			}
			fputs("]}", f);
		}
		fputs("]}\n", f);
	}
	FUZZ_CHECK(fclose(f) == 0);
	return text;
}

/* Whether roots names host:pid, or (pid < 0) any process of host. */
static bool fuzz_root_names(const struct json_value *roots, const char *host, long pid)
{
	for (int i = 0; roots && i < roots->n; i++) {
		const struct json_value *r = &roots->items[i], *p = json_get(r, "pid");
		const char *h = json_string(json_get(r, "host"));
		const char *kind = json_string(json_get(r, "kind"));

		/* a port's root names its host, not a process */
		if (!h || !kind || !strcmp(kind, "port") || strcmp(h, host))
			continue;
		if (pid < 0 || (p && p->type == JSON_NUMBER && atol(p->text) == pid))
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_job j;
	struct json_budget big = {.limit = (size_t)1 << 40};
	const struct json_value *roots, *conflicts;
	char *text, *out = NULL, *err = NULL, path[64], why[256];
	size_t len, out_len = 0, err_len = 0, pos = 0;
	struct json_value *v;
	FILE *o, *e;
	int fd, ret;
	char *srcs[1] = {path};

	if (size < 3)
		return 0;
	j = (struct fuzz_job){.nprocs = 2 + 16 * data[0],
			      .nnodes = 1 + (data[1] & 15),
			      .node_twice = data[1] & 16,
			      .pid_twice = data[1] & 32,
			      .stopped_mask = data[1] >> 6};
	text = fuzz_reports(&j, data + 3, (size - 3) / 4, 1 + data[2], &len);
	fd = memfd_create("fuzz-hang-scale", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0 && write(fd, text, len) == (ssize_t)len);
	free(text);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o = open_memstream(&out, &out_len);
	e = open_memstream(&err, &err_len);
	FUZZ_CHECK(o && e);
	ret = hang_merge(1, srcs, HANG_MERGE_JSON, o, e);
	close(fd);
	FUZZ_CHECK(fclose(o) == 0 && fclose(e) == 0);
	if (ret != DOCTOR_OK && ret != DOCTOR_HANG)
		fprintf(stderr, "%.*s\n", (int)err_len, err);
	FUZZ_CHECK(ret == DOCTOR_OK || ret == DOCTOR_HANG);
	FUZZ_CHECK(json_parse(out, out_len, &pos, &big, &v, why, sizeof(why)) == 0);
	roots = json_get(v, "roots");
	conflicts = json_get(v, "conflicts");
	FUZZ_CHECK(roots && roots->type == JSON_ARRAY && conflicts &&
		   conflicts->type == JSON_ARRAY);
	for (int i = 0; i < roots->n; i++) {
		const struct json_value *x = json_get(&roots->items[i], "explains");

		FUZZ_CHECK(x && x->type == JSON_NUMBER && atol(x->text) >= 0);
		FUZZ_CHECK(atol(x->text) <= atol(json_get(v, "stuck")->text));
	}
	for (int i = 0; i < conflicts->n; i++) {
		const struct json_value *c = &conflicts->items[i];
		const char *kind = json_string(json_get(c, "kind"));

		if (!strcmp(kind, "process"))
			FUZZ_CHECK(!fuzz_root_names(roots, json_string(json_get(c, "host")),
						    atol(json_get(c, "pid")->text)));
		else if (!strcmp(kind, "node"))
			FUZZ_CHECK(!fuzz_root_names(roots, json_string(json_get(c, "node")), -1));
	}
	json_free(v);
	free(out);
	free(err);
	return 0;
}
