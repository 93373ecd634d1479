/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's report: the tables a person reads (ports, host, fabric,
 * GPUs, NICs, GPU-NIC pairs, problems, the result), or one JSON object with
 * all of it, which fleet compares between nodes.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_facts.h"
#include "gdr/gdx_gdr_verdict.h"
#include "topo/gdx_topo.h"
#include "wire/gdx_wire.h"
#include <nccl/net_common.h>

#include "tools/doctor/gdx_doctor_check.h"

/* The fabric part (gdx_doctor_fabric.c), for the active ports; its probes
 * need the devices, so a fixture tree gets the parameters only. */
static void check_fabric(const struct check *c, FILE *f, bool json)
{
	struct doctor_fabric_port fp[CHECK_MAX_PORTS];
	int n = 0;

	for (int i = 0; i < c->nports; i++) {
		if (!c->ports[i].active)
			continue;
		fp[n].dev = c->ports[i].dev;
		fp[n].port = c->ports[i].port;
		fp[n].ib = !strcmp(c->ports[i].link, "InfiniBand");
		n++;
	}
	doctor_fabric_report(f, json, fp, n, c->live);
}

/* The NCCL device(s) a port the plugin took is, and the PCI function each
 * does its DMA through: the NIC's own, or its Data Direct DMA function. */
static void check_port_function(const struct gdx_start_port *sp, char *buf, size_t len)
{
	if (sp->dd_dev < 0)
		snprintf(buf, len, "device %d, its own function", sp->seen.dev);
	else if (sp->dd_dev == sp->seen.dev)
		snprintf(buf, len, "device %d, Data Direct DMA function %s", sp->seen.dev,
			 sp->dd_fn);
	else
		snprintf(buf, len,
			 "device %d, its own function; device %d, Data Direct DMA function %s",
			 sp->seen.dev, sp->dd_dev, sp->dd_fn);
}

/* What the plugin's start-up made of the port: "device 0" (with its PCI
 * function in words, for the table; JSON says it in data_direct_function),
 * "left out: not active"; "-" where it did not run here (a saved tree) or
 * did not start. */
static void check_port_plugin(const struct check *c, const struct check_port *cp, bool words,
			      char *buf, size_t len)
{
	const struct gdx_start_port *sp = check_start_port(c, cp->dev, cp->port);

	if (!sp)
		snprintf(buf, len, "%s", c->start && !c->start->result ? "not seen" : "-");
	else if (sp->seen.fate == GDX_SEEN_TAKEN && !c->start->result && words)
		check_port_function(sp, buf, len);
	else if (sp->seen.fate == GDX_SEEN_TAKEN && !c->start->result && sp->dd_dev >= 0 &&
		 sp->dd_dev != sp->seen.dev)
		snprintf(buf, len, "device %d; device %d", sp->seen.dev, sp->dd_dev);
	else if (sp->seen.fate == GDX_SEEN_TAKEN && !c->start->result)
		snprintf(buf, len, "device %d", sp->seen.dev);
	else if (sp->seen.fate == GDX_SEEN_TAKEN)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "left out: %s", gdx_seen_fate_name(sp->seen.fate));
}

static const char *const check_status_names[] = {"healthy", "degraded", "broken"};
static const char *const check_level_names[] = {"note", "degraded", "broken"};

static void check_attr(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v < 0 ? "?" : v ? "yes" : "no");
}

static void check_bytes(uint64_t b, char *buf, size_t len)
{
	if (!b)
		snprintf(buf, len, "?");
	else if (b == GDX_GDR_MEMLOCK_INFINITY)
		snprintf(buf, len, "unlimited");
	else if (b >= (1ULL << 30))
		snprintf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
	else if (b >= (1ULL << 20))
		snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
}

static void check_dmabuf_probe(const struct gdx_gdr_nic *nic, char *buf, size_t len)
{
	const char *e = gdx_gdr_errno_name(nic->dmabuf_errno);

	if (nic->dmabuf < 0)
		snprintf(buf, len, "not probed");
	else if (e)
		snprintf(buf, len, "%s (%s)", nic->dmabuf ? "ok" : "refused", e);
	else
		snprintf(buf, len, "%s (errno %d)", nic->dmabuf ? "ok" : "refused",
			 nic->dmabuf_errno);
}

