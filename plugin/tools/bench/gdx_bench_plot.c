/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench --plot: a sweep as one self-contained SVG (no script, no
 * stylesheet), bandwidth above and time per message below against the
 * message size on a log2 scale, with the figures of --plot-ref beside. Each
 * point carries its figures in data-* attributes and a <title>, so that a
 * test or a script can read the plot back. Figures come from the run or
 * from files of gdx-bench -j's JSON, read with gdx-doctor's JSON reader
 * (tools/common/gdx_json.c), not a second one.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/gdx_file.h"

#include "tools/bench/gdx_bench_state.h"
#include "tools/common/gdx_file_out.h"
#include "tools/common/gdx_json.h" /* json_parse */

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

#define PLOT_FILE_MAX (1 << 20) /* far more than any sweep's figures */
#define PLOT_W	      960
#define PLOT_H	      680
#define PLOT_LEFT     88
#define PLOT_RIGHT    (PLOT_W - 24)
#define PLOT_FLAT     16 /* size labels turned past this many, not to overlap */

/* The areas: bandwidth above and time below (bw, rate), or a latency's one
 * panel of both heights (lat); the sizes labelled under them. */
enum { PLOT_AREA_BW, PLOT_AREA_TIME, PLOT_AREA_LAT };
static const int plot_top[3] = {84, 372, 84}, plot_bottom[3] = {324, 592, 592};
/* The figures a panel draws: bandwidth, time per message (lat: the median
 * half round trip), the p99 half round trip. */
enum { PLOT_FIG_GBPS, PLOT_FIG_USEC, PLOT_FIG_P99 };
static const char *const plot_colour[1 + BENCH_PLOT_REFS] = {"#1f5fa8", "#d95f02", "#1b9e77",
							     "#7570b3", "#a6761d"};
static const char *const plot_mode_name[] = {"bw", "rate", "lat"};

static struct bench_series plot_refs[BENCH_PLOT_REFS];
/* The plot's new file, renamed onto --plot's path once written whole: what
 * was at the path (another user's file, a FIFO, a link) is never written
 * through (gdx_file.h). */
static struct gdx_file_out plot_out = {.fd = -1};
static int plot_nrefs, plot_open, plot_written;
static const char *plot_path;
static pid_t plot_owner;

/* A figures file that is not: "FILE: what", exit 3 (an input that cannot be
 * read). */
