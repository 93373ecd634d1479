/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's NCCL: the libnccl.so.2 a job would load, its version,
 * the library it opens for NCCL_NET_PLUGIN as that release's loader does
 * (gdx_doctor_nccl.c), which table it takes, and every way it will not load
 * this plugin, each a broken node with its fix. NCCL itself is never
 * initialized, nor a plugin's init called: the libraries are opened and
 * their symbols read. Opening them (dlopen, as NCCL does) runs their ELF
 * constructors and their dependencies': check --help and gdx-doctor(1) say
 * so, for the user who points NCCL_NET_PLUGIN somewhere.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sys/gdx_env.h"
#include "sys/gdx_file.h"
#include "gdr/gdx_gdr_verdict.h"
#include "sys/gdx_log.h"

#include "tools/common/gdx_plugin_path.h"
#include "tools/doctor/gdx_doctor_check.h"

/* Opens a library to read its symbols: nothing of it is called (NCCL is
 * not initialized), but dlopen runs its constructors. */
static void *check_dlopen(const char *name, char *path, size_t len)
{
	void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	struct link_map *lm;

	if (h && path && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm->l_name)
		snprintf(path, len, "%s", lm->l_name);
	return h;
}

/* A plugin library is a few MiB at most; a file past this is not read. */
#define CHECK_LIB_MAX ((size_t)256 << 20)

/*
 * The version and wire protocol of a plugin file, read from the text of its
 * INIT line ("NET/GDX plugin: libnccl-net-gdx 0.3.2, wire protocol 4, ..."),
 * which the plugin's format string holds verbatim: nothing of the library
 * runs. Up to 0.3.2 the line began "NET/GDX : " (GDX_LOG_PREFIX_OLD); a
 * plugin older than 0.2.0 has no wire protocol in it.
 */
static void check_plugin_version(struct check_nccl *n)
{
	static const char *const markers[] = {GDX_LOG_PREFIX "libnccl-net-gdx ",
					      GDX_LOG_PREFIX_OLD "libnccl-net-gdx "};
	char buf[1 << 16];
	size_t keep = 0, got;
	/* the file NCCL_NET_PLUGIN led to: read as a hostile input (no FIFO
	 * waited on), at most CHECK_LIB_MAX bytes of it */
	int fd = gdx_file_open(AT_FDCWD, n->plugin_path, 0, CHECK_LIB_MAX, NULL, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Chunks overlap by a marker's length plus the version's, so that a
	 * line split between two reads is still found. */
	while ((got = fread(buf + keep, 1, sizeof(buf) - 1 - keep, f)) > 0) {
		size_t len = keep + got;

		for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++) {
			size_t mlen = strlen(markers[m]);
			const char *hit = memmem(buf, len, markers[m], mlen);
			char line[128];

			if (!hit || (size_t)(buf + len - hit) <= mlen + 64)
				continue;
			snprintf(line, sizeof(line), "%.*s", (int)sizeof(line) - 1, hit + mlen);
			if (sscanf(line, "%31[^,], wire protocol %d,", n->plugin_version,
				   &n->plugin_wire) < 1)
				n->plugin_version[0] = '\0';
			goto out;
		}
		keep = len < 160 ? len : 160;
		memmove(buf, buf + len - keep, keep);
	}
out:
	fclose(f);
}

/* src into dst, cut to fit. */
static void check_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The name of this plugin's network, its tables' first member: what
 * NCCL_NET selects it by. */
#define CHECK_NET_NAME "GDX"

/*
 * The library NCCL opens for one NCCL_NET_PLUGIN entry (NULL: the variable
 * unset), as release l opens it: the first name that dlopen takes, with
 * RTLD_NOW as NCCL; a file found that does not load is recorded, as NCCL
 * logs it. Fills n->lib_*; returns whether a library opened.
 */
