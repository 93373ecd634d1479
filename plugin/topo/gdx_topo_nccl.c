/* SPDX-License-Identifier: MIT */
/*
 * NCCL's topology file (gdx_topo_nccl.h): a small parser of the XML subset
 * NCCL writes and reads (src/graph/xml.cc): elements, quoted attributes,
 * comments; every element kept in one flat array with its parent, then the
 * GPUs, the NICs and the path classes read off that tree.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "topo/gdx_topo_nccl.h"
#include "sys/gdx_env.h"
#include "sys/gdx_file.h"

#define NCCL_STR_MAX   255  /* NCCL's MAX_STR_LEN: a longer name or value fails its parse */
#define NCCL_KEPT_MAX  256  /* NCCL_TOPO_XML_MAX_NODES */
#define NCCL_SUBS_MAX  128  /* MAX_SUBS: elements NCCL keeps under one */
#define NCCL_ELEMS_MAX 4096 /* every element, ignored ones too: our own bound */

enum nccl_kind { EL_OTHER, EL_SYSTEM, EL_CPU, EL_PCI, EL_GPU, EL_C2C, EL_NIC, EL_NET };

struct nccl_el {
	enum nccl_kind kind; /* EL_OTHER: not where NCCL's handlers take it */
	int parent, nsubs;
	char tag[32], busid[GDX_NCCL_PCI_LEN], cls[16], name[GDX_NCCL_NAME_LEN];
	int version; /* <system version=>; -1 none */
};

struct nccl_parse {
	const char *s;
	size_t len, at;
	struct nccl_el *el;
	int nel, nkept;
	char *why;
	size_t why_len;
};

/* Where NCCL's handlers take an element: its name under its parent's kind. */
static enum nccl_kind nccl_kind_of(const char *name, enum nccl_kind parent, bool top)
{
	static const struct {
		const char *name;
		enum nccl_kind kind, parent;
	} k[] = {
		{"cpu", EL_CPU, EL_SYSTEM}, {"pci", EL_PCI, EL_CPU}, {"pci", EL_PCI, EL_PCI},
		{"nic", EL_NIC, EL_CPU},    {"nic", EL_NIC, EL_PCI}, {"gpu", EL_GPU, EL_PCI},
		{"c2c", EL_C2C, EL_GPU},    {"net", EL_NET, EL_NIC},
	};

	if (top)
		return strcmp(name, "system") ? EL_OTHER : EL_SYSTEM;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].parent == parent && !strcmp(k[i].name, name))
			return k[i].kind;
	return EL_OTHER;
}

/* What NCCL's parser skips between elements, and ends a name at: a tab is
 * none of these to it (before a '<', its parse fails). */
static bool nccl_space(char c)
{
	return c == ' ' || c == '\n' || c == '\r';
}

static void nccl_skip_space(struct nccl_parse *p)
{
	while (p->at < p->len && nccl_space(p->s[p->at]))
		p->at++;
}

static int nccl_fail(struct nccl_parse *p, const char *what)
{
	return gdx_file_why(p->why, p->why_len, -EINVAL, "%s at byte %zu", what, p->at);
}

/* Skips past the first end (a "-->", "?>" or ">") from here. */
static int nccl_skip_to(struct nccl_parse *p, const char *end, const char *what)
{
	const char *e = NULL;
	size_t n = strlen(end);

	for (size_t i = p->at; i + n <= p->len && !e; i++)
		if (!memcmp(p->s + i, end, n))
			e = p->s + i;
	if (!e)
		return nccl_fail(p, what);
	p->at = (size_t)(e - p->s) + n;
	return 0;
}

/* A name (an element's or an attribute's) into buf: up to a blank, '=',
 * '/' or '>'. */
static int nccl_name(struct nccl_parse *p, char *buf, size_t len)
{
	size_t n = 0;

	while (p->at < p->len && !nccl_space(p->s[p->at]) && !strchr("=/>", p->s[p->at])) {
		if (n >= NCCL_STR_MAX)
			return nccl_fail(p, "a name over 255 bytes (NCCL refuses it)");
		if (n + 1 < len)
			buf[n] = p->s[p->at];
		n++;
		p->at++;
	}
	buf[n < len ? n : len - 1] = '\0';
	return n ? 0 : nccl_fail(p, "a name expected");
}

