/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor env: every NCCL_GDX_* variable from the plugin's own table, the
 * value each has here, and the plugin's own parser's word on them.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gdx_dev.h"
#include "tools/common/gdx_escape.h"
#include "gdr/gdx_gdr_verdict.h"
#include "dev/gdx_gid.h"
#include "sys/gdx_name_list.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "wire/gdx_wire.h"

#include "tools/common/gdx_param_twin.h"
#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_conf.h"

struct env_opts {
	bool markdown, json, all;
};

static int env_on_opt(void *ctx, int key, const char *arg)
{
	struct env_opts *o = ctx;

	(void)arg;
	switch (key) {
	case 'm': o->markdown = true; break;
	case 'j': o->json = true; break;
	case 'a': o->all = true; break;
	}
	return DOCTOR_OK;
}

static const char *env_kind_name(enum gdx_nccl_kind k)
{
	return k == GDX_NCCL_twin ? "twin" : k == GDX_NCCL_noted ? "noted" : "NCCL's";
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

/* The reference libnccl-net-gdx(7) is made from: the table only, never the
 * environment, so that the output is the same on every machine. */
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
	/* the NCCL compatibility table: every NCCL_IB_* variable of NCCL's */
	fputs("\n| NCCL variable | NCCL's default | kind | this plugin | what it does here |\n"
	      "|---|---|---|---|---|\n",
	      f);
	for (int i = 0; i < gdx_nccl_var_count; i++) {
		const struct gdx_nccl_var *n = &gdx_nccl_vars[i];
		const struct gdx_param_info *p = gdx_param_of_twin(n->name);

		fprintf(f, "| `%s` | ", n->name);
		if (n->def[0])
			fprintf(f, "`%s`", n->def);
		else
			fputs("*empty*", f);
		fprintf(f, " | %s | ", env_kind_name(n->kind));
		if (p)
			fprintf(f, "`NCCL_GDX_%s`", p->name);
		fputs(" | ", f);
		md_cell(f, n->what);
		fputs(" |\n", f);
	}
}

/* A parameter's value as the plugin took it, for the lines on NCCL's
 * variables. */
static void env_value(const struct gdx_param_info *p, char *buf, size_t len)
{
	const void *field = (const char *)&gdx_params + p->off;

	if (!strcmp(p->type, "str"))
		snprintf(buf, len, "\"%s\"", *(const char *const *)field);
	else if (!strcmp(p->type, "family"))
		snprintf(buf, len, "AF_INET%s", *(const int *)field == 6 ? "6" : "");
	else
		snprintf(buf, len, "%d", *(const int *)field);
}

/* What is taken where a twin's value is not, and why: "NCCL_GDX_TIMEOUT
 * keeps its default 20 (outside 0-31)", as init's WARN says it. */
static void env_twin_refused(const struct gdx_param_info *p, char *buf, size_t len)
{
	snprintf(buf, len, "NCCL_GDX_%s keeps its default %s (outside %lld-%lld)", p->name, p->def,
		 p->lo, p->hi);
}

/* A value's continuation lines are indented past its variable's meaning's. */
#define ENV_VALUE_INDENT 8

/*
 * A unit of env's lines, at column col after the separator sep: a name, '='
 * and a value from the environment, quoted and escaped (quote; else the
 * value as it is), then what follows it. On the line when it fits there,
 * else on the next one (indented ENV_VALUE_INDENT) when it fits there, else
 * cut over as many lines as it takes, every byte kept: joining its lines
 * (less their newline and indentation) gives it back. Returns the column it
 * ends at.
 */
static int env_unit(FILE *f, int col, const char *sep, const char *name, const char *v, bool quote,
		    const char *after)
{
	size_t len = strlen(name) + GDX_ESCAPE_LEN(strlen(v)) + strlen(after) + 3;
	char *unit = malloc(len);
	int cols;

	if (!unit) { /* out of memory: on one line, rather than not at all */
		fprintf(f, "%s%s%s", sep, name, quote ? "\"" : "");
		gdx_esc_text(f, v);
		fprintf(f, "%s%s", quote ? "\"" : "", after);
		return DOCTOR_COLUMNS;
	}
	snprintf(unit, len, "%s%s", name, quote ? "\"" : "");
	gdx_escape(GDX_ESCAPE_TEXT, v, unit + strlen(unit), len - strlen(unit));
	snprintf(unit + strlen(unit), len - strlen(unit), "%s%s", quote ? "\"" : "", after);
	cols = 0;
	for (const char *c = unit; *c; c++)
		cols += ((unsigned char)*c & 0xc0) != 0x80;
	if (col + (int)strlen(sep) + cols <= DOCTOR_COLUMNS) {
		col += fprintf(f, "%s", sep);
	} else if (ENV_VALUE_INDENT + cols <= DOCTOR_COLUMNS) {
		col = fprintf(f, "\n%*s", ENV_VALUE_INDENT, "") - 1;
	} else if (col + (int)strlen(sep) < DOCTOR_COLUMNS) {
		col += fprintf(f, "%s", sep);
	}
	col = doctor_wrap(f, col, ENV_VALUE_INDENT, unit, true);
	free(unit);
	return col;
}

