/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor topo: the PCIe path class between every GPU and RDMA NIC (as
 * `nvidia-smi topo -m` shows it), the rail groups the plugin would form and
 * the NUMA node of each device, from the plugin's own topology module; with
 * --dot, the PCIe tree they come from, drawn for graphviz.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdr/gdx_gdr_rule.h"
#include "topo/gdx_topo.h"
#include "sys/gdx_param.h"

#include "tools/common/gdx_topo_query.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_nccl_topo.h"

struct topo_opts {
	const struct doctor_nccl_topo *nt; /* NCCL_TOPO_FILE, what NCCL makes of it */
	const char *xml;
	const char *hostname; /* --hostname */
	bool json, dot;
};

static int topo_on_opt(void *ctx, int key, const char *arg)
{
	struct topo_opts *o = ctx;

	switch (key) {
	case 'x': o->xml = arg; break;
	case 'H': o->hostname = arg; break;
	case 'j': o->json = true; break;
	case 'd': o->dot = true; break;
	}
	if (o->json && o->dot) {
		fprintf(stderr, "gdx-doctor topo: --json and --dot: choose one\n");
		return DOCTOR_USAGE;
	}
	return DOCTOR_OK;
}

static void json_numa(FILE *f, int numa)
{
	if (numa >= 0)
		fprintf(f, "%d", numa);
	else
		fputs("null", f);
}

static void json_tristate(FILE *f, int v)
{
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

/*
 * The path class as the table and the graph show it: NCCL's name, and SYS*
 * for a SYS path that stays in the GPU's own CPU package (another NUMA node
 * of its socket: AMD NPS2/NPS4, Intel SNC), which ranks before SYS.
 */
static const char *topo_label(const struct gdx_topo *t, int g, int n)
{
	enum gdx_path p = gdx_topo_path(t, g, n);

	return p == GDX_PATH_SYS && gdx_topo_same_package(t, g, n) == 1 ? "SYS*" : gdx_path_name(p);
}

/* Whether some GPU-NIC pair shows as label. */
static bool topo_has_label(const struct gdx_topo *t, const char *label)
{
	for (int g = 0; g < gdx_topo_ngpus(t); g++)
		for (int n = 0; n < gdx_topo_nnics(t); n++)
			if (!strcmp(topo_label(t, g, n), label))
				return true;
	return false;
}

/* The node a report is of: --hostname, else the XML's machine (its
 * HostName; null without one), else this machine. Never this machine's
 * name on another's topology: fleet tells nodes apart by it. */
static void topo_origin(const struct gdx_topo *t, const struct topo_opts *o, FILE *f)
{
	if (o->hostname)
		json_report_origin_of(f, "topo", o->hostname);
	else if (o->xml)
		json_report_origin_of(f, "topo", gdx_topo_hostname(t));
	else
		json_report_origin(f, "topo");
}

/* NCCL's path type for pair (g, nic) and whether it goes direct there:
 * 1, 0, -1 when that depends on a C2C attachment the topology cannot show. */
static int topo_nccl(const struct gdx_topo *t, const struct gdx_gdr_rule *rule, int g, int nic,
		     enum gdx_nccl_path *type)
{
	int best;
	bool nearest = gdx_topo_gpu_group(t, g, &best, 1) < 1 ||
		       gdx_topo_path(t, g, nic) == gdx_topo_path(t, g, best);

	return gdx_gdr_rule_within(rule, gdx_topo_path(t, g, nic), gdx_topo_gpu(t, g)->c2c, nearest,
				   type);
}

static int topo_json(const struct gdx_topo *t, const struct topo_opts *o,
		     const struct gdx_gdr_rule *rule, FILE *f)
{
	const char *source = o->xml;
	int nn = gdx_topo_nnics(t);
	int *order = calloc((size_t)nn + 1, sizeof(*order));

	if (!order)
		return -ENOMEM;
	fputs("{", f);
	topo_origin(t, o, f);
	fputs(", \"source\": ", f);
	json_str_or_null(f, source);
	fputs(",\n \"gpus\": [", f);
	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		const struct gdx_topo_gpu *gpu = gdx_topo_gpu(t, g);
		int n = gdx_topo_gpu_nics(t, g, order, nn);
		int r = gdx_topo_gpu_group(t, g, NULL, 0), within;
		enum gdx_nccl_path type;

		fprintf(f, "%s\n  {\"pci\": ", g ? "," : "");
		json_str(f, gpu->pci);
		fputs(", \"numa\": ", f);
		json_numa(f, gpu->numa);
		fputs(", \"package\": ", f);
		json_numa(f, gpu->package);
		fputs(",\n   \"nics\": [", f);
		for (int i = 0; i < n; i++) {
			const struct gdx_topo_nic *nic = gdx_topo_nic(t, order[i]);

			fprintf(f, "%s{\"name\": ", i ? ",\n            " : "");
			json_str(f, nic->name);
			fputs(", \"pci\": ", f);
			json_str_or_null(f, nic->pci);
			fprintf(f, ", \"path\": \"%s\", \"same_package\": ",
				gdx_path_name(gdx_topo_path(t, g, order[i])));
			json_tristate(f, gdx_topo_same_package(t, g, order[i]));
			within = topo_nccl(t, rule, g, order[i], &type);
			fputs(", \"nccl_path\": ", f);
			json_str_or_null(f, type == GDX_NCCL_UNKNOWN ? NULL
								     : gdx_nccl_path_name(type));
			fputs(", \"nccl_direct\": ", f);
			json_tristate(f, within);
			fputc('}', f);
		}
		fputs("],\n   \"rail\": [", f);
		/* The rail group is the head of the nearest-first list. */
		for (int i = 0; i < r; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, gdx_topo_nic(t, order[i])->name);
		}
		fputs("]}", f);
	}
	fputs("],\n \"nics\": [", f);
	for (int i = 0; i < nn; i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, nic->name);
		fputs(", \"pci\": ", f);
		json_str_or_null(f, nic->pci);
		fputs(", \"numa\": ", f);
		json_numa(f, nic->numa);
		fputs(", \"package\": ", f);
		json_numa(f, nic->package);
		fprintf(f, ", \"rail_gpus\": %d}", nic->group_gpus);
	}
	fputs("],\n \"groups\": [", f);
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);

		fprintf(f, "%s\n  {\"nics\": [", i ? "," : "");
		for (int k = 0; k < grp->nnics; k++) {
			fputs(k ? ", " : "", f);
			json_str(f, gdx_topo_nic(t, grp->nics[k])->name);
		}
		fputs("], \"gpus\": [", f);
		for (int k = 0; k < grp->ngpus; k++) {
			fputs(k ? ", " : "", f);
			json_str(f, gdx_topo_gpu(t, grp->gpus[k])->pci);
		}
		fputs("]}", f);
	}
	fputs("],\n ", f);
	doctor_nccl_topo_json(o->nt, t, f);
	fputs("}\n", f);
	free(order);
	return 0;
}

