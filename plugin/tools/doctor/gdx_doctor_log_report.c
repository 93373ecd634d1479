/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor log, the command: its files read into one scan
 * (gdx_doctor_log.c), and the scan as a table, one row per host and NIC,
 * or as JSON; the exit status from the same facts either way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_log.h"
#include "tools/common/gdx_escape.h"
#include "tools/common/gdx_json.h"
#include "sys/gdx_file.h"
#include "sys/gdx_log.h"

/* The widest host column: a longer name is cut in the table (whole in
 * --json). */
#define LOG_HOST_COLUMN 24

struct log_opts {
	bool json;
};

static int log_on_opt(void *ctx, int key, const char *arg)
{
	struct log_opts *o = ctx;

	(void)arg;
	if (key == 'j')
		o->json = true;
	return DOCTOR_OK;
}

static void log_column(FILE *out, const char *s, int w)
{
	char buf[4 * 64 + 4];

	fprintf(out, "%-*s", w, gdx_esc_text_buf(buf, sizeof(buf), s));
}

/* The networks NCCL used, "IB" or "IB, Socket", into buf. */
static const char *log_nets(const struct log_scan *ls, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < ls->nnets && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 ls->nets[i]);
	return buf;
}

/* The cause in a WARN's words, short: up to its first ';', without what it
 * says in parentheses ("no RDMA device found (ibv_get_device_list: empty);
 * is ..." is "no RDMA device found"). */
static void log_short_cause(const char *why, char *buf, size_t len)
{
	size_t n = 0;
	int depth = 0;

	for (const char *c = why; *c && *c != ';' && n + 1 < len; c++) {
		if (*c == ' ' && c[1] == '(' && !depth)
			continue;
		if (*c == '(')
			depth++;
		else if (*c == ')' && depth)
			depth--;
		else if (!depth)
			buf[n++] = *c;
	}
	buf[n] = '\0';
}

/* A log at NCCL's default level: the plugin's WARN lines and nothing else
 * of it, which say what went wrong; one at init is why it did not start. */
static void log_warn_report(const struct log_scan *ls, FILE *out)
{
	fprintf(out,
		"the plugin said only WARN lines here (%lu; a log at NCCL_DEBUG=WARN, NCCL's "
		"default): each is a problem it found\n",
		ls->warn_lines);
	for (int i = 0; i < ls->nwarns; i++) {
		fputs("  ", out);
		if (ls->warn_procs[i][0])
			gdx_esc_text(out, ls->warn_procs[i]);
		if (ls->warn_times[i] > 1)
			fprintf(out, "%s%lu lines", ls->warn_procs[i][0] ? " and others, " : "",
				ls->warn_times[i]);
		if (ls->warn_procs[i][0] || ls->warn_times[i] > 1)
			fputs(": ", out);
		gdx_esc_text(out, ls->warns[i]);
		fputc('\n', out);
	}
	if (ls->more_warns)
		fprintf(out, "  (and %lu more)\n", ls->more_warns);
	fputs("  one said at init is why the plugin did not start in that process: NCCL ran on "
	      "its next network, or with NCCL_NET=GDX failed; gdx-doctor check on that node "
	      "says the same, with the fix; NCCL_DEBUG=INFO gives this command the rest\n",
	      out);
}

/* The plugin's init failed in some process: why, in its words, and the
 * network NCCL ran on instead. */
