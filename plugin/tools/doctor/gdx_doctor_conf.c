/* SPDX-License-Identifier: MIT */
/* NCCL's configuration files in gdx-doctor (gdx_doctor_conf.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_conf.h"

struct gdx_nccl_conf doctor_conf;

void doctor_conf_load(void)
{
	if (gdx_nccl_conf_load(NULL, &doctor_conf))
		fputs("gdx-doctor: out of memory reading NCCL's configuration files\n", stderr);
}

const char *doctor_conf_source(const char *name, char *buf, size_t len)
{
	return gdx_nccl_conf_source(&doctor_conf, name, buf, len);
}

const char *doctor_conf_from(const char *name, char *buf, size_t len)
{
	char src[1100];
	const char *s = doctor_conf_source(name, src, sizeof(src));

	if (!s || !strcmp(s, "environment"))
		s = NULL;
	snprintf(buf, len, "%s%s%s", s ? " (from " : "", s ? s : "", s ? ")" : "");
	return buf;
}

static const char *conf_kind_name(enum gdx_nccl_conf_kind k)
{
	return k == GDX_NCCL_CONF_NAMED	 ? "NCCL_CONF_FILE"
	       : k == GDX_NCCL_CONF_USER ? "user"
					 : "system";
}

/* What became of a file: read, not there, or refused and why. */
static const char *conf_file_state(const struct gdx_nccl_conf_file *cf)
{
	return !cf->err ? "read" : cf->err == -ENOENT ? "not there" : cf->why;
}

/* NCCL's variables on where NCCL reads from, which env's tables do not list. */
static const char *const conf_steering[] = {"NCCL_CONF_FILE", "NCCL_TOPO_FILE"};

static bool conf_is_steering(const char *name)
{
	for (size_t i = 0; i < sizeof(conf_steering) / sizeof(conf_steering[0]); i++)
		if (!strcmp(name, conf_steering[i]))
			return true;
	return false;
}

void doctor_conf_text(FILE *f, const char *header)
{
	const struct gdx_nccl_conf *c = &doctor_conf;

	fprintf(f, "\n%s\n", header);
	for (int i = 0; i < c->nfiles; i++) {
		fprintf(f, "  %-14s ", conf_kind_name(c->files[i].kind));
		gdx_esc_text(f, c->files[i].path);
		fputs(": ", f);
		gdx_esc_text(f, conf_file_state(&c->files[i]));
		fputc('\n', f);
	}
	/* the variables that steer NCCL's own reading, wherever they came from */
	for (size_t i = 0; i < sizeof(conf_steering) / sizeof(conf_steering[0]); i++) {
		const char *v = getenv(conf_steering[i]);
		char src[1100];

		if (!v)
			continue;
		fprintf(f, "  %s=\"", conf_steering[i]);
		gdx_esc_text(f, v);
		fputs("\" (from ", f);
		gdx_esc_text(f, doctor_conf_source(conf_steering[i], src, sizeof(src)));
		fputs(")\n", f);
	}
	for (int i = 0; i < c->nvars; i++) {
		const struct gdx_nccl_conf_var *v = &c->vars[i];

		if (v->applied && conf_is_steering(v->name))
			continue; /* said above */
		fputs("  ", f);
		gdx_esc_text(f, v->name);
		fputs("=\"", f);
		gdx_esc_text(f, v->value);
		fputs("\" (from ", f);
		gdx_esc_text(f, c->files[v->file].path);
		fprintf(f, ":%d)%s\n", v->line,
			v->applied ? ""
				   : ": not applied, the environment or an earlier line has it");
	}
	for (int i = 0; i < c->nnotes; i++) {
		fputs("  note: ", f);
		gdx_esc_text(f, c->notes[i]);
		fputc('\n', f);
	}
}

void doctor_conf_json(FILE *f)
{
	const struct gdx_nccl_conf *c = &doctor_conf;

	fputs("\"nccl_conf\": {\"files\": [", f);
	for (int i = 0; i < c->nfiles; i++) {
		fprintf(f, "%s{\"kind\": \"%s\", ", i ? ", " : "",
			conf_kind_name(c->files[i].kind));
		json_key_str(f, "path", c->files[i].path);
		fputs(", ", f);
		json_key_str(f, "state", conf_file_state(&c->files[i]));
		fputs("}", f);
	}
	fputs("], \"variables\": [", f);
	for (int i = 0; i < c->nvars; i++) {
		const struct gdx_nccl_conf_var *v = &c->vars[i];

		fprintf(f, "%s{", i ? ", " : "");
		json_key_str(f, "name", v->name);
		fputs(", ", f);
		json_key_str(f, "value", v->value);
		fputs(", ", f);
		json_key_str(f, "file", c->files[v->file].path);
		fprintf(f, ", \"line\": %d, \"applied\": %s}", v->line,
			v->applied ? "true" : "false");
	}
	fputs("], \"notes\": [", f);
	for (int i = 0; i < c->nnotes; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, c->notes[i]);
	}
	fputs("]}", f);
}