/* NCCL's NCCL_IB_* variables set here, each with what the plugin does with
 * it: the value it takes through its twin, or why it is not applied. */
static void env_nccl_text(FILE *f)
{
	bool any = false;

	for (int i = 0; i < gdx_nccl_var_count; i++) {
		const struct gdx_nccl_var *n = &gdx_nccl_vars[i];
		const struct gdx_param_info *p = gdx_param_of_twin(n->name);
		const char *v = getenv(n->name);
		char val[160], what[192], from[1200];
		int col;

		if (!v || !*v)
			continue;
		if (!any)
			fputs("\nNCCL's variables set here:\n", f);
		any = true;
		snprintf(what, sizeof(what), "%s=", n->name);
		col = env_unit(f, 0, "", what, v, true,
			       doctor_conf_from(n->name, from, sizeof(from)));
		if (p && gdx_param_src(p->name) == GDX_PARAM_TWIN) {
			env_value(p, val, sizeof(val));
			snprintf(what, sizeof(what), "taken: NCCL_GDX_%s=", p->name);
			col = env_unit(f, col, "  ", what, val, false, "");
		} else if (p && gdx_param_src(p->name) == GDX_PARAM_TWIN_REFUSED) {
			env_twin_refused(p, val, sizeof(val));
			snprintf(what, sizeof(what), "  refused: %s", val);
			doctor_wrap(f, col, ENV_VALUE_INDENT, what, false);
		} else if (p) {
			snprintf(what, sizeof(what), "  not read: NCCL_GDX_%s is set", p->name);
			doctor_wrap(f, col, ENV_VALUE_INDENT, what, false);
		} else {
			snprintf(what, sizeof(what), "  %s",
				 n->kind == GDX_NCCL_nccl ? "NCCL's own" : "not applied");
			doctor_wrap(f, col, ENV_VALUE_INDENT, what, false);
		}
		fputs("\n    ", f);
		doctor_wrap(f, 4, 4, n->what, false);
		fputc('\n', f);
	}
}

/* Whether a variable is set, itself or through its NCCL_IB_* twin. */
static bool env_is_set(const struct gdx_param_info *p)
{
	return gdx_param_env(p->name) || gdx_param_twin_env(p);
}

/*
 * The variables: every one with all (its type, default, value and
 * meaning), else only those set, each with where it came from, and one line
 * for the rest. The types are padded to the widest, so that the defaults
 * and values line up whatever a variable's type.
 */