static void log_disabled_report(const struct log_scan *ls, FILE *out)
{
	char nets[LOG_MAX_NETS * (LOG_NAME_MAX + 2)], cause[LOG_WHY_MAX];
	bool gdx = false;

	for (int i = 0; i < ls->nnets; i++)
		gdx |= !strcasecmp(ls->nets[i], "GDX");
	log_short_cause(ls->disabled_why, cause, sizeof(cause));
	fputs("the plugin did not start: ", out);
	gdx_esc_text(out, cause[0] ? cause : "its init failed (no WARN of it before)");
	if (ls->nnets) {
		fputs("; NCCL used ", out);
		gdx_esc_text(out, log_nets(ls, nets, sizeof(nets)));
	} else {
		fputs("; NCCL used no network (no \"Using network\" line: the "
		      "communicators' init failed?)",
		      out);
	}
	fprintf(out, "\n  its init failed %lu time(s) in this log", ls->disabled);
	if (ls->disabled_node[0]) {
		fputs(", first on ", out);
		gdx_esc_text(out, ls->disabled_node);
	}
	if (gdx)
		fputs(", and GDX in other processes", out);
	fputs("\n", out);
	if (ls->disabled_why[0]) {
		fputs("  the plugin said: ", out);
		gdx_esc_text(out, ls->disabled_why);
		fputc('\n', out);
	}
	fputs("  gdx-doctor check on that node says why, with the fix\n", out);
}

/* A NIC that moved bytes through host memory where the node could have
 * sent them direct: it advertises GPUDirect RDMA (NCCL staged them anyway),
 * or the plugin staged it with a fix to say (a GPU is there, the path to it
 * is not: nvidia_peermem not loaded, no dma-buf, GPUs hidden). A NIC staged
 * for no fix (no NVIDIA GPU, NCCL_GDX_GDR=off) is what the node can do. */
enum log_staged { LOG_NOT_STAGED, LOG_STAGED_DIRECT, LOG_STAGED_FIXABLE };

static enum log_staged log_staged(const struct log_nic *nic)
{
	if (!nic->host)
		return LOG_NOT_STAGED;
	if (nic->direct)
		return LOG_STAGED_DIRECT;
	return strstr(nic->verdict, "; fix: ") ? LOG_STAGED_FIXABLE : LOG_NOT_STAGED;
}

/* A row of nothing: a fused device's comms, replaced by its NICs'
 * summaries. */
static bool log_row_empty(const struct log_nic *nic)
{
	return !nic->comms && !nic->gpu && !nic->host && !nic->verdict[0];
}

/* What the scan says, the exit status, without printing: the same for the
 * table and the JSON. */
static int log_exit(const struct log_scan *ls)
{
	int ret = DOCTOR_OK;

	if (!ls->plugin_lines)
		return DOCTOR_LOG_NO_PLUGIN;
	if (ls->disabled && !ls->counts)
		return DOCTOR_BROKEN;
	if (!ls->counts && ls->warn_lines && !ls->info_lines)
		return DOCTOR_BROKEN;
	if (!ls->counts)
		return DOCTOR_LOG_NO_DATA;
	for (int i = 0; i < ls->n; i++)
		if (log_staged(&ls->nics[i]) != LOG_NOT_STAGED)
			ret = DOCTOR_DEGRADED;
	if (ls->nrails)
		ret = DOCTOR_DEGRADED;
	return ls->disabled ? DOCTOR_BROKEN : ret;
}

/* The rows in host order: each host's after its first, in the order they
 * came (the table is small, at most LOG_MAX_NICS rows). order[] gets the
 * indexes; returns how many. */
static int log_order(const struct log_scan *ls, int *order)
{
	int n = 0;

	for (int i = 0; i < ls->n; i++) {
		bool seen = false;

		for (int k = 0; k < i && !seen; k++)
			seen = !strcmp(ls->nics[k].node, ls->nics[i].node);
		if (seen)
			continue;
		for (int j = i; j < ls->n; j++)
			if (!strcmp(ls->nics[j].node, ls->nics[i].node))
				order[n++] = j;
	}
	return n;
}

static int log_host_width(const struct log_scan *ls)
{
	int w = 4;

	for (int i = 0; i < ls->n; i++)
		if ((int)strlen(ls->nics[i].node) > w)
			w = (int)strlen(ls->nics[i].node);
	for (int i = 0; i < ls->nrails; i++)
		if ((int)strlen(ls->rails[i].host) > w)
			w = (int)strlen(ls->rails[i].host);
	return w < LOG_HOST_COLUMN ? w : LOG_HOST_COLUMN;
}

/* A host in its column: "-" for lines without NCCL's head, cut to the
 * column. */
