/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what gdx-doctor top and hang do with a live counter
 * file (the reader of gdx_live.c, gdx_doctor_live.c, _top.c, _hang.c): the
 * user who runs a job writes its file as they like, and root's top and hang
 * read every user's.
 *
 *   make fuzz && build/tests/fuzz/live -max_total_time=60 -timeout=10 \
 *           NEW_DIR tests/fuzz/corpus/live
 *   build/tests/fuzz/live -max_total_time=3600 -timeout=10 -jobs=2 \
 *           NEW_DIR tests/fuzz/corpus/live
 *
 * At start, a private directory laid out as the plugin lays it out: the
 * user's directory, mode 700, and in it a file named as the plugin names
 * this process's (its pid, its pid namespace, a random part); and a fixture
 * sysfs in which mlx5_0 port 1 is down and mlx5_1 port 1 up, for hang's
 * causes. Each input becomes that file: a header the reader takes (the
 * magic, the layout, the size, the slots, this process's pid and start
 * time), the rest of it the input's. Its first byte chooses:
 *
 *   bit 0  the input covers the header's other fields first (created_ms,
 *          the version, the command line, the untracked and closed counts:
 *          128 bytes), then the slots; else the slots alone, from slot 0
 *   bit 1  the file is cut short before the commands read it
 *   bit 2  a second file for this process, a copy of the first
 *   bit 3  the input is two halves: top's second snapshot sees the second
 *          half where its first saw the first
 *
 * bytes 1 and 2 (little-endian, times 16) where the file is cut, and the
 * bytes from the fourth on are the file's.
 *
 * What must hold. gdx_live_scan takes one whole file of the process, its
 * header as written and its claimed slots as written (their strings cut to
 * their fields), and leaves the other out; a file cut short is left out.
 * top (one refresh, in text, --json and --prometheus) exits 0 and hang (threshold 0, text and
 * --json) 0 or 10, having found the process unless the cut left no file of it whole. What they
 * print holds no control byte but the newline, no byte that is not UTF-8 and nothing that reorders
 * a line, and each line of hang's text is about this process; every Prometheus line is a HELP or
 * TYPE comment or a sample of the metric the last TYPE line declared, its labels quoted and escaped
 * as the exposition format says, and no series twice; the JSON is one object, the report of its
 * command, with this process's pid alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/common/gdx_escape.h"
#include "stats/gdx_live.h"
#include "tools/common/gdx_live_read.h"
#include "sys/gdx_time.h"
#include "check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	FUZZ_HEADER = 1 << 0,
	FUZZ_CUT = 1 << 1,
	FUZZ_TWO_FILES = 1 << 2,
	FUZZ_TWO_SNAPS = 1 << 3,
};

/* The input's bytes before the file's. */
#define FUZZ_PREAMBLE 3

/* The header's fields past those the reader checks before it takes a file. */
#define FUZZ_HDR_FREE offsetof(struct gdx_live_hdr, created_ms)
#define FUZZ_HDR_REST (sizeof(struct gdx_live_hdr) - FUZZ_HDR_FREE)

#define FUZZ_FILE_SIZE ((off_t)sizeof(struct gdx_live))

static char fuzz_root[64];  /* what --dir names */
static char fuzz_udir[128]; /* the user's directory in it */
static char fuzz_sysfs[128];
static char fuzz_names[2][GDX_LIVE_NAME_MAX];
static char fuzz_paths[2][256];
static int fuzz_fd = -1;     /* the first file, always there */
static int fuzz_out = -1;    /* what stdout is while a command runs */
static int fuzz_stdout = -1; /* stdout itself */
static int fuzz_pid;
static uint64_t fuzz_start; /* this process's start, as /proc says it */
static struct gdx_live fuzz_image[2];
static size_t fuzz_used[2]; /* of each image, the bytes that may not be zero */
static off_t fuzz_size;	    /* the first file's size while the commands read it */
static bool fuzz_snaps_differ;