static void env_text(FILE *f, bool all)
{
	int w = 0, tw = 0, unset = 0;

	for (int i = 0; i < gdx_param_count; i++) {
		if ((int)strlen(gdx_param_infos[i].name) > w)
			w = (int)strlen(gdx_param_infos[i].name);
		if ((int)strlen(gdx_param_infos[i].type) > tw)
			tw = (int)strlen(gdx_param_infos[i].type);
	}
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];
		char var[96], what[128], sep[16], refused[128], from[1200];
		const char *v, *def;
		int col;

		if (!all && !env_is_set(p)) {
			unset++;
			continue;
		}
		snprintf(var, sizeof(var), "NCCL_GDX_%s", p->name);
		v = gdx_param_env(p->name);
		def = p->def[0] ? p->def : "(empty)";
		col = fprintf(f, "%-*s  %-*s  default %s", w + 9, var, tw, p->type, def);
		/* the default in 8 columns at least, then two spaces: the
		 * separator, which a value moved to the next line leaves out */
		snprintf(sep, sizeof(sep), "%*s", 2 + (strlen(def) < 8 ? 8 - (int)strlen(def) : 0),
			 "");
		/* the environment's bytes, escaped: a newline or an escape
		 * sequence in a value neither adds a line nor acts on the
		 * terminal; one too long for the line goes on in the next ones */
		if (v) {
			/* where from, in the value's unit: on its line */
			doctor_conf_from(var, from, sizeof(from));
			env_unit(f, col, sep, "set to ", v, true,
				 from[0] ? from : " (environment)");
		} else if (gdx_param_twin_env(p)) {
			snprintf(what, sizeof(what), "not set; %s=", p->twin);
			/* as init takes it: outside the range, the default */
			if (gdx_param_src(p->name) == GDX_PARAM_TWIN_REFUSED) {
				snprintf(refused, sizeof(refused),
					 " is refused (outside %lld-%lld): its default %s is used",
					 p->lo, p->hi, p->def);
				col = env_unit(f, col, sep, what, gdx_param_twin_env(p), true, "");
				doctor_wrap(f, col, ENV_VALUE_INDENT, refused, false);
			} else {
				env_unit(f, col, sep, what, gdx_param_twin_env(p), true,
					 " is taken");
			}
		} else {
			fprintf(f, "%snot set", sep);
		}
		fputs("\n    ", f);
		doctor_wrap(f, 4, 4, p->help, false);
		fputc('\n', f);
	}
	if (unset) {
		char line[256];

		snprintf(
			line, sizeof(line),
			unset == gdx_param_count
				? "no NCCL_GDX_* variable is set, nor an NCCL_IB_* one the plugin "
				  "reads: all %d at their defaults (gdx-doctor env --all lists "
				  "each, with its meaning)"
				: "%d other NCCL_GDX_* variable(s) at their defaults (gdx-doctor env "
				  "--all lists each, with its meaning)",
			unset);
		doctor_wrap(f, 0, 0, line, false);
		fputc('\n', f);
	}
}

/* NCCL_IB_* names of earlier NCCL releases, which NCCL 2.31 no longer reads
 * (those it does are gdx_nccl_vars): set on purpose, never a misspelling. */
static const char *const env_nccl_ib_old[] = {
	"NCCL_IB_CUDA_SUPPORT",
	"NCCL_IB_GDR_LEVEL",
	"NCCL_IB_GDR_FLUSH_DISABLE",
};

/* Whether name (len bytes, after the common prefix) is near known, close
 * enough to be a misspelling: 1 edit in a short name, 2 in one of 5 or more
 * characters. */
static bool env_near(const char *name, size_t len, const char *known)
{
	size_t kl = strlen(known);
	int d = gdx_distance(name, len, known, kl);

	return d <= (kl >= 5 ? 2 : 1);
}

int doctor_env_unknown(struct doctor_unknown *u, int max)
{
	extern char **environ;
	static const char gdx[] = "NCCL_GDX_", ib[] = "NCCL_IB_";
	int n = 0;

	for (char **e = environ; *e; e++) {
		size_t len = strcspn(*e, "=");
		const char *best = NULL;
		bool ours = !strncmp(*e, gdx, sizeof(gdx) - 1), known = false;

		if (!ours && strncmp(*e, ib, sizeof(ib) - 1))
			continue;
		if (ours) {
			const char *name = *e + sizeof(gdx) - 1;
			size_t nl = len - (sizeof(gdx) - 1);

			for (int i = 0; i < gdx_param_count && !known; i++) {
				const char *k = gdx_param_infos[i].name;

				known = strlen(k) == nl && !strncmp(k, name, nl);
				if (!best && env_near(name, nl, k))
					best = k;
			}
		} else {
			const char *name = *e + sizeof(ib) - 1;
			size_t nl = len - (sizeof(ib) - 1);

			for (size_t i = 0; i < sizeof(env_nccl_ib_old) / sizeof(env_nccl_ib_old[0]);
			     i++)
				known |= strlen(env_nccl_ib_old[i]) == len &&
					 !strncmp(env_nccl_ib_old[i], *e, len);
			for (int i = 0; i < gdx_nccl_var_count; i++)
				known |= strlen(gdx_nccl_vars[i].name) == len &&
					 !strncmp(gdx_nccl_vars[i].name, *e, len);
			for (int i = 0; i < gdx_param_count && !known; i++) {
				const char *t = gdx_param_infos[i].twin;

				if (!t || strncmp(t, ib, sizeof(ib) - 1))
					continue;
				known = strlen(t) == len && !strncmp(t, *e, len);
				if (!best && env_near(name, nl, t + sizeof(ib) - 1))
					best = t;
			}
			/* An NCCL_IB_ name near none of the twins may be NCCL's own. */
			if (!best)
				known = true;
		}
		if (known)
			continue;
		if (n < max) {
			snprintf(u[n].var, sizeof(u[n].var), "%.*s", (int)len, *e);
			snprintf(u[n].suggest, sizeof(u[n].suggest), "%s%s",
				 best && ours ? gdx : "", best ? best : "");
			u[n].ours = ours;
		}
		n++;
	}
	return n;
}