/* The IOMMU of a pair: the translating side if any, else the GPU's mode. */
static const char *check_pair_iommu(const struct gdx_gdr_gpu *g, const struct gdx_gdr_nic *n)
{
	if (g->iommu == GDX_GDR_IOMMU_TRANSLATING)
		return g->iommu_type;
	if (n->iommu == GDX_GDR_IOMMU_TRANSLATING)
		return n->iommu_type;
	return gdx_gdr_iommu_name(g->iommu);
}

static void check_degraded(unsigned d, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", d & GDX_GDR_DEG_ACS ? " ACS" : "",
		 d & GDX_GDR_DEG_IOMMU ? " IOMMU" : "", d & GDX_GDR_DEG_SYS ? " SYS" : "");
}

static void check_human_nccl(const struct check_nccl *n, FILE *f)
{
	char nccl[PATH_MAX + 64], tries[128], has[64], esc[GDX_ESCAPE_LEN(512)];

	check_nccl_name(n, nccl, sizeof(nccl));
	nccl_loader_tries(n->judged, tries, sizeof(tries));
	nccl_exported_range(n->lib_exported, has, sizeof(has));
	if (!n->found)
		fprintf(f, "  %-13s not found; NCCL %s tries %s\n", "NCCL", n->judged->releases,
			tries);
	else
		fprintf(f, "  %-13s %s: tries %s\n", "NCCL", nccl, tries);
	/* the environment's values, and the names made of them, escaped */
	fprintf(f, "  %-13s NCCL_NET_PLUGIN=", "plugin");
	gdx_esc_text(f, n->plugin_env ? n->plugin_env : "(unset)");
	fputs(", NCCL_NET=", f);
	gdx_esc_text(f, n->net_env ? n->net_env : "(unset)");
	fputs(": NCCL opens ", f);
	gdx_esc_text(f, n->tried[0] ? n->tried : "no external plugin");
	fputc('\n', f);
	if (n->ours && n->api)
		fprintf(f, "  %-13s %s (%s): NCCL loads ncclNetPlugin_v%d\n", "", n->plugin_path,
			has, n->api);
	else if (n->ours)
		fprintf(f, "  %-13s %s (%s): NCCL loads none of them\n", "", n->plugin_path, has);
	else if (n->lib_path[0])
		fprintf(f, "  %-13s %s: not this plugin (network %s, %s)\n", "", n->lib_path,
			n->lib_net[0] ? n->lib_net : "unnamed", has);
	else
		fprintf(f, "  %-13s not this plugin: %s\n", "",
			gdx_esc_text_buf(esc, sizeof(esc),
					 n->load_error[0] ? n->load_error
					 : n->missing	  ? "that file does not exist"
							  : "no such file in the library path"));
	if (n->ours && n->plugin_version[0])
		fprintf(f,
			"  %-13s libnccl-net-gdx %s, wire protocol %d (this gdx-doctor: %s, %d)\n",
			"plugin version", n->plugin_version, n->plugin_wire, GDX_VERSION,
			GDX_WIRE_VERSION);
	else if (n->ours)
		fprintf(f, "  %-13s unknown: no version in its INIT line (older than 0.2.0)\n",
			"plugin version");
}

static void check_human_rma(const struct check *c, FILE *f)
{
	char tries[96];

	nccl_loader_rma_tries(c->nccl.judged, tries, sizeof(tries));
	/* Off, as it is by default: one line; what else would stand in its
	 * way matters once it is asked for (--json has it all). */
	if (!c->rma.asked) {
		fprintf(f,
			"  %-13s off (NCCL_GDX_RMA is not 1; NCCL %s looks for %s%s): NCCL keeps "
			"its own RMA proxy",
			"RMA", c->nccl.judged->releases, tries,
			c->nccl.judged->rma[0] ? "" : " at all");
		if (c->rma.nwhy > 1)
			fprintf(f, "; %d other reason(s) it would not be used in --json",
				c->rma.nwhy - 1);
		fputc('\n', f);
		return;
	}
	fprintf(f, "  %-13s %s; NCCL %s looks for %s%s", "RMA",
		c->rma.asked ? "on (NCCL_GDX_RMA=1)" : "off (NCCL_GDX_RMA is not 1)",
		c->nccl.judged->releases, tries, c->nccl.judged->rma[0] ? "" : " at all");
	if (c->rma.api)
		fprintf(f, ": takes ncclRmaPlugin_v%d of this plugin\n", c->rma.api);
	else
		fputs("\n", f);
	for (int i = 0; i < c->rma.nwhy; i++)
		fprintf(f, "  %-13s %s\n", i ? "" : "  not used", c->rma.why[i]);
	if (!c->rma.nwhy)
		fprintf(f, "  %-13s NCCL's one-sided traffic goes over this plugin's rails\n", "");
}

