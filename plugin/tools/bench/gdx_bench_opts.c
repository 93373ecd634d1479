/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench's command line: the options, their letters (perftest's where
 * perftest has the same option, nccl-tests' for the sweep), their ranges,
 * the --help text, and every combination refused before anything runs.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <nccl/net.h>

#include "tools/common/gdx_escape.h"
#include "tools/common/gdx_nearest.h"
#include "tools/common/gdx_plugin_path.h"
#include "tools/bench/gdx_bench_state.h"

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

/*
 * A size: whole bytes, or a number (a fraction allowed) with K, M or G, powers
 * of 1024 as nccl-tests reads them, optionally followed by B or iB: 4096,
 * 64K, 64KB and 64KiB alike, 1.5M. Anything else, a fraction of a byte, or
 * more than BENCH_SIZE_MAX is refused, naming the option.
 */
static size_t bench_parse_size(const char *opt, const char *s)
{
	unsigned long long whole = 0, frac = 0, frac_div = 1, mult = 1, v;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > BENCH_SIZE_MAX)
			goto range;
		whole = whole * 10 + (unsigned long long)(*p - '0');
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			goto bad;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div >= 1000000000ULL)
				goto bad;
			frac = frac * 10 + (unsigned long long)(*p - '0');
			frac_div *= 10;
		}
	}
	switch (toupper((unsigned char)*p)) {
	case 'K': mult = 1ULL << 10, p++; break;
	case 'M': mult = 1ULL << 20, p++; break;
	case 'G': mult = 1ULL << 30, p++; break;
	}
	if (mult > 1 && p[0] == 'i' && p[1] == 'B')
		p += 2;
	else if (*p == 'B')
		p++;
	if (*p)
		goto bad;
	if (whole > BENCH_SIZE_MAX / mult)
		goto range;
	if (frac * mult % frac_div)
		bench_usage_error("%s %s is not a whole number of bytes", opt, s);
	v = whole * mult + frac * mult / frac_div;
	if (v > BENCH_SIZE_MAX)
		goto range;
	return (size_t)v;
bad:
	bench_usage_error("%s %s: not a size (bytes, or with K, M or G: 4096, 64K, 1.5M, 8G; "
			  "64KB and 64KiB are 64K)",
			  opt, s);
range:
	bench_usage_error("%s %s is more than %lluG", opt, s, BENCH_SIZE_MAX >> 30);
}

/* The plugin this program was built or installed with (gdx_plugin_path.h), else
 * the bare name through the library path, as NCCL opens it. */
static const char *bench_default_plugin(void)
{
	static char path[PATH_MAX];

	return gdx_plugin_beside_self(path, sizeof(path)) ? GDX_PLUGIN_FILE : path;
}

