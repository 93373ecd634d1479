/* SPDX-License-Identifier: MIT */
/*
 * The topology reader (gdx_topo_read.c) against libhwloc's own loader: for
 * every hwloc XML file of the tests, and for the forms hwloc 1.x, 2.x and
 * 3.x write (empty bitmap words, objects without a nodeset, ...), the two
 * agree on accept and refuse. The reader may refuse more only where its
 * documented caps apply (nesting depth, size, the forms that crash hwloc
 * itself, which a forked loader shows); it reads more only in what it
 * tidies for hwloc's built-in parser (comments, CRs), which hwloc is given
 * tidied here by code of this test's own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hwloc.h>

#include "topo/gdx_topo.h"

#include "gdx_test.h"

#define FIXTURES "tests/lib/fixtures/topo/"

enum verdict { READ, REFUSED, CRASHED };
static const char *const verdict_names[] = {"reads it", "refuses it", "crashes on it"};

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		gdx_test_fail(__FILE__, __LINE__, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	ASSERT(buf && read(fd, buf, (size_t)st.st_size) == st.st_size);
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

/* Comments and CRs out, as a person would take them out by hand: the forms
 * hwloc with libxml2 reads and its built-in parser does not. */
static size_t untidy_to_plain(char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		if (!strncmp(buf + i, "<!--", 4)) {
			char *end = strstr(buf + i + 4, "-->");

			i = end ? (size_t)(end - buf) + 3 : len;
			/* the line the comment stood alone on goes too */
			while (o && buf[o - 1] == ' ')
				o--;
			if (o && buf[o - 1] == '\n' && i < len &&
			    (buf[i] == '\n' || buf[i] == '\r'))
				i += buf[i] == '\r' ? 2 : 1;
		} else if (buf[i] == '\r') {
			i++;
		} else {
			buf[o++] = buf[i++];
		}
	}
	buf[o] = '\0';
	return o;
}

/* libhwloc's verdict on buf, in a child: an abort or a segfault in hwloc
 * is a verdict too. */
static enum verdict hwloc_verdict(const char *buf, size_t len)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		hwloc_topology_t h;
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 2); /* hwloc's assertion text */
		alarm(20);
		if (hwloc_topology_init(&h) ||
		    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL) ||
		    hwloc_topology_set_xmlbuffer(h, buf, (int)len + 1) || hwloc_topology_load(h))
			_exit(1);
		_exit(0);
	}
	ASSERT(pid > 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return CRASHED;
	return WEXITSTATUS(status) == 0 ? READ : REFUSED;
}

static int checked;

/* The reader and hwloc on one file's text (name says where it came from). */
static void agree(const char *name, const char *text, size_t len)
{
	char path[] = "/tmp/gdx-topo-hwloc-XXXXXX", why[512] = "";
	char *plain = malloc(len + 1);
	struct gdx_topo *t = NULL;
	enum verdict theirs, ours;
	bool tidied;
	int fd, ret;

	ASSERT(plain);
	memcpy(plain, text, len + 1);
	tidied = strstr(text, "<!--") || memchr(text, '\r', len);
	theirs = hwloc_verdict(plain, tidied ? untidy_to_plain(plain, len) : len);
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, text, len), (ssize_t)len);
	close(fd);
	ret = gdx_topo_load(path, &t, why, sizeof(why));
	unlink(path);
	ours = ret ? REFUSED : READ;
	if (ret) {
		/* every refusal names the file and says what it found */
		ASSERT_STR_CONTAINS(why, path);
		ASSERT(strlen(why) > strlen(path) + 10);
	}
	if (theirs == CRASHED) {
		if (ours != REFUSED)
			gdx_test_fail(__FILE__, __LINE__,
				      "%s: hwloc crashes on it, the reader reads it", name);
	} else if ((ours == READ) != (theirs == READ)) {
		gdx_test_fail(__FILE__, __LINE__, "%s: hwloc %s%s, the reader %s (%s)", name,
			      verdict_names[theirs], tidied ? " (comments and CRs taken out)" : "",
			      verdict_names[ours], why);
	}
	checked++;
	gdx_topo_free(t);
	free(plain);
}

static void agree_file(const char *path)
{
	size_t len;
	char *text = slurp(path, &len);

	if (text)
		agree(path, text, len);
	free(text);
}

static void agree_dir(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	ASSERT(d);
	while ((e = readdir(d))) {
		char path[512];
		size_t n = strlen(e->d_name);

		snprintf(path, sizeof(path), "%s%s", dir, e->d_name);
		if (n > 4 && !strcmp(e->d_name + n - 4, ".xml"))
			agree_file(path);
	}
	closedir(d);
}

/* The fuzzer's seeds of form 0 (tests/fuzz/topo_xml.c): the file as it is. */
static void agree_corpus(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	ASSERT(d);
	while ((e = readdir(d))) {
		char path[512];
		size_t len;
		char *text;

		snprintf(path, sizeof(path), "%s%s", dir, e->d_name);
		if (e->d_name[0] == '.' || !(text = slurp(path, &len)))
			continue;
		if (len > 1 && text[0] == 0 && !memchr(text + 1, '\0', len - 1))
			agree(path, text + 1, len - 1);
		free(text);
	}
	closedir(d);
}

