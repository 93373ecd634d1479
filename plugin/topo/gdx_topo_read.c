/* SPDX-License-Identifier: MIT */
/*
 * Reading a topology into hwloc (gdx_topo_read.h): this machine's, or an XML
 * file's, tidied first for hwloc's own parser, and why hwloc refused it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "sys/gdx_file.h"
#include "topo/gdx_topo_read.h"

void gdx_topo_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* Far more than any machine's lstopo --of xml (a few MiB for hundreds of
 * cores and devices); a bound on what a wrong path makes us read. */
#define GDX_TOPO_XML_MAX (64 << 20)

/*
 * The file, whole and NUL-terminated, with 3 spare bytes for what
 * gdx_topo_xml_tidy() adds; read from fd when it is not -1 (opened and
 * checked by the caller), else opened here as a hostile input: a FIFO, a
 * device or a socket in its place is refused without waiting on it, and
 * nothing past the bound is read. hwloc says only "failed" about a file it
 * cannot parse, so a missing, unreadable, oversized or directory path is
 * told apart here first.
 */
static int gdx_topo_slurp(int fd, const char *xml, char **buf_p, size_t *len_p, char *why,
			  size_t why_len)
{
	int ret =
		fd >= 0 ? gdx_file_read_fd(fd, xml, GDX_TOPO_XML_MAX, 3, buf_p, len_p, why, why_len)
			: gdx_file_read(AT_FDCWD, xml, 0, GDX_TOPO_XML_MAX, 3, buf_p, len_p, why,
					why_len);

	if (ret == -EISDIR) {
		gdx_topo_why(why, why_len, "%s is a directory, not an hwloc XML file", xml);
		return -EINVAL;
	}
	if (ret == -EFBIG)
		gdx_topo_why(why, why_len, "%s is larger than %d MiB: not an hwloc XML topology",
			     xml, GDX_TOPO_XML_MAX >> 20);
	return ret;
}

/* Whether the text at p starts with lit. By hand rather than strncmp: the
 * sanitizers' strncmp (and strstr) measure the whole rest of p, once per
 * '<' of a file of megabytes, which made the fuzzer's runs quadratic. */
static bool gdx_topo_at(const char *p, const char *lit)
{
	while (*lit)
		if (*p++ != *lit++)
			return false;
	return true;
}

/* strstr(p, lit), by hand for the same reason: the end of a comment or a
 * CDATA section, looked for at each one. */
static char *gdx_topo_find(const char *p, const char *lit)
{
	for (; *p; p++)
		if (*p == *lit && gdx_topo_at(p, lit))
			return (char *)p;
	return NULL;
}

/* How deep hwloc's XML import may recurse: a machine nests a few dozen
 * levels (Machine, Package, Die, Group, L3 to L1, Core, PU; a PCI tree a
 * few bridges deep), far below this. hwloc reads each level with a call of
 * its own, so a file nested 100,000 deep would overflow the stack of
 * whatever thread loads it: such a file is refused here, before hwloc sees
 * it. */
#define GDX_TOPO_XML_DEPTH_MAX 256

/* Whether an hwloc object of this type is a CPU or memory object, which
 * hwloc's import assumes has its sets: hwloc 2.9 dereferences one that
 * lacks them. I/O and Misc objects have none. */
static bool gdx_topo_xml_needs_sets(const char *type, size_t len)
{
	static const char *const io[] = {"Bridge", "PCIDev", "OSDev", "Misc"};

	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++)
		if (strlen(io[i]) == len && !memcmp(type, io[i], len))
			return false;
	return true;
}

/*
 * What the tag check learns of the file as it goes: whether its format is
 * hwloc 2's or later (<topology version="2.0"> or "3.0"; hwloc 1.x wrote no
 * version), and the first object that lacks a set hwloc needs, with its
 * line: not a refusal of ours (hwloc refuses such a file itself, cleanly),
 * but the reason named when hwloc does.
 */
struct gdx_topo_scan {
	bool v2;
	int lack_line;
	char lack[160];
};