/* The plugin's start-up as it went here: what NCCL would be given, or the
 * step that refused and its first word of why. */
static void check_human_start(const struct check *c, FILE *f)
{
	const struct gdx_start_report *r = c->start;

	if (!r)
		return;
	/* names the system chose (devices, an interface): escaped */
	if (!r->result) {
		fprintf(f, "  %-13s the plugin starts here: using", "start-up");
		gdx_esc_text(f, r->using);
		fputs("; OOB ", f);
		gdx_esc_text(f, r->oob);
		fputc('\n', f);
		return;
	}
	fprintf(f, "  %-13s the plugin does not start here (%s)%s", "start-up",
		gdx_start_step_name(r->step), r->nwarns ? ": " : "\n");
	if (r->nwarns) {
		gdx_esc_text(f, r->warns[0]);
		fputc('\n', f);
	}
}

/* The start-up's report in --json: null where it did not run. */
/* The port's Data Direct DMA function where a device of the plugin uses
 * it ("data_direct_function": bus id), else null: its own function, or the
 * plugin did not take it. */
static void check_json_dma_function(const struct check *c, const struct check_port *cp, FILE *f)
{
	const struct gdx_start_port *sp = check_start_port(c, cp->dev, cp->port);
	bool dd = sp && !c->start->result && sp->seen.fate == GDX_SEEN_TAKEN && sp->dd_dev >= 0;

	fputs(", ", f);
	json_key_str(f, "data_direct_function", dd ? sp->dd_fn : NULL);
}

static void check_json_start(const struct check *c, FILE *f)
{
	const struct gdx_start_report *r = c->start;

	fputs(",\n \"start\": ", f);
	if (!r) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"started\": %s, ", r->result ? "false" : "true");
	json_key_str(f, "step", r->result ? gdx_start_step_name(r->step) : NULL);
	fputs(", ", f);
	json_key_str(f, "oob", r->oob[0] ? r->oob : NULL);
	fputs(", ", f);
	json_key_str(f, "using", r->result ? NULL : r->using);
	fputs(", \"warns\": [", f);
	for (int i = 0; i < r->nwarns && i < GDX_START_WARNS; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, r->warns[i]);
	}
	fputs("]}", f);
}

static void check_human_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char have[32], level[160], nccl[64];

	fputs("\nHost\n", f);
	check_bytes(p->memlock, have, sizeof(have));
	fprintf(f, "  %-13s %s%s\n", "memlock", p->memlock_unknown ? "unknown" : have,
		c->memlock_level == GDX_GDR_LEVEL_BROKEN     ? ": too low to register"
		: c->memlock_level == GDX_GDR_LEVEL_DEGRADED ? ": bounds the connections (64 MiB "
							       "or more advised)"
							     : "");
	if (p->peermem)
		fprintf(f, "  %-13s %s loaded (%s)\n", "peer memory", p->peermem_name,
			p->peermem_marker);
	else
		fprintf(f, "  %-13s not loaded (no nvidia_peermem or nv_peer_mem marker)\n",
			"peer memory");
	if (!p->kernel_major)
		fprintf(f, "  %-13s kernel version unknown (each NIC's probe: below)\n", "dma-buf");
	else
		fprintf(f, "  %-13s kernel %d.%d %s 5.12 or later (each NIC's probe: below)\n",
			"dma-buf", p->kernel_major, p->kernel_minor,
			p->kernel_major > 5 || (p->kernel_major == 5 && p->kernel_minor >= 12)
				? "is"
				: "is not");
	if (p->cuda == GDX_GDR_CUDA_OK)
		fprintf(f, "  %-13s %d.%d\n", "CUDA driver", p->cuda_version / 1000,
			p->cuda_version % 1000 / 10);
	else if (p->cuda == GDX_GDR_CUDA_UNKNOWN)
		fprintf(f, "  %-13s unknown (%s)\n", "CUDA driver", p->cuda_why);
	else
		fprintf(f, "  %-13s %s (%s)\n", "CUDA driver",
			p->cuda == GDX_GDR_CUDA_NONE ? "none" : "not working", p->cuda_why);
	gdx_gdr_rule_level_why(&p->rule, level, sizeof(level));
	gdx_gdr_rule_nccl(&p->rule, nccl, sizeof(nccl));
	fprintf(f, "  %-13s %s, as %s applies it\n", "GDR level", level, nccl);
	check_human_start(c, f);
	if (!c->nccl_checked) {
		fprintf(f, "  %-13s not checked: a saved tree holds no NCCL or plugin files\n",
			"NCCL");
		return;
	}
	check_human_nccl(&c->nccl, f);
	check_human_rma(c, f);
}

