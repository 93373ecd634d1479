/* SPDX-License-Identifier: MIT */
/*
 * NCCL's topology file in gdx-doctor (gdx_doctor_nccl_topo.h). What NCCL
 * does with NCCL_TOPO_FILE (src/graph/topo.cc, ncclTopoGetSystem, and
 * xml.cc, ncclTopoGetXmlFromFile): a file it cannot open is said at INFO
 * only, and NCCL detects the topology itself; a file it cannot parse fails
 * its init (ncclInternalError, a WARN of the parser's); when the variable
 * is unset it tries /var/run/nvidia-topologyd/virtualTopology.xml, quietly.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/gdx_env.h"
#include "sys/gdx_file.h"
#include "sys/gdx_param.h"

#include "tools/common/gdx_nccl_conf.h"
#include "tools/common/gdx_topo_query.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_conf.h"
#include "tools/doctor/gdx_doctor_nccl_topo.h"

#define NCCL_TOPO_DEFAULT "/var/run/nvidia-topologyd/virtualTopology.xml"

void doctor_nccl_topo_read(struct doctor_nccl_topo *nt)
{
	const char *own = gdx_param_env("TOPO_FILE");
	char why[400];
	int fd;

	memset(nt, 0, sizeof(*nt));
	nt->file = gdx_env(GDX_ENV_TOPO_FILE);
	if (!nt->file)
		return;
	nt->plugin_own = own && *own;
	if (!doctor_conf_source("NCCL_TOPO_FILE", nt->from, sizeof(nt->from)) ||
	    !strcmp(nt->from, "environment"))
		snprintf(nt->from, sizeof(nt->from), "the environment");
	fd = gdx_file_open(AT_FDCWD, nt->file, 0, GDX_TOPO_NCCL_MAX, why, sizeof(why));
	if (fd == -EINVAL) {
		/* a FIFO, a device, a socket: NCCL's fopen takes it as it is */
		nt->err = fd;
		nt->level = GDX_GDR_LEVEL_BROKEN;
		snprintf(
			nt->why, sizeof(nt->why),
			"%s; NCCL opens it as it is (a FIFO stops its init until something writes)",
			why);
		return;
	}
	if (fd < 0) {
		nt->err = fd;
		nt->level = GDX_GDR_LEVEL_DEGRADED;
		snprintf(nt->why, sizeof(nt->why),
			 "%s; NCCL says so at INFO only and detects the topology itself, without "
			 "the pairing the file was to give",
			 why);
		return;
	}
	nt->err = gdx_topo_nccl_read(fd, nt->file, &nt->n, why, sizeof(why));
	close(fd);
	if (nt->err) {
		nt->level = nt->err == -ENOMEM ? GDX_GDR_LEVEL_DEGRADED : GDX_GDR_LEVEL_BROKEN;
		snprintf(nt->why, sizeof(nt->why),
			 "%s; NCCL's init fails on a file it cannot parse", why);
	}
}

void doctor_nccl_topo_free(struct doctor_nccl_topo *nt)
{
	gdx_topo_nccl_free(nt->n);
	nt->n = NULL;
}

const char *doctor_nccl_topo_follow(const struct doctor_nccl_topo *nt)
{
	return nt->n && !nt->plugin_own ? nt->file : NULL;
}

/* NCCL's classes have gdx_path's values (gdx_topo_nccl.h), and names. */
static const char *nt_path_name(enum gdx_tnc_class p)
{
	return gdx_path_name((enum gdx_path)p);
}

/* A file NIC's name as t knows it (its verbs name), else the file's. */
static const char *nt_nic_name(const struct gdx_topo_nccl *n, int k, const struct gdx_topo *t)
{
	for (int i = 0; t && i < gdx_topo_nnics(t); i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		if (gdx_topo_nccl_find_nic(n, nic->name, nic->pci) == k)
			return nic->name;
	}
	return n->nics[k].name[0] ? n->nics[k].name : n->nics[k].pci;
}