static void plot_bad(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void plot_bad(const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	bench_fail(BENCH_EXIT_NO_INPUT, "%s: %s", path, why);
}

void bench_plot_add(struct bench_series *s, size_t bytes, double gbps, double usec, double p99)
{
	if (s->n == BENCH_PLOT_POINTS)
		bench_die("--plot: more than %d sizes", BENCH_PLOT_POINTS);
	s->pts[s->n++] =
		(struct bench_point){.bytes = bytes, .gbps = gbps, .usec = usec, .p99 = p99};
}

void bench_plot_about(struct bench_series *s, const char *host, const char *version, int depth,
		      double line_gbps)
{
	char rate[32] = "unknown", d[16] = "?";

	if (line_gbps > 0)
		snprintf(rate, sizeof(rate), "%g Gb/s", line_gbps);
	if (depth > 0)
		snprintf(d, sizeof(d), "%d", depth);
	snprintf(s->about, sizeof(s->about), "host %s, gdx-bench %s, depth %s, line rate %s",
		 host ? host : "?", version ? version : "?", d, rate);
}

void bench_plot_title(struct bench_series *s, enum bench_mode mode, const char *dev,
		      const char *peer, const char *memory)
{
	s->mode = mode;
	if (mode == BENCH_LAT)
		snprintf(s->title, sizeof(s->title), "gdx-bench lat: %s <-> %s, %s memory", dev,
			 peer, memory);
	else
		snprintf(s->title, sizeof(s->title), "gdx-bench %s: %s -> %s, %s memory",
			 plot_mode_name[mode], peer, dev, memory);
}

static double plot_json_num(const struct json_value *obj, const char *key)
{
	const struct json_value *v = json_get(obj, key);

	return v && v->type == JSON_NUMBER ? strtod(v->text, NULL) : NAN;
}

static const char *plot_json_str(const struct json_value *obj, const char *key)
{
	const char *s = json_string(json_get(obj, key));

	return s ? s : "?";
}

static int plot_line(const char *text, size_t pos)
{
	int line = 1;

	for (size_t i = 0; i < pos; i++)
		line += text[i] == '\n';
	return line;
}

/* Sizes, or points by their first member, the size. */
static int plot_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * perftest's --out_json (ib_write_bw, ib_write_lat ...): one run's figures
 * of one size, "test_info" and "results" {"MsgSize", "BW_average" or
 * "t_typical" ...}; perftest rewrites the file for each size, so -a leaves
 * the last one. Up to 4.5 it is not JSON: bare keys and bare words as
 * values, a comma before each closing brace, -nan; perftest writes one
 * member a line. Those lines into JSON (an array of the objects the file
 * holds, one after another: runs of several sizes put together with cat),
 * for the JSON reader; NULL when a line is none of perftest's.
 */
static char *plot_perftest_json(const char *text, size_t len, int *bad_line)
{
	size_t cap = 2 * len + 16, n = 0;
	char *out = malloc(cap), key[128], value[256];
	int depth = 0, first[8] = {1}, objects = 0, line = 0;

	if (!out)
		bench_die("out of memory");
	out[n++] = '[';
	for (const char *p = text, *end = text + len; p < end; p++) {
		size_t l = strcspn(p, "\n"), k;
		char buf[512], *b = buf, *colon;

		line++;
		if (l >= sizeof(buf) || n + 2 * l + 8 > cap)
			goto bad;
		memcpy(buf, p, l);
		buf[l] = '\0';
		p += l;
		b += strspn(b, " \t\r");
		for (k = strlen(b); k && strchr(" \t\r,", b[k - 1]); k--)
			b[k - 1] = '\0';
		if (!*b)
			continue;
		if (!strcmp(b, "{") || !strcmp(b, "}")) {
			if (*b == '{' && depth == 0 && objects++)
				out[n++] = ',';
			if (*b == '{' && depth > 0)
				goto bad; /* an object is a member's value */
			depth += *b == '{' ? 1 : -1;
			if (depth < 0 || depth >= 8)
				goto bad;
			out[n++] = *b;
			first[depth] = *b == '{' ? 1 : 0;
			continue;
		}
		colon = strchr(b, ':');
		if (!colon || depth < 1)
			goto bad;
		*colon = '\0';
		snprintf(key, sizeof(key), "%s", b + strspn(b, " \""));
		for (k = strlen(key); k && strchr(" \"", key[k - 1]); k--)
			key[k - 1] = '\0';
		snprintf(value, sizeof(value), "%s", colon + 1 + strspn(colon + 1, " \t"));
		if (!*key || strchr(key, '"') || strchr(key, '\\'))
			goto bad;
		n += (size_t)snprintf(out + n, cap - n, "%s\"%s\": ", first[depth] ? "" : ",", key);
		first[depth] = 0;
		if (!strcmp(value, "{")) {
			if (++depth >= 8)
				goto bad;
			first[depth] = 1;
			out[n++] = '{';
			continue;
		}
		{
			char *num_end;
			double v = strtod(value, &num_end);

			if (value[0] == '"')
				n += (size_t)snprintf(out + n, cap - n, "%s", value);
			else if (num_end != value && !*num_end && isfinite(v))
				n += (size_t)snprintf(out + n, cap - n, "%s", value);
			else if (num_end != value && !*num_end)
				n += (size_t)snprintf(out + n, cap - n, "null"); /* -nan, inf */
			else if (strchr(value, '"') || strchr(value, '\\'))
				goto bad;
			else
				n += (size_t)snprintf(out + n, cap - n, "\"%s\"", value);
		}
	}
	if (depth || !objects)
		goto bad;
	out[n++] = ']';
	out[n] = '\0';
	return out;
bad:
	*bad_line = line;
	free(out);
	return NULL;
}

/* MB/s (perftest's default, 2^20 bytes a second) or Gb/s (--report_gbits):
 * the file does not say; its message rate (Mpps) does, times the size. */
static double plot_perftest_gbps(const char *path, int i, double bw, double mpps, double size)
{
	double as_mib = mpps * 1e6 * size / 1048576, as_gb = mpps * 1e6 * size * 8 / 1e9;

	if (!(bw >= 0))
		plot_bad(path, "perftest run %d has no \"BW_average\"", i + 1);
	if (!(mpps > 0) || !(size > 0))
		plot_bad(path,
			 "perftest run %d: its \"MsgRate\" is 0 at this precision, so its "
			 "\"BW_average\" may be MB/s or Gb/s (--report_gbits); give the figure as "
			 "{\"results\": [{\"bytes\": %.0f, \"Gbps\": ...}]}",
			 i + 1, size);
	return fabs(log(bw / as_mib)) <= fabs(log(bw / as_gb)) ? bw * 1048576 * 8 / 1e9 : bw;
}

/* perftest's files into s; exits 3 for what is not perftest's. */
static void plot_read_perftest(const char *path, const char *text, size_t len,
			       struct bench_series *s)
{
	char *json, why[PATH_MAX + 256];
	struct json_value *root;
	size_t pos = 0;
	int line = 0, lat = -1;

	json = plot_perftest_json(text, len, &line);
	if (!json)
		plot_bad(path,
			 "line %d: not perftest's --out_json as perftest writes it (one member a "
			 "line), nor JSON: give the figures as {\"results\": [{\"bytes\": 65536, "
			 "\"Gbps\": 90.1}]}",
			 line);
	if (json_parse(json, strlen(json), &pos, NULL, &root, why, sizeof(why)))
		plot_bad(path, "perftest's --out_json, read as JSON: %s", why);
	for (int i = 0; i < root->n; i++) {
		const struct json_value *run = &root->items[i], *r = json_get(run, "results");
		const char *test = json_string(json_get(json_get(run, "test_info"), "test"));
		double size = plot_json_num(r, "MsgSize");
		int is_lat = test && strstr(test, "Latency");

		if (run->type != JSON_OBJECT || !r || r->type != JSON_OBJECT || !test)
			plot_bad(path, "perftest run %d has no \"test_info\" and \"results\"",
				 i + 1);
		if (lat >= 0 && is_lat != lat)
			plot_bad(path, "perftest runs of bandwidth and of latency in one file");
		lat = is_lat;
		if (!(size >= 0 && size <= (double)BENCH_SIZE_MAX && size == floor(size)))
			plot_bad(path, "perftest run %d has no \"MsgSize\" of 0 to 1024G", i + 1);
		for (int j = 0; j < s->n; j++)
			if (s->pts[j].bytes == (size_t)size)
				plot_bad(path, "perftest run %d: size %.0f a second time", i + 1,
					 size);
		if (s->n == BENCH_PLOT_POINTS)
			plot_bad(path, "more than %d sizes", BENCH_PLOT_POINTS);
		if (is_lat)
			bench_plot_add(s, (size_t)size, NAN, plot_json_num(r, "t_typical"),
				       plot_json_num(r, "percentile_99"));
		else
			bench_plot_add(s, (size_t)size,
				       plot_perftest_gbps(path, i, plot_json_num(r, "BW_average"),
							  plot_json_num(r, "MsgRate"), size),
				       NAN, NAN);
	}
	s->mode = lat ? BENCH_LAT : BENCH_BW;
	json_free(root);
	free(json);
}

/*
 * gdx-bench -j's JSON: "results", each with "bytes" and "Gbps" (bw, rate),
 * "seconds" (over "iters": the table's time per message) or "median_us"
 * (lat); "mode", "device", "peer" and "memory" make the title ("title"
 * another), "label" the legend's name (default: the caller's, else the
 * file's). Figures from elsewhere (perftest's) need only the "results".
 */
void bench_plot_read(const char *path, const char *label, struct bench_series *s)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path, *mode;
	const struct json_value *results;
	struct json_value *root;
	char *text = NULL, why[PATH_MAX + 256];
	size_t len = 0, pos = 0;
	double iters, depth;
	int m = BENCH_BW, ret;

	/* another user's file, maybe: a FIFO, a device or a directory is
	 * refused, never waited on, and nothing past the bound is read */
	ret = gdx_file_read(AT_FDCWD, path, 0, PLOT_FILE_MAX, 0, &text, &len, why, sizeof(why));
	if (ret == -EFBIG)
		plot_bad(path, "larger than %d KiB: not figures", PLOT_FILE_MAX >> 10);
	if (ret == -ENOMEM)
		bench_die("out of memory");
	if (ret == -EINVAL || ret == -EISDIR) /* why: "PATH is a FIFO, not a file..." */
		bench_fail(BENCH_EXIT_NO_INPUT, "%s", why);
	if (ret)
		plot_bad(path, "cannot read it: %s", strerror(-ret));
	/* perftest's: "test_info" its first member */
	if (strstr(text, "test_info") &&
	    strstr(text, "test_info") <= text + strspn(text, " \t\r\n{\"")) {
		memset(s, 0, sizeof(*s));
		snprintf(s->label, sizeof(s->label), "%.*s", (int)strcspn(base, "."), base);
		if (label)
			snprintf(s->label, sizeof(s->label), "%s", label);
		plot_read_perftest(path, text, len, s);
		free(text);
		if (!s->n)
			plot_bad(path, "no figures in it");
		qsort(s->pts, (size_t)s->n, sizeof(s->pts[0]), plot_cmp_size);
		return;
	}
	if (json_parse(text, len, &pos, NULL, &root, why, sizeof(why)))
		plot_bad(path, "%s", why);
	if (root->type != JSON_OBJECT)
		plot_bad(path, "line %d: not a JSON object, as gdx-bench -j prints",
			 plot_line(text, strspn(text, " \t\r\n")));
	pos += strspn(text + pos, " \t\r\n");
	if (pos < len)
		plot_bad(path, "line %d: more after the JSON object (one run a file)",
			 plot_line(text, pos));
	mode = json_string(json_get(root, "mode"));
	while (mode && m <= BENCH_LAT && strcmp(mode, plot_mode_name[m]))
		m++;
	results = json_get(root, "results");
	if (m > BENCH_LAT || !results || results->type != JSON_ARRAY)
		plot_bad(path, "no \"results\" list, or a \"mode\" other than bw, rate and lat: "
			       "not gdx-bench -j's figures");
	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "%.*s", (int)strcspn(base, "."), base);
	if (json_string(json_get(root, "label")))
		label = json_string(json_get(root, "label"));
	if (label)
		snprintf(s->label, sizeof(s->label), "%s", label);
	/* a client's copy names its own device first: the title the server's */
	if (m != BENCH_LAT && json_string(json_get(root, "end")) &&
	    !strcmp(json_string(json_get(root, "end")), "client"))
		bench_plot_title(s, (enum bench_mode)m, plot_json_str(root, "peer"),
				 plot_json_str(root, "device"), plot_json_str(root, "memory"));
	else
		bench_plot_title(s, (enum bench_mode)m, plot_json_str(root, "device"),
				 plot_json_str(root, "peer"), plot_json_str(root, "memory"));
	depth = plot_json_num(root, "depth");
	bench_plot_about(s, plot_json_str(root, "host"), plot_json_str(root, "version"),
			 depth >= 1 && depth <= 1024 ? (int)depth : 0,
			 plot_json_num(root, "line_gbps"));
	if (json_string(json_get(root, "title")))
		snprintf(s->title, sizeof(s->title), "%s", json_string(json_get(root, "title")));
	iters = plot_json_num(root, "iters");
	for (int i = 0; i < results->n; i++) {
		const struct json_value *r = &results->items[i];
		double bytes = plot_json_num(r, "bytes"), gbps = plot_json_num(r, "Gbps");
		double usec = json_get(r, "median_us") ? plot_json_num(r, "median_us")
						       : plot_json_num(r, "seconds") * 1e6 / iters;

		if (!(bytes >= 0 && bytes <= (double)BENCH_SIZE_MAX && bytes == floor(bytes)))
			plot_bad(path, "results[%d] has no \"bytes\" of 0 to 1024G", i);
		if (gbps < 0 || usec < 0 || plot_json_num(r, "p99_us") < 0)
			plot_bad(path, "results[%d]: a negative figure", i);
		for (int j = 0; j < s->n; j++)
			if (s->pts[j].bytes == (size_t)bytes)
				plot_bad(path, "results[%d]: size %zu a second time", i,
					 s->pts[j].bytes);
		if (s->n == BENCH_PLOT_POINTS)
			plot_bad(path, "more than %d sizes", BENCH_PLOT_POINTS);
		bench_plot_add(s, (size_t)bytes, gbps, usec, plot_json_num(r, "p99_us"));
	}
	json_free(root);
	free(text);
	if (!s->n)
		plot_bad(path, "no figures in it (an empty sweep?)");
	qsort(s->pts, (size_t)s->n, sizeof(s->pts[0]), plot_cmp_size);
}