/* "gdx-doctor check: node17: ", what starts the header and each line of
 * --quiet, so that a job's output, every node's lines in one file, says
 * which node each is from; the node's name left out only when unknown. */
static void check_prefix(const struct check *c, FILE *f)
{
	fputs("gdx-doctor check: ", f);
	if (c->hostname && c->hostname[0]) {
		gdx_esc_text(f, c->hostname);
		fputs(": ", f);
	}
}

void check_human(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char a[32], b[32], d[48];

	check_prefix(c, f);
	fprintf(f, "%s (kernel %s, NCCL_GDX_GDR=%s)\n", c->source, p->kernel[0] ? p->kernel : "?",
		gdx_gdr_policy_name(c->policy));
	fputs("\nRDMA ports\n", f);
	if (!c->nports)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-10s %-4s %-8s %-10s %-22s %-5s %-7s %-*s%s\n", "DEVICE", "PORT",
			"STATE", "LINK", "RATE", "GIDS", "ROCEv2", c->start ? 24 : 0, "GID",
			c->start ? " PLUGIN" : "");
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];
		bool roce = !strcmp(cp->link, "Ethernet");
		char plugin[128];

		snprintf(a, sizeof(a), "%d", cp->nv2);
		check_port_plugin(c, cp, true, plugin, sizeof(plugin));
		fprintf(f, "  %-10s %-4d %-8s %-10s %-22s %-5d %-7s %-*s%s%s\n", cp->dev, cp->port,
			cp->state, cp->link, cp->rate, cp->ngids, roce ? a : "-", c->start ? 24 : 0,
			cp->gid[0] ? cp->gid : "-", c->start ? " " : "", c->start ? plugin : "");
	}
	check_human_host(c, f);
	check_nccl_topo_human(c, c->topo, f);
	check_fabric(c, f, false);

	fputs("\nGPUs\n", f);
	if (!p->ngpus)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-13s %-5s %-4s %-7s %-9s %s\n", "GPU", "CUDA", "GDR", "DMA-BUF",
			"BAR1", "IOMMU");
	for (int g = 0; g < p->ngpus; g++) {
		const struct gdx_gdr_gpu *gpu = &p->gpus[g];
		char idx[16], bar1[32];

		snprintf(idx, sizeof(idx), "%d", gpu->cuda_index);
		check_attr(gpu->gdr_attr, a, sizeof(a));
		check_attr(gpu->dmabuf_attr, b, sizeof(b));
		check_bytes(gpu->bar1, bar1, sizeof(bar1));
		fprintf(f, "  %-13s %-5s %-4s %-7s %-9s %s\n", gpu->pci,
			gpu->cuda_index >= 0 ? idx : "-", a, b, bar1,
			gpu->iommu == GDX_GDR_IOMMU_TRANSLATING ? gpu->iommu_type
								: gdx_gdr_iommu_name(gpu->iommu));
	}

	fprintf(f, "\nNICs (what the plugin advertises with NCCL_GDX_GDR=%s)\n",
		gdx_gdr_policy_name(c->policy));
	if (!p->nnics)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-10s %-13s %-8s %-16s %-21s %s\n", "NIC", "PCI", "VERDICT", "PTR",
			"DMA-BUF PROBE", "WHY");
	for (int n = 0; n < p->nnics; n++) {
		const struct gdx_gdr_verdict *v = &c->nic_v[n];
		const char *why = v->line + strlen(p->nics[n].name) + 2;

		gdx_gdr_ptr_name(v->ptr_support, a, sizeof(a));
		check_dmabuf_probe(&p->nics[n], d, sizeof(d));
		fprintf(f, "  %-10s %-13s %-8s %-16s %-21s %s\n", p->nics[n].name,
			p->nics[n].pci[0] ? p->nics[n].pci : "(none)", gdx_gdr_mode_name(v->mode),
			a, d, why);
	}

	if (p->ngpus && p->nnics) {
		fputs("\nGPU-NIC pairs\n", f);
		fprintf(f, "  %-13s %-10s %-7s %-4s %-8s %-12s %s\n", "GPU", "NIC", "PATH", "NCCL",
			"ACS", "IOMMU", "VERDICT");
	}
	for (int g = 0; g < p->ngpus && p->nnics; g++) {
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_verdict *v = &c->pair_v[g * p->nnics + n];
			const struct gdx_gdr_path *path = gdx_gdr_path(p, g, n);

			check_degraded(v->degraded, d, sizeof(d));
			if (check_nic_unused(c, n)) {
				fprintf(f, "  %-13s %-10s %-7s %-4s %-8s %-12s not used: %s\n",
					p->gpus[g].pci, p->nics[n].name, gdx_path_name(path->cls),
					gdx_nccl_path_name(v->nccl_path),
					gdx_gdr_acs_name(path->acs),
					check_pair_iommu(&p->gpus[g], &p->nics[n]),
					check_nic_unused(c, n));
				continue;
			}
			fprintf(f, "  %-13s %-10s %-7s %-4s %-8s %-12s %s%s%s%s\n", p->gpus[g].pci,
				p->nics[n].name, gdx_path_name(path->cls),
				gdx_nccl_path_name(v->nccl_path), gdx_gdr_acs_name(path->acs),
				check_pair_iommu(&p->gpus[g], &p->nics[n]),
				gdx_gdr_mode_name(v->mode),
				v->mode == GDX_GDR_STAGED && v->ptr_support != NCCL_PTR_HOST
					? " (beyond NCCL_NET_GDR_LEVEL)"
				: v->mode == GDX_GDR_DIRECT && v->nccl_within < 0
					? " if C2C-attached, staged otherwise"
					: "",
				v->degraded ? ", degraded:" : "", d);
		}
	}

	fputs("\nProblems\n", f);
	/* a problem may quote the environment (NCCL_NET_PLUGIN): escaped */
	for (int i = 0; i < c->nproblems; i++) {
		fprintf(f, "  [%s] ", check_level_names[c->problems[i].level]);
		gdx_esc_text(f, c->problems[i].text);
		fputc('\n', f);
	}
	if (!c->nproblems)
		fputs("  none\n", f);
	fprintf(f, "\nResult: %s (exit %d%s)\n", check_status_names[c->status], c->exit,
		c->exit != (int)c->status ? ", --allow-degraded" : "");
}

