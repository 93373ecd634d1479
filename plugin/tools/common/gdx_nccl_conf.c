/* SPDX-License-Identifier: MIT */
/* NCCL's configuration files, read and applied as NCCL does (gdx_nccl_conf.h). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/gdx_env.h"
#include "sys/gdx_file.h"
#include "tools/common/gdx_escape.h"
#include "tools/common/gdx_nccl_conf.h"

static int conf_note(struct gdx_nccl_conf *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int conf_note(struct gdx_nccl_conf *c, const char *fmt, ...)
{
	char **notes = realloc(c->notes, ((size_t)c->nnotes + 1) * sizeof(*notes));
	char buf[768];
	va_list ap;

	if (!notes)
		return -ENOMEM;
	c->notes = notes;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->notes[c->nnotes] = strdup(buf);
	if (!c->notes[c->nnotes])
		return -ENOMEM;
	c->nnotes++;
	return 0;
}

static int conf_add(struct gdx_nccl_conf *c, const char *name, const char *value, int file,
		    int line, int applied)
{
	struct gdx_nccl_conf_var *v = realloc(c->vars, ((size_t)c->nvars + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	c->vars = v;
	v = &c->vars[c->nvars];
	v->name = strdup(name);
	v->value = strdup(value);
	v->file = file;
	v->line = line;
	v->applied = applied;
	if (!v->name || !v->value) {
		free(v->name);
		free(v->value);
		return -ENOMEM;
	}
	c->nvars++;
	return 0;
}

/* One line, as setEnvFile takes it: s is the line less its '\n' (the text
 * up to a NUL, as NCCL's string calls see it). */
static int conf_line(struct gdx_nccl_conf *c, int file, int line, char *s, size_t len)
{
	const char *path = c->files[file].path;
	char name[GDX_NCCL_CONF_STRLEN + 1], value[GDX_NCCL_CONF_STRLEN + 1], esc[96];
	char *eq;
	size_t n;
	int ret = 0, applied;

	if (s[0] == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq) {
		/* blank lines are common, and say nothing */
		if (strspn(s, " \t\r") == strlen(s))
			return 0;
		return conf_note(c, "%s:%d: no '=' (\"%s\"): NCCL skips the line", path, line,
				 gdx_esc_text_buf(esc, sizeof(esc), s));
	}
	if (memchr(s, '\0', len))
		ret = conf_note(c, "%s:%d: a NUL byte: NCCL reads the line only up to it", path,
				line);
	n = (size_t)(eq - s);
	if (n > GDX_NCCL_CONF_STRLEN) {
		n = GDX_NCCL_CONF_STRLEN;
		ret = ret ? ret
			  : conf_note(c, "%s:%d: a name over 1023 bytes: NCCL cuts it", path, line);
	}
	memcpy(name, s, n);
	name[n] = '\0';
	snprintf(value, sizeof(value), "%s", eq + 1);
	if (strlen(eq + 1) > GDX_NCCL_CONF_STRLEN)
		ret = ret ? ret
			  : conf_note(c, "%s:%d: a value over 1023 bytes: NCCL cuts it", path,
				      line);
	if (!name[0])
		return ret ? ret
			   : conf_note(c, "%s:%d: an empty name: setenv refuses it, nothing is set",
				       path, line);
	/* NCCL trims nothing: "NCCL_X = 1" sets "NCCL_X " to " 1" */
	if (strpbrk(name, " \t") && !ret)
		ret = conf_note(
			c, "%s:%d: blanks in the name \"%s\": NCCL sets that name, blanks and all",
			path, line, gdx_esc_text_buf(esc, sizeof(esc), name));
	/* NCCL up to 2.29 keeps a CRLF file's CR in the value; later ones drop it */
	if (value[0] && value[strlen(value) - 1] == '\r' && !ret)
		ret = conf_note(c,
				"%s:%d: ends in a CR (a DOS line end): NCCL 2.29 and earlier "
				"keep it in %s's value, later ones drop it",
				path, line, gdx_esc_text_buf(esc, sizeof(esc), name));
	if (ret)
		return ret;
	applied = getenv(name) == NULL;
	if (applied && setenv(name, value, 0))
		applied = 0;
	return conf_add(c, name, value, file, line, applied);
}

static int conf_parse(struct gdx_nccl_conf *c, int file, char *buf, size_t len)
{
	int line = 0, ret = 0;

	for (size_t at = 0; at < len && !ret;) {
		char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len;

		buf[end] = '\0';
		ret = conf_line(c, file, ++line, buf + at, end - at);
		at = end + 1;
	}
	return ret;
}