/* GPU g's nearest class in the file, GDX_TNC_UNKNOWN when it has no NIC. */
static enum gdx_tnc_class nt_best(const struct gdx_topo_nccl *n, int g)
{
	enum gdx_tnc_class best = GDX_TNC_UNKNOWN;

	for (int k = 0; k < n->nnics; k++)
		if (gdx_topo_nccl_path(n, g, k) < best)
			best = gdx_topo_nccl_path(n, g, k);
	return best;
}

static void nt_say_file(const struct doctor_nccl_topo *nt, FILE *f)
{
	fputs("  NCCL_TOPO_FILE=", f);
	gdx_esc_text(f, nt->file);
	fputs(" (from ", f);
	gdx_esc_text(f, nt->from);
	fputs(")\n", f);
}

void doctor_nccl_topo_human(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f)
{
	const struct gdx_topo_nccl *n = nt->n;

	if (!nt->file) {
		if (access(NCCL_TOPO_DEFAULT, F_OK) == 0)
			fputs("\nNCCL's topology file\n  NCCL_TOPO_FILE is not set: NCCL reads " NCCL_TOPO_DEFAULT
			      " (its default); the plugin does not follow it\n",
			      f);
		return;
	}
	fputs("\nNCCL's topology file\n", f);
	nt_say_file(nt, f);
	if (!n) {
		fputs("  not read: ", f);
		gdx_esc_text(f, nt->why);
		fputc('\n', f);
		return;
	}
	fprintf(f, "  NCCL takes its topology from it: %d GPU(s), %d NIC(s); %s\n", n->ngpus,
		n->nnics,
		nt->plugin_own ? "the plugin does not follow it (NCCL_GDX_TOPO_FILE is set)"
			       : "the plugin follows it");
	fprintf(f, "  %-13s %-10s %s\n", "GPU", "NIC", "PATH (NCCL's, from the file)");
	for (int g = 0; g < n->ngpus; g++) {
		enum gdx_tnc_class best = nt_best(n, g);

		for (int k = 0; k < n->nnics; k++) {
			if (gdx_topo_nccl_path(n, g, k) != best)
				continue;
			fprintf(f, "  %-13s ", n->gpus[g].pci);
			gdx_esc_text(f, nt_nic_name(n, k, t));
			fprintf(f, "%*s %s%s\n",
				(int)(strlen(nt_nic_name(n, k, t)) < 10
					      ? 10 - strlen(nt_nic_name(n, k, t))
					      : 0),
				"", nt_path_name(best), n->gpus[g].c2c ? ", C2C" : "");
		}
	}
}

void doctor_nccl_topo_json(const struct doctor_nccl_topo *nt, const struct gdx_topo *t, FILE *f)
{
	const struct gdx_topo_nccl *n = nt->n;
	bool first = true;

	if (!nt->file) {
		fputs("\"nccl_topo\": null", f);
		return;
	}
	fputs("\"nccl_topo\": {", f);
	json_key_str(f, "file", nt->file);
	fputs(", ", f);
	json_key_str(f, "from", nt->from);
	fprintf(f, ", \"plugin_follows\": %s, ", doctor_nccl_topo_follow(nt) ? "true" : "false");
	json_key_str(f, "error", n ? NULL : nt->why);
	fputs(", \"pairs\": [", f);
	for (int g = 0; n && g < n->ngpus; g++) {
		enum gdx_tnc_class best = nt_best(n, g);

		for (int k = 0; k < n->nnics; k++) {
			if (gdx_topo_nccl_path(n, g, k) != best)
				continue;
			fprintf(f, "%s{", first ? "" : ", ");
			first = false;
			json_key_str(f, "gpu", n->gpus[g].pci);
			fputs(", ", f);
			json_key_str(f, "nic", nt_nic_name(n, k, t));
			fprintf(f, ", \"path\": \"%s\", \"c2c\": %s}", nt_path_name(best),
				n->gpus[g].c2c ? "true" : "false");
		}
	}
	fputs("]}", f);
}