/* Every hwloc XML file the tests hold, and GDX_TOPO_XML_DIR's (a
 * developer's collection of dumps: "GDX_TOPO_XML_DIR=~/dumps/
 * build/tests/unit/topo_hwloc"). */
static void test_every_fixture(void)
{
	const char *more = getenv("GDX_TOPO_XML_DIR");

	checked = 0;
	agree_dir(FIXTURES);
	agree_dir(FIXTURES "unreadable/");
	agree_corpus("tests/fuzz/corpus/topo_xml/");
	if (more && *more) {
		char dir[512];

		snprintf(dir, sizeof(dir), "%s/", more);
		agree_dir(dir);
	}
	printf("# %d files compared\n", checked);
	ASSERT(checked >= 20); /* what this holds when the fixtures move */
}

/* What hwloc writes for more than 64 PUs, read by both (hwloc wrote the
 * file: gen_fixtures.py's HWLOC_WRITTEN), and its path classes right. */
static void test_empty_bitmap_words(void)
{
	struct gdx_topo *t = NULL;
	char why[512];
	size_t len;
	char *text = slurp(FIXTURES "genoa-h100.xml", &len);

	ASSERT(text && strstr(text, ",,0x"));
	free(text);
	ASSERT_EQ(gdx_topo_load(FIXTURES "genoa-h100.xml", &t, why, sizeof(why)), 0);
	ASSERT_EQ(gdx_topo_ngpus(t), 4);
	ASSERT_EQ(gdx_topo_path(t, gdx_topo_find_gpu(t, "0000:84:00.0"),
				gdx_topo_find_nic(t, "mlx5_2")),
		  GDX_PATH_PIX);
	ASSERT_EQ(gdx_topo_path(t, gdx_topo_find_gpu(t, "0000:84:00.0"),
				gdx_topo_find_nic(t, "mlx5_0")),
		  GDX_PATH_SYS);
	gdx_topo_free(t);
	ASSERT_EQ(gdx_topo_load(FIXTURES "hwloc1-no-numa.xml", &t, why, sizeof(why)), 0);
	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	gdx_topo_free(t);
}

/* Replaces the first (or every) match of attr="..." in text with
 * attr="value", or drops it when value is NULL; a new string. */
static char *with_attr(const char *text, const char *attr, const char *value, bool every)
{
	size_t alen = strlen(attr), cap = strlen(text) * 2 + 64, o = 0;
	char *out = malloc(cap), pat[64];
	const char *p = text;
	bool done = false;

	ASSERT(out);
	snprintf(pat, sizeof(pat), " %s=\"", attr);
	while (*p) {
		if (!done && !strncmp(p, pat, alen + 3)) {
			const char *end = strchr(p + alen + 3, '"');

			if (value)
				o += (size_t)snprintf(out + o, cap - o, " %s=\"%s\"", attr, value);
			p = end + 1;
			done = !every;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

/* The forms each set can take, in both formats, through both. */
static void test_set_forms(void)
{
	static const char *const sets[] = {"cpuset",	     "complete_cpuset",
					   "nodeset",	     "complete_nodeset",
					   "allowed_cpuset", "allowed_nodeset"};
	static const char *const bitmaps[] = {
		"0x00000003",
		"0x00000003,,",
		",0x00000003",
		",,0x00000003",
		"0x0,,0x00000003",
		"00000003",
		"0x3",
		"0x,0x3",
		"zz",
		"",
		"0xf...f",
		"0xf...f,,0x3",
		"0xf...f,",
		"0x00000003,zz",
		",",
		"0xffffffffff",
		"0x3 ",
	};
	static const char *const files[] = {FIXTURES "cloud-vm.xml", FIXTURES "hwloc1-no-numa.xml"};

	checked = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		char *text = slurp(files[f], &len), name[256];

		ASSERT(text);
		for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
			for (int every = 0; every < 2; every++) {
				char *v = with_attr(text, sets[s], NULL, every);

				snprintf(name, sizeof(name), "%s without %s %s", files[f], sets[s],
					 every ? "anywhere" : "on its first object");
				agree(name, v, strlen(v));
				free(v);
			}
		for (size_t b = 0; b < sizeof(bitmaps) / sizeof(bitmaps[0]); b++) {
			char *v = with_attr(text, "cpuset", bitmaps[b], false);

			snprintf(name, sizeof(name), "%s with cpuset=\"%s\"", files[f], bitmaps[b]);
			agree(name, v, strlen(v));
			free(v);
		}
		free(text);
	}
	ASSERT_EQ(checked, 2 * (12 + 17));
}

GDX_TESTS_MAIN(TEST(test_every_fixture, 120), TEST(test_empty_bitmap_words, 20),
	       TEST(test_set_forms, 120))