static void bench_usage(void)
{
	printf("usage: gdx-bench [options]                    both ends on this machine\n"
	       "       gdx-bench --server [options]           one end, waits for a client\n"
	       "       gdx-bench --client HOST [options]      the other end, on another machine\n"
	       "Drives the plugin through its NCCL API (ncclNetPlugin_v7), as NCCL's proxy does.\n"
	       "Letters as perftest has them (-d, -t, -p, -x, -s, -n, -a) and nccl-tests' sweep\n"
	       "(-b, -e, -f, -w).\n\n"
	       "  -m, --mode MODE      bw: the client streams to the server (default);\n"
	       "                       rate: the same, for message rates of small sizes;\n"
	       "                       lat: ping-pong, half round trips (median, p99);\n"
	       "                       conn: -n connections opened, held and closed in one\n"
	       "                       process: connect time, memory, descriptors, close\n"
	       "  -d, --dev NAME       this end's device (the server's when both are here;\n"
	       "                       default: device 0); a fused device is a+b (see -r)\n"
	       "      --peer-dev NAME  the client's device when both are here (default:\n"
	       "                       device 1, else 0)\n"
	       "  -s, --size BYTES     one message size (default 1M, 8 for lat and rate);\n"
	       "                       sizes are bytes or K, M, G (powers of 1024; KB and\n"
	       "                       KiB alike), up to 1024G; above 1G a size is sent as\n"
	       "                       1G messages, as NCCL posts large transfers (bw, rate)\n"
	       "  -b, --min BYTES      sweep from (with -e, -f), like nccl-tests\n"
	       "  -e, --max BYTES      sweep to, not beyond (-b above -e is refused)\n"
	       "  -f, --factor N       sweep factor (default 2)\n"
	       "  -a, --all            sweep 2 B to 8 MiB, like perftest's -a\n"
	       "  -n, --iters N        timed messages per size (default 1000)\n"
	       "  -w, --warmup N       untimed messages first (default 100)\n"
	       "  -t, --depth N        messages in flight, 1-32 (default 8, as NCCL); in lat,\n"
	       "                       receives posted ahead (perftest's tx depth)\n"
	       "  -P, --procs N        both ends here: 2 processes (default), or 1 thread\n"
	       "                       driving both, as one NCCL proxy thread drives all of a\n"
	       "                       GPU's connections\n"
	       "  -S, --server         wait for a gdx-bench --client on --port, on the address\n"
	       "                       of the interface the plugin's out-of-band traffic\n"
	       "                       takes (NCCL_GDX_SOCKET_IFNAME); it prints a token for\n"
	       "                       the run, which a client must prove it knows; one that\n"
	       "                       does not in 10 s is closed; the client runs what the\n"
	       "                       server was given\n"
	       "  -C, --client HOST    connect to a gdx-bench --server on HOST (with --token)\n"
	       "      --token TOKEN    with -C: the token the server printed; - reads it from\n"
	       "                       standard input (every user of a node sees its\n"
	       "                       command lines)\n"
	       "  -p, --port N         the side channel's TCP port (default 18517)\n"
	       "      --wait SECONDS   how long a client keeps trying the server (default 30)\n"
	       "      --interval S     bw, rate: also print the rate of every S seconds as it\n"
	       "                       runs (lines starting with #)\n"
	       "  -x, --gid-index N    the RoCE GID index (NCCL_GDX_GID_INDEX), as perftest's -x\n"
	       "  -r, --rails SPEC     fuse devices into rails (NCCL_GDX_RAILS syntax, e.g.\n"
	       "                       mlx5_0+mlx5_1); then name the fused device with -d\n"
	       "  -M, --mem KIND       host (default) or cuda: buffers in GPU memory, for\n"
	       "                       devices with the GPUDirect RDMA path\n"
	       "      --gpu N          the GPU for --mem cuda (default 0)\n"
	       "      --plugin PATH    the plugin (default: libnccl-net-gdx.so beside this\n"
	       "                       program, else in ../lib, else from the library path)\n"
	       "      --profiler       through the v10 table, with a profiler callback that\n"
	       "                       counts the plugin's events and a profiler handle to\n"
	       "                       every isend and irecv: what reporting them costs\n"
	       "  -j, --json           one JSON object instead of the table\n"
	       "      --plot FILE.svg  also draw the sweep as SVG: bandwidth, and time per\n"
	       "                       message (lat: the median), against the size\n"
	       "      --plot-ref FILE  figures drawn beside the run's, up to %d files: JSON as\n"
	       "                       -j prints it; {\"label\": \"ib_write_bw\", \"results\":\n"
	       "                       [{\"bytes\": 65536, \"Gbps\": 90.1}]} is enough\n"
	       "                       (\"median_us\" for a latency; label: the file's name)\n"
	       "      --plot-from FILE plot an earlier -j run's JSON, measuring nothing\n"
	       "  -v, --verbose        the plugin's file:line on its lines, and the call of\n"
	       "                       its table that failed (NCCL_DEBUG=INFO does too)\n"
	       "  -V, --version        the version\n"
	       "  -h, --help\n\n"
	       "GB/s is 10^9 bytes per second, as nccl-tests reports; Gb/s beside it.\n"
	       "exit status: 0 every size ran; 2 a runtime failure, broken (the plugin, a\n"
	       "device, the other end; 1 up to 0.4.5); 3 a --plugin that cannot be loaded or is not an NCCL net plugin,\n"
	       "or a --plot-ref or --plot-from file that cannot be read or is not figures; 64\n"
	       "a bad command line; 70 the --plot file cannot be written (the codes of\n"
	       "gdx-doctor's table).\n",
	       BENCH_PLOT_REFS);
}

/* A whole number for an option, from min to max: "--iters must be a number"
 * for what is none, "--iters 0 is out of range 1-2147483647" for one
 * outside (strtol's overflow included). */
static int bench_int(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || (errno && errno != ERANGE))
		bench_usage_error("%s must be a number, not \"%s\"", what, s);
	if (errno == ERANGE || v < min || v > max)
		bench_usage_error("%s %s is out of range %ld-%ld", what, s, min, max);
	return (int)v;
}

/* --plot writes SVG and nothing else: a name that promises another format
 * (x.png, a name without one) is refused rather than filled with SVG. */
static int bench_svg_name(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && !strcasecmp(path + n - 4, ".svg") && path[n - 5] != '/';
}

/* --token: 32 hex digits, from the argument or (-) standard input's first
 * line, into the 16 bytes of the token. */
