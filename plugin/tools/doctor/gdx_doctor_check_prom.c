/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check --prometheus and --textfile FILE: the node's verdict as
 * metrics for node_exporter's textfile collector. The verdict as a gauge
 * (0 healthy, 1 degraded, 2 broken) and as one series per verdict, the
 * problems counted by level, each degraded or broken problem a gauge of
 * its own (its text the label), and when the check ran. --textfile writes
 * the file whole or not at all: a new file of its own in the same
 * directory, renamed onto FILE (gdx_file_out.h), so that the collector
 * never reads half a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/gdx_escape.h"
#include "tools/common/gdx_file_out.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_check_prom.h"

static const char *const prom_verdicts[] = {"healthy", "degraded", "broken"};

/* Whether problem i's label value is one of an earlier problem's of its
 * level: the collector refuses a file with a series twice. */
static bool prom_problem_dup(const struct check *c, int i, const char *label)
{
	char other[GDX_ESCAPE_LEN(GDX_GDR_LINE_LEN)];

	for (int j = 0; j < i; j++) {
		if (c->problems[j].level != c->problems[i].level)
			continue;
		gdx_escape(GDX_ESCAPE_PROM_LABEL, c->problems[j].text, other, sizeof(other));
		if (!strcmp(other, label))
			return true;
	}
	return false;
}

void check_prometheus(const struct check *c, FILE *f)
{
	static char label[GDX_ESCAPE_LEN(GDX_GDR_LINE_LEN)];
	int count[3] = {0};

	for (int i = 0; i < c->nproblems; i++)
		count[c->problems[i].level]++;
	fprintf(f,
		"# HELP gdx_check_status The node's verdict from gdx-doctor check: 0 healthy, "
		"1 degraded, 2 broken.\n# TYPE gdx_check_status gauge\n"
		"gdx_check_status %d\n",
		(int)c->status);
	fputs("# HELP gdx_check_verdict 1 for the node's verdict from gdx-doctor check, 0 for "
	      "the others.\n# TYPE gdx_check_verdict gauge\n",
	      f);
	for (int v = 0; v < 3; v++)
		fprintf(f, "gdx_check_verdict{verdict=\"%s\"} %d\n", prom_verdicts[v],
			(int)c->status == v);
	fputs("# HELP gdx_check_problems The problems gdx-doctor check found, by level (note: "
	      "said, not counted against the node).\n# TYPE gdx_check_problems gauge\n",
	      f);
	fprintf(f, "gdx_check_problems{level=\"note\"} %d\n", count[GDX_GDR_LEVEL_OK]);
	fprintf(f, "gdx_check_problems{level=\"degraded\"} %d\n", count[GDX_GDR_LEVEL_DEGRADED]);
	fprintf(f, "gdx_check_problems{level=\"broken\"} %d\n", count[GDX_GDR_LEVEL_BROKEN]);
	fputs("# HELP gdx_check_problem 1 for each degraded or broken problem gdx-doctor check "
	      "found, its line as the label.\n# TYPE gdx_check_problem gauge\n",
	      f);
	for (int i = 0; i < c->nproblems; i++) {
		if (c->problems[i].level == GDX_GDR_LEVEL_OK)
			continue;
		gdx_escape(GDX_ESCAPE_PROM_LABEL, c->problems[i].text, label, sizeof(label));
		if (prom_problem_dup(c, i, label))
			continue;
		fprintf(f, "gdx_check_problem{level=\"%s\",problem=\"%s\"} 1\n",
			prom_verdicts[c->problems[i].level], label);
	}
	fprintf(f,
		"# HELP gdx_check_timestamp_seconds When gdx-doctor check ran (Unix time).\n"
		"# TYPE gdx_check_timestamp_seconds gauge\ngdx_check_timestamp_seconds %lld\n",
		(long long)time(NULL));
}

int check_textfile(const struct check *c, const char *path)
{
	struct gdx_file_out out = {.fd = -1};
	char why[PATH_MAX + 256];
	bool bad;
	FILE *f;

	if (gdx_file_out_open(path, &out, why, sizeof(why))) {
		fprintf(stderr, "gdx-doctor check: --textfile %s\n", why);
		return DOCTOR_ERROR;
	}
	f = fdopen(out.fd, "w");
	if (!f) {
		fprintf(stderr, "gdx-doctor check: --textfile %s: %s\n", path, strerror(errno));
		gdx_file_out_abandon(&out);
		return DOCTOR_ERROR;
	}
	check_prometheus(c, f);
	bad = ferror(f) != 0;
	errno = 0;
	bad = fclose(f) != 0 || bad;
	out.fd = -1;
	if (bad) {
		fprintf(stderr, "gdx-doctor check: --textfile %s: cannot write it: %s\n", path,
			strerror(errno ? errno : EIO));
		gdx_file_out_abandon(&out);
		return DOCTOR_ERROR;
	}
	if (gdx_file_out_commit(&out, why, sizeof(why))) {
		fprintf(stderr, "gdx-doctor check: --textfile %s\n", why);
		return DOCTOR_ERROR;
	}
	return DOCTOR_OK;
}