/* ---- topo --dot: the PCIe tree for graphviz ---- */

/* A dot string's body: quotes and backslashes escaped, so that a name from an
 * XML file cannot end the string or start an escape. */
static void dot_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* Green where NCCL goes GPU-direct by default (up to PXB), orange through the
 * root complex, red beyond it. */
static const char *dot_path_color(enum gdx_path p)
{
	return p <= GDX_PATH_PXB ? "darkgreen" : p == GDX_PATH_PHB ? "darkorange" : "red";
}

/* Text in an HTML-like label: markup characters as entities. */
static void dot_html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* indent: inside a cluster or not. GPUs are numbered as nvidia-smi topo -m
 * numbers them, in PCI bus order, which is gdx_topo's order. */
static void dot_gpu(const struct gdx_topo *t, int g, const char *indent, FILE *f)
{
	const struct gdx_topo_gpu *gpu = gdx_topo_gpu(t, g);

	fprintf(f, "%sgpu%d [label=\"GPU%d\\n", indent, g, g);
	dot_text(f, gpu->pci);
	fputs("\", style=filled, fillcolor=palegreen];\n", f);
}

static void dot_nic(const struct gdx_topo *t, int n, const char *indent, FILE *f)
{
	const struct gdx_topo_nic *nic = gdx_topo_nic(t, n);

	fprintf(f, "%snic%d [label=\"", indent, n);
	dot_text(f, nic->name);
	fputs("\\n", f);
	dot_text(f, nic->pci[0] ? nic->pci : "(no PCI device)");
	fputs("\", style=filled, fillcolor=lightblue];\n", f);
}

/* One row of the legend: the class in its edge colour, what it means. */
static void dot_legend_row(FILE *f, const char *label, enum gdx_path p, const char *meaning)
{
	fprintf(f, "<tr><td align=\"left\"><font color=\"%s\"><b>%s</b></font></td>",
		dot_path_color(p), label);
	fprintf(f, "<td align=\"left\">%s</td></tr>", meaning);
}

