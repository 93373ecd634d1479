/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor env: every NCCL_GDX_* variable from the plugin's own table, the
 * value each has here, and the plugin's own parser's word on them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_param.h>

#include "gdx_doctor.h"

struct env_opts {
	bool markdown;
};

static int env_on_opt(void *ctx, int key, const char *arg)
{
	struct env_opts *o = ctx;

	(void)arg;
	switch (key) {
	case 'm': o->markdown = true; break;
	}
	return DOCTOR_OK;
}

/* Table cell text: '|' would end the cell, the others would start markup. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("|*`<\\", *s))
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* The README's reference: the table only, never the environment, so that the
 * output is the same on every machine. */
static void env_markdown(FILE *f)
{
	fputs("| variable | NCCL's, read when unset | type | default | meaning |\n"
	      "|---|---|---|---|---|\n",
	      f);
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];

		fprintf(f, "| `NCCL_GDX_%s` | ", p->name);
		if (p->twin)
			fprintf(f, "`%s`", p->twin);
		fprintf(f, " | %s | ", p->type);
		if (!p->def[0])
			fputs("*empty*", f);
		else if (strpbrk(p->def, "`|"))
			md_cell(f, p->def);
		else
			fprintf(f, "`%s`", p->def);
		fputs(" | ", f);
		md_cell(f, p->help);
		fputs(" |\n", f);
	}
}

static void env_text(FILE *f)
{
	int w = 0;

	for (int i = 0; i < gdx_param_count; i++)
		if ((int)strlen(gdx_param_infos[i].name) > w)
			w = (int)strlen(gdx_param_infos[i].name);
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];
		char var[96];
		const char *v;

		snprintf(var, sizeof(var), "NCCL_GDX_%s", p->name);
		v = gdx_param_env(p->name);
		fprintf(f, "%-*s  %s  default %-8s  ", w + 9, var, p->type,
			p->def[0] ? p->def : "(empty)");
		if (v)
			fprintf(f, "set to \"%s\"\n", v);
		else if (gdx_param_twin_env(p))
			fprintf(f, "not set; %s=\"%s\" is taken\n", p->twin, gdx_param_twin_env(p));
		else
			fputs("not set\n", f);
		fprintf(f, "    %s\n", p->help);
	}
}

/* NCCL_GDX_* names in the environment that the table does not have: the
 * plugin ignores them, and a misspelt name silently keeps the default. */
static int env_unknown(void)
{
	extern char **environ;
	int n = 0;

	for (char **e = environ; *e; e++) {
		const char *name = *e + strlen("NCCL_GDX_");
		size_t len = strcspn(name, "=");
		bool known = false;

		if (strncmp(*e, "NCCL_GDX_", strlen("NCCL_GDX_")))
			continue;
		for (int i = 0; i < gdx_param_count && !known; i++)
			known = strlen(gdx_param_infos[i].name) == len &&
				!strncmp(gdx_param_infos[i].name, name, len);
		if (known)
			continue;
		fprintf(stderr,
			"gdx-doctor env: NCCL_GDX_%.*s is set, but the plugin has no such "
			"variable (misspelt?)\n",
			(int)len, name);
		n++;
	}
	return n;
}

static int doctor_env(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct env_opts o = {0};
	int ret;

	ret = doctor_args(cmd, argc, argv, env_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.markdown) {
		env_markdown(stdout);
		return DOCTOR_OK;
	}
	env_text(stdout);
	fflush(stdout);
	ret = DOCTOR_OK;
	if (env_unknown())
		ret = DOCTOR_BAD_ENV;
	/* The plugin's own parser: its WARN names the variable it refuses. */
	if (gdx_params_load()) {
		fprintf(stderr, "gdx-doctor env: the plugin refuses these settings; its init "
				"would fail\n");
		ret = DOCTOR_BAD_ENV;
	}
	return ret;
}

static const struct doctor_opt env_opts[] = {
	{"markdown", 'm', NULL,
	 "print the reference as a Markdown table (the README's), ignoring the environment"},
	{0},
};

const struct doctor_cmd doctor_cmd_env = {
	.name = "env",
	.summary = "every NCCL_GDX_* variable: type, default, value set here, meaning",
	.opts = env_opts,
	.run = doctor_env,
};
