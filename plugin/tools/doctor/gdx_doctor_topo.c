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
#include "sys/gdx_sysfs.h"

#include "tools/common/gdx_topo_query.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_nccl_topo.h"
#include "tools/doctor/gdx_doctor_topo_rdma.h"

/* The text report's width: a terminal's. */
#define TOPO_COLS 80

struct topo_opts {
	const struct doctor_nccl_topo *nt; /* NCCL_TOPO_FILE, what NCCL makes of it */
	const char *xml;
	const char *hostname;	/* --hostname */
	const char *sysfs_root; /* --sysfs-root; NULL: /sys, or none for --xml */
	char xml_buf[PATH_MAX]; /* DIR/topo.xml for --sysfs-root DIR */
	/* The RDMA devices check lists: those hwloc has not are not on PCIe. */
	struct doctor_rdma rdma;
	bool json, dot;
};

static int topo_on_opt(void *ctx, int key, const char *arg)
{
	struct topo_opts *o = ctx;

	switch (key) {
	case 'x': o->xml = arg; break;
	case 'H': o->hostname = arg; break;
	case 's': o->sysfs_root = arg; break;
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

/* The end of a NIC's entry: whether it is on PCIe, its netdev and that
 * netdev's PCI function (null where sysfs was not read: --xml). */
static void json_netdev(FILE *f, bool pcie, const struct doctor_rdma_dev *d)
{
	fprintf(f, ", \"on_pcie\": %s, \"netdev\": ", pcie ? "true" : "false");
	json_str_or_null(f, d ? d->netdev : NULL);
	fputs(", \"netdev_pci\": ", f);
	json_str_or_null(f, d ? d->netdev_pci : NULL);
	fputc('}', f);
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

		fprintf(f, "%s\n  {\"index\": %d, \"pci\": ", g ? "," : "", g);
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

		fprintf(f, "%s\n  {\"index\": %d, \"name\": ", i ? "," : "", i);
		json_str(f, nic->name);
		fputs(", \"pci\": ", f);
		json_str_or_null(f, nic->pci);
		fputs(", \"numa\": ", f);
		json_numa(f, nic->numa);
		fputs(", \"package\": ", f);
		json_numa(f, nic->package);
		fprintf(f, ", \"rail_gpus\": %d", nic->group_gpus);
		json_netdev(f, nic->pci[0] != '\0', doctor_rdma_find(&o->rdma, nic->name));
	}
	/* The devices hwloc does not list: no PCI function, no path, no rail. */
	for (int i = 0, k = nn; i < o->rdma.n; i++) {
		const struct doctor_rdma_dev *d = &o->rdma.devs[i];

		if (d->topo >= 0)
			continue;
		fprintf(f, "%s\n  {\"index\": %d, \"name\": ", k ? "," : "", k);
		k++;
		json_str(f, d->name);
		fputs(", \"pci\": null, \"numa\": null, \"package\": null, \"rail_gpus\": 0", f);
		json_netdev(f, false, d);
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
		fputs("], \"gpu_index\": [", f);
		for (int k = 0; k < grp->ngpus; k++)
			fprintf(f, "%s%d", k ? ", " : "", grp->gpus[k]);
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

/* A NIC's second line: its bus id, else the netdev it sits on. */
static void dot_nic_where(const char *pci, const struct doctor_rdma_dev *d, FILE *f)
{
	if (pci[0]) {
		dot_text(f, pci);
	} else if (d && d->netdev[0]) {
		fputs("on ", f);
		dot_text(f, d->netdev);
		if (d->netdev_pci[0]) {
			fputs(" at ", f);
			dot_text(f, d->netdev_pci);
		}
	} else {
		fputs("(no PCI device)", f);
	}
}

static void dot_nic(const struct gdx_topo *t, const struct topo_opts *o, int n, const char *indent,
		    FILE *f)
{
	const struct gdx_topo_nic *nic = gdx_topo_nic(t, n);

	fprintf(f, "%snic%d [label=\"", indent, n);
	dot_text(f, nic->name);
	fputs("\\n", f);
	dot_nic_where(nic->pci, doctor_rdma_find(&o->rdma, nic->name), f);
	fputs("\", style=filled, fillcolor=lightblue];\n", f);
}

/* The RDMA devices hwloc does not list, in a box of their own: no PCI
 * function, so no place in the tree, no path class and no rail. */
static void dot_not_on_pcie(const struct gdx_topo *t, const struct topo_opts *o, FILE *f)
{
	int k = gdx_topo_nnics(t);

	if (!doctor_rdma_unlisted(&o->rdma))
		return;
	fputs("  subgraph cluster_not_on_pcie {\n    label=\"not on PCIe (no path class, no "
	      "rail)\";\n    style=rounded;\n    labeljust=l;\n",
	      f);
	for (int i = 0; i < o->rdma.n; i++) {
		const struct doctor_rdma_dev *d = &o->rdma.devs[i];

		if (d->topo >= 0)
			continue;
		fprintf(f, "    nic%d [label=\"", k++);
		dot_text(f, d->name);
		fputs("\\n", f);
		dot_nic_where("", d, f);
		fputs("\", style=filled, fillcolor=lightgrey];\n", f);
	}
	fputs("  }\n", f);
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
static void topo_dot(const struct gdx_topo *t, const struct topo_opts *o, FILE *f)
{
	static const char *const kind_names[] = {"host bridge", "root port", "PCIe switch"};
	int ng = gdx_topo_ngpus(t), nn = gdx_topo_nnics(t), nb = gdx_topo_nbridges(t);
	bool *placed = calloc((size_t)nn + 1, sizeof(*placed));

	fputs("graph \"gdx-topo\" {\n", f);
	dot_legend(t, o->xml, f);
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
			dot_nic(t, o, grp->nics[k], "    ", f);
		}
		fputs("  }\n", f);
	}
	/* A GPU with no PCI NIC is in no group; every NIC is in one. */
	for (int g = 0; g < ng; g++)
		if (gdx_topo_gpu_group(t, g, NULL, 0) == 0)
			dot_gpu(t, g, "  ", f);
	for (int n = 0; n < nn; n++)
		if (!placed || !placed[n])
			dot_nic(t, o, n, "  ", f);
	dot_not_on_pcie(t, o, f);
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

/*
 * text from column col on (col characters are on the line already), wrapped
 * at its spaces to TOPO_COLS, each further line indented to column indent; a
 * word longer than the room left stands on a line of its own.
 */
static void topo_wrap(FILE *f, int col, int indent, const char *text)
{
	const char *s = text + strspn(text, " ");

	for (bool first = true; *s; first = false) {
		int w = (int)strcspn(s, " ");

		if (col + w + !first > TOPO_COLS && col > indent) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", w, s);
		col += w;
		s += w;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

/* One cell of the table, padded to w unless it ends the line. */
static void topo_cell(FILE *f, const char *s, int w, bool end)
{
	if (end)
		fprintf(f, "%s\n", s);
	else
		fprintf(f, "%-*s", w, s);
}

/*
 * GPUs down, NICs across, as nvidia-smi topo -m draws them: GPU0 and NIC0
 * on, by their index (the legends below give their addresses and names), so
 * that a DGX H100's 10 NICs fit in TOPO_COLS; more columns than fit go on in
 * a second table below.
 */
static void topo_matrix(const struct gdx_topo *t, FILE *f)
{
	int ng = gdx_topo_ngpus(t), nn = gdx_topo_nnics(t);
	char name[24];
	int w, left, per, from = 0;

	snprintf(name, sizeof(name), "GPU%d", ng - 1);
	left = (int)strlen(name) + 2;
	snprintf(name, sizeof(name), "NIC%d", nn - 1);
	w = (int)strlen(name);
	for (int g = 0; g < ng; g++)
		for (int i = 0; i < nn; i++)
			if ((int)strlen(topo_label(t, g, i)) > w)
				w = (int)strlen(topo_label(t, g, i));
	w += 2;
	per = (TOPO_COLS - left - (int)strlen("NUMA")) / w;
	if (per < 1)
		per = 1;
	do {
		int to = from + per < nn ? from + per : nn;
		bool last = to == nn;

		fprintf(f, "\n%-*s", left, "");
		for (int i = from; i < to; i++) {
			snprintf(name, sizeof(name), "NIC%d", i);
			topo_cell(f, name, w, !last && i == to - 1);
		}
		if (last)
			fputs("NUMA\n", f);
		for (int g = 0; g < ng; g++) {
			snprintf(name, sizeof(name), "GPU%d", g);
			topo_cell(f, name, left, false);
			for (int i = from; i < to; i++)
				topo_cell(f, topo_label(t, g, i), w, !last && i == to - 1);
			if (last) {
				topo_print_numa(f, gdx_topo_gpu(t, g)->numa);
				fputc('\n', f);
			}
		}
		from = to;
	} while (from < nn);
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
		fputs("  NUMA-UNKNOWN = between PCIe host bridges, one of which hwloc recorded\n"
		      "         no NUMA node for (old dumps): NODE or SYS, unknown which;\n"
		      "         ranked after NODE\n",
		      f);
	for (int i = 0; i < nn; i++)
		if (!gdx_topo_nic(t, i)->pci[0]) {
			fputs("  UNKNOWN = the NIC has no PCI device (virtual, such as rxe)\n", f);
			break;
		}
}

/* The GPU legend: each index's address and NUMA node. */
static void topo_gpus(const struct gdx_topo *t, FILE *f)
{
	fputs("\nGPUs:\n", f);
	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		fprintf(f, "  GPU%-3d %-14s NUMA ", g, gdx_topo_gpu(t, g)->pci);
		topo_print_numa(f, gdx_topo_gpu(t, g)->numa);
		fputc('\n', f);
	}
}

static void topo_groups(const struct gdx_topo *t, FILE *f)
{
	fprintf(f, "\nRail groups (each GPU uses the NICs at its best path class%s):\n",
		topo_has_label(t, "SYS*") ? ", SYS* before SYS" : "");
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);
		int col = fprintf(f, "  group %d: ", i);
		char text[1024];
		size_t len = 0;

		for (int k = 0; k < grp->nnics; k++)
			col += fprintf(f, "%s%s", k ? "," : "",
				       gdx_topo_nic(t, grp->nics[k])->name);
		if (!grp->ngpus) {
			const char *why = gdx_topo_nic(t, grp->nics[0])->pci[0] ? "near no GPU"
										: "no PCI device";

			fprintf(f, "%*s(%s: stands alone)\n", col < 32 ? 32 - col : 1, "", why);
			continue;
		}
		col += fprintf(f, "%*s", col < 32 ? 32 - col : 1, "");
		len = (size_t)snprintf(text, sizeof(text), "<-");
		for (int k = 0; k < grp->ngpus && len < sizeof(text); k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, " GPU%d %s%s",
						grp->gpus[k],
						topo_label(t, grp->gpus[k], grp->nics[0]),
						k + 1 < grp->ngpus ? "," : "");
		topo_wrap(f, col, 35, text);
	}
	for (int g = 0; g < gdx_topo_ngpus(t); g++)
		if (gdx_topo_gpu_group(t, g, NULL, 0) == 0)
			fprintf(f, "  GPU%d (%s) has no PCI NIC: no rail\n", g,
				gdx_topo_gpu(t, g)->pci);
}

/* Where a NIC is, in the NIC legend: its bus id, else the netdev it sits on
 * (sysfs's; unknown for --xml). */
static const char *topo_nic_where(const char *pci, const struct doctor_rdma_dev *d, char *buf,
				  size_t len)
{
	if (pci[0])
		return pci;
	if (!d || !d->netdev[0])
		return "(no PCI)";
	snprintf(buf, len, "on %s", d->netdev);
	return buf;
}

/* The NIC legend: each index's name, where it is, its NUMA node and rail;
 * then the RDMA devices hwloc does not list (no PCI function: rxe, siw). */
static void topo_nics(const struct gdx_topo *t, const struct topo_opts *o, FILE *f)
{
	int ng = gdx_topo_ngpus(t), k = gdx_topo_nnics(t);
	char where[64];

	fputs("\nNICs:\n", f);
	for (int i = 0; i < gdx_topo_nnics(t); i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		fprintf(f, "  NIC%-3d %-10s %-14s NUMA ", i, nic->name,
			topo_nic_where(nic->pci, doctor_rdma_find(&o->rdma, nic->name), where,
				       sizeof(where)));
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
	for (int i = 0; i < o->rdma.n; i++) {
		const struct doctor_rdma_dev *d = &o->rdma.devs[i];
		int col;

		if (d->topo >= 0)
			continue;
		col = fprintf(f, "  NIC%-3d %-10s %-14s ", k++, d->name,
			      topo_nic_where("", d, where, sizeof(where)));
		if (d->netdev_pci[0])
			snprintf(where, sizeof(where), "netdev at %s, not on PCIe itself",
				 d->netdev_pci);
		else
			snprintf(where, sizeof(where), "not on PCIe: no path class, no rail");
		topo_wrap(f, col, 8, where);
	}
}

/* GPUs whose nearest NIC NCCL will not use GPUDirect RDMA with (it stages
 * their traffic through host memory), or will only if the GPU is on
 * NVLink-C2C, which hwloc cannot show: in NCCL's words, for its version. */
static void topo_notes(const struct gdx_topo *t, const struct gdx_gdr_rule *rule, FILE *f)
{
	char nccl[64], level[160], line[320];
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
		snprintf(line, sizeof(line), "GPU%d (%s): nearest NIC %s is %s, NCCL's %s", g,
			 gdx_topo_gpu(t, g)->pci, gdx_topo_nic(t, nic)->name, topo_label(t, g, nic),
			 gdx_nccl_path_name(type));
		topo_wrap(f, fprintf(f, "  "), 4, line);
		if (within < 0) {
			gdx_gdr_rule_within(rule, gdx_topo_path(t, g, nic), 1, true, &with);
			fprintf(f,
				"    direct (%s) if the GPU is on NVLink-C2C, as on Grace; staged otherwise\n"
				"    (hwloc cannot show C2C: gdx-doctor check asks the driver)\n",
				gdx_nccl_path_name(with));
		} else {
			snprintf(line, sizeof(line), "staged: beyond %s", level);
			topo_wrap(f, fprintf(f, "    "), 6, line);
		}
		snprintf(line, sizeof(line), "as %s judges it", nccl);
		topo_wrap(f, fprintf(f, "    "), 6, line);
	}
}

static void topo_human(const struct gdx_topo *t, const struct topo_opts *o,
		       const struct gdx_gdr_rule *rule, FILE *f)
{
	int unlisted = doctor_rdma_unlisted(&o->rdma), col;
	char counts[128];

	snprintf(counts, sizeof(counts), "%d GPU(s), %d RDMA NIC(s)", gdx_topo_ngpus(t),
		 gdx_topo_nnics(t) + unlisted);
	if (unlisted)
		snprintf(counts + strlen(counts), sizeof(counts) - strlen(counts),
			 ", %d not on PCIe", unlisted);
	/* The counts on the next line when a long file name leaves no room. */
	col = fprintf(f, "Topology of %s:", o->xml ? o->xml : "this machine");
	if (col + 1 + (int)strlen(counts) > TOPO_COLS)
		fprintf(f, "\n  %s\n", counts);
	else
		fprintf(f, " %s\n", counts);
	if (gdx_topo_ngpus(t)) {
		topo_matrix(t, f);
		topo_gpus(t, f);
	}
	if (gdx_topo_nnics(t) || unlisted)
		topo_nics(t, o, f);
	if (gdx_topo_ngroups(t) || gdx_topo_ngpus(t))
		topo_groups(t, f);
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

	/* A saved node: its topo.xml, unless --xml names another file. */
	if (o.sysfs_root && !o.xml) {
		snprintf(o.xml_buf, sizeof(o.xml_buf), "%s/topo.xml", o.sysfs_root);
		o.xml = o.xml_buf;
	}
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
	/* The RDMA devices check lists, of this machine or the saved tree; an
	 * XML file alone is another machine, whose sysfs is not here. */
	if (o.sysfs_root || !o.xml)
		doctor_rdma_list(o.sysfs_root ? o.sysfs_root : gdx_sysfs_root(), t, &o.rdma);
	/* This machine's NCCL judges this machine; a saved file, the newest. */
	if (!o.xml)
		nccl_open(lib, sizeof(lib), &in_path, &version);
	gdx_gdr_rule_init(&rule, version);
	/* The report is printed even when a GPU or NIC is missing: it shows
	 * what was found; the exit status says what was not. */
	if (o.json)
		ret = topo_json(t, &o, &rule, stdout);
	else if (o.dot)
		topo_dot(t, &o, stdout);
	else
		topo_human(t, &o, &rule, stdout);
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
	} else if (!gdx_topo_nnics(t) && !doctor_rdma_unlisted(&o.rdma)) {
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
	{"sysfs-root", 's', "DIR",
	 "a saved node: its RDMA devices from DIR/class/infiniband, its topology from "
	 "DIR/topo.xml unless --xml names one (default: this machine's /sys)"},
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