/* Field 22 of /proc/self/stat, after the command's name (which may hold
 * spaces and parentheses). */
static uint64_t fuzz_proc_start(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;

	FUZZ_CHECK(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (int field = 3; p && field <= 22; field++)
		p = strchr(p + 1, ' ');
	FUZZ_CHECK(p && sscanf(p, " %llu", &start) == 1);
	return start;
}

static void fuzz_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	FUZZ_CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* The fixture sysfs: what hang reads of a NIC port a file names. */
static void fuzz_sysfs_make(void)
{
	static const char *const dirs[] = {"/class",
					   "/class/infiniband",
					   "/class/infiniband/mlx5_0",
					   "/class/infiniband/mlx5_0/ports",
					   "/class/infiniband/mlx5_0/ports/1",
					   "/class/infiniband/mlx5_1",
					   "/class/infiniband/mlx5_1/ports",
					   "/class/infiniband/mlx5_1/ports/1"};
	char path[256];

	FUZZ_CHECK(mkdir(fuzz_sysfs, 0700) == 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", fuzz_sysfs, dirs[i]);
		FUZZ_CHECK(mkdir(path, 0700) == 0);
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/state", fuzz_sysfs);
	fuzz_write_file(path, "1: DOWN\n");
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_1/ports/1/state", fuzz_sysfs);
	fuzz_write_file(path, "4: ACTIVE\n");
	FUZZ_CHECK(setenv("GDX_SYSFS_ROOT", fuzz_sysfs, 1) == 0);
}

static int fuzz_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* The directory made at start, with what is in it: at exit, by the process
 * that made it. */
static void fuzz_cleanup(void)
{
	if (fuzz_root[0] && (int)getpid() == fuzz_pid)
		nftw(fuzz_root, fuzz_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	unsigned long long rnd[2];
	struct stat ns;

	(void)argc;
	(void)argv;
	fuzz_pid = (int)getpid();
	fuzz_start = fuzz_proc_start();
	FUZZ_CHECK(stat("/proc/self/ns/pid", &ns) == 0);
	FUZZ_CHECK(getrandom(rnd, sizeof(rnd), 0) == (ssize_t)sizeof(rnd));
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/fuzz_live.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	FUZZ_CHECK(mkdtemp(fuzz_root) != NULL);
	atexit(fuzz_cleanup);
	snprintf(fuzz_udir, sizeof(fuzz_udir), "%s/" GDX_LIVE_USER_DIR "%u", fuzz_root,
		 (unsigned)geteuid());
	FUZZ_CHECK(mkdir(fuzz_udir, 0700) == 0 && chmod(fuzz_udir, 0700) == 0);
	for (int i = 0; i < 2; i++) {
		/* as gdx_live_name_of names them */
		snprintf(fuzz_names[i], sizeof(fuzz_names[i]), GDX_LIVE_PREFIX "%d.%llu.%016llx",
			 fuzz_pid, (unsigned long long)ns.st_ino, rnd[i]);
		snprintf(fuzz_paths[i], sizeof(fuzz_paths[i]), "%s/%s", fuzz_udir, fuzz_names[i]);
	}
	fuzz_fd = open(fuzz_paths[0], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FUZZ_CHECK(fuzz_fd >= 0);
	snprintf(fuzz_sysfs, sizeof(fuzz_sysfs), "%s/sys", fuzz_root);
	fuzz_sysfs_make();
	fuzz_out = memfd_create("fuzz_live_out", MFD_CLOEXEC);
	fuzz_stdout = dup(STDOUT_FILENO);
	FUZZ_CHECK(fuzz_out >= 0 && fuzz_stdout >= 0);
	return 0;
}

/* Image k: the header the reader takes, then the input's bytes. */
static void fuzz_image_make(int k, const uint8_t *in, size_t len, bool header)
{
	struct gdx_live_hdr *h = &fuzz_image[k].hdr;
	size_t n;

	memset(&fuzz_image[k], 0, fuzz_used[k]);
	memcpy(h->magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC));
	h->layout = GDX_LIVE_LAYOUT;
	h->size = sizeof(struct gdx_live);
	h->pid = fuzz_pid;
	h->ncomms = GDX_LIVE_COMMS;
	h->proc_start = fuzz_start;
	if (header) {
		n = len < FUZZ_HDR_REST ? len : FUZZ_HDR_REST;
		memcpy((char *)h + FUZZ_HDR_FREE, in, n);
		in += n;
		len -= n;
	}
	n = len < sizeof(fuzz_image[k].comms) ? len : sizeof(fuzz_image[k].comms);
	memcpy(fuzz_image[k].comms, in, n);
	fuzz_used[k] = offsetof(struct gdx_live, comms) + n;
}

/* The file fd as image k, size bytes long. */
static void fuzz_file_set(int fd, int k, off_t size)
{
	FUZZ_CHECK(ftruncate(fd, 0) == 0);
	FUZZ_CHECK(pwrite(fd, &fuzz_image[k], fuzz_used[k], 0) == (ssize_t)fuzz_used[k]);
	FUZZ_CHECK(ftruncate(fd, size) == 0);
}

/* The second file, a copy of image 0, or none. */
static void fuzz_second_file(bool want)
{
	int fd;

	if (!want) {
		FUZZ_CHECK(unlink(fuzz_paths[1]) == 0 || errno == ENOENT);
		return;
	}
	fd = open(fuzz_paths[1], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	fuzz_file_set(fd, 0, FUZZ_FILE_SIZE);
	close(fd);
}

/* A slot as the reader hands it out: strings terminated, rails within. */
static void fuzz_tidy(struct gdx_live_comm *c)
{
	c->dev[sizeof(c->dev) - 1] = c->addr[sizeof(c->addr) - 1] = '\0';
	c->peer[sizeof(c->peer) - 1] = c->peer_dev[sizeof(c->peer_dev) - 1] = '\0';
	if (c->nrails > GDX_LIVE_RAILS)
		c->nrails = GDX_LIVE_RAILS;
	for (int r = 0; r < GDX_LIVE_RAILS; r++)
		c->rails[r].ibdev[sizeof(c->rails[r].ibdev) - 1] = '\0';
}

/* The reader itself: the scan takes one file of the process whole (of two,
 * either: they are as new), its header as written and every claimed slot
 * as written, in slot order, and no other: a comm's (send, receive,
 * one-sided RMA) among the slots, a NIC's among the NICs; the first file
 * cut afterwards is a file of another size, left out (its copy taken, when
 * there is one). */
static void fuzz_reader(int nfiles, off_t cut)
{
	struct gdx_live_scan sc;
	int k = 0, nics = 0;

	FUZZ_CHECK(gdx_live_scan(fuzz_root, &sc) == 0);
	FUZZ_CHECK(sc.n == 1 && sc.skipped == nfiles - 1 && !sc.nusers);
	for (int i = 0; i < sc.n; i++) {
		const struct gdx_live_view *v = &sc.v[i];
		struct gdx_live_hdr h = fuzz_image[0].hdr;

		FUZZ_CHECK(!strcmp(v->name, fuzz_names[0]) || !strcmp(v->name, fuzz_names[1]));
		FUZZ_CHECK(v->uid == (unsigned)geteuid() && !v->stopped && !v->slots_cut);
		h.cmd[sizeof(h.cmd) - 1] = h.version[sizeof(h.version) - 1] = '\0';
		h.host[sizeof(h.host) - 1] = h.job[sizeof(h.job) - 1] = '\0';
		h.rank_var[sizeof(h.rank_var) - 1] = '\0';
		FUZZ_CHECK(!memcmp(&v->hdr, &h, sizeof(h)));
		for (int slot = 0; slot < GDX_LIVE_COMMS; slot++) {
			struct gdx_live_comm w = fuzz_image[0].comms[slot];

			nics += w.role == GDX_LIVE_NIC;
			if (w.role != GDX_LIVE_SEND && w.role != GDX_LIVE_RECV &&
			    w.role != GDX_LIVE_RMA)
				continue;
			fuzz_tidy(&w);
			FUZZ_CHECK(k < v->nslots && v->slots[k].slot == slot);
			FUZZ_CHECK(!memcmp(&v->slots[k].c, &w, sizeof(w)));
			k++;
		}
		FUZZ_CHECK(k == v->nslots);
		FUZZ_CHECK(nics == v->nnics);
	}
	gdx_live_scan_free(&sc);
	FUZZ_CHECK(ftruncate(fuzz_fd, cut) == 0);
	FUZZ_CHECK(gdx_live_scan(fuzz_root, &sc) == 0);
	FUZZ_CHECK(sc.n == (cut >= (off_t)sizeof(struct gdx_live) || nfiles == 2));
	gdx_live_scan_free(&sc);
}

/* top's pause between its snapshots: the clock moves on (a rate is taken
 * over some time), and the file changes. */
static void fuzz_between(void *arg)
{
	uint64_t t0 = gdx_now_ms();

	(void)arg;
	if (!fuzz_snaps_differ)
		return;
	while (gdx_now_ms() == t0)
		nanosleep(&(struct timespec){0, 500000}, NULL);
	fuzz_file_set(fuzz_fd, 1, fuzz_size);
}

/* What a command prints on stdout goes to fuzz_out meanwhile. */
static void fuzz_capture_begin(void)
{
	FUZZ_CHECK(fflush(stdout) == 0);
	FUZZ_CHECK(ftruncate(fuzz_out, 0) == 0 && lseek(fuzz_out, 0, SEEK_SET) == 0);
	FUZZ_CHECK(dup2(fuzz_out, STDOUT_FILENO) == STDOUT_FILENO);
}

/* What it printed, NUL-terminated, *len bytes without the terminator. */
static char *fuzz_capture_end(size_t *len)
{
	struct stat st;
	char *out;

	FUZZ_CHECK(fflush(stdout) == 0 && !ferror(stdout));
	FUZZ_CHECK(dup2(fuzz_stdout, STDOUT_FILENO) == STDOUT_FILENO);
	FUZZ_CHECK(fstat(fuzz_out, &st) == 0);
	*len = (size_t)st.st_size;
	out = malloc(*len + 1);
	FUZZ_CHECK(out && pread(fuzz_out, out, *len, 0) == (ssize_t)*len);
	out[*len] = '\0';
	return out;
}

/* What gdx-doctor prints: UTF-8 whose every character shows as itself
 * (gdx_esc_text's rule), newlines apart, the last line ended. */
static void fuzz_check_printed(const char *s, size_t len)
{
	FUZZ_CHECK(len > 0 && s[len - 1] == '\n' && !memchr(s, 0, len));
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(s + i, len - i, &cp);

		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f));
		FUZZ_CHECK(cp < 0x80 || cp > 0x9f);
		FUZZ_CHECK(cp != 0x061c && cp != 0x200e && cp != 0x200f);
		FUZZ_CHECK(!(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069));
		i += n;
	}
}

/* The name at *p as the exposition format has them, [a-zA-Z_:][a-zA-Z0-9_:]*
 * for a metric, without ':' for a label: its length, *p past it. */
static size_t fuzz_prom_name(const char **p, bool metric)
{
	const char *start = *p, *s = *p;

	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
	       (metric && *s == ':') || (s > start && *s >= '0' && *s <= '9'))
		s++;
	*p = s;
	return (size_t)(s - start);
}