/*
 * Whether a set's value would crash hwloc's own parser. hwloc reads
 * bitmaps leniently: a word left empty is zero (hwloc writes
 * "0x00000001,,0x00010000" itself for more than 64 CPUs, or gaps in their
 * numbering), a word it cannot read ends the set, and the object loses its
 * CPUs, which it then drops. Only an empty first word (",0x1") trips an
 * assertion in hwloc_bitmap_sscanf (hwloc 2.9: abort).
 */
static bool gdx_topo_xml_bitmap_crashes(const char *v, size_t len)
{
	if (!len || v[0] != ',')
		return false;
	for (size_t i = 1; i < len; i++)
		if (v[i] != ',')
			return true;
	return false; /* commas alone: an empty set */
}

/*
 * A start tag at p ('<'), checked before hwloc reads it: its attributes
 * are name="value" (or 'value'), each after white space, then an optional
 * '/' and '>'. hwloc's own parser is lenient (it takes type="PU"ci_busid=
 * "..." as two attributes), and its import then dereferences what it did
 * not get. What is refused here is only what crashes hwloc 2.9, found by
 * loading each form with libhwloc itself (tests/unit/topo_hwloc.c): a
 * malformed attribute, a bitmap whose first word is empty, and in the
 * hwloc 2 format a CPU or memory object with its cpuset or nodeset but not
 * the complete_ one beside it. An object without its cpuset, or (hwloc 2
 * format) its nodeset, hwloc refuses cleanly: noted in scan for the reason.
 * 0, -EINVAL with why set, or -EPIPE (why untouched) when the tag is cut
 * short.
 */
static int gdx_topo_xml_tag(const char *p, int line, struct gdx_topo_scan *scan, char *why,
			    size_t why_len)
{
	const char *name = p + 1, *type = NULL;
	size_t nlen = strcspn(name, " \t\r\n/>"), tlen = 0;
	bool object = nlen == 6 && !memcmp(name, "object", 6);
	bool topology = nlen == 8 && !memcmp(name, "topology", 8);

	/* named in a refusal: printable, and short */
	for (size_t i = 0; i < nlen; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_-:.", name[i]))
			nlen = 0;
	if (!nlen || nlen > 32) {
		snprintf(why, why_len, "a tag's name is not an element name");
		return -EINVAL;
	}
	/* the sets hwloc's import goes on to use */
	bool cpuset = false, complete_cpuset = false, nodeset = false, complete_nodeset = false;

	for (p = name + nlen;;) {
		const char *a, *v;
		size_t alen;
		char q;

		if (*p == '>' || (p[0] == '/' && p[1] == '>'))
			break;
		if (!*p)
			return -EPIPE; /* cut short */
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
			snprintf(why, why_len, "<%.*s> has a malformed attribute", (int)nlen, name);
			return -EINVAL;
		}
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '>' || (p[0] == '/' && p[1] == '>'))
			break;
		if (!*p)
			return -EPIPE;
		a = p;
		alen = strcspn(a, "= \t\r\n/>\"'");
		if (!a[alen] || (a[alen] == '=' && !a[alen + 1]))
			return -EPIPE;
		if (!alen || a[alen] != '=' || (a[alen + 1] != '"' && a[alen + 1] != '\'')) {
			snprintf(why, why_len, "<%.*s> has a malformed attribute", (int)nlen, name);
			return -EINVAL;
		}
		q = a[alen + 1];
		v = a + alen + 2;
		p = strchr(v, q);
		if (!p)
			return -EPIPE; /* cut short */
		if (topology && alen == 7 && !memcmp(a, "version", 7))
			scan->v2 = atoi(v) >= 2;
		if (object && alen == 4 && !memcmp(a, "type", 4)) {
			type = v;
			tlen = (size_t)(p - v);
		}
		if (object && alen >= 6 && !memcmp(a + alen - 3, "set", 3) &&
		    gdx_topo_xml_bitmap_crashes(v, (size_t)(p - v))) {
			snprintf(why, why_len,
				 "an object's %.*s=\"%.*s\" begins with an empty word, which "
				 "crashes hwloc's bitmap parser",
				 (int)alen, a, (int)((size_t)(p - v) < 40 ? p - v : 40), v);
			return -EINVAL;
		}
		cpuset |= alen == 6 && !memcmp(a, "cpuset", 6);
		complete_cpuset |= alen == 15 && !memcmp(a, "complete_cpuset", 15);
		nodeset |= alen == 7 && !memcmp(a, "nodeset", 7);
		complete_nodeset |= alen == 16 && !memcmp(a, "complete_nodeset", 16);
		p++;
	}
	if (!object || !type)
		return 0;
	for (size_t i = 0; i < tlen; i++)
		if (!isalnum((unsigned char)type[i]) || tlen > 32) {
			snprintf(why, why_len, "an object's type is not a type name");
			return -EINVAL;
		}
	if (!gdx_topo_xml_needs_sets(type, tlen))
		return 0;
	if (scan->v2 && ((cpuset && !complete_cpuset) || (nodeset && !complete_nodeset))) {
		snprintf(why, why_len,
			 "an object of type %.*s has its %s but not its %s, which crashes "
			 "hwloc 2.9's import",
			 (int)tlen, type, cpuset && !complete_cpuset ? "cpuset" : "nodeset",
			 cpuset && !complete_cpuset ? "complete_cpuset" : "complete_nodeset");
		return -EINVAL;
	}
	if (!scan->lack[0] && (!cpuset || (scan->v2 && !nodeset))) {
		scan->lack_line = line;
		snprintf(scan->lack, sizeof(scan->lack),
			 "an object of type %.*s lacks its %s (hwloc writes one for each)",
			 (int)tlen, type, !cpuset ? "cpuset" : "nodeset");
	}
	return 0;
}