void doctor_unknown_text(const struct doctor_unknown *u, char *buf, size_t len)
{
	char near[160] = "", var[GDX_ESCAPE_LEN(sizeof(u->var))];

	/* a name from the environment: any bytes but '=' */
	gdx_escape(GDX_ESCAPE_TEXT, u->var, var, sizeof(var));

	if (u->suggest[0])
		snprintf(near, sizeof(near), " (misspelt %s?)", u->suggest);
	if (u->ours)
		snprintf(buf, len,
			 "%s is set, but the plugin has no such variable: the setting is "
			 "ignored%s",
			 var, near);
	else
		snprintf(buf, len,
			 "%s is set, but the plugin reads no such variable, and NCCL none "
			 "gdx-doctor knows of: the setting is likely ignored%s",
			 var, near);
}

#define ENV_MAX_UNKNOWN 64

/* The unknown names, as the text or the JSON output wants them; returns how
 * many are NCCL_GDX_ names (what makes env exit 6). */
static int env_unknown(FILE *f, bool json)
{
	struct doctor_unknown u[ENV_MAX_UNKNOWN];
	int n = doctor_env_unknown(u, ENV_MAX_UNKNOWN), ours = 0, k = 0;

	if (n > ENV_MAX_UNKNOWN)
		n = ENV_MAX_UNKNOWN;
	for (int i = 0; i < n; i++) {
		char text[512];

		ours += u[i].ours;
		if (json) {
			if (!u[i].ours)
				continue;
			fputs(k++ ? ", " : "", f);
			json_str(f, u[i].var);
			continue;
		}
		doctor_unknown_text(&u[i], text, sizeof(text));
		fprintf(f, "gdx-doctor env: %s%s\n", u[i].ours ? "" : "note: ", text);
	}
	if (json) {
		fputs("],\n \"did_you_mean\": {", f);
		k = 0;
		for (int i = 0; i < n; i++) {
			if (!u[i].suggest[0])
				continue;
			fputs(k++ ? ", " : "", f);
			json_str(f, u[i].var);
			fputs(": ", f);
			json_str(f, u[i].suggest);
		}
		fputs("}", f);
	}
	return ours;
}

/* ---- the environment judged as init judges it ---- */

static struct doctor_refusal *env_refusals;
static int env_nrefusals, env_max_refusals;
static bool env_show_notes; /* env prints the twins' notes; check has its own report */

static void env_refuse(const char *var, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void env_refuse(const char *var, const char *fmt, ...)
{
	va_list ap;

	if (env_nrefusals < env_max_refusals) {
		struct doctor_refusal *r = &env_refusals[env_nrefusals];

		snprintf(r->var, sizeof(r->var), "%s", var);
		va_start(ap, fmt);
		vsnprintf(r->text, sizeof(r->text), fmt, ap);
		va_end(ap);
	}
	env_nrefusals++;
}

/* The plugin's logger while its parser runs: a WARN about one of ours
 * ("NCCL_GDX_TIMEOUT=99 is out of range 0-31") is a refusal; one about a
 * twin (NCCL_IB_SL=99: the default is used) only a note, which init survives. */
__attribute__((format(printf, 5, 6))) static void env_logger(ncclDebugLogLevel level,
							     unsigned long flags, const char *file,
							     int line, const char *fmt, ...)
{
	const char *prefix = GDX_LOG_PREFIX;
	char msg[512], var[64];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level != NCCL_LOG_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!strncmp(msg, prefix, strlen(prefix)))
		memmove(msg, msg + strlen(prefix), strlen(msg + strlen(prefix)) + 1);
	if (strncmp(msg, "NCCL_GDX_", strlen("NCCL_GDX_"))) {
		if (env_show_notes)
			fprintf(stderr, "gdx-doctor env: note: %s\n", msg);
		return;
	}
	snprintf(var, sizeof(var), "%.*s", (int)strcspn(msg, "= "), msg);
	env_refuse(var, "%s", msg);
}

