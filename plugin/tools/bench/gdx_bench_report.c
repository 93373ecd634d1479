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

#include "tools/bench/gdx_bench_state.h"

/* A live line on long sweeps, only where a person watches. */
static int bench_report_live(const struct bench_opts *o)
{
	return o->min_size != o->max_size && !o->json && isatty(STDERR_FILENO);
}

void bench_report_open(struct bench_report *r, const struct bench_opts *o, const char *name,
		       const char *peer)
{
	static const char *const mode_name[] = {"bw", "rate", "lat"};
	const char *how = o->procs == 1 ? "one thread drives both ends" : "two processes";

	*r = (struct bench_report){.o = o, .run = {.label = "gdx-bench"}};
	if (o->role != BENCH_LOCAL)
		how = "client on another machine";
	if (o->json)
		printf("{\"device\": \"%s\", \"peer\": \"%s\", \"mode\": \"%s\", \"depth\": %d, "
		       "\"iters\": %d, \"procs\": %d, \"memory\": \"%s\", \"results\": [",
		       name, peer, mode_name[o->mode], o->depth, o->iters,
		       o->role == BENCH_LOCAL ? o->procs : 2, o->cuda ? "cuda" : "host");
	else if (o->mode == BENCH_LAT)
		printf("# gdx-bench: ping-pong %s <-> %s (%s, %s memory), %d iterations after %d "
		       "warm-up, receives posted %d ahead\n"
		       "# %12s %14s %14s %14s\n",
		       name, peer, how, o->cuda ? "CUDA" : "host", o->iters, o->warmup, o->depth,
		       "bytes", "median(us)", "p99(us)", "min(us)");
	else
		printf("# gdx-bench: %s %s -> %s (%s, %s memory), depth %d, %d iterations after "
		       "%d warm-up\n"
		       "# %12s %10s %10s %10s %12s\n",
		       mode_name[o->mode], peer, name, how, o->cuda ? "CUDA" : "host", o->depth,
		       o->iters, o->warmup, "bytes", "time(us)", "GB/s", "Gb/s", "msg/s");
	bench_plot_title(&r->run, o->mode, name, peer, o->cuda ? "cuda" : "host");
}

void bench_report_progress(const struct bench_report *r, size_t bytes)
{
	if (bench_report_live(r->o))
		fprintf(stderr, "\r  %zu bytes ...\033[K", bytes);
}

void bench_report_lat(struct bench_report *r, size_t bytes, const double *half_rtt)
{
	const struct bench_opts *o = r->o;
	double med = half_rtt[o->iters / 2] * 1e6, p99 = half_rtt[(o->iters * 99) / 100] * 1e6;

	if (o->json)
		printf("%s{\"bytes\": %zu, \"median_us\": %.3f, \"p99_us\": %.3f, "
		       "\"min_us\": %.3f}",
		       r->rows ? ", " : "", bytes, med, p99, half_rtt[0] * 1e6);
	else
		printf("  %12zu %14.2f %14.2f %14.2f\n", bytes, med, p99, half_rtt[0] * 1e6);
	bench_plot_add(&r->run, bytes, NAN, med);
	fflush(stdout);
	r->rows++;
}

void bench_report_stream(struct bench_report *r, size_t bytes, double secs)
{
	const struct bench_opts *o = r->o;
	double gbs = secs > 0 ? (double)bytes * o->iters / secs / 1e9 : 0;
	double rate = secs > 0 ? o->iters / secs : 0;

	if (o->json)
		printf("%s{\"bytes\": %zu, \"seconds\": %.6f, \"GBps\": %.4f, "
		       "\"Gbps\": %.4f, \"msg_rate\": %.1f}",
		       r->rows ? ", " : "", bytes, secs, gbs, gbs * 8, rate);
	else
		printf("  %12zu %10.2f %10.4f %10.4f %12.1f\n", bytes, secs * 1e6 / o->iters, gbs,
		       gbs * 8, rate);
	bench_plot_add(&r->run, bytes, gbs * 8, secs * 1e6 / o->iters);
	fflush(stdout);
	r->rows++;
}

void bench_report_swept(const struct bench_report *r)
{
	if (bench_report_live(r->o))
		fprintf(stderr, "\r\033[K");
}

void bench_report_close(struct bench_report *r, const char *ends)
{
	const struct bench_opts *o = r->o;
	unsigned long long bytes_gpu, bytes_host;

	/* what this end's receive comms counted when they closed */
	bench_bytes_received(&bytes_gpu, &bytes_host);
	if (o->json)
		printf("], \"bytes_gpu_direct\": %llu, \"bytes_host\": %llu}\n", bytes_gpu,
		       bytes_host);
	else
		printf("# bytes received: %llu GPU-direct, %llu through host memory (the plugin's "
		       "counters)\n",
		       bytes_gpu, bytes_host);
	bench_prof_report(o, ends);
	if (o->plot)
		bench_plot_write(&r->run);
}
