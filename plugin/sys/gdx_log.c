/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sys/gdx_env.h"
#include "sys/gdx_log.h"

static ncclDebugLogger_t gdx_logger;
/* The tee and the one thread whose lines it takes. Not thread-local
 * storage: __thread in a module needs __tls_get_addr, a dependency on the
 * dynamic loader the plugin has no other use for. Set and cleared by that
 * thread alone; other threads only read them, atomically. */
static gdx_log_tee_fn gdx_tee_fn;
static void *gdx_tee_arg;
static pthread_t gdx_tee_thread;

void gdx_log_set(ncclDebugLogger_t fn)
{
	gdx_logger = fn;
}

void gdx_log_tee(gdx_log_tee_fn fn, void *arg)
{
	if (!fn) {
		__atomic_store_n(&gdx_tee_fn, NULL, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&gdx_tee_thread, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&gdx_tee_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&gdx_tee_fn, fn, __ATOMIC_RELEASE);
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
	char buf[1024], line_out[2048];
	gdx_log_tee_fn tee;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One line of printable ASCII, whatever the values it names hold: an
	 * NCCL_GDX_* value, a path or a name from the environment cannot add a
	 * line to the job's log nor act on the terminal that shows it. The
	 * plugin's own words are printable ASCII and stay as they are. */
	gdx_log_sanitize(line_out, sizeof(line_out), buf, sizeof(buf));

	tee = __atomic_load_n(&gdx_tee_fn, __ATOMIC_ACQUIRE);
	if (tee &&
	    pthread_equal(__atomic_load_n(&gdx_tee_thread, __ATOMIC_RELAXED), pthread_self()))
		tee(__atomic_load_n(&gdx_tee_arg, __ATOMIC_RELAXED), level, line_out);
	if (gdx_logger)
		gdx_logger(level, flags, where, line, "%s", line_out);
	else if ((int)level <= gdx_log_stderr_level())
		fprintf(stderr, "%s%s\n", level == NCCL_LOG_WARN ? "WARN " : "", line_out);
	errno = saved;
}

char *gdx_log_sanitize(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	static const char hex[] = "0123456789abcdef";
	size_t out = 0;

	if (!dst_len)
		return dst;
	for (size_t i = 0; i < src_len && src[i]; i++) {
		unsigned char ch = (unsigned char)src[i];

		if (ch >= 0x20 && ch < 0x7f) {
			if (out + 1 >= dst_len)
				break;
			dst[out++] = (char)ch;
		} else {
			if (out + 4 >= dst_len)
				break;
			dst[out++] = '\\';
			dst[out++] = 'x';
			dst[out++] = hex[ch >> 4];
			dst[out++] = hex[ch & 15];
		}
	}
	dst[out] = '\0';
	return dst;
}

const char *gdx_log_quote(char *buf, size_t len, const char *name)
{
	static const char hex[] = "0123456789abcdef";
	size_t out = 0;

	if (len < 3) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	buf[out++] = '"';
	/* room kept for the closing quote and the terminator */
	for (; *name; name++) {
		unsigned char ch = (unsigned char)*name;
		char one[4];
		size_t n = 0;

		if (ch == '"' || ch == '\\') {
			one[n++] = '\\';
			one[n++] = (char)ch;
		} else if (ch >= 0x20 && ch < 0x7f) {
			one[n++] = (char)ch;
		} else {
			one[n++] = '\\';
			one[n++] = 'x';
			one[n++] = hex[ch >> 4];
			one[n++] = hex[ch & 15];
		}
		if (out + n + 2 > len)
			break;
		memcpy(buf + out, one, n);
		out += n;
	}
	buf[out++] = '"';
	buf[out] = '\0';
	return buf;
}