/* The GPU the file pairs NIC name with: the first at its nearest class, at
 * PXB or nearer; -1 none (or a NIC the file does not name). */
static int nt_gpu_of(const struct gdx_topo_nccl *n, const struct gdx_topo *t, const char *name)
{
	int i = gdx_topo_find_nic(t, name), k, best = -1;

	k = gdx_topo_nccl_find_nic(n, name, i >= 0 ? gdx_topo_nic(t, i)->pci : NULL);
	for (int g = 0; k >= 0 && g < n->ngpus; g++)
		if (gdx_topo_nccl_path(n, g, k) <= GDX_TNC_PXB &&
		    (best < 0 || gdx_topo_nccl_path(n, g, k) < gdx_topo_nccl_path(n, best, k)))
			best = g;
	return best;
}

/* One fused device of members names[0..m): said when two members' GPUs differ. */
static int nt_judge(const struct gdx_topo_nccl *n, const struct gdx_topo *t, const char *rails,
		    char names[][GDX_TOPO_NAME_LEN], int m, void (*say)(void *, const char *),
		    void *ctx)
{
	int g0 = nt_gpu_of(n, t, names[0]);
	char line[1024], esc[GDX_ESCAPE_LEN(96)], e0[GDX_ESCAPE_LEN(32)], e1[GDX_ESCAPE_LEN(32)];

	for (int i = 1; i < m; i++) {
		int gi = nt_gpu_of(n, t, names[i]);

		if (gi == g0 || (gi < 0 && g0 < 0))
			continue;
		snprintf(line, sizeof(line),
			 "NCCL_GDX_RAILS=%s fuses %s and %s, which NCCL's topology file pairs with "
			 "%s%s and %s%s: NCCL places the fused device at one GPU, and the other's "
			 "traffic crosses the host; fix: NCCL_GDX_RAILS=off, or groups the file "
			 "pairs with one GPU",
			 gdx_esc_text_buf(esc, sizeof(esc), rails),
			 gdx_esc_text_buf(e0, sizeof(e0), names[0]),
			 gdx_esc_text_buf(e1, sizeof(e1), names[i]), g0 < 0 ? "no GPU" : "GPU ",
			 g0 < 0 ? "" : n->gpus[g0].pci, gi < 0 ? "no GPU" : "GPU ",
			 gi < 0 ? "" : n->gpus[gi].pci);
		say(ctx, line);
		return 1;
	}
	return 0;
}

int doctor_nccl_topo_rails(const struct doctor_nccl_topo *nt, const struct gdx_topo *t,
			   const char *rails, void (*say)(void *ctx, const char *line), void *ctx)
{
	char names[32][GDX_TOPO_NAME_LEN];
	int found = 0;

	if (!nt->n || !t)
		return 0;
	rails = rails && *rails ? rails : "auto";
	if (!strcmp(rails, "off"))
		return 0;
	if (!strcmp(rails, "auto") || !strcmp(rails, "gpu")) {
		for (int i = 0; i < gdx_topo_ngroups(t); i++) {
			const struct gdx_topo_group *grp = gdx_topo_group(t, i);
			int m = 0;

			if (!grp->ngpus || grp->nnics < 2)
				continue;
			for (int k = 0; k < grp->nnics && m < 32; k++)
				snprintf(names[m++], GDX_TOPO_NAME_LEN, "%s",
					 gdx_topo_nic(t, grp->nics[k])->name);
			found += nt_judge(nt->n, t, rails, names, m, say, ctx);
		}
		return found;
	}
	/* explicit groups, "mlx5_0+mlx5_1,mlx5_2+mlx5_3" (env refuses a malformed one) */
	for (const char *s = rails; *s;) {
		size_t len = strcspn(s, ",");
		int m = 0;

		for (const char *p = s; p < s + len && m < 32;) {
			size_t l = strcspn(p, "+,");

			snprintf(names[m++], GDX_TOPO_NAME_LEN, "%.*s", (int)l, p);
			p += l + (p[l] == '+');
		}
		if (m >= 2)
			found += nt_judge(nt->n, t, rails, names, m, say, ctx);
		s += len + (s[len] == ',');
	}
	return found;
}