/* The variable a string setting came from, as the messages name it. */
static const char *env_var(const char *name, char *buf, size_t len)
{
	for (int i = 0; i < gdx_param_count; i++)
		if (!strcmp(gdx_param_infos[i].name, name) && gdx_param_src(name) == GDX_PARAM_TWIN)
			return gdx_param_infos[i].twin;
	snprintf(buf, len, "NCCL_GDX_%s", name);
	return buf;
}

/* NCCL_GDX_RAILS as the plugin reads it, but for the device names, which
 * only its init can match against the active ports: keywords, or groups of
 * names joined by '+', separated by ','. */
static const char *env_rails_syntax(const char *spec)
{
	int groups = 0;

	if (!*spec || !strcmp(spec, "auto") || !strcmp(spec, "gpu") || !strcmp(spec, "off"))
		return NULL;
	for (const char *s = spec;;) {
		size_t len = strcspn(s, ","), members = 0;

		if (len == 0)
			return "empty group";
		if (++groups > GDX_MAX_DEVS)
			return "too many groups";
		for (const char *m = s; m < s + len;) {
			size_t l = strcspn(m, "+,");

			if (l == 0)
				return "empty device name in a group";
			if (++members > GDX_MAX_RAILS)
				return "a group has more than 8 members";
			m += l;
			if (*m == '+' && (m + 1 == s + len))
				return "empty device name in a group";
			if (*m == '+')
				m++;
		}
		if (!s[len])
			return NULL;
		s += len + 1;
	}
}

int doctor_env_refusals(struct doctor_refusal *r, int max)
{
	struct gdx_name_list filter;
	struct gdx_gid_range range;
	enum gdx_gdr_policy policy;
	const char *err;
	char buf[64];

	env_refusals = r;
	env_max_refusals = max;
	env_nrefusals = 0;
	gdx_log_set(env_logger);
	gdx_params_load(); /* its WARNs, one per refused value, land in env_logger */
	gdx_log_set(NULL);
	if (gdx_name_list_parse(gdx_params.hca, true, &filter, &err))
		env_refuse(env_var("HCA", buf, sizeof(buf)), "%s=\"%s\" is malformed: %s",
			   env_var("HCA", buf, sizeof(buf)), gdx_params.hca, err);
	if (gdx_name_list_parse(gdx_params.socket_ifname, false, &filter, &err))
		env_refuse(env_var("SOCKET_IFNAME", buf, sizeof(buf)), "%s=\"%s\" is malformed: %s",
			   env_var("SOCKET_IFNAME", buf, sizeof(buf)), gdx_params.socket_ifname,
			   err);
	/* A twin's malformed range is ignored, as NCCL ignores it. */
	if (gdx_param_src("ADDR_RANGE") == GDX_PARAM_OURS &&
	    gdx_gid_range_parse(gdx_params.addr_range, &range))
		env_refuse("NCCL_GDX_ADDR_RANGE",
			   "NCCL_GDX_ADDR_RANGE=\"%s\" is not an address range such as 10.0.0.0/8",
			   gdx_params.addr_range);
	if (gdx_gdr_policy_parse(gdx_params.gdr, &policy))
		env_refuse("NCCL_GDX_GDR", "NCCL_GDX_GDR=\"%s\" must be auto, on or off",
			   gdx_params.gdr);
	err = env_rails_syntax(gdx_params.rails ? gdx_params.rails : "");
	if (err)
		env_refuse("NCCL_GDX_RAILS",
			   "NCCL_GDX_RAILS=\"%s\": %s (auto, gpu, off, or groups such as "
			   "mlx5_0+mlx5_1,mlx5_2+mlx5_3)",
			   gdx_params.rails, err);
	return env_nrefusals;
}

#define ENV_MAX_REFUSALS 64