static void log_host_column(FILE *out, const char *host, int w)
{
	char cut[LOG_HOST_COLUMN + 1];

	snprintf(cut, sizeof(cut), "%.*s", w, host[0] ? host : "-");
	log_column(out, cut, w);
	fputc(' ', out);
}

static void log_table(const struct log_scan *ls, FILE *out, const int *order, int n)
{
	unsigned long staged_direct = 0, staged_fixable = 0;
	int w = log_host_width(ls);

	fprintf(out, "%-*s %-12s %6s %18s %18s  %s\n", w, "HOST", "NIC", "comms",
		"GPU-direct bytes", "host bytes", "the plugin's verdict at init");
	for (int k = 0; k < n; k++) {
		const struct log_nic *nic = &ls->nics[order[k]];
		enum log_staged st = log_staged(nic);

		if (log_row_empty(nic))
			continue;
		log_host_column(out, nic->node, w);
		log_column(out, nic->name, 12);
		fprintf(out, " %6lu %18llu %18llu  ", nic->comms, nic->gpu, nic->host);
		gdx_esc_text(out, nic->verdict[0] ? nic->verdict : "(no verdict line)");
		fputc('\n', out);
		staged_direct += st == LOG_STAGED_DIRECT;
		staged_fixable += st == LOG_STAGED_FIXABLE;
	}
	if (ls->more_pending)
		fprintf(out,
			"(%lu connection line(s) of processes past the first %d NIC pairs: "
			"their bytes may be counted twice, once more in their summaries)\n",
			ls->more_pending, LOG_MAX_PENDING);
	if (ls->more_nics)
		fprintf(out,
			"(%lu line(s) about host and NIC pairs past the first %d, not counted)\n",
			ls->more_nics, LOG_MAX_NICS);
	if (staged_direct)
		fprintf(out,
			"\n%lu NIC(s) advertise GPUDirect RDMA but moved bytes through host "
			"memory: NCCL staged them (GPU-NIC path beyond NCCL_NET_GDR_LEVEL, or "
			"host buffers); see gdx-doctor check\n",
			staged_direct);
	if (staged_fixable)
		fprintf(out,
			"\n%lu NIC(s) moved bytes through host memory on a node that could send "
			"them direct: the plugin staged them for what its verdict says, with the "
			"fix; gdx-doctor check on that node says the same\n",
			staged_fixable);
}

static void log_rails_text(const struct log_scan *ls, FILE *out)
{
	int w = log_host_width(ls);

	fprintf(out,
		"\nrails taken out of fused connections (the others carried their "
		"traffic, slower)\n%-*s %-12s %6s %6s %8s  %s\n",
		w, "HOST", "NIC", "downs", "backs", "down s", "the last cause");
	for (int i = 0; i < ls->nrails; i++) {
		const struct log_rail *rl = &ls->rails[i];

		log_host_column(out, rl->host, w);
		log_column(out, rl->nic, 12);
		fprintf(out, " %6lu %6lu %8.1f  ", rl->downs, rl->backs, rl->down_s);
		gdx_esc_text(out, rl->cause[0] ? rl->cause : "?");
		fputc('\n', out);
	}
	if (ls->more_rails)
		fprintf(out, "(%lu line(s) about rails past the first %d, not counted)\n",
			ls->more_rails, LOG_MAX_RAILS);
	fprintf(out, "a rail that goes down again and again is a cable, a transceiver or a "
		     "switch port: check it with ibv_devinfo -d NIC and the switch's "
		     "counters\n");
}

