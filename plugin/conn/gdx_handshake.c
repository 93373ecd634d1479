/* SPDX-License-Identifier: MIT */
/* What the two ends of the handshake share (gdx_handshake.h). */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

#include "conn/gdx_handshake.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "conn/gdx_setup.h"
#include "sys/gdx_time.h"

bool gdx_conn_state_step(const char *machine, const char *const *names, int n, int from, int to,
			 const char *peer)
{
	if (from >= 0 && to == from + 1 && to < n) {
		GDX_TRACE(NCCL_NET, "%s %s: %s -> %s", machine, peer, names[from], names[to]);
		return true;
	}
	GDX_WARN("%s %s: state %s cannot move to %s (a bug in the plugin's handshake)", machine,
		 peer, from >= 0 && from < n ? names[from] : "?",
		 to >= 0 && to < n ? names[to] : "?");
	return false;
}

/* gdx_now_ms(), or a test's (gdx_conn_test_clock). */
static uint64_t (*gdx_conn_clock)(void);

void gdx_conn_test_clock(uint64_t (*now_ms)(void))
{
	__atomic_store_n(&gdx_conn_clock, now_ms, __ATOMIC_RELEASE);
}

uint64_t gdx_conn_now(void)
{
	uint64_t (*now_ms)(void) = __atomic_load_n(&gdx_conn_clock, __ATOMIC_ACQUIRE);

	return now_ms ? now_ms() : gdx_now_ms();
}

int gdx_hello_ms(void)
{
	return gdx_params.hello_timeout_ms < gdx_params.handshake_timeout_ms
		       ? gdx_params.hello_timeout_ms
		       : gdx_params.handshake_timeout_ms;
}

const char *gdx_fd_hint(int err, char *buf, size_t len)
{
	struct rlimit rl;

	buf[0] = '\0';
	if ((err == -EMFILE || err == -ENFILE) && !getrlimit(RLIMIT_NOFILE, &rl))
		snprintf(buf, len,
			 "; each connection holds 2 descriptors: raise the process's limit "
			 "(ulimit -n, now %llu)",
			 (unsigned long long)rl.rlim_cur);
	return buf;
}

void gdx_xfer_set(struct gdx_xfer *x, void *buf, size_t len)
{
	x->buf = buf;
	x->len = len;
	x->off = 0;
}

const char *gdx_rails_note(const struct gdx_comm *c, uint32_t peer_members, char *buf, size_t len)
{
	char features[160];
	int off;

	off = snprintf(buf, len, "%s", gdx_setup_features(c, features, sizeof(features)));
	if ((uint32_t)c->nmembers != peer_members && off > 0 && (size_t)off < len)
		off += snprintf(buf + off, len - (size_t)off,
				" (%d NIC(s) here, %u there: one rail per NIC of the larger end)",
				c->nmembers, peer_members);
	if (c->ch.qps_per_rail != gdx_params.qps_per_connection && off > 0 && (size_t)off < len)
		snprintf(buf + off, len - (size_t)off,
			 " (%d QP(s) per rail asked for here: the ends' larger count, within %d in "
			 "all)",
			 gdx_params.qps_per_connection, GDX_MAX_QPS);
	return buf;
}
