/* SPDX-License-Identifier: MIT */
/*
 * What a bw, rate or lat sweep prints, on the server (or the one process
 * driving both ends): a row per size as it is measured, in nccl-tests'
 * units (GB/s = 10^9 B/s), or -j's one JSON object; the plugin's byte
 * counters at the end; and the series --plot draws (gdx_bench_plot.c).
 */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

#include "tools/bench/gdx_bench_state.h"

/* A live line on long sweeps, only where a person watches. */
static int bench_report_live(const struct bench_opts *o)
{
	return o->min_size != o->max_size && !o->json && isatty(STDERR_FILENO);
}

void bench_report_open(struct bench_report *r, const struct bench_opts *o, const char *name,
		       double line_gbps, const struct bench_who *peer, int client)
{
	static const char *const mode_name[] = {"bw", "rate", "lat"};
	const char *how = o->procs == 1 ? "one thread drives both ends" : "two processes";
	const char *from, *to;
	char host[BENCH_NAME_MAX] = "?", peer_name[2 * BENCH_NAME_MAX + 2], rate[32] = "unknown";

	*r = (struct bench_report){.o = o, .run = {.label = "gdx-bench"}, .client = client};
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	if (o->role != BENCH_LOCAL)
		how = client ? "the server's figures, from another machine"
			     : "client on another machine";
	/* the other machine's device as DEV@HOST */
	snprintf(peer_name, sizeof(peer_name), "%s%s%s", peer->dev, peer->host[0] ? "@" : "",
		 peer->host);
	/* bw and rate: the client sends, the server receives */
	from = client ? name : peer_name;
	to = client ? peer_name : name;
	if (line_gbps > 0)
		snprintf(rate, sizeof(rate), "%g Gb/s", line_gbps);
	if (o->json)
		printf("{\"device\": \"%s\", \"peer\": \"%s\", \"peer_host\": \"%s\", "
		       "\"end\": \"%s\", \"mode\": \"%s\", \"depth\": %d, \"iters\": %d, "
		       "\"procs\": %d, \"memory\": \"%s\", \"host\": \"%s\", \"version\": \"%s\", "
		       "\"line_gbps\": %g, \"results\": [",
		       name, peer->dev, peer->host,
		       client			 ? "client"
		       : o->role == BENCH_SERVER ? "server"
						 : "both",
		       mode_name[o->mode], o->depth, o->iters,
		       o->role == BENCH_LOCAL ? o->procs : 2, o->cuda ? "cuda" : "host", host,
		       GDX_VERSION, line_gbps);
	else if (o->mode == BENCH_LAT)
		printf("# gdx-bench: ping-pong %s <-> %s (%s, %s memory), %d iterations after %d "
		       "warm-up, receives posted %d ahead\n"
		       "# host %s, gdx-bench %s, line rate %s\n"
		       "# %12s %14s %14s %14s\n",
		       name, peer_name, how, o->cuda ? "CUDA" : "host", o->iters, o->warmup,
		       o->depth, host, GDX_VERSION, rate, "bytes", "median(us)", "p99(us)",
		       "min(us)");
	else
		printf("# gdx-bench: %s %s -> %s (%s, %s memory), depth %d, %d iterations after "
		       "%d warm-up\n"
		       "# host %s, gdx-bench %s, line rate %s\n"
		       "# %12s %10s %10s %10s %12s\n",
		       mode_name[o->mode], from, to, how, o->cuda ? "CUDA" : "host", o->depth,
		       o->iters, o->warmup, host, GDX_VERSION, rate, "bytes", "time(us)", "GB/s",
		       "Gb/s", "msg/s");
	if (o->mode == BENCH_LAT)
		bench_plot_title(&r->run, o->mode, name, peer_name, o->cuda ? "cuda" : "host");
	else if (client) /* the title names the receiver first, as the server's */
		bench_plot_title(&r->run, o->mode, peer_name, name, o->cuda ? "cuda" : "host");
	else
		bench_plot_title(&r->run, o->mode, name, peer_name, o->cuda ? "cuda" : "host");
	bench_plot_about(&r->run, host, GDX_VERSION, o->depth, line_gbps);
}

void bench_report_progress(const struct bench_report *r, size_t bytes)
{
	if (bench_report_live(r->o))
		fprintf(stderr, "\r  %zu bytes ...\033[K", bytes);
}

void bench_fig_lat(const double *half_rtt, int iters, struct bench_fig *f)
{
	*f = (struct bench_fig){.secs = NAN,
				.med = half_rtt[iters / 2],
				.p99 = half_rtt[(iters * 99) / 100],
				.min = half_rtt[0]};
}

void bench_report_fig(struct bench_report *r, size_t bytes, const struct bench_fig *f)
{
	const struct bench_opts *o = r->o;

	if (o->mode == BENCH_LAT) {
		double med = f->med * 1e6, p99 = f->p99 * 1e6, min = f->min * 1e6;

		if (o->json)
			printf("%s{\"bytes\": %zu, \"median_us\": %.3f, \"p99_us\": %.3f, "
			       "\"min_us\": %.3f}",
			       r->rows ? ", " : "", bytes, med, p99, min);
		else
			printf("  %12zu %14.2f %14.2f %14.2f\n", bytes, med, p99, min);
		bench_plot_add(&r->run, bytes, NAN, med, p99);
	} else {
		double secs = f->secs, gbs = secs > 0 ? (double)bytes * o->iters / secs / 1e9 : 0;
		double rate = secs > 0 ? o->iters / secs : 0;

		if (o->json)
			printf("%s{\"bytes\": %zu, \"seconds\": %.6f, \"GBps\": %.4f, "
			       "\"Gbps\": %.4f, \"msg_rate\": %.1f}",
			       r->rows ? ", " : "", bytes, secs, gbs, gbs * 8, rate);
		else
			printf("  %12zu %10.2f %10.4f %10.4f %12.1f\n", bytes,
			       secs * 1e6 / o->iters, gbs, gbs * 8, rate);
		bench_plot_add(&r->run, bytes, gbs * 8, secs * 1e6 / o->iters, NAN);
	}
	fflush(stdout);
	r->rows++;
}

void bench_report_swept(const struct bench_report *r)
{
	if (bench_report_live(r->o))
		fprintf(stderr, "\r\033[K");
}

void bench_report_close(struct bench_report *r, const char *ends,
			const unsigned long long counts[2])
{
	const struct bench_opts *o = r->o;

	/* what the server's receive comms counted when they closed */
	if (o->json)
		printf("], \"bytes_gpu_direct\": %llu, \"bytes_host\": %llu}\n", counts[0],
		       counts[1]);
	else
		printf("# bytes received: %llu GPU-direct, %llu through host memory (the plugin's "
		       "counters%s)\n",
		       counts[0], counts[1], r->client ? ", on the server" : "");
	bench_prof_report(o, ends);
	if (o->plot)
		bench_plot_write(&r->run);
}