/* The report as text; returns the exit status. */
static int log_report_text(const struct log_scan *ls, FILE *out)
{
	int ret = log_exit(ls), *order;

	if (!ls->plugin_lines) {
		char nets[LOG_MAX_NETS * (LOG_NAME_MAX + 2)];

		fprintf(out, "no line of the plugin (\"" GDX_LOG_PREFIX "...\"): was it loaded "
			     "(NCCL_NET_PLUGIN=gdx) and the log written with NCCL_DEBUG=INFO?");
		if (ls->nnets) {
			fputs(" (NCCL used ", out);
			gdx_esc_text(out, log_nets(ls, nets, sizeof(nets)));
			fputc(')', out);
		}
		fputc('\n', out);
		return ret;
	}
	/* Its init failed: what the job ran on instead, and why; the problem
	 * found, not a log short of data. */
	if (ls->disabled && !ls->counts) {
		log_disabled_report(ls, out);
		return ret;
	}
	/* Its WARNs alone: what they say is the report (a log at NCCL's
	 * default level holds nothing else of the plugin). */
	if (!ls->counts && ls->warn_lines && !ls->info_lines) {
		log_warn_report(ls, out);
		return ret;
	}
	/* The byte counts are the data this report is made of; without them a
	 * clean table would say nothing about what the job did. */
	if (!ls->counts) {
		fprintf(out,
			"no plugin data lines in this log: rerun with NCCL_DEBUG=INFO and "
			"NCCL_DEBUG_SUBSYS unset or holding INIT or NET (the plugin sums each "
			"NIC's bytes at finalize under both; NET adds each connection's as "
			"it closes), and let the job destroy its communicators: the sums are "
			"logged when the last one goes "
			"(%lu connection line(s) here, no byte counts)\n",
			ls->connections);
		return ret;
	}
	order = malloc(sizeof(*order) * (size_t)(ls->n ? ls->n : 1));
	if (!order)
		return DOCTOR_ERROR;
	log_table(ls, out, order, log_order(ls, order));
	free(order);
	if (ls->nrails)
		log_rails_text(ls, out);
	if (ls->all_down)
		fprintf(out, "\n%lu connection(s) lost every rail and failed\n", ls->all_down);
	if (ls->disabled) {
		fputc('\n', out);
		log_disabled_report(ls, out);
	}
	if (ls->refused)
		fprintf(out,
			"\n%lu line(s) of byte counts refused: their sums would pass 2^64-1 bytes, "
			"which no job moves (a forged or corrupt line)\n",
			ls->refused);
	if (ls->long_lines)
		fprintf(out,
			"\n%lu line(s) longer than %d bytes skipped: none of the plugin's is\n",
			ls->long_lines, LOG_MAX_LINE);
	return ret;
}

static const char *const log_staged_names[] = {
	[LOG_NOT_STAGED] = NULL,
	[LOG_STAGED_DIRECT] = "on a GPUDirect NIC",
	[LOG_STAGED_FIXABLE] = "fixable",
};

static void log_json_nics(const struct log_scan *ls, FILE *out, const int *order, int n)
{
	bool first = true;

	fputs(",\n \"nics\": [", out);
	for (int k = 0; k < n; k++) {
		const struct log_nic *nic = &ls->nics[order[k]];

		if (log_row_empty(nic))
			continue;
		fputs(first ? "\n  {" : ",\n  {", out);
		first = false;
		json_key_str(out, "host", nic->node);
		fputs(", ", out);
		json_key_str(out, "nic", nic->name);
		fprintf(out, ", \"comms\": %lu, \"gpu_direct_bytes\": %llu, \"host_bytes\": %llu, ",
			nic->comms, nic->gpu, nic->host);
		fputs("\"direct\": ", out);
		json_tri(out, nic->verdict[0] ? nic->direct : -1);
		fputs(", ", out);
		json_key_str(out, "verdict", nic->verdict);
		fputs(", ", out);
		json_key_str(out, "staged", log_staged_names[log_staged(nic)]);
		fputc('}', out);
	}
	fputs("]", out);
}

static void log_json_rails(const struct log_scan *ls, FILE *out)
{
	fputs(",\n \"rails\": [", out);
	for (int i = 0; i < ls->nrails; i++) {
		const struct log_rail *rl = &ls->rails[i];

		fputs(i ? ",\n  {" : "\n  {", out);
		json_key_str(out, "host", rl->host);
		fputs(", ", out);
		json_key_str(out, "nic", rl->nic);
		fprintf(out, ", \"downs\": %lu, \"backs\": %lu, \"down_s\": %.1f, ", rl->downs,
			rl->backs, rl->down_s);
		json_key_str(out, "cause", rl->cause);
		fputc('}', out);
	}
	fputs("]", out);
}