/* A quoted value into buf (cut at len - 1; NCCL's limit checked). */
static int nccl_value(struct nccl_parse *p, char *buf, size_t len)
{
	char q;
	size_t n = 0;

	if (p->at >= p->len || (p->s[p->at] != '"' && p->s[p->at] != '\''))
		return nccl_fail(p, "a quoted value expected");
	q = p->s[p->at++];
	for (; p->at < p->len && p->s[p->at] != q; p->at++, n++) {
		if (n >= NCCL_STR_MAX - 1)
			return nccl_fail(p, "a value over 254 bytes (NCCL refuses it)");
		if (n + 1 < len)
			buf[n] = p->s[p->at];
	}
	if (p->at >= p->len)
		return nccl_fail(p, "an unterminated value");
	p->at++;
	buf[n < len ? n : len - 1] = '\0';
	return 0;
}

/* src into dst, cut to fit (a longer value names nothing this reads). */
static void nccl_set(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int nccl_attrs(struct nccl_parse *p, struct nccl_el *e, bool *single)
{
	for (;;) {
		char key[32], val[NCCL_STR_MAX + 1];
		int ret;

		/* NCCL reads attributes only while a space follows: a line break in
		 * a tag, or blanks around '=', fail its parse */
		while (p->at < p->len && p->s[p->at] == ' ')
			p->at++;
		if (p->at >= p->len)
			return nccl_fail(p, "an unterminated tag");
		if (p->s[p->at] == '\n' || p->s[p->at] == '\r')
			return nccl_fail(p, "a line break inside a tag (NCCL's parser refuses it)");
		if (p->s[p->at] == '>') {
			p->at++;
			return 0;
		}
		if (p->s[p->at] == '/') {
			p->at++;
			if (p->at >= p->len || p->s[p->at] != '>')
				return nccl_fail(p, "'>' expected after '/'");
			p->at++;
			*single = true;
			return 0;
		}
		ret = nccl_name(p, key, sizeof(key));
		if (ret)
			return ret;
		if (p->at >= p->len || p->s[p->at] != '=')
			return nccl_fail(p, "'=' expected right after an attribute's name");
		p->at++;
		ret = nccl_value(p, val, sizeof(val));
		if (ret)
			return ret;
		if (!strcmp(key, "busid"))
			nccl_set(e->busid, sizeof(e->busid), val);
		else if (!strcmp(key, "class"))
			nccl_set(e->cls, sizeof(e->cls), val);
		else if (!strcmp(key, "name"))
			nccl_set(e->name, sizeof(e->name), val);
		else if (!strcmp(key, "version"))
			e->version = atoi(val);
	}
}

/* An element's opening tag, p->at past its '<'; depth elements are open. */
static int nccl_open(struct nccl_parse *p, int *stack, int *depth)
{
	int parent = *depth ? stack[*depth - 1] : -1, ret;
	bool single = false;
	struct nccl_el *e;

	if (p->nel == NCCL_ELEMS_MAX)
		return nccl_fail(p, "more than 4096 elements");
	e = &p->el[p->nel];
	memset(e, 0, sizeof(*e));
	e->parent = parent;
	e->version = -1;
	ret = nccl_name(p, e->tag, sizeof(e->tag));
	if (ret)
		return ret;
	/* below an element NCCL ignores, it ignores everything */
	if (parent < 0)
		e->kind = nccl_kind_of(e->tag, EL_OTHER, true);
	else if (p->el[parent].kind != EL_OTHER)
		e->kind = nccl_kind_of(e->tag, p->el[parent].kind, false);
	ret = nccl_attrs(p, e, &single);
	if (ret)
		return ret;
	if (e->kind != EL_OTHER) {
		if (++p->nkept > NCCL_KEPT_MAX)
			return nccl_fail(
				p, "more than 256 elements (NCCL's parser is limited to 256)");
		if (parent >= 0 && ++p->el[parent].nsubs > NCCL_SUBS_MAX)
			return nccl_fail(p, "more than 128 elements under one (NCCL's limit)");
	}
	p->nel++;
	if (!single) {
		if (*depth == GDX_TOPO_NCCL_DEPTH)
			return nccl_fail(p, "nested deeper than 32 elements");
		stack[(*depth)++] = p->nel - 1;
	}
	return 0;
}

static int nccl_close(struct nccl_parse *p, int *stack, int *depth)
{
	char name[32];
	int ret = nccl_name(p, name, sizeof(name));

	if (ret)
		return ret;
	if (p->at >= p->len || p->s[p->at] != '>')
		return nccl_fail(p, "'>' expected right after a closing tag's name");
	p->at++;
	if (!*depth)
		return nccl_fail(p, "a closing tag with nothing open");
	if (strcmp(p->el[stack[*depth - 1]].tag, name))
		return nccl_fail(p, "a closing tag that does not match the open one");
	(*depth)--;
	return 0;
}

static int nccl_tree(struct nccl_parse *p)
{
	int stack[GDX_TOPO_NCCL_DEPTH], depth = 0, ret = 0;

	while (!ret) {
		nccl_skip_space(p);
		if (p->at >= p->len)
			return depth ? nccl_fail(p, "unterminated elements at the end") : 0;
		if (p->s[p->at] != '<')
			return nccl_fail(p, "'<' expected");
		p->at++;
		if (p->len - p->at >= 3 && !memcmp(p->s + p->at, "!--", 3))
			ret = nccl_skip_to(p, "-->", "an unterminated comment");
		else if (p->at < p->len && (p->s[p->at] == '?' || p->s[p->at] == '!'))
			/* NCCL takes "<?xml ...?>" for an element it never sees closed */
			ret = nccl_fail(p, "an XML declaration (<?...> or <!...>): NCCL's parser "
					   "fails on it");
		else if (p->at < p->len && p->s[p->at] == '/')
			p->at++, ret = nccl_close(p, stack, &depth);
		else
			ret = nccl_open(p, stack, &depth);
	}
	return ret;
}

/* "0001:00:00.0" from what NCCL's busIdToInt64 would read: lower case, a
 * domain when the file leaves it out. */
static void nccl_busid(const char *in, char out[GDX_NCCL_PCI_LEN])
{
	unsigned d, b, s, f;

	if (sscanf(in, "%x:%x:%x.%x", &d, &b, &s, &f) == 4 && d <= 0xffff && b <= 0xff &&
	    s <= 0x1f && f <= 7)
		snprintf(out, GDX_NCCL_PCI_LEN, "%04x:%02x:%02x.%x", d, b, s, f);
	else if (sscanf(in, "%x:%x.%x", &b, &s, &f) == 3 && b <= 0xff && s <= 0x1f && f <= 7)
		snprintf(out, GDX_NCCL_PCI_LEN, "0000:%02x:%02x.%x", b, s, f);
	else
		snprintf(out, GDX_NCCL_PCI_LEN, "%s", in);
	for (char *c = out; *c; c++)
		*c = (char)tolower((unsigned char)*c);
}

static int nccl_child(const struct nccl_parse *p, int parent, enum nccl_kind kind)
{
	for (int i = parent + 1; i < p->nel; i++)
		if (p->el[i].parent == parent && p->el[i].kind == kind)
			return i;
	return -1;
}

enum nccl_role { ROLE_BRIDGE, ROLE_GPU, ROLE_NIC };

static enum nccl_role nccl_role(const struct nccl_parse *p, int i)
{
	const char *c = p->el[i].cls;

	if (nccl_child(p, i, EL_GPU) >= 0)
		return ROLE_GPU;
	if (nccl_child(p, i, EL_NIC) >= 0)
		return ROLE_NIC;
	if (!strncasecmp(c, "0x03", 4))
		return ROLE_GPU;
	if (!strncasecmp(c, "0x02", 4))
		return ROLE_NIC;
	return ROLE_BRIDGE; /* a bridge, or what NCCL takes as one (its default) */
}

static int nccl_cpu_of(const struct nccl_parse *p, int i)
{
	while (i >= 0 && p->el[i].kind != EL_CPU)
		i = p->el[i].parent;
	return i;
}

/* NCCL's class between a GPU's and a NIC's elements (see the header). */
static enum gdx_tnc_class nccl_classify(const struct nccl_parse *p, int g, int n)
{
	int cpu = nccl_cpu_of(p, g);

	if (cpu < 0 || cpu != nccl_cpu_of(p, n))
		return GDX_TNC_SYS;
	for (int a = p->el[n].parent; a >= 0; a = p->el[a].parent)
		for (int b = p->el[g].parent; b >= 0; b = p->el[b].parent)
			if (a == b)
				return a == cpu					      ? GDX_TNC_PHB
				       : a == p->el[g].parent && a == p->el[n].parent ? GDX_TNC_PIX
										      : GDX_TNC_PXB;
	return GDX_TNC_SYS;
}

/* The GPUs and NICs, and their classes; anchors[] gets each one's element. */
static int nccl_devices(struct nccl_parse *p, struct gdx_topo_nccl *t)
{
	int *gel = calloc((size_t)p->nel + 1, sizeof(*gel));
	int *nel = calloc((size_t)p->nel + 1, sizeof(*nel));
	int ret = -ENOMEM;

	t->gpus = calloc((size_t)p->nel + 1, sizeof(*t->gpus));
	t->nics = calloc((size_t)p->nel + 1, sizeof(*t->nics));
	if (!gel || !nel || !t->gpus || !t->nics)
		goto out;
	for (int i = 0; i < p->nel; i++) {
		const struct nccl_el *e = &p->el[i];
		int nic = -1, nets = 0;

		if (e->kind == EL_PCI && nccl_role(p, i) == ROLE_GPU) {
			int gpu = nccl_child(p, i, EL_GPU);

			nccl_busid(e->busid, t->gpus[t->ngpus].pci);
			t->gpus[t->ngpus].c2c = gpu >= 0 && nccl_child(p, gpu, EL_C2C) >= 0;
			gel[t->ngpus++] = i;
			continue;
		}
		if (e->kind == EL_PCI && nccl_role(p, i) == ROLE_NIC)
			nic = nccl_child(p, i, EL_NIC);
		else if (e->kind == EL_NIC && p->el[e->parent].kind == EL_CPU)
			nic = i;
		else
			continue;
		/* a port per <net>; the element the NIC hangs at is the <pci>'s */
		for (int k = nic + 1; nic >= 0 && k < p->nel; k++) {
			if (p->el[k].parent != nic || p->el[k].kind != EL_NET)
				continue;
			snprintf(t->nics[t->nnics].name, GDX_NCCL_NAME_LEN, "%s", p->el[k].name);
			if (e->kind == EL_PCI)
				nccl_busid(e->busid, t->nics[t->nnics].pci);
			nel[t->nnics++] = i;
			nets++;
		}
		if (!nets && t->nnics < p->nel) {
			if (e->kind == EL_PCI)
				nccl_busid(e->busid, t->nics[t->nnics].pci);
			nel[t->nnics++] = i;
		}
	}
	t->paths = calloc((size_t)t->ngpus * (size_t)t->nnics + 1, sizeof(*t->paths));
	if (!t->paths)
		goto out;
	for (int g = 0; g < t->ngpus; g++)
		for (int n = 0; n < t->nnics; n++)
			t->paths[(size_t)g * (size_t)t->nnics + (size_t)n] =
				nccl_classify(p, gel[g], nel[n]);
	ret = 0;
out:
	free(gel);
	free(nel);
	return ret;
}

int gdx_topo_nccl_parse(const char *buf, size_t len, struct gdx_topo_nccl **t_p, char *why,
			size_t why_len)
{
	struct nccl_parse p = {.s = buf, .len = len, .why = why, .why_len = why_len};
	struct gdx_topo_nccl *t;
	int sys = -1, ret;

	*t_p = NULL;
	p.el = calloc(NCCL_ELEMS_MAX, sizeof(*p.el));
	t = calloc(1, sizeof(*t));
	if (!p.el || !t) {
		ret = gdx_file_why(why, why_len, -ENOMEM, "out of memory");
		goto out;
	}
	ret = nccl_tree(&p);
	if (ret && memmem(buf, len, "<topology", 9)) {
		char inner[256];

		/* the commonest mix-up: lstopo's file where NCCL's is meant */
		snprintf(inner, sizeof(inner), "%s", why ? why : "");
		gdx_file_why(why, why_len, ret, "hwloc's XML, not NCCL's topology format (%s)",
			     inner);
	}
	if (ret)
		goto out;
	for (int i = 0; i < p.nel && sys < 0; i++)
		if (p.el[i].kind == EL_SYSTEM)
			sys = i;
	if (sys < 0) {
		bool hwloc = false;

		for (int i = 0; i < p.nel && !hwloc; i++)
			hwloc = p.el[i].parent < 0 && !strcmp(p.el[i].tag, "topology");
		ret = gdx_file_why(why, why_len, -EINVAL, "no <system> element: %s",
				   hwloc ? "hwloc's XML, not NCCL's topology format"
					 : "not NCCL's topology format");
		goto out;
	}
	if (p.el[sys].version != 1) {
		ret = gdx_file_why(why, why_len, -EINVAL,
				   "<system version=\"%d\">: NCCL reads version 1 only, and fails",
				   p.el[sys].version);
		goto out;
	}
	ret = nccl_devices(&p, t);
	if (ret) {
		gdx_file_why(why, why_len, ret, "out of memory");
		goto out;
	}
	*t_p = t;
	t = NULL;
out:
	free(p.el);
	gdx_topo_nccl_free(t);
	return ret;
}

int gdx_topo_nccl_read(int fd, const char *path, struct gdx_topo_nccl **t_p, char *why,
		       size_t why_len)
{
	char *buf = NULL, inner[256];
	size_t len = 0;
	int ret;

	*t_p = NULL;
	if (fd >= 0)
		ret = gdx_file_read_fd(fd, path, GDX_TOPO_NCCL_MAX, 1, &buf, &len, why, why_len);
	else
		ret = gdx_file_read(AT_FDCWD, path, 0, GDX_TOPO_NCCL_MAX, 1, &buf, &len, why,
				    why_len);
	if (ret)
		return ret;
	ret = gdx_topo_nccl_parse(buf, len, t_p, inner, sizeof(inner));
	free(buf);
	if (ret)
		gdx_file_why(why, why_len, ret, "%s: %s", path, inner);
	return ret;
}

void gdx_topo_nccl_free(struct gdx_topo_nccl *t)
{
	if (!t)
		return;
	free(t->gpus);
	free(t->nics);
	free(t->paths);
	free(t);
}

enum gdx_tnc_class gdx_topo_nccl_path(const struct gdx_topo_nccl *t, int gpu, int nic)
{
	if (gpu < 0 || gpu >= t->ngpus || nic < 0 || nic >= t->nnics)
		return GDX_TNC_UNKNOWN;
	return t->paths[(size_t)gpu * (size_t)t->nnics + (size_t)nic];
}

int gdx_topo_nccl_find_nic(const struct gdx_topo_nccl *n, const char *name, const char *pci)
{
	for (int k = 0; k < n->nnics; k++)
		if (n->nics[k].name[0] ? name && !strcmp(n->nics[k].name, name)
				       : pci && pci[0] && !strcasecmp(n->nics[k].pci, pci))
			return k;
	return -1;
}

int gdx_topo_nccl_find_gpu(const struct gdx_topo_nccl *n, const char *pci)
{
	for (int k = 0; pci && k < n->ngpus; k++)
		if (!strcasecmp(n->gpus[k].pci, pci))
			return k;
	return -1;
}

const char *gdx_topo_nccl_file(const char *gdx_file)
{
	return gdx_file && *gdx_file ? NULL : gdx_env(GDX_ENV_TOPO_FILE);
}