/* The title and a legend of the path classes, as the graph's label: the
 * five NCCL classes always, the others where some pair has them. */
static void dot_legend(const struct gdx_topo *t, const char *source, FILE *f)
{
	fputs("  label=<<table border=\"0\" cellspacing=\"0\" cellpadding=\"2\">"
	      "<tr><td colspan=\"2\"><b>PCIe tree of ",
	      f);
	dot_html_text(f, source ? source : "this machine");
	fputs("</b></td></tr><tr><td colspan=\"2\">dashed: a GPU to each NIC of its rail "
	      "(the box around them: a rail group), labelled with the path class</td></tr>",
	      f);
	dot_legend_row(f, "PIX", GDX_PATH_PIX, "at most one PCIe switch between GPU and NIC");
	dot_legend_row(f, "PXB", GDX_PATH_PXB,
		       "several PCIe switches, no host bridge (green: NCCL goes GPU-direct)");
	dot_legend_row(f, "PHB", GDX_PATH_PHB, "through a PCIe host bridge (the CPU)");
	dot_legend_row(f, "NODE", GDX_PATH_NODE, "between host bridges of one NUMA node");
	if (topo_has_label(t, "NUMA-UNKNOWN"))
		dot_legend_row(f, "NUMA-UNKNOWN", GDX_PATH_NUMA_UNKNOWN,
			       "between host bridges, a NUMA node not recorded: NODE or SYS");
	if (topo_has_label(t, "SYS*"))
		dot_legend_row(f, "SYS*", GDX_PATH_SYS,
			       "SYS between NUMA nodes of the GPU's own socket, not across");
	dot_legend_row(f, "SYS", GDX_PATH_SYS, "across the interconnect between NUMA nodes");
	fputs("</table>>;\n", f);
}

/*
 * Drawn left to right: the NUMA nodes, their host bridges, root ports,
 * switches, then the GPUs and NICs, each rail group a cluster. A GPU's edges
 * to the NICs of its rail group carry the path class (the other pairs are in the
 * table); they take part in the layout, each NIC a rank right of its GPUs,
 * so that dot gives their labels room of their own: laid out after the tree,
 * as edges that did not constrain it, they crossed and their labels
 * overlapped. Left to right keeps an 8-GPU node about as tall as wide.
 */