/* Which sample of a histogram family a name of n bytes is: 1 _bucket, 2
 * _sum, 3 _count; 0 none. */
static int fuzz_prom_hist_part(const char *name, size_t n, const char *family)
{
	static const char *const parts[] = {"_bucket", "_sum", "_count"};
	size_t f = strlen(family);

	for (int i = 0; i < 3; i++)
		if (n == f + strlen(parts[i]) && !strncmp(name, family, f) &&
		    !strncmp(name + f, parts[i], strlen(parts[i])))
			return i + 1;
	return 0;
}

/* One sample line of the metric family: name{label="value",...} value, a
 * pid label this process's (none on a port's totals); a histogram's (*part: fuzz_prom_hist_part's)
 * named with its suffix, a bucket with an le label. Returns the length of
 * its series, the name and the labels. */
static size_t fuzz_check_prom_sample(const char *line, const char *family, bool histogram,
				     int *part)
{
	size_t series;
	const char *p = line;
	size_t n = fuzz_prom_name(&p, true);
	bool le = false;
	char *end;
	int pid = 0;

	*part = histogram ? fuzz_prom_hist_part(line, n, family) : 0;
	FUZZ_CHECK(n > 0 &&
		   (histogram ? *part > 0 : n == strlen(family) && !strncmp(line, family, n)));
	if (*p == '{') {
		p++;
		while (*p != '}') {
			const char *label = p, *value;
			size_t ln = fuzz_prom_name(&p, false);

			FUZZ_CHECK(ln > 0 && p[0] == '=' && p[1] == '"');
			p += 2;
			value = p;
			while (*p != '"') {
				FUZZ_CHECK(*p && *p != '\n');
				if (*p == '\\') {
					FUZZ_CHECK(p[1] == '\\' || p[1] == '"' || p[1] == 'n');
					p++;
				}
				p++;
			}
			if (ln == 3 && !strncmp(label, "pid", 3))
				FUZZ_CHECK(sscanf(value, "%d", &pid) == 1 && pid == fuzz_pid);
			le |= ln == 2 && !strncmp(label, "le", 2);
			p++;
			FUZZ_CHECK(*p == ',' || *p == '}');
			if (*p == ',')
				p++;
		}
		p++;
	}
	/* a port's totals are every process's: no pid, once per port */
	FUZZ_CHECK(pid == (strcmp(family, "gdx_nic_port_counter_total") ? fuzz_pid : 0));
	FUZZ_CHECK(le == (*part == 1));
	FUZZ_CHECK(*p == ' ' && p[1] != ' ' && p[1] != '\n');
	series = (size_t)(p - line);
	p++;
	strtod(p, &end);
	FUZZ_CHECK(end > p && *end == '\n');
	return series;
}