static void bench_token(const char *arg, uint8_t token[16])
{
	char line[128];
	size_t n;

	if (!strcmp(arg, "-")) {
		if (!fgets(line, sizeof(line), stdin))
			bench_usage_error("--token -: nothing on standard input");
		line[strcspn(line, "\r\n")] = '\0';
		arg = line;
	}
	n = strlen(arg);
	for (size_t i = 0; i < 32 && i < n; i++)
		if (!isxdigit((unsigned char)arg[i]))
			n = 0;
	if (n != 32)
		bench_usage_error("--token: not a token (32 hex digits, as the server printed it)");
	for (int i = 0; i < 16; i++) {
		unsigned v;

		sscanf(arg + 2 * i, "%2x", &v);
		token[i] = (uint8_t)v;
	}
}

/* Settings the plugin reads at init, given as options. */
static void bench_setenv(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		bench_die("setenv %s: %s", name, strerror(errno));
}

/* An unknown --name, escaped, with the option meant when one is near it
 * (gdx_nearest.h, as gdx-doctor has it): "--itres; did you mean --iters?". */
static void bench_unknown(const char *arg, const struct option *longopts)
{
	const char *names[64], *near = NULL;
	char shown[GDX_ESCAPE_LEN(80)];
	int n = 0;

	for (const struct option *l = longopts; l->name && n < 64; l++)
		names[n++] = l->name;
	if (!strncmp(arg, "--", 2))
		near = gdx_nearest(arg + 2, strcspn(arg + 2, "="), names, n);
	gdx_escape(GDX_ESCAPE_TEXT, arg, shown, sizeof(shown));
	if (near)
		bench_usage_error("unknown option %s; did you mean --%s?", shown, near);
	bench_usage_error("unknown option %s", shown);
}

