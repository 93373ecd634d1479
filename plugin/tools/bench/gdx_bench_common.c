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