/*
 * The deepest nesting of elements in buf (NUL-terminated), up to the
 * first past max: an element's start tag (not "/>") one level more, its end
 * tag one less; comments, CDATA, declarations and processing instructions
 * none; quoted attribute values skipped whole. 0 when the depth stays
 * within max, else -E2BIG with *line set to the line where it went past;
 * -EPIPE when the file ends inside a tag, a comment, a CDATA section or a
 * declaration (hwloc's own parser read past such an end); -EINVAL for a
 * tag gdx_topo_xml_tag refuses, why set; scan filled as it goes.
 */
static int gdx_topo_xml_depth(const char *buf, int max, int *line, struct gdx_topo_scan *scan,
			      char *why, size_t why_len)
{
	int depth = 0, ln = 1, ret;
	const char *p = buf;

	while (*p) {
		const char *end;

		if (*p != '<') {
			ln += *p++ == '\n';
			continue;
		}
		if (gdx_topo_at(p, "<!--"))
			end = gdx_topo_find(p + 4, "-->");
		else if (gdx_topo_at(p, "<![CDATA["))
			end = gdx_topo_find(p + 9, "]]>");
		else if (p[1] == '?')
			end = gdx_topo_find(p + 2, "?>");
		else
			end = NULL;
		/* one never closed runs to the end of the file: cut short, looked
		 * for once, not again at each '<' inside it */
		if (!end &&
		    (gdx_topo_at(p, "<!--") || gdx_topo_at(p, "<![CDATA[") || p[1] == '?')) {
			*line = ln;
			return -EPIPE;
		}
		if (end || p[1] == '!' || p[1] == '/') {
			/* a comment, CDATA, a declaration or an end tag */
			if (!end)
				end = strchr(p, '>');
			if (!end) {
				*line = ln;
				return -EPIPE; /* cut short */
			}
			if (p[1] == '/')
				depth--;
			for (; p < end; p++)
				ln += *p == '\n';
			continue;
		}
		/* a start tag: its attributes' quoted values may hold '>' */
		*line = ln; /* where a refusal from here on points */
		ret = gdx_topo_xml_tag(p, ln, scan, why, why_len);
		if (ret)
			return ret;
		for (p++; *p && *p != '>'; p++) {
			if (*p == '"' || *p == '\'') {
				const char *q = strchr(p + 1, *p);

				if (!q)
					return -EPIPE;
				for (; p < q; p++)
					ln += *p == '\n';
			}
			ln += *p == '\n';
		}
		if (!*p)
			return -EPIPE;
		if (p[-1] != '/' && ++depth > max) {
			*line = ln;
			return -E2BIG;
		}
		p++;
	}
	return 0;
}