static bool check_resolve(struct check_nccl *n, const struct nccl_loader *l, const char *entry,
			  size_t len)
{
	char names[2][NCCL_NAME_MAX];
	int k = nccl_loader_names(l, entry, len, names, 2);

	n->lib_path[0] = n->lib_net[0] = n->load_error[0] = n->tried[0] = '\0';
	n->lib_exported = n->lib_rma = 0;
	for (int i = 0; i < k; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		const char *e = h ? NULL : dlerror();
		size_t used = strlen(n->tried);
		struct link_map *lm;
		int newest = 0;

		snprintf(n->tried + used, sizeof(n->tried) - used, "%s%s", i ? ", then " : "",
			 names[i]);
		if (!h) {
			/* NCCL's own test: the error names the file and says it is
			 * not there; anything else (a dependency missing, not an
			 * ELF object) is a file that does not load. */
			if (e && !(strstr(e, names[i]) && strstr(e, "No such file")) &&
			    !n->load_error[0])
				snprintf(n->load_error, sizeof(n->load_error), "%s", e);
			continue;
		}
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm->l_name && lm->l_name[0])
			snprintf(n->lib_path, sizeof(n->lib_path), "%s", lm->l_name);
		else
			check_copy(n->lib_path, sizeof(n->lib_path), names[i]);
		for (int v = 2; v <= 30; v++) {
			char sym[32];

			snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
			if (dlsym(h, sym)) {
				n->lib_exported |= 1u << v;
				newest = v;
			}
		}
		for (int v = 13; v <= 30; v++) {
			char sym[32];

			snprintf(sym, sizeof(sym), "ncclRmaPlugin_v%d", v);
			if (dlsym(h, sym))
				n->lib_rma |= 1u << v;
		}
		if (newest) {
			char sym[32];
			int v = nccl_loader_pick(l, n->lib_exported);
			const char *const *name;

			snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v ? v : newest);
			/* Every version's table starts with its name: data, read
			 * as NCCL reads it for NCCL_NET; nothing of it runs. */
			name = dlsym(h, sym);
			if (name && *name)
				snprintf(n->lib_net, sizeof(n->lib_net), "%.63s", *name);
		}
		/* Never dlclose: a library may not unload cleanly. */
		return true;
	}
	return false;
}

/* NCCL_NET_PLUGIN as release l reads it: one plugin, or from 2.27 a list
 * whose first entry that is this plugin is the one judged. */
static void check_resolve_env(struct check_nccl *n, const struct nccl_loader *l)
{
	const char *v = n->plugin_env;

	n->first_other[0] = '\0';
	if (!v || !l->list || !strchr(v, ',')) {
		check_resolve(n, l, v, v ? strlen(v) : 0);
		n->ours = n->lib_path[0] && !strcmp(n->lib_net, CHECK_NET_NAME);
		return;
	}
	for (const char *e = v;;) {
		size_t len = strcspn(e, ",");

		if (len && check_resolve(n, l, e, len)) {
			n->ours = !strcmp(n->lib_net, CHECK_NET_NAME);
			if (n->ours)
				return;
			if (!n->first_other[0] && nccl_loader_pick(l, n->lib_exported))
				snprintf(n->first_other, sizeof(n->first_other), "%.3900s (%s)",
					 n->lib_path, n->lib_net[0] ? n->lib_net : "?");
		}
		if (!e[len])
			break;
		e += len + 1;
	}
	/* None is this plugin: judge by the first entry. */
	check_resolve(n, l, v, strcspn(v, ","));
	n->ours = false;
}

void *nccl_open(char *path, size_t len, bool *in_path, int *version)
{
	static const char *const dirs[] = {"/usr/local/cuda/lib64",
					   "/usr/local/cuda/lib",
					   "/usr/lib/x86_64-linux-gnu",
					   "/usr/lib64",
					   "/usr/local/lib",
					   "/opt/nccl/lib"};
	int (*get_version)(int *);
	char name[PATH_MAX];
	void *h;

	*version = 0;
	h = check_dlopen("libnccl.so.2", path, len);
	*in_path = h != NULL;
	for (size_t i = 0; !h && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(name, sizeof(name), "%s/libnccl.so.2", dirs[i]);
		if (access(name, F_OK) == 0)
			h = check_dlopen(name, path, len);
	}
	if (h) {
		*(void **)&get_version = dlsym(h, "ncclGetVersion");
		if (get_version && get_version(version) != 0)
			*version = 0;
		/* Never dlclose: a C++ library may not unload cleanly. */
	}
	return h;
}