static void plot_abandon(void)
{
	/* A failed run leaves no plot, and an older one as it was; the forked
	 * client's exit is none of its business. */
	if (plot_open && !plot_written && getpid() == plot_owner)
		gdx_file_out_abandon(&plot_out);
}

void bench_plot_prepare(const struct bench_opts *o)
{
	int ret;

	for (int i = 0; i < o->plot_nrefs; i++)
		bench_plot_read(o->plot_refs[i], NULL, &plot_refs[i]);
	plot_nrefs = o->plot_nrefs;
	plot_path = o->plot;
	ret = gdx_file_out_open(plot_path, &plot_out, NULL, 0);
	if (ret)
		bench_fail(BENCH_EXIT_OUTPUT, "--plot %s: cannot write it: %s", plot_path,
			   strerror(-ret));
	plot_open = 1;
	plot_owner = getpid();
	atexit(plot_abandon);
}

/* The length of the UTF-8 sequence at s, 0 where it is none or XML refuses
 * it (overlong forms, surrogates, past U+10FFFF, U+FFFE and U+FFFF). */
static int plot_utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90) ||
	    (c == 0xef && s[1] == 0xbf && s[2] >= 0xbe))
		return 0;
	return n;
}

/* Text as XML takes it: the specials as entities; control characters and
 * what is not UTF-8 (a parser refuses both, even as entities) as '?'. */