/* One file: opened as hostile input, owned by the user or root, then parsed. */
static int conf_file(struct gdx_nccl_conf *c, enum gdx_nccl_conf_kind kind, const char *path)
{
	struct gdx_nccl_conf_file *f = &c->files[c->nfiles];
	char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int fd, ret, i = c->nfiles++;

	f->kind = kind;
	snprintf(f->path, sizeof(f->path), "%s", path);
	fd = gdx_file_open(AT_FDCWD, path, 0, GDX_NCCL_CONF_MAX, f->why, sizeof(f->why));
	if (fd < 0) {
		f->err = fd;
		if (fd == -ENOENT)
			return 0;
		return conf_note(c, "%s; not read (NCCL would try to read it)", f->why);
	}
	if (fstat(fd, &st) == 0 && st.st_uid != getuid() && st.st_uid != 0) {
		close(fd);
		f->err = -EPERM;
		gdx_file_why(f->why, sizeof(f->why), -EPERM,
			     "%s is owned by uid %u, neither you nor root", path,
			     (unsigned)st.st_uid);
		return conf_note(c,
				 "%s: not applied, as anyone who can write it could set your "
				 "variables (NCCL reads it all the same)",
				 f->why);
	}
	ret = gdx_file_read_fd(fd, path, GDX_NCCL_CONF_MAX, 1, &buf, &len, f->why, sizeof(f->why));
	close(fd);
	if (ret) {
		f->err = ret;
		return ret == -ENOMEM ? ret : conf_note(c, "%s; not read", f->why);
	}
	ret = conf_parse(c, i, buf, len);
	free(buf);
	return ret;
}

/* NCCL 2.29 and earlier take the directory from the password database,
 * later ones from $HOME: $HOME here, and a note when the two differ. */
static int conf_home(struct gdx_nccl_conf *c, const char **home_p)
{
	const struct passwd *pw = getpwuid(getuid());
	const char *home = gdx_env(GDX_ENV_HOME);

	if (!home)
		home = pw ? pw->pw_dir : NULL;
	*home_p = home;
	if (home && pw && pw->pw_dir && strcmp(home, pw->pw_dir))
		return conf_note(c,
				 "$HOME (%s) is not your home directory in the password "
				 "database (%s): NCCL 2.29 and earlier read %s/.nccl.conf",
				 home, pw->pw_dir, pw->pw_dir);
	return 0;
}

int gdx_nccl_conf_load(const struct gdx_nccl_conf_paths *p, struct gdx_nccl_conf *c)
{
	static const struct gdx_nccl_conf_paths none;
	const char *named, *home = NULL, *sys;
	char user[1024];
	int ret = 0;

	memset(c, 0, sizeof(*c));
	p = p ? p : &none;
	named = p->named ? p->named : gdx_env(GDX_ENV_CONF_FILE);
	sys = p->system ? p->system : gdx_env(GDX_ENV_NCCL_CONF_SYSTEM);
	if (named && *named) {
		ret = conf_file(c, GDX_NCCL_CONF_NAMED, named);
	} else {
		if (p->home)
			home = p->home;
		else
			ret = conf_home(c, &home);
		if (!ret && home) {
			snprintf(user, sizeof(user), "%s/.nccl.conf", home);
			ret = conf_file(c, GDX_NCCL_CONF_USER, user);
		}
	}
	if (!ret)
		ret = conf_file(c, GDX_NCCL_CONF_SYSTEM, sys ? sys : "/etc/nccl.conf");
	if (ret)
		gdx_nccl_conf_free(c);
	return ret;
}

void gdx_nccl_conf_free(struct gdx_nccl_conf *c)
{
	for (int i = 0; i < c->nvars; i++) {
		free(c->vars[i].name);
		free(c->vars[i].value);
	}
	for (int i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->vars);
	free(c->notes);
	memset(c, 0, sizeof(*c));
}

const char *gdx_nccl_conf_source(const struct gdx_nccl_conf *c, const char *name, char *buf,
				 size_t len)
{
	if (!getenv(name))
		return NULL;
	for (int i = 0; c && i < c->nvars; i++)
		if (c->vars[i].applied && !strcmp(c->vars[i].name, name)) {
			snprintf(buf, len, "%s:%d", c->files[c->vars[i].file].path,
				 c->vars[i].line);
			return buf;
		}
	snprintf(buf, len, "environment");
	return buf;
}