int check_nccl_given(struct check *c, const char *file, char *why, size_t len)
{
	struct check_nccl *n = &c->nccl;
	int (*get_version)(int *), err;
	char path[PATH_MAX];
	const char *dl;
	void *h;

	if (access(file, R_OK)) {
		err = errno;
		snprintf(why, len, "--nccl %s: %s", file, strerror(err));
		return -err;
	}
	/* a path, which dlopen takes as it is: a bare name would be searched
	 * for in the library path */
	snprintf(path, sizeof(path), "%s%s", strchr(file, '/') ? "" : "./", file);
	h = check_dlopen(path, n->path, sizeof(n->path));
	if (!h) {
		dl = dlerror();
		snprintf(why, len, "--nccl %s does not load: %s", file, dl ? dl : "?");
		return -EINVAL;
	}
	*(void **)&get_version = dlsym(h, "ncclGetVersion");
	if (!get_version) {
		snprintf(why, len, "--nccl %s is no NCCL library: it has no ncclGetVersion", file);
		return -EINVAL;
	}
	if (get_version(&n->version) != 0)
		n->version = 0;
	n->found = true;
	n->in_path = false;
	c->nccl_file = file;
	return 0;
}

void check_nccl(struct check *c)
{
	struct check_nccl *n = &c->nccl;

	c->nccl_checked = true;
	if (!c->nccl_file)
		n->found = nccl_open(n->path, sizeof(n->path), &n->in_path, &n->version) != NULL;
	n->loader = nccl_loader_of(n->version);
	n->judged = n->loader ? n->loader : nccl_loader_newest();
	n->plugin_env = gdx_env(GDX_ENV_NET_PLUGIN);
	if (n->plugin_env && !n->plugin_env[0])
		n->plugin_env = NULL; /* NCCL takes an empty value as unset */
	n->net_env = getenv("NCCL_NET");
	if (n->net_env && !n->net_env[0])
		n->net_env = NULL;
	if (n->plugin_env && n->judged->none && !strcmp(n->plugin_env, "none"))
		return; /* no external plugin at all */
	check_resolve_env(n, n->judged);
	/* the plugin this gdx-doctor came with, to name in a fix */
	gdx_plugin_beside_self(n->beside, sizeof(n->beside));
	if (!n->lib_path[0] && !n->load_error[0] && n->plugin_env) {
		char first[NCCL_NAME_MAX];

		snprintf(first, sizeof(first), "%.*s", (int)strcspn(n->plugin_env, ","),
			 n->plugin_env);
		n->missing = strchr(first, '/') && access(first, F_OK);
	}
	if (n->ours) {
		n->api = nccl_loader_pick(n->judged, n->lib_exported);
		snprintf(n->plugin_path, sizeof(n->plugin_path), "%s", n->lib_path);
		check_plugin_version(n);
	}
}

/* "2.28.9", or "of unknown version" */
void check_nccl_name(const struct check_nccl *n, char *buf, size_t len)
{
	int major, minor, patch;

	if (!n->found) {
		snprintf(buf, len, "(none found here: judged as NCCL %s)", n->judged->releases);
		return;
	}
	if (!n->version) {
		snprintf(buf, len, "of unknown version (%s, judged as %s)", n->path,
			 n->judged->releases);
		return;
	}
	nccl_version_split(n->version, &major, &minor, &patch);
	snprintf(buf, len, "%d.%d.%d (%s)", major, minor, patch, n->path);
}