static void log_json_warns(const struct log_scan *ls, FILE *out)
{
	fputs(",\n \"networks\": [", out);
	for (int i = 0; i < ls->nnets; i++) {
		fputs(i ? ", " : "", out);
		json_str(out, ls->nets[i]);
	}
	fputs("],\n \"disabled\": ", out);
	if (ls->disabled) {
		fprintf(out, "{\"times\": %lu, ", ls->disabled);
		json_key_str(out, "first_host", ls->disabled_node);
		fputs(", ", out);
		json_key_str(out, "why", ls->disabled_why);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fprintf(out, ",\n \"warn_lines\": %lu, \"warns\": [", ls->warn_lines);
	for (int i = 0; i < ls->nwarns; i++) {
		fputs(i ? ",\n  {" : "\n  {", out);
		json_key_str(out, "process", ls->warn_procs[i]);
		fprintf(out, ", \"lines\": %lu, ", ls->warn_times[i]);
		json_key_str(out, "text", ls->warns[i]);
		fputc('}', out);
	}
	fprintf(out, "], \"more_warns\": %lu", ls->more_warns);
}

/* The report as JSON: every fact the table says, and the exit status. */
static int log_report_json(const struct log_scan *ls, FILE *out)
{
	int ret = log_exit(ls), *order, n;

	order = malloc(sizeof(*order) * (size_t)(ls->n ? ls->n : 1));
	if (!order)
		return DOCTOR_ERROR;
	n = log_order(ls, order);
	fputc('{', out);
	json_report_origin(out, "log");
	fprintf(out,
		", \"files\": %d, \"plugin_lines\": %lu, \"connections\": %lu, "
		"\"count_lines\": %lu",
		ls->files, ls->plugin_lines, ls->connections, ls->counts);
	log_json_nics(ls, out, order, n);
	free(order);
	log_json_rails(ls, out);
	fprintf(out, ",\n \"connections_failed\": %lu", ls->all_down);
	log_json_warns(ls, out);
	fprintf(out,
		",\n \"not_counted\": {\"nics\": %lu, \"rails\": %lu, \"pending\": %lu, "
		"\"refused\": %lu, \"long_lines\": %lu},\n \"exit\": %d}\n",
		ls->more_nics, ls->more_rails, ls->more_pending, ls->refused, ls->long_lines, ret);
	return ret;
}

int doctor_log_stream(FILE *in, FILE *out)
{
	struct log_scan *ls = calloc(1, sizeof(*ls));
	int ret, err;

	if (!ls)
		return DOCTOR_ERROR;
	err = log_scan_stream(ls, in);
	ret = err ? DOCTOR_NO_INPUT : log_report_text(ls, out);
	free(ls);
	errno = err;
	return ret;
}

/* One file into the scan: what cannot be opened or read is said, named. */
static int log_read_file(struct log_scan *ls, int dirfd, const char *path, const char *shown)
{
	char why[PATH_MAX + 128];
	int fd, err;
	FILE *f;

	/* a log another user may have put there: a FIFO, a device or a
	 * directory is refused, never waited on (no bound on its size: it is
	 * read a line at a time) */
	fd = gdx_file_open(dirfd, path, 0, SIZE_MAX, why, sizeof(why));
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0) {
			snprintf(why, sizeof(why), "%s", strerror(errno));
			close(fd);
		}
		fprintf(stderr, "gdx-doctor log: ");
		gdx_esc_text(stderr, why);
		fputc('\n', stderr);
		return DOCTOR_NO_INPUT;
	}
	err = log_scan_stream(ls, f);
	fclose(f);
	if (err) {
		fprintf(stderr, "gdx-doctor log: ");
		gdx_esc_text(stderr, shown);
		fprintf(stderr, ": %s\n", strerror(err));
		return DOCTOR_NO_INPUT;
	}
	return DOCTOR_OK;
}