void check_quiet(const struct check *c, FILE *f)
{
	for (int i = 0; i < c->nproblems; i++) {
		if (c->problems[i].level == GDX_GDR_LEVEL_OK)
			continue;
		check_prefix(c, f);
		fprintf(f, "[%s] ", check_level_names[c->problems[i].level]);
		gdx_esc_text(f, c->problems[i].text);
		fputc('\n', f);
	}
}

/* The path type NCCL computes and whether it goes direct there (null: it
 * depends on a C2C attachment this source cannot show). */
static void check_json_nccl_path(FILE *f, const struct gdx_gdr_verdict *v)
{
	fprintf(f, "\"nccl_path\": ");
	if (v->nccl_path == GDX_NCCL_UNKNOWN)
		fputs("null", f);
	else
		fprintf(f, "\"%s\"", gdx_nccl_path_name(v->nccl_path));
	fprintf(f, ", \"nccl_direct\": %s",
		v->nccl_within < 0 ? "null"
		: v->nccl_within   ? "true"
				   : "false");
}

static void check_json_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char why[256];
	static const char *const cuda[] = {"none", "error", "ok", "unknown"};

	fputs(",\n \"host\": {", f);
	json_key_str(f, "kernel", p->kernel);
	if (p->memlock_unknown)
		fputs(", \"memlock\": null", f);
	else if (p->memlock == GDX_GDR_MEMLOCK_INFINITY)
		fputs(", \"memlock\": \"unlimited\"", f);
	else
		fprintf(f, ", \"memlock\": %llu", (unsigned long long)p->memlock);
	fprintf(f, ",\n  \"peermem\": {\"loaded\": %s, ", p->peermem ? "true" : "false");
	json_key_str(f, "module", p->peermem ? p->peermem_name : NULL);
	fputs(", ", f);
	json_key_str(f, "marker", p->peermem ? p->peermem_marker : NULL);
	fprintf(f, "},\n  \"cuda\": {\"state\": \"%s\", \"version\": %d, ", cuda[p->cuda],
		p->cuda_version);
	json_key_str(f, "why", p->cuda == GDX_GDR_CUDA_OK ? NULL : p->cuda_why);
	gdx_gdr_rule_level_why(&p->rule, why, sizeof(why));
	fprintf(f, "},\n  \"gdr_level\": \"%s\", \"gdr_c2c\": %s, \"gdr_nccl_version\": ",
		gdx_nccl_path_name(gdx_gdr_rule_level(&p->rule)),
		gdx_gdr_rule_c2c(&p->rule) ? "true" : "false");
	if (p->rule.version)
		fprintf(f, "%d", p->rule.version);
	else
		fputs("null", f);
	fputs(", ", f);
	json_key_str(f, "gdr_level_why", why);
	fputs("}", f);
	if (!c->nccl_checked) {
		fputs(",\n \"nccl\": null", f);
		return;
	}
	fprintf(f, ",\n \"nccl\": {\"found\": %s, ", c->nccl.found ? "true" : "false");
	json_key_str(f, "path", c->nccl.found ? c->nccl.path : NULL);
	fprintf(f, ", \"in_library_path\": %s, \"version_code\": %d, ",
		c->nccl.in_path ? "true" : "false", c->nccl.version);
	json_key_str(f, "judged_as", c->nccl.judged->releases);
	fputs(", \"tries\": [", f);
	for (int i = 0; c->nccl.judged->tries[i]; i++)
		fprintf(f, "%s%d", i ? ", " : "", c->nccl.judged->tries[i]);
	fprintf(f, "], \"net_api\": %d, \"loads_plugin\": %s,\n  ", c->nccl.api,
		c->nccl.ours && c->nccl.api ? "true" : "false");
	json_key_str(f, "nccl_net_plugin", c->nccl.plugin_env);
	fputs(", ", f);
	json_key_str(f, "nccl_net", c->nccl.net_env);
	fputs(", ", f);
	json_key_str(f, "opens", c->nccl.tried);
	fputs(", ", f);
	json_key_str(f, "library", c->nccl.lib_path);
	fputs(", ", f);
	json_key_str(f, "library_network", c->nccl.lib_net);
	fputs(", \"library_tables\": [", f);
	for (int v = 0, k = 0; v < 32; v++)
		if (c->nccl.lib_exported & (1u << v))
			fprintf(f, "%s%d", k++ ? ", " : "", v);
	fputs("],\n  ", f);
	json_key_str(f, "plugin_path", c->nccl.plugin_path);
	fputs(", ", f);
	json_key_str(f, "plugin_version", c->nccl.plugin_version);
	fputs(", \"plugin_wire\": ", f);
	if (c->nccl.plugin_wire)
		fprintf(f, "%d", c->nccl.plugin_wire);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"rma\": {\"enabled\": %s, \"tries\": [", c->rma.asked ? "true" : "false");
	for (int i = 0; i < 6 && c->nccl.judged->rma[i]; i++)
		fprintf(f, "%s%d", i ? ", " : "", c->nccl.judged->rma[i]);
	fputs("], \"rma_api\": ", f);
	if (c->rma.api)
		fprintf(f, "%d", c->rma.api);
	else
		fputs("null", f);
	fprintf(f, ", \"used\": %s, \"why_not\": [", c->rma.nwhy ? "false" : "true");
	for (int i = 0; i < c->rma.nwhy; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, c->rma.why[i]);
	}
	fputs("]}}", f);
}