int bench_opts_parse(int argc, char **argv, struct bench_opts *out)
{
	enum {
		OPT_PEER_DEV = 256,
		OPT_GPU,
		OPT_PLUGIN,
		OPT_WAIT,
		OPT_INTERVAL,
		OPT_PLOT,
		OPT_PLOT_REF,
		OPT_PLOT_FROM,
		OPT_PROFILER,
		OPT_TOKEN
	};
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"dev", required_argument, NULL, 'd'},
		{"peer-dev", required_argument, NULL, OPT_PEER_DEV},
		{"size", required_argument, NULL, 's'},
		{"min", required_argument, NULL, 'b'},
		{"max", required_argument, NULL, 'e'},
		{"factor", required_argument, NULL, 'f'},
		{"all", no_argument, NULL, 'a'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"depth", required_argument, NULL, 't'},
		{"procs", required_argument, NULL, 'P'},
		{"server", no_argument, NULL, 'S'},
		{"client", required_argument, NULL, 'C'},
		{"port", required_argument, NULL, 'p'},
		{"wait", required_argument, NULL, OPT_WAIT},
		{"token", required_argument, NULL, OPT_TOKEN},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"gid-index", required_argument, NULL, 'x'},
		{"rails", required_argument, NULL, 'r'},
		{"mem", required_argument, NULL, 'M'},
		{"gpu", required_argument, NULL, OPT_GPU},
		{"plugin", required_argument, NULL, OPT_PLUGIN},
		{"profiler", no_argument, NULL, OPT_PROFILER},
		{"json", no_argument, NULL, 'j'},
		{"plot", required_argument, NULL, OPT_PLOT},
		{"plot-ref", required_argument, NULL, OPT_PLOT_REF},
		{"plot-from", required_argument, NULL, OPT_PLOT_FROM},
		{"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct bench_opts o = {.min_size = 0,
			       .max_size = 0,
			       .factor = 2,
			       .iters = 1000,
			       .warmup = 100,
			       .depth = 8,
			       .mode = BENCH_BW,
			       .procs = 2,
			       .role = BENCH_LOCAL,
			       .port = 18517,
			       .wait = 30};
	const char *min_arg = NULL, *max_arg = NULL, *token = NULL;
	int c, sized = 0;

	opterr = 0; /* the messages below say it once, on standard error */
	while ((c = getopt_long(argc, argv, ":m:d:s:b:e:f:an:w:t:P:SC:p:x:r:M:jvVh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "bw"))
				o.mode = BENCH_BW;
			else if (!strcmp(optarg, "rate"))
				o.mode = BENCH_RATE;
			else if (!strcmp(optarg, "lat"))
				o.mode = BENCH_LAT;
			else if (!strcmp(optarg, "conn"))
				o.mode = BENCH_CONN;
			else
				bench_usage_error(
					"--mode must be bw, rate, lat or conn, not \"%s\"", optarg);
			break;
		case 'd': o.dev = optarg; break;
		case OPT_PEER_DEV: o.peer_dev = optarg; break;
		case 's':
			o.min_size = o.max_size = bench_parse_size("-s", optarg);
			min_arg = max_arg = NULL;
			sized = 1;
			break;
		case 'b':
			o.min_size = bench_parse_size("-b", optarg);
			min_arg = optarg;
			sized = 1;
			break;
		case 'e':
			o.max_size = bench_parse_size("-e", optarg);
			max_arg = optarg;
			sized = 1;
			break;
		case 'f': o.factor = bench_int(optarg, "--factor", 2, INT_MAX); break;
		case 'a':
			o.min_size = 2;
			o.max_size = 8 << 20;
			min_arg = max_arg = NULL;
			sized = 1;
			break;
		case 'n': o.iters = bench_int(optarg, "--iters", 1, INT_MAX); break;
		case 'w': o.warmup = bench_int(optarg, "--warmup", 0, INT_MAX); break;
		case 't': o.depth = bench_int(optarg, "--depth", 1, NCCL_NET_MAX_REQUESTS); break;
		case 'P': o.procs = bench_int(optarg, "--procs", 1, 2); break;
		case 'S': o.role = BENCH_SERVER; break;
		case 'C':
			o.role = BENCH_CLIENT;
			o.host = optarg;
			break;
		case 'p': o.port = bench_int(optarg, "--port", 1, 65535); break;
		case OPT_WAIT: o.wait = bench_int(optarg, "--wait", 0, INT_MAX); break;
		case OPT_TOKEN: token = optarg; break;
		case OPT_INTERVAL: {
			char *end;

			o.interval = strtod(optarg, &end);
			if (*end || !(o.interval > 0) || o.interval > 3600)
				bench_usage_error("--interval %s: seconds, above 0 and up to 3600",
						  optarg);
			break;
		}
		case 'x':
			bench_int(optarg, "--gid-index", 0, 255);
			bench_setenv("NCCL_GDX_GID_INDEX", optarg); /* read by the plugin's init */
			break;
		case 'r':
			bench_setenv("NCCL_GDX_RAILS", optarg);
			o.rails = 1;
			break;
		case 'M':
			if (!strcmp(optarg, "host"))
				o.cuda = 0;
			else if (!strcmp(optarg, "cuda"))
				o.cuda = 1;
			else
				bench_usage_error("--mem must be host or cuda, not \"%s\"", optarg);
			break;
		case OPT_GPU: o.gpu = bench_int(optarg, "--gpu", 0, INT_MAX); break;
		case OPT_PLUGIN: o.plugin = optarg; break;
		case OPT_PROFILER: o.profiler = 1; break;
		case 'j': o.json = 1; break;
		case 'v': o.verbose = 1; break;
		case OPT_PLOT: o.plot = optarg; break;
		case OPT_PLOT_REF:
			if (o.plot_nrefs == BENCH_PLOT_REFS)
				bench_usage_error("--plot-ref at most %d times", BENCH_PLOT_REFS);
			o.plot_refs[o.plot_nrefs++] = optarg;
			break;
		case OPT_PLOT_FROM: o.plot_from = optarg; break;
		case 'V': printf("gdx-bench %s\n", GDX_VERSION); return 0;
		case 'h': bench_usage(); return 0;
		case ':': bench_usage_error("%s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				bench_usage_error("unknown option -%c", optopt);
			bench_unknown(argv[optind - 1], longopts);
		}
	}
	if (optind < argc)
		bench_usage_error("unexpected argument \"%s\"", argv[optind]);
	if (!sized)
		o.min_size = o.max_size = o.mode == BENCH_BW ? 1 << 20 : 8;
	if (min_arg && max_arg && o.min_size > o.max_size)
		bench_usage_error("-b %s is above -e %s", min_arg, max_arg);
	if (o.max_size < o.min_size)
		o.max_size = o.min_size; /* -b alone: that one size */
	if (o.mode == BENCH_LAT && o.max_size > BENCH_MSG_MAX)
		bench_usage_error("lat takes sizes up to 1G: one message each way");
	if (!o.plugin)
		o.plugin = bench_default_plugin();
	if (o.plot && !bench_svg_name(o.plot))
		bench_usage_error("--plot %s: gdx-bench draws SVG only; give a name ending in .svg",
				  o.plot);
	if ((o.plot_from || o.plot_nrefs) && !o.plot)
		bench_usage_error("%s needs --plot FILE.svg",
				  o.plot_from ? "--plot-from" : "--plot-ref");
	if (o.plot && !o.plot_from && o.role == BENCH_CLIENT)
		bench_usage_error(
			"--plot goes to the server, which measures (gdx-bench -S --plot FILE)");
	if (o.plot && !o.plot_from && o.mode == BENCH_CONN)
		bench_usage_error("--plot draws the bw, rate and lat sweeps, not --mode conn");
	/* the token last: "-" reads standard input, once the rest is known good */
	if (token && o.role != BENCH_CLIENT)
		bench_usage_error("--token is the client's (-C): the server makes its own");
	if (o.role == BENCH_CLIENT && !token)
		bench_usage_error("--client needs --token: the one the server printed");
	if (token)
		bench_token(token, o.token);
	*out = o;
	return 1;
}