static void env_json(FILE *f, const struct doctor_refusal *r, int nr, int *unknown_p)
{
	fputs("{\"variables\": [", f);
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];
		char var[96], from[1100];

		snprintf(var, sizeof(var), "NCCL_GDX_%s", p->name);
		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "name", var);
		fprintf(f, ", \"type\": \"%s\", \"default\": ", p->type);
		json_str(f, p->def);
		fputs(", ", f);
		json_key_str(f, "twin", p->twin);
		fputs(", \"value\": ", f);
		if (gdx_param_env(p->name))
			json_str(f, gdx_param_env(p->name));
		else
			fputs("null", f);
		fputs(", ", f);
		json_key_str(f, "from", doctor_conf_source(var, from, sizeof(from)));
		fputs(", ", f);
		json_key_str(f, "twin_value", gdx_param_twin_env(p));
		fputs(", ", f);
		json_key_str(f, "help", p->help);
		fputs("}", f);
	}
	fputs("],\n \"nccl\": [", f);
	for (int i = 0; i < gdx_nccl_var_count; i++) {
		const struct gdx_nccl_var *n = &gdx_nccl_vars[i];
		const struct gdx_param_info *p = gdx_param_of_twin(n->name);
		const char *v = getenv(n->name);
		char var[96], val[160], from[1100];

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "name", n->name);
		fputs(", ", f);
		json_key_str(f, "default", n->def);
		fprintf(f, ", \"kind\": \"%s\", ", env_kind_name(n->kind));
		snprintf(var, sizeof(var), "NCCL_GDX_%s", p ? p->name : "");
		json_key_str(f, "twin_of", p ? var : NULL);
		fputs(", ", f);
		json_key_str(f, "value", v && *v ? v : NULL);
		fputs(", ", f);
		json_key_str(f, "from",
			     v && *v ? doctor_conf_source(n->name, from, sizeof(from)) : NULL);
		/* what the plugin took from it: its twin's value, when it came from it */
		if (p && v && *v && gdx_param_src(p->name) == GDX_PARAM_TWIN)
			env_value(p, val, sizeof(val));
		fputs(", ", f);
		json_key_str(f, "taken",
			     p && v && *v && gdx_param_src(p->name) == GDX_PARAM_TWIN ? val : NULL);
		/* why nothing was taken from it, when its value is out of range */
		if (p && gdx_param_src(p->name) == GDX_PARAM_TWIN_REFUSED)
			env_twin_refused(p, val, sizeof(val));
		fputs(", ", f);
		json_key_str(f, "refused",
			     p && gdx_param_src(p->name) == GDX_PARAM_TWIN_REFUSED ? val : NULL);
		fputs(", ", f);
		json_key_str(f, "what", n->what);
		fputs("}", f);
	}
	fputs("],\n \"unknown\": [", f);
	*unknown_p = env_unknown(f, true); /* closes the list, adds did_you_mean */
	fputs(",\n \"refused\": [", f);
	for (int i = 0; i < nr && i < ENV_MAX_REFUSALS; i++) {
		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "variable", r[i].var);
		fputs(", ", f);
		json_key_str(f, "message", r[i].text);
		fputs("}", f);
	}
	fputs("],\n ", f);
	doctor_conf_json(f);
	fprintf(f, ",\n \"exit\": %d}\n", nr || *unknown_p ? DOCTOR_BAD_ENV : DOCTOR_OK);
}

static int doctor_env(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct doctor_refusal r[ENV_MAX_REFUSALS];
	struct env_opts o = {0};
	int ret, nr, unknown;

	ret = doctor_args(cmd, argc, argv, env_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.markdown) {
		env_markdown(stdout);
		return DOCTOR_OK;
	}
	env_show_notes = !o.json;
	nr = doctor_env_refusals(r, ENV_MAX_REFUSALS);
	if (o.json) {
		env_json(stdout, r, nr, &unknown);
		return nr || unknown ? DOCTOR_BAD_ENV : DOCTOR_OK;
	}
	env_text(stdout, o.all);
	env_nccl_text(stdout);
	doctor_conf_text(stdout, "NCCL's configuration files (read and applied as NCCL does):");
	fflush(stdout);
	unknown = env_unknown(stderr, false);
	for (int i = 0; i < nr && i < ENV_MAX_REFUSALS; i++)
		fprintf(stderr, "gdx-doctor env: refused: %s\n", r[i].text);
	if (nr)
		fprintf(stderr,
			"gdx-doctor env: the plugin refuses %d setting(s); its init would fail\n",
			nr);
	return nr || unknown ? DOCTOR_BAD_ENV : DOCTOR_OK;
}

static const struct doctor_opt env_opts[] = {
	{"markdown", 'm', NULL,
	 "print the reference as a Markdown table (libnccl-net-gdx(7)'s source), ignoring the environment"},
	{"all", 'a', NULL,
	 "every variable, set or not, with its type, default and meaning (without it: those "
	 "set, and how many are at their defaults)"},
	{"json", 'j', NULL, "print JSON: every variable, the unknown names, the refused values"},
	{0},
};

const struct doctor_cmd doctor_cmd_env = {
	.name = "env",
	.summary = "the NCCL_GDX_* variables set here, where from, what the plugin takes (--all: "
		   "every one)",
	.opts = env_opts,
	.run = doctor_env,
};