/* Why the library NCCL opens for NCCL_NET_PLUGIN is not this plugin. */
static void check_not_ours(const struct check_nccl *n, char *buf, size_t len)
{
	if (n->load_error[0])
		snprintf(buf, len, "a file there does not load: %s", n->load_error);
	else if (n->missing)
		snprintf(buf, len, "that file does not exist");
	else if (!n->lib_path[0])
		snprintf(buf, len, "and finds no such file in the library path");
	else if (!nccl_loader_pick(n->judged, n->lib_exported))
		snprintf(buf, len, "%s, which has no table NCCL takes", n->lib_path);
	else
		snprintf(buf, len, "%s, another plugin (its network is %s)", n->lib_path,
			 n->lib_net[0] ? n->lib_net : "unnamed");
}

/* Whether NCCL_NET_PLUGIN's first entry is near this plugin's name, gdx: the
 * same in another case (GDX, the network's name), or one edit away. */
static bool check_near_gdx(const char *v)
{
	size_t len = strcspn(v, ",");
	char lower[8];

	if (len >= sizeof(lower) || (len == 3 && !strncmp(v, "gdx", 3)))
		return false;
	for (size_t i = 0; i < len; i++)
		lower[i] = (char)tolower((unsigned char)v[i]);
	return gdx_distance(lower, len, "gdx", 3) <= 1;
}

/* Whether the file name is in a directory of LD_LIBRARY_PATH: the first
 * such directory into dir. */
static bool check_in_library_path(const char *name, char *dir, size_t len)
{
	const char *v = getenv("LD_LIBRARY_PATH");
	char path[PATH_MAX];

	for (const char *e = v; e && *e;) {
		size_t n = strcspn(e, ":");

		if (n &&
		    (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)n, e, name) <
			    sizeof(path) &&
		    !access(path, R_OK)) {
			snprintf(dir, len, "%.*s", (int)n, e);
			return true;
		}
		e += n + (e[n] == ':');
	}
	return false;
}

/* The fix when NCCL_NET_PLUGIN leads to no file: the name meant, the path
 * that is not there, or the directory to add to the library path, named
 * where this gdx-doctor has the plugin beside it. */
static void check_fix_not_found(const struct check_nccl *n, char *buf, size_t len)
{
	char dir[PATH_MAX];

	if (check_near_gdx(n->plugin_env))
		snprintf(buf, len,
			 "NCCL_NET_PLUGIN=gdx (did you mean it? NCCL opens libnccl-net-<value>.so, "
			 "and file names have a case)");
	else if (n->missing && n->beside[0])
		snprintf(buf, len, "NCCL_NET_PLUGIN=%s, the plugin beside this gdx-doctor",
			 n->beside);
	else if (n->missing)
		snprintf(buf, len,
			 "the full path of libnccl-net-gdx.so, or NCCL_NET_PLUGIN=gdx with its "
			 "directory in LD_LIBRARY_PATH");
	else if (check_in_library_path(GDX_PLUGIN_FILE, dir, sizeof(dir)))
		snprintf(buf, len,
			 "NCCL_NET_PLUGIN=gdx (" GDX_PLUGIN_FILE " is in %s, in "
			 "LD_LIBRARY_PATH)",
			 dir);
	else if (n->beside[0])
		snprintf(buf, len,
			 "add the plugin's directory, %.*s, to LD_LIBRARY_PATH (or give its full "
			 "path, NCCL 2.21 or later)",
			 (int)(strrchr(n->beside, '/') - n->beside), n->beside);
	else
		snprintf(buf, len,
			 "add the plugin's directory to LD_LIBRARY_PATH (or give its full path, "
			 "NCCL 2.21 or later)");
}

/*
 * NCCL loads this plugin, or will not: every way it will not is broken (the
 * job falls back to NCCL's own transport, or fails with NCCL_NET=GDX), and
 * each says how to fix it.
 */
