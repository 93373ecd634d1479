/* SPDX-License-Identifier: MIT */
/* What connection setup leaves open, closed (gdx_conn.h). */
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_conn.h"
#include "conn/gdx_connect.h"
#include "conn/gdx_listen.h"
#include "comm/gdx_registry.h"

int gdx_conn_close_owned(struct gdx_ctx *ctx)
{
	int closed = 0;

	for (;;) {
		const void *victim;

		victim = gdx_registry_find_owned(ctx);
		if (!victim)
			break;
		switch (*(const uint32_t *)victim) {
		case GDX_KIND_LISTEN: gdx_close_listen((struct gdx_listen_comm *)victim); break;
		case GDX_KIND_SEND: gdx_close_send((struct gdx_send_comm *)victim); break;
		default: gdx_close_recv(gdx_recv_comm_of((struct gdx_comm *)victim)); break;
		}
		closed++;
	}
	return closed + gdx_connects_close_owned(ctx);
}

void gdx_conn_fini(void)
{
	gdx_connects_fini();
	gdx_registry_fini();
}