static size_t gdx_topo_skip_space(const char *s, size_t i)
{
	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')
		i++;
	return i;
}

/* Copies s[from, to) to d[*o...], newlines made spaces, then one newline. */
static void gdx_topo_copy_line(char *d, size_t *o, const char *s, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		d[(*o)++] = s[k] == '\n' ? ' ' : s[k];
	d[(*o)++] = '\n';
}

/*
 * hwloc without libxml2 (Debian's libhwloc15 without libhwloc-plugins)
 * parses XML with a minimal parser of its own, which reads what lstopo
 * writes and nothing else: no comment anywhere, LF line ends, the XML
 * declaration and DOCTYPE each alone on a line and <topology> right after.
 * Published dumps are often lstopo's output with a comment added, or saved
 * on Windows. This rewrites buf (len bytes, 3 spare) to that form, in place:
 * drops a byte order mark, comments, CRs (a lone CR becomes LF), and in the
 * prolog the blank space and any processing instruction but the XML
 * declaration; CDATA sections are kept as they are. Returns the new length,
 * or -1 with *line set to the line where a comment that is never closed
 * starts.
 */
static long gdx_topo_xml_tidy(char *buf, size_t len, int *line)
{
	size_t i = 0, o = 0, p, rest;
	int nl = 1, decl = 0, doctype = 0;
	char *copy;

	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		i = 3;
	while (i < len) {
		if (buf[i] == '\r') {
			buf[o++] = '\n';
			i += buf[i + 1] == '\n' ? 2 : 1;
			nl++;
		} else if (gdx_topo_at(buf + i, "<!--")) {
			char *end = gdx_topo_find(buf + i + 4, "-->");

			if (!end) {
				*line = nl;
				return -1;
			}
			for (; buf + i < end; i++)
				nl += buf[i] == '\n';
			i += 3;
		} else if (gdx_topo_at(buf + i, "<![CDATA[")) {
			char *end = gdx_topo_find(buf + i + 9, "]]>");
			size_t n = end ? (size_t)(end - (buf + i)) + 3 : len - i;

			for (size_t k = 0; k < n; k++)
				nl += buf[i + k] == '\n';
			memmove(buf + o, buf + i, n);
			o += n;
			i += n;
		} else {
			nl += buf[i] == '\n';
			buf[o++] = buf[i++];
		}
	}
	buf[o] = '\0';
	len = o;

	/* The prolog, rebuilt: the declaration and the DOCTYPE, the first of
	 * each, gain a newline at most, hence the 3 spare bytes (with the
	 * NUL); the rest of the prolog goes. */
	copy = strdup(buf);
	if (!copy)
		return (long)len; /* hwloc reads it as it is, or says it cannot */
	o = 0;
	p = gdx_topo_skip_space(copy, 0);
	for (;;) {
		const char *at = copy + p, *end;
		size_t next;

		if (gdx_topo_at(at, "<?xml") && (at[5] == ' ' || at[5] == '?')) {
			end = strstr(at, "?>");
			if (!end)
				break;
			next = (size_t)(end - copy) + 2;
			if (!decl++)
				gdx_topo_copy_line(buf, &o, copy, p, next);
		} else if (gdx_topo_at(at, "<?")) {
			end = strstr(at, "?>"); /* another processing instruction */
			if (!end)
				break;
			next = (size_t)(end - copy) + 2;
		} else if (gdx_topo_at(at, "<!DOCTYPE")) {
			end = at + strcspn(at, "[>");
			if (*end == '[')
				end = strchr(end, ']');
			if (end)
				end = strchr(end, '>');
			if (!end)
				break;
			next = (size_t)(end - copy) + 1;
			if (!doctype++)
				gdx_topo_copy_line(buf, &o, copy, p, next);
		} else {
			break;
		}
		p = gdx_topo_skip_space(copy, next);
	}
	rest = strlen(copy + p);
	memcpy(buf + o, copy + p, rest + 1);
	free(copy);
	return (long)(o + rest);
}

/* The version attribute of <topology>, "2.0", into v: "" for none (hwloc
 * 1.x wrote <topology>); -1 when there is no <topology> element at all. */
