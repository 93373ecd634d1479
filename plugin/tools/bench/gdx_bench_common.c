/* SPDX-License-Identifier: MIT */
/*
 * What every gdx-bench file shares: how the program fails (one line on
 * standard error, then the exit status), and, with both ends here in two
 * processes, the other process, so that only the first to fail says why.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench/gdx_bench_state.h"

/* Both ends here in two processes: the other process (the client in the
 * server, the server in the client); 0 otherwise. */
static pid_t bench_other;
static int bench_is_client_process;

void bench_other_set(pid_t other, int is_client)
{
	bench_other = other;
	bench_is_client_process = is_client;
}

void bench_client_check_server(void)
{
	if (bench_is_client_process && getppid() != bench_other)
		_exit(BENCH_EXIT_FAIL);
}

void bench_server_check_client(int grace_ms)
{
	int status;

	if (!bench_other || bench_is_client_process)
		return;
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(bench_other, &status, WNOHANG);

		if (r == bench_other)
			break;
		if (waited >= grace_ms)
			return;
		usleep(10000);
	}
	bench_other = 0;
	if (WIFEXITED(status))
		exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : BENCH_EXIT_FAIL);
	bench_die("the client process was killed by signal %d", WTERMSIG(status));
}

static void bench_vfail(int status, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0), noreturn));
static void bench_vfail(int status, const char *fmt, va_list ap)
{
	bench_client_check_server();
	/* The client may be failing at this moment, first: then its line is
	 * the one to read. Otherwise it goes, before it can add its own. */
	bench_server_check_client(200);
	if (bench_other && !bench_is_client_process) {
		kill(bench_other, SIGKILL);
		waitpid(bench_other, NULL, 0);
		bench_other = 0;
	}
	fprintf(stderr, "gdx-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bench_vfail(BENCH_EXIT_FAIL, fmt, ap);
}

void bench_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bench_vfail(status, fmt, ap);
}

void bench_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gdx-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntry 'gdx-bench --help'\n", stderr);
	exit(BENCH_EXIT_USAGE);
}

static int bench_debug;
static char bench_link[160];

void bench_set_verbose(int on)
{
	bench_debug = on;
}

int bench_verbose(void)
{
	const char *d = getenv("NCCL_DEBUG");

	return bench_debug || (d && (!strcasecmp(d, "INFO") || !strcasecmp(d, "TRACE")));
}

void bench_set_link(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(bench_link, sizeof(bench_link), fmt, ap);
	va_end(ap);
}

/* ncclResult_t's values, as NCCL's ncclGetErrorString words them. */
static const char *bench_result_words(int r)
{
	static const char *const words[] = {
		"no error",
		"a CUDA error",
		"a system error",
		"an internal error",
		"an invalid argument",
		"an invalid usage",
		"a network error, or the other end exited",
	};

	return r >= 0 && r < (int)(sizeof(words) / sizeof(words[0])) ? words[r] : "an error";
}

/* The plugin table's member a call names: "e->net->test(r, ...)": "test". */
static void bench_call_name(const char *call, char *name, size_t len)
{
	const char *open = strchr(call, '('), *start = call;

	for (const char *p = call; open && p < open; p++)
		if (p[0] == '-' && p[1] == '>')
			start = p + 2;
	snprintf(name, len, "%.*s", open ? (int)(open - start) : (int)strlen(start), start);
}

void bench_net_fail(const char *call, int result)
{
	static const struct {
		const char *call, *what;
	} calls[] = {
		{"init", "the plugin did not start"},
		{"devices", "the plugin could not list its devices"},
		{"getProperties", "the plugin could not describe a device"},
		{"listen", "the plugin could not listen for the other end"},
		{"connect", "CONN"},
		{"accept", "CONN"},
		{"regMr", "the plugin could not register the buffers"},
		{"deregMr", "the plugin could not release the buffers"},
		{"isend", "LINK"},
		{"irecv", "LINK"},
		{"test", "LINK"},
		{"closeSend", "the plugin could not close a connection"},
		{"closeRecv", "the plugin could not close a connection"},
		{"closeListen", "the plugin could not close a connection"},
	};
	const char *what = "the plugin failed";
	char name[64], debug[320] = "", words[256];

	bench_call_name(call, name, sizeof(name));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(calls[i].call, name))
			what = calls[i].what;
	if (!strcmp(what, "CONN") || !strcmp(what, "LINK")) {
		snprintf(words, sizeof(words), "the connection %s %s failed%s",
			 strchr(bench_link, ' ') && strstr(bench_link, " and ") ? "between" : "to",
			 bench_link[0] ? bench_link : "the other end",
			 what[0] == 'C' ? " to open" : "");
		what = words;
	}
	if (bench_verbose())
		snprintf(debug, sizeof(debug), " [%s failed: ncclResult %d]", call, result);
	bench_die("%s (%s%s)%s", what, bench_result_words(result),
		  result == 2 || result == 3 || result == 6 ? "; the plugin's line above says why"
							    : "",
		  debug);
}