/* A NIC's label in the matrix: its net name, else its bus id. */
static const char *nt_label(const struct gdx_topo_nccl *n, int k)
{
	return n->nics[k].name[0]  ? n->nics[k].name
	       : n->nics[k].pci[0] ? n->nics[k].pci
				   : "(no PCI)";
}

static void nt_matrix_json(const char *path, const struct gdx_topo_nccl *n, FILE *f)
{
	fputs("{\"format\": \"nccl\", ", f);
	json_key_str(f, "source", path);
	fputs(",\n \"gpus\": [", f);
	for (int g = 0; g < n->ngpus; g++) {
		fprintf(f, "%s{", g ? ", " : "");
		json_key_str(f, "pci", n->gpus[g].pci);
		fprintf(f, ", \"c2c\": %s, \"paths\": [", n->gpus[g].c2c ? "true" : "false");
		for (int k = 0; k < n->nnics; k++)
			fprintf(f, "%s\"%s\"", k ? ", " : "",
				nt_path_name(gdx_topo_nccl_path(n, g, k)));
		fputs("]}", f);
	}
	fputs("],\n \"nics\": [", f);
	for (int k = 0; k < n->nnics; k++) {
		fprintf(f, "%s{", k ? ", " : "");
		json_key_str(f, "pci", n->nics[k].pci[0] ? n->nics[k].pci : NULL);
		fputs(", ", f);
		json_key_str(f, "name", n->nics[k].name[0] ? n->nics[k].name : NULL);
		fputs("}", f);
	}
	fputs("]}\n", f);
}

int doctor_nccl_topo_as_xml(const char *path, bool json, FILE *f)
{
	struct gdx_topo_nccl *n;
	char why[256];

	if (gdx_topo_nccl_read(-1, path, &n, why, sizeof(why)))
		return -1;
	if (json) {
		nt_matrix_json(path, n, f);
	} else {
		gdx_esc_text(f, path);
		fprintf(f,
			" is NCCL's topology format (what NCCL_TOPO_FILE names and "
			"NCCL_TOPO_DUMP_FILE writes), not hwloc's: %d GPU(s), %d NIC(s), with "
			"NCCL's classes from its tree. For the PCIe tree and the plugin's rail groups, "
			"give hwloc's XML (lstopo --of xml FILE); to see what NCCL_TOPO_FILE does to "
			"them, set it and run gdx-doctor topo or check.\n",
			n->ngpus, n->nnics);
		for (int k = 0; k < n->nnics; k++) {
			fprintf(f, "%s  NIC%-2d ", k ? "" : "\n", k);
			gdx_esc_text(f, nt_label(n, k));
			fputc('\n', f);
		}
		fprintf(f, "\n  %-13s", "GPU");
		for (int k = 0; k < n->nnics; k++)
			fprintf(f, k + 1 < n->nnics ? " NIC%-3d" : " NIC%d", k);
		fputc('\n', f);
		for (int g = 0; g < n->ngpus; g++) {
			fprintf(f, "  %-13s", n->gpus[g].pci);
			for (int k = 0; k < n->nnics; k++)
				fprintf(f, k + 1 < n->nnics ? " %-6s" : " %s",
					nt_path_name(gdx_topo_nccl_path(n, g, k)));
			fputs(n->gpus[g].c2c ? "  C2C\n" : "\n", f);
		}
	}
	int ret = !n->ngpus ? DOCTOR_NO_GPU : !n->nnics ? DOCTOR_NO_NIC : DOCTOR_OK;

	gdx_topo_nccl_free(n);
	return ret;
}