static void check_json_verdict(FILE *f, const struct gdx_gdr_verdict *v)
{
	fprintf(f, "\"verdict\": \"%s\", \"ptr_support\": [\"HOST\"%s%s], ",
		gdx_gdr_mode_name(v->mode), v->ptr_support & NCCL_PTR_CUDA ? ", \"CUDA\"" : "",
		v->ptr_support & NCCL_PTR_DMABUF ? ", \"DMABUF\"" : "");
	json_key_str(f, "via", v->via);
	fputs(", \"degraded\": [", f);
	for (unsigned bit = GDX_GDR_DEG_ACS, k = 0; bit <= GDX_GDR_DEG_SYS; bit <<= 1) {
		if (!(v->degraded & bit))
			continue;
		fprintf(f, "%s\"%s\"", k++ ? ", " : "",
			bit == GDX_GDR_DEG_ACS	   ? "ACS"
			: bit == GDX_GDR_DEG_IOMMU ? "IOMMU"
						   : "SYS");
	}
	fputs("], ", f);
	json_key_str(f, "reason", v->reason);
	fputs(", ", f);
	json_key_str(f, "fix", v->fix);
	fputs(", ", f);
	json_key_str(f, "degraded_why", v->degraded_why);
}

/* "RoCE v2", "RoCE v1", "IB" (an InfiniBand port's GIDs are "IB/RoCE v1"). */
static void check_json_gid_type(FILE *f, const struct check_port *cp)
{
	if (!cp->gid[0] || !cp->gid_roce)
		fputs("null", f);
	else if (strcmp(cp->link, "Ethernet"))
		fputs("\"IB\"", f);
	else
		fprintf(f, "\"RoCE v%d\"", cp->gid_roce);
}