/* A sample's series: its name and labels. */
struct fuzz_series {
	const char *s;
	size_t len;
};

static int fuzz_cmp_series(const void *a, const void *b)
{
	const struct fuzz_series *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The node exporter's textfile format, line by line: no line a file could
 * add, and no series twice (the collector refuses the whole file). Returns
 * the samples of gdx_messages_total (one a process). */
static int fuzz_check_prometheus(const char *out)
{
	static struct fuzz_series series[1 << 15];
	char family[64] = "";
	int procs = 0, n_series = 0, part;
	bool histogram = false;
	/* a histogram series' last bucket and its +Inf one (-1: none yet) */
	double bucket = -1, inf = -1;

	for (const char *line = out; *line; line = strchr(line, '\n') + 1) {
		char name[64], type[16];
		int n = 0;

		if (line[0] == '#') {
			if (sscanf(line, "# TYPE %63s %15s%n", name, type, &n) == 2) {
				FUZZ_CHECK(line[n] == '\n');
				histogram = !strcmp(type, "histogram");
				FUZZ_CHECK(histogram || !strcmp(type, "counter") ||
					   !strcmp(type, "gauge"));
				snprintf(family, sizeof(family), "%s", name);
			} else {
				FUZZ_CHECK(sscanf(line, "# HELP %63s %n", name, &n) == 1 && n > 0);
			}
			continue;
		}
		FUZZ_CHECK(family[0]);
		FUZZ_CHECK(n_series < (int)(sizeof(series) / sizeof(series[0])));
		series[n_series].s = line;
		series[n_series++].len = fuzz_check_prom_sample(line, family, histogram, &part);
		procs += !strcmp(family, "gdx_messages_total");
		/* a series' buckets cumulative, then +Inf, _sum, _count: the count
		 * the +Inf bucket's */
		if (part == 1) {
			double v = strtod(strchr(line, '}') + 2, NULL);

			FUZZ_CHECK(v >= bucket);
			bucket = v;
			if (strstr(line, "le=\"+Inf\""))
				inf = v;
		} else if (part == 3) {
			FUZZ_CHECK(inf >= 0 && strtod(strchr(line, '}') + 2, NULL) == inf);
			bucket = inf = -1;
		}
	}
	qsort(series, (size_t)n_series, sizeof(series[0]), fuzz_cmp_series);
	for (int i = 1; i < n_series; i++)
		FUZZ_CHECK(fuzz_cmp_series(&series[i - 1], &series[i]));
	return procs;
}

/* The JSON report of command: one object, and its newline. */
static struct json_value *fuzz_check_json(const char *out, size_t len, const char *command)
{
	struct json_budget big = {.limit = (size_t)1 << 40};
	struct json_value *v;
	size_t pos = 0;
	char why[256];

	if (json_parse(out, len, &pos, &big, &v, why, sizeof(why)) != 0) {
		fprintf(stderr, "%s --json printed what does not parse (%s, at byte %zu):\n%.*s\n",
			command, why, pos, (int)len, out);
		FUZZ_CHECK(!"the report parses");
	}
	FUZZ_CHECK(v->type == JSON_OBJECT && pos + 1 == len && out[pos] == '\n');
	FUZZ_CHECK(json_string(json_get(v, "command")) &&
		   !strcmp(json_string(json_get(v, "command")), command));
	return v;
}

static long fuzz_json_int(const struct json_value *v)
{
	char *end;
	long n;

	FUZZ_CHECK(v && v->type == JSON_NUMBER);
	n = strtol(v->text, &end, 10);
	FUZZ_CHECK(*end == '\0');
	return n;
}

/* Every element of the array is an object with this process's pid. */
static void fuzz_check_pids(const struct json_value *a)
{
	FUZZ_CHECK(a && a->type == JSON_ARRAY);
	for (int i = 0; i < a->n; i++) {
		FUZZ_CHECK(a->items[i].type == JSON_OBJECT);
		FUZZ_CHECK(fuzz_json_int(json_get(&a->items[i], "pid")) == fuzz_pid);
	}
}

enum fuzz_form { FUZZ_TEXT, FUZZ_JSON, FUZZ_PROMETHEUS };

static void fuzz_top(enum fuzz_form form, int procs)
{
	char a0[] = "top", a1[] = "--once", a2[] = "--dir", json[] = "--json",
	     prom[] = "--prometheus";
	char *argv[] = {a0, a1, a2, fuzz_root, NULL, NULL};
	int argc = 4, ret, n = -1;
	struct json_value *v;
	size_t len;
	char *out;

	if (form != FUZZ_TEXT)
		argv[argc++] = form == FUZZ_JSON ? json : prom;
	fuzz_capture_begin();
	ret = doctor_top_between(argc, argv, fuzz_between, NULL);
	out = fuzz_capture_end(&len);
	FUZZ_CHECK(ret == DOCTOR_OK);
	fuzz_check_printed(out, len);
	switch (form) {
	case FUZZ_TEXT:
		FUZZ_CHECK(sscanf(out, "gdx-doctor top: %d process(es)", &n) == 1 && n == procs);
		break;
	case FUZZ_JSON:
		v = fuzz_check_json(out, len, "top");
		fuzz_check_pids(json_get(v, "processes"));
		FUZZ_CHECK(json_get(v, "processes")->n == procs);
		json_free(v);
		break;
	case FUZZ_PROMETHEUS: FUZZ_CHECK(fuzz_check_prometheus(out) == procs); break;
	}
	free(out);
}

static void fuzz_hang(enum fuzz_form form, int procs)
{
	char a0[] = "hang", a1[] = "--threshold", a2[] = "0", a3[] = "--dir", json[] = "--json";
	char *argv[] = {a0, a1, a2, a3, fuzz_root, NULL, NULL};
	int argc = 5, ret, stuck = 0;
	struct json_value *v;
	char pid[32];
	size_t len;
	char *out;

	if (form == FUZZ_JSON)
		argv[argc++] = json;
	fuzz_capture_begin();
	ret = doctor_cmd_hang.run(&doctor_cmd_hang, argc, argv);
	out = fuzz_capture_end(&len);
	FUZZ_CHECK(ret == DOCTOR_OK || ret == DOCTOR_HANG);
	fuzz_check_printed(out, len);
	if (form == FUZZ_JSON) {
		v = fuzz_check_json(out, len, "hang");
		FUZZ_CHECK(fuzz_json_int(json_get(v, "format")) == 2);
		fuzz_check_pids(json_get(v, "processes"));
		FUZZ_CHECK(json_get(v, "processes")->n == procs);
		fuzz_check_pids(json_get(v, "stuck"));
		stuck = json_get(v, "stuck")->n;
		json_free(v);
	} else {
		/* a line a stuck comm, about this process; or one that says none is */
		snprintf(pid, sizeof(pid), "pid %d (", fuzz_pid);
		for (const char *line = out; *line; line = strchr(line, '\n') + 1) {
			if (!stuck && !strncmp(line, "no comm has waited", 18)) {
				FUZZ_CHECK(!strchr(line, '\n')[1]);
				break;
			}
			FUZZ_CHECK(!strncmp(line, pid, strlen(pid)));
			stuck++;
		}
	}
	FUZZ_CHECK((ret == DOCTOR_HANG) == (stuck > 0));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size > 0 ? data[0] : 0;
	off_t cut = size > 2 ? (off_t)(data[1] | data[2] << 8) * 16 : FUZZ_FILE_SIZE;
	const uint8_t *body = data + (size < FUZZ_PREAMBLE ? size : FUZZ_PREAMBLE);
	size_t len = size < FUZZ_PREAMBLE ? 0 : size - FUZZ_PREAMBLE, half = len;
	int nfiles = flags & FUZZ_TWO_FILES ? 2 : 1, procs = 1;

	fuzz_snaps_differ = flags & FUZZ_TWO_SNAPS;
	if (fuzz_snaps_differ) {
		half = len / 2;
		fuzz_image_make(1, body + half, len - half, flags & FUZZ_HEADER);
	}
	fuzz_image_make(0, body, half, flags & FUZZ_HEADER);
	fuzz_file_set(fuzz_fd, 0, FUZZ_FILE_SIZE);
	fuzz_second_file(flags & FUZZ_TWO_FILES);
	fuzz_reader(nfiles, cut);

	fuzz_size = FUZZ_FILE_SIZE;
	if (flags & FUZZ_CUT) {
		fuzz_size = cut < FUZZ_FILE_SIZE ? cut : FUZZ_FILE_SIZE - 1;
		procs = nfiles - 1; /* the second file is whole */
	}
	for (enum fuzz_form f = FUZZ_TEXT; f <= FUZZ_PROMETHEUS; f++) {
		fuzz_file_set(fuzz_fd, 0, fuzz_size);
		fuzz_top(f, procs);
	}
	fuzz_file_set(fuzz_fd, 0, fuzz_size);
	fuzz_hang(FUZZ_TEXT, procs);
	fuzz_hang(FUZZ_JSON, procs);
	return 0;
}
