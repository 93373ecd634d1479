/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's part on what NCCL reads besides the environment: its
 * configuration files (where each setting came from, and the lines it
 * treats oddly) and its topology file (NCCL_TOPO_FILE: the pairing NCCL
 * takes from it, and the plugin's rails judged against it).
 */
#include <stdio.h>
#include <string.h>

#include "sys/gdx_param.h"

#include "tools/doctor/gdx_doctor_check.h"
#include "tools/doctor/gdx_doctor_conf.h"
#include "tools/doctor/gdx_doctor_nccl_topo.h"

static void check_say_rails(void *ctx, const char *line)
{
	check_problem(ctx, GDX_GDR_LEVEL_DEGRADED, "%s", line);
}

void check_nccl_topo(struct check *c, const struct gdx_topo *t, const char *xml)
{
	const struct doctor_nccl_topo *nt = &c->ntopo;
	struct gdx_topo *own = NULL;
	char esc[GDX_ESCAPE_LEN(256)], from[GDX_ESCAPE_LEN(256)];

	for (int i = 0; i < doctor_conf.nnotes; i++)
		check_problem(c, GDX_GDR_LEVEL_OK, "NCCL's configuration: %s",
			      gdx_esc_text_buf(esc, sizeof(esc), doctor_conf.notes[i]));
	if (!nt->file)
		return;
	gdx_esc_text_buf(esc, sizeof(esc), nt->file);
	gdx_esc_text_buf(from, sizeof(from), nt->from);
	if (!nt->n) {
		char why[GDX_ESCAPE_LEN(256)];

		check_problem(c, nt->level,
			      "NCCL_TOPO_FILE=%s (from %s) cannot be read: %s; fix: the "
			      "file, or unset NCCL_TOPO_FILE",
			      esc, from, gdx_esc_text_buf(why, sizeof(why), nt->why));
		return;
	}
	check_problem(c, GDX_GDR_LEVEL_OK,
		      "NCCL takes its topology from NCCL_TOPO_FILE=%s (from %s): the GPU-NIC pairs "
		      "and rails here are judged by its path classes%s",
		      esc, from,
		      nt->plugin_own ? "; the plugin reads NCCL_GDX_TOPO_FILE instead" : "");
	/* the rails by the plugin's own topology: this machine's without --xml */
	if (!t && c->here &&
	    !gdx_topo_load_opts(&(struct gdx_topo_opts){.xml = xml,
							.fd = -1,
							.nccl_file = doctor_nccl_topo_follow(nt)},
				&own, NULL, 0))
		t = own;
	doctor_nccl_topo_rails(nt, t, gdx_param_env("RAILS"), check_say_rails, c);
	gdx_topo_free(own);
}

void check_nccl_topo_human(const struct check *c, const struct gdx_topo *t, FILE *f)
{
	bool any = false;

	/* every setting NCCL's files gave, with the file and line */
	for (int i = 0; i < doctor_conf.nvars; i++) {
		const struct gdx_nccl_conf_var *v = &doctor_conf.vars[i];

		if (!v->applied)
			continue;
		if (!any)
			fputs("\nSettings from NCCL's configuration files\n", f);
		any = true;
		fputs("  ", f);
		gdx_esc_text(f, v->name);
		fputc('=', f);
		gdx_esc_text(f, v->value);
		fputs(" (from ", f);
		gdx_esc_text(f, doctor_conf.files[v->file].path);
		fprintf(f, ":%d)\n", v->line);
	}
	doctor_nccl_topo_human(&c->ntopo, t, f);
}

void check_nccl_topo_json(const struct check *c, const struct gdx_topo *t, FILE *f)
{
	doctor_conf_json(f);
	fputs(",\n ", f);
	doctor_nccl_topo_json(&c->ntopo, t, f);
	fputs(",\n ", f);
}