static void plot_text(FILE *f, const char *s)
{
	static const char special[] = "<>&\"'";
	static const char *const entity[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};

	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		const char *c = strchr(special, *p);
		int n = plot_utf8_len(p);

		if (c)
			fputs(entity[c - special], f);
		else if (n && *p >= 0x20)
			fwrite(p, 1, (size_t)n, f);
		else
			fputc('?', f);
		p += n ? n : 1;
	}
}

/* 64K, 1M, 8G where the size is a whole number of them, as -b and -e take
 * sizes (u units of 1024: the u-th letter of " KMG", none for bytes). */
static void plot_size_label(char *buf, size_t len, size_t bytes)
{
	int u = 0;

	while (u < 3 && bytes >= 1024 && bytes % 1024 == 0)
		bytes /= 1024, u++;
	snprintf(buf, len, "%zu%.*s", bytes, u > 0, &" KMG"[u]);
}

static double plot_x(size_t bytes, const double *xr)
{
	double l = log2(bytes ? (double)bytes : 0.5); /* 0 bytes: a step left of 1 */

	return PLOT_LEFT + (l - xr[0]) / (xr[1] - xr[0]) * (PLOT_RIGHT - PLOT_LEFT);
}

static double plot_fig(const struct bench_point *p, int fig)
{
	return fig == PLOT_FIG_GBPS ? p->gbps : fig == PLOT_FIG_USEC ? p->usec : p->p99;
}