static int log_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory: each regular file in it, in name order (a job's outputs,
 * one per node or per step); what is not a file is passed over, a dot
 * file too. Empty of files is no input. */
static int log_read_dir(struct log_scan *ls, const char *path)
{
	char why[PATH_MAX + 128], **names = NULL, shown[PATH_MAX + NAME_MAX + 2];
	int fd = gdx_file_open(AT_FDCWD, path, GDX_FILE_DIR, 0, why, sizeof(why));
	int n = 0, cap = 0, ret = DOCTOR_OK, read = 0;
	struct dirent *e;
	DIR *d;

	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "gdx-doctor log: ");
		gdx_esc_text(stderr, path);
		fprintf(stderr, ": %s\n", strerror(errno));
		return DOCTOR_NO_INPUT;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown =
				realloc(names, sizeof(*names) * (size_t)(cap = cap ? 2 * cap : 16));

			if (!grown) {
				ret = DOCTOR_ERROR;
				break;
			}
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			ret = DOCTOR_ERROR;
			break;
		}
		n++;
	}
	if (ret == DOCTOR_OK)
		qsort(names, (size_t)n, sizeof(*names), log_name_cmp);
	for (int i = 0; i < n && ret == DOCTOR_OK; i++) {
		struct stat st;

		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		snprintf(shown, sizeof(shown), "%s/%s", path, names[i]);
		ret = log_read_file(ls, dirfd(d), names[i], shown);
		read++;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	if (ret == DOCTOR_OK && !read) {
		fprintf(stderr, "gdx-doctor log: ");
		gdx_esc_text(stderr, path);
		fprintf(stderr, ": a directory with no log file in it\n");
		ret = DOCTOR_NO_INPUT;
	}
	return ret;
}

/* One operand: '-' (standard input, once), a directory or a file. */
static int log_read_operand(struct log_scan *ls, const char *path, bool *stdin_read)
{
	struct stat st;
	int err;

	if (!strcmp(path, "-")) {
		if (*stdin_read) {
			fprintf(stderr,
				"gdx-doctor log: '-' given twice: standard input is read once\n");
			return DOCTOR_USAGE;
		}
		*stdin_read = true;
		err = log_scan_stream(ls, stdin);
		if (err) {
			fprintf(stderr, "gdx-doctor log: standard input: %s\n", strerror(err));
			return DOCTOR_NO_INPUT;
		}
		return DOCTOR_OK;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return log_read_dir(ls, path);
	return log_read_file(ls, AT_FDCWD, path, path);
}

static int doctor_log(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct log_opts o = {0};
	bool stdin_read = false;
	struct log_scan *ls;
	int ret;

	ret = doctor_args(cmd, argc, argv, log_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		fprintf(stderr, "gdx-doctor log: out of memory\n");
		return DOCTOR_ERROR;
	}
	for (int i = optind; i < argc && ret == DOCTOR_OK; i++)
		ret = log_read_operand(ls, argv[i], &stdin_read);
	if (ret == DOCTOR_OK)
		ret = o.json ? log_report_json(ls, stdout) : log_report_text(ls, stdout);
	if (ret == DOCTOR_ERROR)
		fprintf(stderr, "gdx-doctor log: out of memory\n");
	free(ls);
	return ret;
}

static const struct doctor_opt log_opts[] = {
	{"json", 'j', NULL, "print JSON instead of the tables"},
	{0},
};

const struct doctor_cmd doctor_cmd_log = {
	.name = "log",
	.summary = "what a job did, from its NCCL_DEBUG=INFO output: bytes GPU-direct vs host "
		   "per host and NIC, rails taken out",
	.opts = log_opts,
	.run = doctor_log,
	.min_operands = 1,
	.max_operands = INT_MAX,
	.operands_usage = "give log files or directories of them ('-' for standard input)",
	.notes = "Every file given is one job's output (or part of it): the rows are summed per "
		 "host, the host NCCL writes at the start of each line.\n",
};