static void topo_dot(const struct gdx_topo *t, const char *source, FILE *f)
{
	static const char *const kind_names[] = {"host bridge", "root port", "PCIe switch"};
	int ng = gdx_topo_ngpus(t), nn = gdx_topo_nnics(t), nb = gdx_topo_nbridges(t);
	bool *placed = calloc((size_t)nn + 1, sizeof(*placed));

	fputs("graph \"gdx-topo\" {\n", f);
	dot_legend(t, source, f);
	fputs("  labelloc=t;\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n"
	      "  edge [fontname=\"monospace\"];\n",
	      f);
	/* The CPU side: one node per NUMA node a host bridge hangs off, in
	 * reverse order of their first host bridge: dot stacks the first rank
	 * of a left-to-right graph from the bottom up, and the bridges come in
	 * GPU order, so GPU0's NUMA node ends up on top. */
	fputs("  { rank=same;\n", f);
	for (int i = nb - 1; i >= 0; i--) {
		const struct gdx_topo_bridge *b = gdx_topo_bridge(t, i);
		bool seen = false;

		if (b->kind != GDX_BRIDGE_HOST)
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = gdx_topo_bridge(t, k)->kind == GDX_BRIDGE_HOST &&
			       gdx_topo_bridge(t, k)->numa == b->numa;
		if (seen)
			continue;
		if (b->numa < 0)
			fputs("    cpu [label=\"CPU\\n(NUMA node unknown)\", shape=ellipse];\n", f);
		else
			fprintf(f, "    numa%d [label=\"NUMA %d\", shape=ellipse];\n", b->numa,
				b->numa);
	}
	fputs("  }\n", f);
	for (int i = 0; i < nb; i++) {
		const struct gdx_topo_bridge *b = gdx_topo_bridge(t, i);

		fprintf(f, "  br%d [label=\"%s\\n", i, kind_names[b->kind]);
		dot_text(f, b->pci);
		fputs("\"];\n", f);
	}
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);

		fprintf(f, "  subgraph cluster_group%d {\n    label=\"rail group %d%s\";\n", i, i,
			grp->ngpus ? "" : " (stands alone)");
		/* The title at the left: edge labels take the middle. */
		fputs("    style=rounded;\n    labeljust=l;\n", f);
		for (int k = 0; k < grp->ngpus; k++)
			dot_gpu(t, grp->gpus[k], "    ", f);
		/* dot takes a node in one cluster only: a NIC two rail groups share stays
		 * in the first. */
		for (int k = 0; k < grp->nnics; k++) {
			if (!placed || placed[grp->nics[k]])
				continue;
			placed[grp->nics[k]] = true;
			dot_nic(t, grp->nics[k], "    ", f);
		}
		fputs("  }\n", f);
	}
	/* A GPU with no PCI NIC is in no group; every NIC is in one. */
	for (int g = 0; g < ng; g++)
		if (gdx_topo_gpu_group(t, g, NULL, 0) == 0)
			dot_gpu(t, g, "  ", f);
	for (int n = 0; n < nn; n++)
		if (!placed || !placed[n])
			dot_nic(t, n, "  ", f);
	for (int i = 0; i < nb; i++) {
		const struct gdx_topo_bridge *b = gdx_topo_bridge(t, i);

		if (b->up >= 0)
			fprintf(f, "  br%d -- br%d;\n", b->up, i);
		else if (b->numa >= 0)
			fprintf(f, "  numa%d -- br%d;\n", b->numa, i);
		else
			fprintf(f, "  cpu -- br%d;\n", i);
	}
	for (int g = 0; g < ng; g++)
		if (gdx_topo_gpu(t, g)->bridge >= 0)
			fprintf(f, "  br%d -- gpu%d;\n", gdx_topo_gpu(t, g)->bridge, g);
	for (int n = 0; n < nn; n++)
		if (gdx_topo_nic(t, n)->bridge >= 0)
			fprintf(f, "  br%d -- nic%d;\n", gdx_topo_nic(t, n)->bridge, n);
	for (int g = 0; g < ng; g++) {
		int rail[64], r = gdx_topo_gpu_group(t, g, rail, 64);

		for (int i = 0; i < r && i < 64; i++) {
			enum gdx_path p = gdx_topo_path(t, g, rail[i]);

			fprintf(f,
				"  gpu%d -- nic%d [label=\"%s\", style=dashed, color=%s, "
				"fontcolor=%s];\n",
				g, rail[i], topo_label(t, g, rail[i]), dot_path_color(p),
				dot_path_color(p));
		}
	}
	fputs("}\n", f);
	free(placed);
}

static void topo_print_numa(FILE *f, int numa)
{
	if (numa >= 0)
		fprintf(f, "%d", numa);
	else
		fputs("?", f);
}

static void topo_matrix(const struct gdx_topo *t, FILE *f)
{
	int ng = gdx_topo_ngpus(t), nn = gdx_topo_nnics(t);
	int w = (int)strlen("UNKNOWN");

	for (int i = 0; i < nn; i++)
		if ((int)strlen(gdx_topo_nic(t, i)->name) > w)
			w = (int)strlen(gdx_topo_nic(t, i)->name);
	for (int g = 0; g < ng; g++)
		for (int i = 0; i < nn; i++)
			if ((int)strlen(topo_label(t, g, i)) > w)
				w = (int)strlen(topo_label(t, g, i));
	fprintf(f, "\n%-14s", "GPU");
	for (int i = 0; i < nn; i++)
		fprintf(f, "%-*s", w + 2, gdx_topo_nic(t, i)->name);
	fputs("NUMA\n", f);
	for (int g = 0; g < ng; g++) {
		fprintf(f, "%-14s", gdx_topo_gpu(t, g)->pci);
		for (int i = 0; i < nn; i++)
			fprintf(f, "%-*s", w + 2, topo_label(t, g, i));
		topo_print_numa(f, gdx_topo_gpu(t, g)->numa);
		fputc('\n', f);
	}
	if (!nn)
		return;
	fputs("\n"
	      "  PIX  = same PCIe switch (at most one switch between GPU and NIC)\n"
	      "  PXB  = several PCIe switches, no host bridge\n"
	      "  PHB  = through a PCIe host bridge (the CPU's root complex)\n"
	      "  NODE = between PCIe host bridges within one NUMA node\n"
	      "  SYS  = across the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)\n",
	      f);
	if (topo_has_label(t, "SYS*"))
		fputs("  SYS* = SYS, but between NUMA nodes of the GPU's own socket (AMD NPS2/NPS4,\n"
		      "         Intel SNC), not across sockets: ranked before SYS\n",
		      f);
	if (topo_has_label(t, "NUMA-UNKNOWN"))
		fputs("  NUMA-UNKNOWN = between PCIe host bridges, one of which hwloc recorded no NUMA\n"
		      "         node for (old dumps): NODE or SYS, unknown which; ranked after NODE\n",
		      f);
	for (int i = 0; i < nn; i++)
		if (!gdx_topo_nic(t, i)->pci[0]) {
			fputs("  UNKNOWN = the NIC has no PCI device (virtual, such as rxe)\n", f);
			break;
		}
}