/* The y scales: bandwidth linear from 0 in steps of 1, 2 or 5 times a power
 * of ten; time by decades (a sweep's times span several). */
struct plot_scale {
	double lo, hi, step;
	int log;
};

static int plot_placed(const struct plot_scale *sc, double v)
{
	return isfinite(v) && (!sc->log || v > 0);
}

static double plot_y(const struct plot_scale *sc, int area, double v)
{
	double t = sc->log ? (log10(v) - sc->lo) / (sc->hi - sc->lo) : v / sc->hi;

	return plot_bottom[area] - t * (plot_bottom[area] - plot_top[area]);
}

/* 0 when no series has a figure this panel can place (figs: nfigs of them). */
static int plot_scale(struct plot_scale *sc, int area, const int *figs, int nfigs,
		      const struct bench_series *const *all, int nall)
{
	double lo = INFINITY, hi = -INFINITY, mag;

	sc->log = area != PLOT_AREA_BW;
	for (int g = 0; g < nfigs; g++)
		for (int k = 0; k < nall; k++)
			for (int i = 0; i < all[k]->n; i++) {
				double v = plot_fig(&all[k]->pts[i], figs[g]);

				if (plot_placed(sc, v)) {
					lo = fmin(lo, v);
					hi = fmax(hi, v);
				}
			}
	if (hi < lo)
		return 0;
	if (sc->log) {
		sc->lo = floor(log10(lo));
		sc->hi = fmax(ceil(log10(hi)), sc->lo + 1);
		sc->step = 1;
		return 1;
	}
	hi = hi > 0 ? hi : 1;
	mag = pow(10, floor(log10(hi / 5)));
	sc->step = mag * (hi / 5 <= mag ? 1 : hi / 5 <= 2 * mag ? 2 : hi / 5 <= 5 * mag ? 5 : 10);
	sc->lo = 0;
	sc->hi = ceil(hi / sc->step) * sc->step;
	return 1;
}