static int check_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether e is NAME=value with a name a program can ask getenv for (letters,
 * digits, underscores) that is not among the first n of vars: the first of
 * a name in the environment is the one getenv returns, and a JSON object
 * holds a name once. */
static bool check_env_new(const char *e, const char **vars, size_t n)
{
	size_t len = strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

	if (e[len] != '=')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(vars[i], e, len + 1))
			return false;
	return true;
}

/* Every NCCL_GDX_* and NCCL_IB_* variable set here, by name: what fleet
 * compares between nodes (a launcher that drops one on some nodes is a
 * classic). */
static void check_json_environment(FILE *f)
{
	extern char **environ;
	const char **vars;
	size_t n = 0;

	for (char **e = environ; *e; e++)
		n++;
	vars = calloc(n + 1, sizeof(*vars));
	fputs(",\n \"environment\": {", f);
	n = 0;
	for (char **e = environ; vars && *e; e++)
		if ((!strncmp(*e, "NCCL_GDX_", 9) || !strncmp(*e, "NCCL_IB_", 8)) &&
		    check_env_new(*e, vars, n))
			vars[n++] = *e;
	if (vars)
		qsort(vars, n, sizeof(*vars), check_cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(vars[i], '=');

		fprintf(f, "%s\"%.*s\": ", i ? ", " : "", (int)(eq - vars[i]), vars[i]);
		json_str(f, eq + 1);
	}
	fputs("}", f);
	free(vars);
}