static void topo_groups(const struct gdx_topo *t, FILE *f)
{
	fprintf(f, "\nRail groups (each GPU uses the NICs at its best path class%s):\n",
		topo_has_label(t, "SYS*") ? ", SYS* before SYS" : "");
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);
		int col = fprintf(f, "  group %d: ", i);

		for (int k = 0; k < grp->nnics; k++)
			col += fprintf(f, "%s%s", k ? "," : "",
				       gdx_topo_nic(t, grp->nics[k])->name);
		if (!grp->ngpus) {
			const char *why = gdx_topo_nic(t, grp->nics[0])->pci[0] ? "near no GPU"
										: "no PCI device";

			fprintf(f, "%*s(%s: stands alone)\n", col < 32 ? 32 - col : 1, "", why);
			continue;
		}
		fprintf(f, "%*s<- ", col < 32 ? 32 - col : 1, "");
		for (int k = 0; k < grp->ngpus; k++)
			fprintf(f, "%s%s %s", k ? ", " : "", gdx_topo_gpu(t, grp->gpus[k])->pci,
				topo_label(t, grp->gpus[k], grp->nics[0]));
		fputc('\n', f);
	}
	for (int g = 0; g < gdx_topo_ngpus(t); g++)
		if (gdx_topo_gpu_group(t, g, NULL, 0) == 0)
			fprintf(f, "  GPU %s has no PCI NIC: no rail\n", gdx_topo_gpu(t, g)->pci);
}

static void topo_nics(const struct gdx_topo *t, FILE *f)
{
	int ng = gdx_topo_ngpus(t);

	fputs("\nNICs:\n", f);
	for (int i = 0; i < gdx_topo_nnics(t); i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		fprintf(f, "  %-10s %-14s NUMA ", nic->name, nic->pci[0] ? nic->pci : "(no PCI)");
		topo_print_numa(f, nic->numa);
		if (nic->group_gpus > 1)
			fprintf(f, "   shared by %d GPUs\n", nic->group_gpus);
		else if (nic->group_gpus == 1)
			fputs("   rail of 1 GPU\n", f);
		else if (ng)
			fputs("   in no GPU's rail\n", f);
		else
			fputc('\n', f);
	}
}

/* GPUs whose nearest NIC NCCL will not use GPUDirect RDMA with (it stages
 * their traffic through host memory), or will only if the GPU is on
 * NVLink-C2C, which hwloc cannot show: in NCCL's words, for its version. */
static void topo_notes(const struct gdx_topo *t, const struct gdx_gdr_rule *rule, FILE *f)
{
	char nccl[64], level[160];
	bool header = false;

	gdx_gdr_rule_nccl(rule, nccl, sizeof(nccl));
	gdx_gdr_rule_level_why(rule, level, sizeof(level));
	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		enum gdx_nccl_path type, with;
		int nic, within;

		if (gdx_topo_gpu_group(t, g, &nic, 1) < 1)
			continue;
		within = topo_nccl(t, rule, g, nic, &type);
		if (within == 1)
			continue;
		if (!header)
			fputs("\nNotes:\n", f);
		header = true;
		fprintf(f, "  GPU %s: nearest NIC %s is %s, NCCL's %s\n", gdx_topo_gpu(t, g)->pci,
			gdx_topo_nic(t, nic)->name, topo_label(t, g, nic),
			gdx_nccl_path_name(type));
		if (within < 0) {
			gdx_gdr_rule_within(rule, gdx_topo_path(t, g, nic), 1, true, &with);
			fprintf(f,
				"    direct (%s) if the GPU is on NVLink-C2C, as on Grace; staged otherwise\n"
				"    (hwloc cannot show C2C: gdx-doctor check asks the driver)\n",
				gdx_nccl_path_name(with));
		} else {
			fprintf(f, "    staged: beyond %s\n", level);
		}
		fprintf(f, "    as %s judges it\n", nccl);
	}
}