/* One series' line of one figure, its points carrying it (data-gbps,
 * data-usec or data-p99): the p99 dotted and paler beside the median. */
static void plot_line_of(FILE *f, const struct plot_scale *sc, int area, int fig,
			 const struct bench_series *s, int k, const double *xr)
{
	static const char *const data[3] = {"gbps", "usec", "p99"};
	static const char *const unit[3] = {"Gb/s", "µs", "µs p99"};

	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s points=\"",
		plot_colour[k],
		fig == PLOT_FIG_P99 ? " stroke-dasharray=\"2 3\""
		: k		    ? " stroke-dasharray=\"6 3\""
				    : "",
		fig == PLOT_FIG_P99 ? " stroke-opacity=\"0.6\"" : "");
	for (int i = 0; i < s->n; i++)
		if (plot_placed(sc, plot_fig(&s->pts[i], fig)))
			fprintf(f, " %.1f,%.1f", plot_x(s->pts[i].bytes, xr),
				plot_y(sc, area, plot_fig(&s->pts[i], fig)));
	fputs("\"/>\n", f);
	for (int i = 0; i < s->n; i++) {
		const struct bench_point *p = &s->pts[i];
		char size[32];

		if (!plot_placed(sc, plot_fig(p, fig)))
			continue;
		plot_size_label(size, sizeof(size), p->bytes);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" data-series=\"",
			plot_x(p->bytes, xr), plot_y(sc, area, plot_fig(p, fig)),
			fig == PLOT_FIG_P99 ? "2.5" : "3.5", plot_colour[k]);
		plot_text(f, s->label);
		fprintf(f, "\" data-size=\"%zu\" data-%s=\"%.6g\"><title>", p->bytes, data[fig],
			plot_fig(p, fig));
		plot_text(f, s->label);
		fprintf(f, ", %s: %.4g %s</title></circle>\n", size, plot_fig(p, fig), unit[fig]);
	}
}

static void plot_panel(FILE *f, int area, const struct bench_series *const *all, int nall,
		       const double *xr)
{
	static const int bw_figs[] = {PLOT_FIG_GBPS}, time_figs[] = {PLOT_FIG_USEC},
			 lat_figs[] = {PLOT_FIG_USEC, PLOT_FIG_P99};
	const int *figs = area == PLOT_AREA_BW	   ? bw_figs
			  : area == PLOT_AREA_TIME ? time_figs
						   : lat_figs;
	int nfigs = area == PLOT_AREA_LAT ? 2 : 1, top = plot_top[area], bottom = plot_bottom[area];
	struct plot_scale sc;

	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n"
		"<text transform=\"translate(22 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
		PLOT_LEFT, top, PLOT_RIGHT - PLOT_LEFT, bottom - top, (top + bottom) / 2,
		area == PLOT_AREA_BW	 ? "bandwidth (Gb/s)"
		: area == PLOT_AREA_TIME ? "time per message (µs)"
					 : "half round trip (µs): median, and p99 dotted");
	if (!plot_scale(&sc, area, figs, nfigs, all, nall)) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no figures</text>\n",
			(PLOT_LEFT + PLOT_RIGHT) / 2, (top + bottom) / 2);
		return;
	}
	for (double v = sc.lo; v <= sc.hi + sc.step / 2; v += sc.step) {
		double tick = sc.log ? pow(10, v) : v, y = plot_y(&sc, area, tick);

		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.10g</text>\n",
			PLOT_LEFT, PLOT_RIGHT, y, y, PLOT_LEFT - 6, y + 4, tick);
	}
	for (int g = 0; g < nfigs; g++)
		for (int k = 0; k < nall; k++)
			plot_line_of(f, &sc, area, figs[g], all[k], k, xr);
}