void check_json(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;

	fputs("{", f);
	json_report_origin_of(f, "check", c->hostname);
	fputs(", ", f);
	json_key_str(f, "source", c->source);
	fprintf(f, ", \"policy\": \"%s\", \"status\": \"%s\", \"exit\": %d,\n \"ports\": [",
		gdx_gdr_policy_name(c->policy), check_status_names[c->status], c->exit);
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];
		char plugin[128];

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "device", cp->dev);
		fprintf(f, ", \"port\": %d, ", cp->port);
		json_key_str(f, "state", cp->state);
		fprintf(f, ", \"active\": %s, ", cp->active ? "true" : "false");
		json_key_str(f, "link_layer", cp->link);
		fputs(", ", f);
		json_key_str(f, "rate", cp->rate);
		fprintf(f, ", \"gids\": %d, \"roce_v2_gids\": %d, ", cp->ngids, cp->nv2);
		json_key_str(f, "gid", cp->gid);
		fputs(", \"gid_type\": ", f);
		check_json_gid_type(f, cp);
		fputs(", \"active_mtu\": ", f);
		if (cp->mtu)
			fprintf(f, "%d", cp->mtu);
		else
			fputs("null", f);
		check_port_plugin(c, cp, false, plugin, sizeof(plugin));
		fputs(", ", f);
		json_key_str(f, "plugin", strcmp(plugin, "-") ? plugin : NULL);
		check_json_dma_function(c, cp, f);
		fputs("}", f);
	}
	fputs("]", f);
	check_json_host(c, f);
	check_json_start(c, f);
	check_fabric(c, f, true);
	check_json_environment(f);
	fputs(",\n \"gpus\": [", f);
	for (int g = 0; g < p->ngpus; g++) {
		const struct gdx_gdr_gpu *gpu = &p->gpus[g];

		fprintf(f, "%s\n  {", g ? "," : "");
		json_key_str(f, "pci", gpu->pci);
		fputs(", \"cuda_index\": ", f);
		if (gpu->cuda_index >= 0)
			fprintf(f, "%d", gpu->cuda_index);
		else
			fputs("null", f);
		fputs(", \"gdr\": ", f);
		json_tri(f, gpu->gdr_attr);
		fputs(", \"dmabuf\": ", f);
		json_tri(f, gpu->dmabuf_attr);
		if (gpu->bar1)
			fprintf(f, ", \"bar1\": %llu", (unsigned long long)gpu->bar1);
		else
			fputs(", \"bar1\": null", f);
		fprintf(f, ", \"iommu\": \"%s\", ", gdx_gdr_iommu_name(gpu->iommu));
		json_key_str(f, "iommu_type", gpu->iommu_type);
		fputs("}", f);
	}
	fputs("],\n \"nics\": [", f);
	for (int n = 0; n < p->nnics; n++) {
		const struct gdx_gdr_nic *nic = &p->nics[n];
		const struct gdx_gdr_verdict *v = &c->nic_v[n];

		fprintf(f, "%s\n  {", n ? "," : "");
		json_key_str(f, "name", nic->name);
		fputs(", ", f);
		json_key_str(f, "pci", nic->pci);
		fputs(", \"dmabuf_probe\": ", f);
		json_tri(f, nic->dmabuf);
		fputs(", ", f);
		json_key_str(f, "dmabuf_errno",
			     nic->dmabuf < 0 ? NULL : gdx_gdr_errno_name(nic->dmabuf_errno));
		fprintf(f, ", \"iommu\": \"%s\", ", gdx_gdr_iommu_name(nic->iommu));
		json_key_str(f, "gpu", v->gpu >= 0 ? p->gpus[v->gpu].pci : NULL);
		fprintf(f, ", \"path\": \"%s\",\n   ", gdx_path_name(v->path));
		check_json_verdict(f, v);
		fprintf(f, ",\n   \"warn\": %s, ", v->warn ? "true" : "false");
		json_key_str(f, "line", v->line);
		fputs("}", f);
	}
	fputs("],\n \"pairs\": [", f);
	for (int g = 0; g < p->ngpus; g++) {
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_path *path = gdx_gdr_path(p, g, n);

			fprintf(f, "%s\n  {", g || n ? "," : "");
			json_key_str(f, "gpu", p->gpus[g].pci);
			fputs(", ", f);
			json_key_str(f, "nic", p->nics[n].name);
			fprintf(f, ", \"path\": \"%s\", \"acs\": \"%s\", ",
				gdx_path_name(path->cls), gdx_gdr_acs_name(path->acs));
			json_key_str(f, "acs_bridge", path->acs_bridge);
			fprintf(f, ", \"bridges\": %d, \"iommu\": ", path->nbridges);
			json_str(f, check_pair_iommu(&p->gpus[g], &p->nics[n]));
			fputs(", ", f);
			json_key_str(f, "not_used", check_nic_unused(c, n));
			fputs(", ", f);
			check_json_nccl_path(f, &c->pair_v[g * p->nnics + n]);
			fputs(",\n   ", f);
			check_json_verdict(f, &c->pair_v[g * p->nnics + n]);
			fputs("}", f);
		}
	}
	fputs("],\n ", f);
	check_nccl_topo_json(c, c->topo, f);
	fputs("\"problems\": [", f);
	for (int i = 0; i < c->nproblems; i++) {
		fprintf(f, "%s\n  {\"level\": \"%s\", ", i ? "," : "",
			check_level_names[c->problems[i].level]);
		json_key_str(f, "text", c->problems[i].text);
		fputs("}", f);
	}
	fputs("]}\n", f);
}