static int gdx_topo_xml_version(const char *buf, char *v, size_t len)
{
	const char *tag = strstr(buf, "<topology"), *end, *at;
	size_t n;

	v[0] = '\0';
	if (!tag || !strchr(" \t\n>", tag[9]) || !tag[9])
		return -1;
	end = strchr(tag, '>');
	at = strstr(tag, "version=");
	if (!end || !at || at > end || (at[8] != '"' && at[8] != '\''))
		return 0;
	n = strcspn(at + 9, "\"'>");
	snprintf(v, len, "%.*s", (int)(n < len ? n : len - 1), at + 9);
	return 0;
}

/* The hwloc this program runs with, "2.9.0": a synthetic topology's root
 * records it. Falls back to the API version of the library. */
static void gdx_topo_hwloc_version(char *buf, size_t len)
{
	unsigned api = hwloc_get_api_version();
	hwloc_topology_t h;
	const char *v = NULL;

	snprintf(buf, len, "%u.%u (API)", api >> 16, (api >> 8) & 0xff);
	if (hwloc_topology_init(&h))
		return;
	if (!hwloc_topology_set_synthetic(h, "pu:1") && !hwloc_topology_load(h))
		v = hwloc_obj_get_info_by_name(hwloc_get_root_obj(h), "hwlocVersion");
	if (v)
		snprintf(buf, len, "%s", v);
	hwloc_topology_destroy(h);
}

/* Whether this hwloc reads XML with libxml2: it alone takes single quotes. */
static bool gdx_topo_hwloc_has_libxml(void)
{
	static const char probe[] =
		"<?xml version='1.0'?>\n<topology version='2.0'>\n"
		"<object type='Machine' os_index='0' cpuset='0x1' complete_cpuset='0x1' "
		"allowed_cpuset='0x1' nodeset='0x1' complete_nodeset='0x1' allowed_nodeset='0x1'>\n"
		"<object type='NUMANode' os_index='0' cpuset='0x1' complete_cpuset='0x1' "
		"nodeset='0x1' complete_nodeset='0x1' local_memory='1'/>\n"
		"<object type='PU' os_index='0' cpuset='0x1' complete_cpuset='0x1' nodeset='0x1' "
		"complete_nodeset='0x1'/>\n</object>\n</topology>\n";
	hwloc_topology_t h;
	bool ok;

	if (hwloc_topology_init(&h))
		return false;
	ok = !hwloc_topology_set_xmlbuffer(h, probe, (int)sizeof(probe)) && !hwloc_topology_load(h);
	hwloc_topology_destroy(h);
	return ok;
}

/* Why hwloc refused the file, in one line (under 256 bytes but for the
 * path: the plugin's NCCL_GDX_TOPO_FILE warning has no more). */
static void gdx_topo_xml_refused(const char *xml, const char *buf, const struct gdx_topo_scan *scan,
				 char *why, size_t why_len)
{
	char version[16], mine[32];

	if (gdx_topo_xml_version(buf, version, sizeof(version)) < 0) {
		gdx_topo_why(why, why_len,
			     "%s is not an hwloc XML topology (no <topology> element)", xml);
	} else if (!strstr(buf, "</topology>")) {
		gdx_topo_why(why, why_len,
			     "%s is not a whole hwloc XML topology: it ends before </topology>",
			     xml);
	} else if (atoi(version) > (int)(hwloc_get_api_version() >> 16)) {
		gdx_topo_hwloc_version(mine, sizeof(mine));
		gdx_topo_why(
			why, why_len,
			"%s is an hwloc %s XML topology, a format this hwloc (%s) cannot read: "
			"use hwloc %d.0 or later, or have hwloc %d write it again in the 2.x "
			"format (lstopo -i FILE --export-xml-flags v2 NEW.xml)",
			xml, version, mine, atoi(version), atoi(version));
	} else if (scan->lack[0]) {
		gdx_topo_why(why, why_len,
			     "%s is not an hwloc XML topology hwloc reads: line %d: %s", xml,
			     scan->lack_line, scan->lack);
	} else if (!gdx_topo_hwloc_has_libxml()) {
		gdx_topo_why(
			why, why_len,
			"%s: hwloc's built-in XML parser cannot read it (it takes XML only as "
			"lstopo writes it; comments, CRs and blank lines were already dropped); "
			"hwloc with libxml2 can (Debian, Ubuntu: libhwloc-plugins)",
			xml);
	} else {
		gdx_topo_why(why, why_len,
			     "%s is not an hwloc XML topology (HWLOC_XML_VERBOSE=1 shows why)",
			     xml);
	}
}