/* The legend, and every size of every series once, in order, labelled. */
static void plot_axes(FILE *f, const struct bench_series *const *all, int nall, int lat, double *xr)
{
	size_t sizes[(1 + BENCH_PLOT_REFS) * BENCH_PLOT_POINTS];
	int n = 0, uniq = 0, y = plot_bottom[1] + 18;
	double x = PLOT_LEFT;

	for (int k = 0; k < nall; k++) {
		fprintf(f,
			"<line x1=\"%.0f\" x2=\"%.0f\" y1=\"62\" y2=\"62\" stroke=\"%s\" stroke-width=\"2\"%s/>"
			"<circle cx=\"%.0f\" cy=\"62\" r=\"3.5\" fill=\"%s\"/><text class=\"legend\" x=\"%.0f\" y=\"66\">",
			x, x + 24, plot_colour[k], k ? " stroke-dasharray=\"6 3\"" : "", x + 12,
			plot_colour[k], x + 30);
		plot_text(f, all[k]->label);
		fputs("</text>\n", f);
		x += 48 + 7 * (double)strlen(all[k]->label);
		for (int i = 0; i < all[k]->n; i++)
			sizes[n++] = all[k]->pts[i].bytes;
	}
	qsort(sizes, (size_t)n, sizeof(sizes[0]), plot_cmp_size);
	for (int i = 0; i < n; i++)
		if (!uniq || sizes[i] != sizes[uniq - 1])
			sizes[uniq++] = sizes[i];
	xr[0] = log2(sizes[0] ? (double)sizes[0] : 0.5) - 0.5;
	xr[1] = log2(sizes[uniq - 1] ? (double)sizes[uniq - 1] : 0.5) + 0.5;
	for (int i = 0; i < uniq; i++) {
		char label[32];

		x = plot_x(sizes[i], xr);
		plot_size_label(label, sizeof(label), sizes[i]);
		if (lat)
			fprintf(f,
				"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n",
				x, x, plot_top[PLOT_AREA_LAT], plot_bottom[PLOT_AREA_LAT]);
		else
			fprintf(f,
				"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>"
				"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n",
				x, x, plot_top[0], plot_bottom[0], x, x, plot_top[1],
				plot_bottom[1]);
		fprintf(f,
			"<text class=\"size\" data-size=\"%zu\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" "
			"transform=\"rotate(%d %.1f %d)\">%s</text>\n",
			sizes[i], x, y, uniq > PLOT_FLAT ? "end" : "middle",
			uniq > PLOT_FLAT ? -45 : 0, x, y, label);
	}
}

void bench_plot_write(const struct bench_series *run)
{
	const struct bench_series *all[1 + BENCH_PLOT_REFS] = {run};
	int nall = 1, bad, ret;
	char why[PATH_MAX + 128];
	double xr[2];
	FILE *f;

	if (!run->n)
		bench_die("--plot %s: the run has no figures", plot_path);
	for (int i = 0; i < plot_nrefs; i++)
		all[nall++] = &plot_refs[i];
	f = fdopen(plot_out.fd, "w");
	if (!f)
		bench_fail(BENCH_EXIT_OUTPUT, "--plot %s: cannot write it: %s", plot_path,
			   strerror(errno));
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n<desc>gdx-bench %s --plot</desc>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text class=\"title\" "
		"x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">",
		PLOT_W, PLOT_H, GDX_VERSION, PLOT_W / 2);
	plot_text(f, run->title[0] ? run->title : run->label);
	fprintf(f, "</text>\n<text class=\"about\" x=\"%d\" y=\"44\" text-anchor=\"middle\">",
		PLOT_W / 2);
	plot_text(f,
		  run->about[0] ? run->about : "host ?, gdx-bench ?, depth ?, line rate unknown");
	fputs("</text>\n", f);
	plot_axes(f, all, nall, run->mode == BENCH_LAT, xr);
	if (run->mode == BENCH_LAT) /* no bandwidth: one panel of both heights */
		plot_panel(f, PLOT_AREA_LAT, all, nall, xr);
	else
		for (int area = PLOT_AREA_BW; area <= PLOT_AREA_TIME; area++)
			plot_panel(f, area, all, nall, xr);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size (bytes, log2 scale)"
		"</text>\n</svg>\n",
		(PLOT_LEFT + PLOT_RIGHT) / 2, PLOT_H - 12);
	errno = 0;
	bad = ferror(f);
	plot_out.fd = -1; /* fclose closes it */
	if (fclose(f) || bad)
		bench_fail(BENCH_EXIT_OUTPUT, "--plot %s: writing it failed: %s", plot_path,
			   strerror(errno ? errno : EIO));
	/* in place in one step: the plot whole, or the path as it was */
	ret = gdx_file_out_commit(&plot_out, why, sizeof(why));
	plot_written = 1;
	if (ret)
		bench_fail(BENCH_EXIT_OUTPUT, "--plot %s", why);
}