static void topo_human(const struct gdx_topo *t, const char *source,
		       const struct gdx_gdr_rule *rule, FILE *f)
{
	fprintf(f, "Topology of %s: %d GPU(s), %d RDMA NIC(s)\n", source ? source : "this machine",
		gdx_topo_ngpus(t), gdx_topo_nnics(t));
	if (gdx_topo_ngpus(t))
		topo_matrix(t, f);
	if (gdx_topo_ngroups(t) || gdx_topo_ngpus(t))
		topo_groups(t, f);
	if (gdx_topo_nnics(t))
		topo_nics(t, f);
	topo_notes(t, rule, f);
}

static void topo_nccl_human(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f);

static int doctor_topo(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct topo_opts o = {0};
	struct doctor_nccl_topo nt;
	struct gdx_gdr_rule rule;
	struct gdx_topo *t;
	char why[512], lib[PATH_MAX];
	int ret, nccl, version = 0;
	bool in_path;

	ret = doctor_args(cmd, argc, argv, topo_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;

	/* NCCL's own file, given where hwloc's was asked for: read as NCCL's */
	doctor_nccl_topo_read(&nt);
	o.nt = &nt;
	ret = gdx_topo_load_opts(&(struct gdx_topo_opts){.xml = o.xml,
							 .fd = -1,
							 .nccl_file = doctor_nccl_topo_follow(&nt)},
				 &t, why, sizeof(why));
	if (ret == -EINVAL && o.xml &&
	    (nccl = doctor_nccl_topo_as_xml(o.xml, o.json, stdout)) >= 0) {
		doctor_nccl_topo_free(&nt);
		return nccl;
	}
	if (ret) {
		fprintf(stderr, "gdx-doctor topo: %s\n", why);
		doctor_nccl_topo_free(&nt);
		return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_INPUT;
	}
	/* This machine's NCCL judges this machine; a saved file, the newest. */
	if (!o.xml)
		nccl_open(lib, sizeof(lib), &in_path, &version);
	gdx_gdr_rule_init(&rule, version);
	/* The report is printed even when a GPU or NIC is missing: it shows
	 * what was found; the exit status says what was not. */
	if (o.json)
		ret = topo_json(t, &o, &rule, stdout);
	else if (o.dot)
		topo_dot(t, o.xml, stdout);
	else
		topo_human(t, o.xml, &rule, stdout);
	if (!o.json && !o.dot)
		topo_nccl_human(&nt, t, stdout);
	/* The report first, then what is missing, in that order on a terminal. */
	fflush(stdout);
	if (ret) {
		fprintf(stderr, "gdx-doctor topo: out of memory\n");
		ret = DOCTOR_ERROR;
	} else if (!gdx_topo_ngpus(t)) {
		fprintf(stderr, "gdx-doctor topo: no NVIDIA GPU found in %s\n",
			o.xml ? o.xml : "this machine");
		ret = DOCTOR_NO_GPU;
	} else if (!gdx_topo_nnics(t)) {
		fprintf(stderr, "gdx-doctor topo: no RDMA NIC found in %s\n",
			o.xml ? o.xml : "this machine");
		ret = DOCTOR_NO_NIC;
	}
	doctor_nccl_topo_free(&nt);
	gdx_topo_free(t);
	return ret;
}

static void topo_say(void *ctx, const char *line)
{
	fputs("  note: ", ctx);
	fputs(line, ctx);
	fputc('\n', ctx);
}

/* NCCL_TOPO_FILE: the pairing it imposes, and the rails that disagree. */
static void topo_nccl_human(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f)
{
	doctor_nccl_topo_human(nt, t, f);
	doctor_nccl_topo_rails(nt, t, gdx_param_env("RAILS"), topo_say, f);
}

static const struct doctor_opt topo_opts[] = {
	{"xml", 'x', "FILE",
	 "read an hwloc XML topology (lstopo --of xml) instead of this machine; NCCL's own "
	 "format (NCCL_TOPO_FILE's) is read as NCCL reads it"},
	{"json", 'j', NULL, "print JSON instead of the table"},
	{"hostname", 'H', "NAME",
	 "the node's name in --json (default: with --xml the XML's HostName, else this "
	 "machine's)"},
	{"dot", 'd', NULL,
	 "print the PCIe tree, rail groups and path classes as graphviz dot (dot -Tsvg)"},
	{0},
};

const struct doctor_cmd doctor_cmd_topo = {
	.name = "topo",
	.summary = "GPU-NIC PCIe path classes, the rail groups the plugin forms, NUMA nodes",
	.opts = topo_opts,
	.run = doctor_topo,
};