int gdx_topo_read(hwloc_topology_t *h, int fd, const char *xml, char *why, size_t why_len)
{
	struct gdx_topo_scan scan = {0};
	size_t len = 0;
	char *buf = NULL, bad[160] = "";
	long tidy = 0;
	int ret = 0, line = 0;

	if (xml) {
		ret = gdx_topo_slurp(fd, xml, &buf, &len, why, why_len);
		if (ret)
			return ret;
		/* XML holds no NUL: every check below reads the file as a string,
		 * and hwloc's parser, given its length, read past one */
		if (memchr(buf, '\0', len)) {
			gdx_topo_why(
				why, why_len,
				"%s is not an hwloc XML topology: it holds a NUL byte (at offset "
				"%zu)",
				xml, (size_t)((char *)memchr(buf, '\0', len) - buf));
			ret = -EINVAL;
			goto out;
		}
		tidy = gdx_topo_xml_tidy(buf, len, &line);
		if (tidy < 0) {
			gdx_topo_why(why, why_len,
				     "%s is not an hwloc XML topology: the XML comment that starts "
				     "on line %d is never closed",
				     xml, line);
			ret = -EINVAL;
			goto out;
		}
		ret = gdx_topo_xml_depth(buf, GDX_TOPO_XML_DEPTH_MAX, &line, &scan, bad,
					 sizeof(bad));
		if (ret == -E2BIG) {
			gdx_topo_why(why, why_len,
				     "%s is not an hwloc XML topology: its elements nest deeper "
				     "than %d levels (line %d), where a machine's nest a few dozen",
				     xml, GDX_TOPO_XML_DEPTH_MAX, line);
			ret = -EINVAL;
			goto out;
		}
		if (ret == -EPIPE) {
			gdx_topo_why(
				why, why_len,
				"%s is not a whole hwloc XML topology: it ends before </topology> "
				"(inside what starts on line %d)",
				xml, line);
			ret = -EINVAL;
			goto out;
		}
		if (ret) {
			gdx_topo_why(why, why_len, "%s is not an hwloc XML topology: line %d: %s",
				     xml, line, bad);
			goto out;
		}
	}
	if (hwloc_topology_init(h)) {
		*h = NULL;
		gdx_topo_why(why, why_len, "hwloc_topology_init failed: %s", strerror(errno));
		ret = -ENOMEM;
		goto out;
	}
	/* hwloc drops I/O objects by default. Keep every bridge too, not only
	 * those above "important" devices, so switch levels are never lost. */
	if (hwloc_topology_set_io_types_filter(*h, HWLOC_TYPE_FILTER_KEEP_ALL)) {
		gdx_topo_why(why, why_len, "hwloc cannot keep I/O objects: %s", strerror(errno));
		ret = -EINVAL;
		goto out;
	}
	/* Linux's own sysfs discovery finds the same PCI tree; hwloc's "pci"
	 * component (libpciaccess) leaks its name cache on every unload, and a
	 * plugin loads a topology once per init. */
	hwloc_topology_set_components(*h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
	/* The buffer's size counts its NUL, as hwloc_topology_export_xmlbuffer()
	 * gives it. */
	if (xml &&
	    (hwloc_topology_set_xmlbuffer(*h, buf, (int)tidy + 1) || hwloc_topology_load(*h))) {
		gdx_topo_xml_refused(xml, buf, &scan, why, why_len);
		ret = -EINVAL;
	} else if (!xml && hwloc_topology_load(*h)) {
		gdx_topo_why(why, why_len, "hwloc could not read this machine's topology: %s",
			     strerror(errno));
		ret = -EINVAL;
	}
out:
	free(buf);
	return ret;
}
