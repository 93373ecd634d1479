/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gdx_test.h"

void gdx_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout); /* what the test printed before it failed, first */
	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

/* A test's exit status that says it did not run here (automake's). */
#define GDX_TEST_SKIP_STATUS 77

void gdx_test_skip(const char *why)
{
	printf("#   skipped: %s\n", why);
	fflush(stdout);
	_exit(GDX_TEST_SKIP_STATUS);
}

static double gdx_test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Returns 0 when the test passed, 1 when it skipped itself; why gets the
 * reason otherwise. */
static int gdx_test_run_one(const struct gdx_test *t, char *why, size_t len)
{
	double start = gdx_test_now();
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0); /* the test's own children die with it on a timeout */
		alarm((unsigned)t->timeout_s);
		t->fn();
		fflush(stdout);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == GDX_TEST_SKIP_STATUS)
		return 1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(why, len, "timed out after %d s", t->timeout_s);
	else if (WIFSIGNALED(status))
		snprintf(why, len, "killed by signal %d (%s) after %.1f s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)), gdx_test_now() - start);
	else
		snprintf(why, len, "exit status %d", WEXITSTATUS(status));
	return -1;
}

int gdx_test_main(int argc, char **argv, const struct gdx_test *tests, int n)
{
	int passed = 0, failed = 0, skipped = 0;

	for (int i = 0; i < n; i++) {
		const struct gdx_test *t = &tests[i];
		bool wanted = argc < 2;
		char why[256];
		double start;

		for (int a = 1; a < argc && !wanted; a++)
			wanted = !strcmp(argv[a], t->name);
		if (wanted && argc < 2 && t->by_name) {
			printf("# %s: not run (%s); run it by name: %s %s\n", t->name, t->by_name,
			       argv[0], t->name);
			continue;
		}
		if (!wanted)
			continue;
		start = gdx_test_now();
		switch (gdx_test_run_one(t, why, sizeof(why))) {
		case 0:
			printf("ok %s (%.2f s)\n", t->name, gdx_test_now() - start);
			passed++;
			break;
		case 1:
			printf("# %s: skipped, counted neither way\n", t->name);
			skipped++;
			break;
		default: printf("not ok %s: %s\n", t->name, why); failed++;
		}
		fflush(stdout);
	}
	if (skipped)
		printf("# %s: %d skipped\n", argv[0], skipped);
	printf("# %s: %d passed, %d failed\n", argv[0], passed, failed);
	return failed ? 1 : 0;
}