void check_nccl_problems(struct check *c)
{
	const struct check_nccl *n = &c->nccl;
	const struct nccl_loader *l = n->judged;
	char nccl[PATH_MAX + 64], why[PATH_MAX + 600], tries[128], has[64];
	char fix[PATH_MAX + 200];

	check_nccl_name(n, nccl, sizeof(nccl));
	/* The plugin first: whichever NCCL the job brings opens it the same way. */
	if (n->ours && strcmp(n->plugin_version, GDX_VERSION))
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "the plugin NCCL would load (%s) is %s%s, this gdx-doctor %s: its "
			      "checks are this version's",
			      n->plugin_path, n->plugin_version[0] ? "version " : "",
			      n->plugin_version[0] ? n->plugin_version : "older than 0.2.0",
			      GDX_VERSION);
	if (n->plugin_env && l->none && !strcmp(n->plugin_env, "none")) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "NCCL_NET_PLUGIN=none: NCCL %s loads no external plugin, so not this "
			      "one; fix: export NCCL_NET_PLUGIN=gdx",
			      nccl);
	} else if (!n->ours && !n->plugin_env) {
		check_not_ours(n, why, sizeof(why));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN is not set: NCCL %s opens libnccl-net.so %s: it will "
			"not load this plugin; fix: export NCCL_NET_PLUGIN=gdx",
			nccl, why);
	} else if (!n->ours && strchr(n->plugin_env, '/') && !l->as_given) {
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN=%s: NCCL %s takes no path there (NCCL 2.21 and later "
			"do): it opens %s, so it will not load this plugin; fix: "
			"NCCL_NET_PLUGIN=gdx with the plugin's directory in LD_LIBRARY_PATH, "
			"or NCCL 2.21 or later",
			n->plugin_env, nccl, n->tried);
	} else if (!n->ours) {
		check_not_ours(n, why, sizeof(why));
		check_fix_not_found(n, fix, sizeof(fix));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN=%s does not lead to this plugin: NCCL %s opens %s%s%s; "
			"fix: %s",
			n->plugin_env, nccl, n->tried, n->missing ? ": " : " ", why,
			n->load_error[0] ? "install what it needs (ldd shows what is missing)"
			: n->lib_path[0]
				? "NCCL_NET_PLUGIN=gdx, or the full path of libnccl-net-gdx.so"
				: fix);
	} else if (!n->api) {
		const struct nccl_loader *first =
			nccl_loader_at(nccl_loader_first_taking(n->lib_exported));
		int fmaj = 0, fmin = 0, fpatch;

		if (first)
			nccl_version_split(first->from, &fmaj, &fmin, &fpatch);
		nccl_loader_tries(l, tries, sizeof(tries));
		nccl_exported_range(n->lib_exported, has, sizeof(has));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL %s tries %s, and this plugin (%s) exports %s: NCCL will not load "
			"it; fix: NCCL %d.%d or later",
			nccl, tries, n->plugin_path, has, fmaj, fmin);
	} else if (n->net_env && strcasecmp(n->net_env, n->lib_net)) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "NCCL_NET=%s: NCCL uses the network of that name and no other, and "
			      "this plugin's is %s: it will not use it; fix: NCCL_NET=%s, or unset "
			      "NCCL_NET",
			      n->net_env, n->lib_net, n->lib_net);
	}
	if (n->ours && n->first_other[0])
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL_NET_PLUGIN lists another plugin first, %s: NCCL takes the first "
			"whose init succeeds and finds devices",
			n->first_other);
	if (n->ours && !n->loader && strchr(n->plugin_env ? n->plugin_env : "", '/'))
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL_NET_PLUGIN holds a path, which NCCL takes from 2.21 on (2.20 and "
			"older open libnccl-net-<value>.so only)");
	if (!n->found) {
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "no libnccl.so.2 in the library path or the usual directories (a "
			      "job may bring its own, e.g. in a Python wheel): NCCL judged as %s",
			      l->releases);
		return;
	}
	if (n->version && nccl_loader_newer_than_known(n->version))
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL %s is newer than this gdx-doctor knows: judged as NCCL %s loads "
			"plugins",
			nccl, l->releases);
	if (!n->in_path)
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "%s is not in the library path; the job's NCCL may be another one",
			      n->path);
}
