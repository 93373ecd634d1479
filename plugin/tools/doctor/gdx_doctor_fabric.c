/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's fabric part: what a connection on each port gets from
 * the plugin (QPs, adaptive routing, relaxed ordering, ECE, failover), from
 * the same parameter table and the same probes the plugin runs at init, so
 * that the answer is the plugin's, not a guess about it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "dev/gdx_dev.h"
#include "rail/gdx_ece.h"
#include "sys/gdx_param.h"

#include "tools/common/gdx_ece_probe.h"
#include "tools/doctor/gdx_doctor.h"

struct fabric_port {
	bool ar;
	char ro[96];
	char ece[96];
};

static struct ibv_context *fabric_open(const char *dev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static void fabric_probe(const struct doctor_fabric_port *p, bool live, struct fabric_port *out)
{
	struct ibv_context *ctx = live ? fabric_open(p->dev) : NULL;
	struct ibv_ece ece;
	int ret;

	out->ar = gdx_dev_ar_default(p->ib ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET);
	if (gdx_params.pci_relaxed_ordering != 2) {
		snprintf(out->ro, sizeof(out->ro), "%s (NCCL_GDX_PCI_RELAXED_ORDERING=%d)",
			 gdx_params.pci_relaxed_ordering ? "on" : "off",
			 gdx_params.pci_relaxed_ordering);
	} else if (!ctx) {
		snprintf(out->ro, sizeof(out->ro), "not probed (%s)",
			 live ? "the device does not open" : "not this machine's devices");
	} else {
		ret = gdx_dev_ro_takes(ctx);
		snprintf(out->ro, sizeof(out->ro), "%s (the provider %s%s)", ret > 0 ? "on" : "off",
			 ret > 0 ? "takes it" : "refuses it: ", ret > 0 ? "" : strerror(-ret));
	}
	if (!gdx_params.ece_enable) {
		snprintf(out->ece, sizeof(out->ece), "off (NCCL_GDX_ECE_ENABLE=0)");
	} else if (!ctx) {
		snprintf(out->ece, sizeof(out->ece), "not probed (%s)",
			 live ? "the device does not open" : "not this machine's devices");
	} else {
		ret = gdx_ece_probe(ctx, &ece);
		if (!ret)
			snprintf(out->ece, sizeof(out->ece),
				 "negotiated (vendor 0x%x, options 0x%x)", ece.vendor_id,
				 ece.options);
		else
			snprintf(out->ece, sizeof(out->ece), "off (%s: %s)",
				 ret == EOPNOTSUPP || ret == ENOTSUP ? "the provider has none"
								     : "cannot be read",
				 strerror(ret));
	}
	if (ctx)
		ibv_close_device(ctx);
}

static const char *fabric_src(const char *name)
{
	switch (gdx_param_src(name)) {
	case GDX_PARAM_OURS: return "set";
	case GDX_PARAM_TWIN: return "NCCL's";
	default: return "default";
	}
}

static void fabric_human(FILE *f, const struct doctor_fabric_port *ports, int n, bool live)
{
	fputs("\nFabric (what each connection gets)\n", f);
	fprintf(f, "  QPs per rail    %d (%s), %s\n", gdx_params.qps_per_connection,
		fabric_src("QPS_PER_CONNECTION"),
		gdx_params.split_data_on_qps ? "each message split over them"
					     : "messages over them in turn");
	fprintf(f, "  striping        %s\n",
		gdx_params.stripe_weighted ? "weighted by what each rail delivers"
					   : "even (NCCL_GDX_STRIPE_WEIGHTED=0)");
	if (gdx_params.failover)
		fprintf(f,
			"  failover        on: a fused device's failed rail is taken out, "
			"its traffic re-sent on the others; %s\n",
			gdx_params.recovery_max_ms ? "brought back when its port is"
						   : "never brought back (RECOVERY_MAX_MS=0)");
	else
		fputs("  failover        off: a failed rail fails its connections "
		      "(NCCL_GDX_FAILOVER=0)\n",
		      f);
	if (!n)
		return;
	fprintf(f, "  %-10s %-4s %-4s %-42s %s\n", "DEVICE", "PORT", "AR", "RELAXED ORDERING",
		"ECE");
	for (int i = 0; i < n; i++) {
		struct fabric_port fp;

		fabric_probe(&ports[i], live, &fp);
		fprintf(f, "  %-10s %-4d %-4s %-42s %s\n", ports[i].dev, ports[i].port,
			fp.ar ? "on" : "off", fp.ro, fp.ece);
	}
}

static void fabric_json(FILE *f, const struct doctor_fabric_port *ports, int n, bool live)
{
	fprintf(f,
		",\n \"fabric\": {\"qps_per_connection\": %d, \"split_data_on_qps\": %s, "
		"\"stripe_weighted\": %s, \"failover\": %s, \"recovery_max_ms\": %d, "
		"\"ports\": [",
		gdx_params.qps_per_connection, gdx_params.split_data_on_qps ? "true" : "false",
		gdx_params.stripe_weighted ? "true" : "false",
		gdx_params.failover ? "true" : "false", gdx_params.recovery_max_ms);
	for (int i = 0; i < n; i++) {
		struct fabric_port fp;

		fabric_probe(&ports[i], live, &fp);
		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "device", ports[i].dev);
		fprintf(f, ", \"port\": %d, \"adaptive_routing\": %s, ", ports[i].port,
			fp.ar ? "true" : "false");
		json_key_str(f, "relaxed_ordering", fp.ro);
		fputs(", ", f);
		json_key_str(f, "ece", fp.ece);
		fputs("}", f);
	}
	fputs("]}", f);
}

void doctor_fabric_report(FILE *f, bool json, const struct doctor_fabric_port *ports, int n,
			  bool live)
{
	/* values init refuses are the check's problems already; here the
	 * defaults stand in for them */
	gdx_params_load();
	if (json)
		fabric_json(f, ports, n, live);
	else
		fabric_human(f, ports, n, live);
}
