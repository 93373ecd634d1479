/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gdx/gdx_env.h>
#include <gdx/gdx_log.h>

static ncclDebugLogger_t gdx_logger;

void gdx_log_set(ncclDebugLogger_t fn)
{
	gdx_logger = fn;
}

/* Without NCCL's logger, follow NCCL_DEBUG so the programs print what NCCL would. */
static int gdx_log_stderr_level(void)
{
	const char *s = gdx_env(GDX_ENV_DEBUG);

	if (!s)
		return NCCL_LOG_WARN;
	if (!strcasecmp(s, "TRACE"))
		return NCCL_LOG_TRACE;
	if (!strcasecmp(s, "INFO"))
		return NCCL_LOG_INFO;
	if (!strcasecmp(s, "VERSION"))
		return NCCL_LOG_VERSION;
	return NCCL_LOG_WARN;
}

void gdx_log(ncclDebugLogLevel level, unsigned long flags, const char *where, int line,
	     const char *fmt, ...)
{
	int saved = errno;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);

	if (gdx_logger)
		gdx_logger(level, flags, where, line, "%s", buf);
	else if ((int)level <= gdx_log_stderr_level())
		fprintf(stderr, "%s%s\n", level == NCCL_LOG_WARN ? "WARN " : "", buf);
	errno = saved;
}
