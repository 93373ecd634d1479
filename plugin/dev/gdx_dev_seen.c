/* SPDX-License-Identifier: MIT */
/*
 * The ports a discovery saw (gdx_dev_seen.h): what gdx_devs_init() made of
 * each, and the one WARN when it kept none.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dev/gdx_dev_seen.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

/* Every port the last discovery saw, under init's lock. */
static struct gdx_dev_seen gdx_seen[GDX_SEEN_MAX];
static int gdx_nseen;

void gdx_seen_reset(void)
{
	gdx_nseen = 0;
}

const char *gdx_seen_fate_name(enum gdx_seen_fate f)
{
	static const char *const names[] = {
		[GDX_SEEN_TAKEN] = "taken",
		[GDX_SEEN_NOT_ACTIVE] = "not active",
		[GDX_SEEN_LINK] = "neither InfiniBand nor Ethernet",
		[GDX_SEEN_FILTERED] = "left out by the HCA filter",
		[GDX_SEEN_QUERY] = "ibv_query_port failed",
		[GDX_SEEN_OPEN] = "the device would not open",
		[GDX_SEEN_FULL] = "past the table's 64 devices",
	};

	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

const struct gdx_dev_seen *gdx_devs_seen(int *n)
{
	*n = gdx_nseen;
	return gdx_seen;
}

void gdx_seen_add(const char *ibdev, int port, const struct ibv_port_attr *pa,
		  enum gdx_seen_fate fate, int dev)
{
	struct gdx_dev_seen *s;

	if (gdx_nseen == GDX_SEEN_MAX)
		return;
	s = &gdx_seen[gdx_nseen++];
	snprintf(s->ibdev, sizeof(s->ibdev), "%s", ibdev);
	s->port = port;
	s->state = pa ? (int)pa->state : 0;
	s->link_layer = pa ? pa->link_layer : 0;
	s->fate = fate;
	s->dev = dev;
	if (fate == GDX_SEEN_TAKEN)
		return;
	/* what gdx-doctor check calls a rail lost, in the plugin's log too */
	if (port)
		GDX_INFO(fate == GDX_SEEN_FILTERED ? NCCL_NET : NCCL_INIT | NCCL_NET,
			 "%s port %d left out: %s%s%s%s", ibdev, port, gdx_seen_fate_name(fate),
			 pa ? " (" : "", pa ? gdx_port_state_name(pa->state) : "", pa ? ")" : "");
	else
		GDX_INFO(NCCL_INIT | NCCL_NET, "%s left out: %s", ibdev, gdx_seen_fate_name(fate));
}

const char *gdx_port_state_name(int state)
{
	switch (state) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	default: return "state unknown";
	}
}

/* "rxe0:1 rxe1:1 (DOWN)" of the ports seen with that fate (every one when
 * all is set), the state beside one that is not active; cut with "...". */
static void gdx_seen_list(char *buf, size_t len, enum gdx_seen_fate fate, bool all)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < gdx_nseen && off + 1 < len; i++) {
		const struct gdx_dev_seen *s = &gdx_seen[i];
		bool active = s->state == IBV_PORT_ACTIVE;

		if (s->port == 0 || (!all && s->fate != fate))
			continue;
		if (off + 64 > len) {
			snprintf(buf + off, len - off, " ...");
			return;
		}
		off += (size_t)snprintf(buf + off, len - off, "%s%s:%d%s%s%s", off ? " " : "",
					s->ibdev, s->port, active ? "" : " (",
					active ? "" : gdx_port_state_name(s->state),
					active ? "" : ")");
	}
}

/* The one WARN when discovery kept no port: which ports there are, what
 * left each out, and the fix. */
void gdx_seen_none(int nlist, int seen_ports, const struct gdx_name_list *filter)
{
	const char *var = gdx_param_src("HCA") == GDX_PARAM_TWIN ? "NCCL_IB_HCA" : "NCCL_GDX_HCA";
	char ports[512], down[512];
	int kept = 0;

	for (int i = 0; i < gdx_nseen; i++)
		kept += gdx_seen[i].fate != GDX_SEEN_FILTERED && gdx_seen[i].port;
	gdx_seen_list(ports, sizeof(ports), GDX_SEEN_FILTERED, true);
	gdx_seen_list(down, sizeof(down), GDX_SEEN_NOT_ACTIVE, false);
	if (filter->n && !kept)
		GDX_WARN("%s=%s keeps none of the %d port(s) of %d RDMA device(s): %s; fix: name "
			 "one of them, or unset %s",
			 var, GDX_LOG_QUOTED(gdx_params.hca), seen_ports, nlist, ports, var);
	else if (filter->n && down[0])
		GDX_WARN(
			"%s=%s keeps only ports that are not active: %s; fix: bring the link up "
			"(the cable, the switch port, on InfiniBand the subnet manager), or name an "
			"active port",
			var, GDX_LOG_QUOTED(gdx_params.hca), down);
	else if (down[0])
		GDX_WARN(
			"none of %d RDMA device(s) (%d port(s)) has an active port: %s; fix: bring "
			"a link up (the cable, the switch port, on InfiniBand the subnet manager, "
			"on RoCE the netdev's link)",
			nlist, seen_ports, down);
	else
		GDX_WARN("none of %d RDMA device(s) (%d port(s)) has an active port%s%s%s%s", nlist,
			 seen_ports, filter->n ? " passing " : "", filter->n ? var : "",
			 filter->n ? "=" : "", filter->n ? GDX_LOG_QUOTED(gdx_params.hca) : "");
}
