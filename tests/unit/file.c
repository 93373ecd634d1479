/* SPDX-License-Identifier: MIT */
/*
 * Files a user names (gdx_file.h): an input that is a FIFO, a device, a
 * link, a directory or too large is refused at once, never waited on; a
 * saved tree's links never lead out of it, with openat2 and with the walk
 * it falls back to, which agree on every path of the fixture trees; an
 * output never goes through what was planted at its path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/gdx_file.h"
#include "tools/common/gdx_file_out.h"

#include "gdx_test.h"

static char dir[PATH_MAX];

static void scratch(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gdx-file-XXXXXX");
	ASSERT(mkdtemp(dir) != NULL);
}

static const char *at(const char *name)
{
	static char path[4][2 * PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	ASSERT(f != NULL);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0);
}

static void rm_scratch(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

/* A FIFO in place of a file: refused at once, by its type, whoever opens
 * it (the plain open, the read, the tree's), never waiting for a writer. */
static void test_fifo_refused_at_once(void)
{
	char why[256], *buf;
	size_t len;
	int root;

	scratch();
	ASSERT_EQ(mkfifo(at("topo.xml"), 0600), 0);
	ASSERT_EQ(gdx_file_open(AT_FDCWD, at("topo.xml"), 0, 1 << 20, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "is a FIFO, not a file");
	ASSERT_EQ(gdx_file_read(AT_FDCWD, at("topo.xml"), 0, 1 << 20, 0, &buf, &len, why,
				sizeof(why)),
		  -EINVAL);
	root = open(dir, O_PATH | O_DIRECTORY);
	ASSERT(root >= 0);
	ASSERT_EQ(gdx_file_open_in(root, "tree", "topo.xml", 0, 1 << 20, why, sizeof(why)),
		  -EINVAL);
	ASSERT_STR_CONTAINS(why, "tree/topo.xml is a FIFO");
	close(root);
	rm_scratch();
}

static void test_devices_links_dirs_and_size(void)
{
	char why[256], *buf = NULL;
	size_t len = 0;
	int fd;

	scratch();
	put("facts", "kernel 6.1\n");
	ASSERT_EQ(symlink(at("facts"), at("link")), 0);
	ASSERT_EQ(gdx_file_open(AT_FDCWD, "/dev/null", 0, 1 << 20, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "/dev/null is a character device");
	ASSERT_EQ(gdx_file_open(AT_FDCWD, dir, 0, 1 << 20, why, sizeof(why)), -EISDIR);
	fd = gdx_file_open(AT_FDCWD, dir, GDX_FILE_DIR, 0, why, sizeof(why));
	ASSERT(fd >= 0);
	close(fd);
	ASSERT_EQ(gdx_file_open(AT_FDCWD, at("facts"), GDX_FILE_DIR, 0, why, sizeof(why)),
		  -ENOTDIR);
	/* a link where none is right; followed where the caller allows it */
	ASSERT_EQ(gdx_file_open(AT_FDCWD, at("link"), GDX_FILE_NOFOLLOW, 1 << 20, why, sizeof(why)),
		  -ELOOP);
	ASSERT_STR_CONTAINS(why, "is a symbolic link, which is not followed here");
	fd = gdx_file_open(AT_FDCWD, at("link"), 0, 1 << 20, why, sizeof(why));
	ASSERT(fd >= 0);
	/* blocking again once checked */
	ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	/* the size cap, from fstat and from what is read */
	ASSERT_EQ(gdx_file_open(AT_FDCWD, at("facts"), 0, 4, why, sizeof(why)), -EFBIG);
	ASSERT_STR_CONTAINS(why, "is larger than 4 bytes");
	ASSERT_EQ(gdx_file_read(AT_FDCWD, at("facts"), 0, 4, 0, &buf, &len, why, sizeof(why)),
		  -EFBIG);
	ASSERT_EQ(gdx_file_read(AT_FDCWD, at("facts"), 0, 11, 3, &buf, &len, why, sizeof(why)), 0);
	ASSERT_EQ(len, 11);
	ASSERT_EQ(strcmp(buf, "kernel 6.1\n"), 0);
	free(buf);
	ASSERT_EQ(gdx_file_open(AT_FDCWD, at("missing"), 0, 1, why, sizeof(why)), -ENOENT);
	ASSERT_STR_CONTAINS(why, "missing: No such file or directory");
	rm_scratch();
}

/* A saved tree whose links lead out of it: an absolute one to a file of
 * this machine, and one climbing out by "..". Neither reaches the file:
 * inside the tree they are paths of the tree, which has none there. */
static void tree_escapes(bool walk)
{
	char why[256], secret[PATH_MAX], resolved[PATH_MAX], *p;
	int root, fd;

	scratch();
	ASSERT_EQ(mkdir(at("tree"), 0700), 0);
	ASSERT_EQ(mkdir(at("tree/class"), 0700), 0);
	put("secret", "root-only first line\n");
	snprintf(secret, sizeof(secret), "%s", at("secret"));
	ASSERT_EQ(symlink(secret, at("tree/class/abs")), 0);
	/* ".." enough times to climb out of any real path */
	p = resolved;
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "../");
	sprintf(p, "%s", secret + 1);
	ASSERT_EQ(symlink(resolved, at("tree/class/up")), 0);
	ASSERT_EQ(symlink("../../secret", at("tree/class/rel")), 0);
	ASSERT_EQ(symlink("loop", at("tree/loop")), 0);
	put("tree/class/state", "4: ACTIVE\n");
	ASSERT_EQ(symlink("/class/state", at("tree/inside")), 0);
	root = open(at("tree"), O_PATH | O_DIRECTORY);
	ASSERT(root >= 0);
	for (int i = 0; i < 3; i++) {
		const char *rel = (const char *[]){"class/abs", "class/up", "class/rel"}[i];

		fd = walk ? gdx_file_walk_in(root, rel, O_RDONLY, NULL, 0)
			  : gdx_file_open_in(root, "tree", rel, 0, 1 << 20, why, sizeof(why));
		if (fd >= 0)
			gdx_test_fail(__FILE__, __LINE__, "%s opened outside the tree", rel);
		ASSERT_EQ(fd, -ENOENT);
	}
	/* a loop ends, and an absolute link inside the tree is the tree's */
	fd = walk ? gdx_file_walk_in(root, "loop", O_RDONLY, NULL, 0)
		  : gdx_file_open_in(root, "tree", "loop", 0, 1 << 20, why, sizeof(why));
	ASSERT_EQ(fd, -ELOOP);
	fd = walk ? gdx_file_walk_in(root, "inside", O_RDONLY, resolved, sizeof(resolved))
		  : gdx_file_open_in(root, "tree", "/inside", 0, 1 << 20, why, sizeof(why));
	ASSERT(fd >= 0);
	close(fd);
	if (walk)
		ASSERT_EQ(strcmp(resolved, "/class/state"), 0);
	ASSERT_EQ(gdx_file_resolve_in(root, "inside", resolved, sizeof(resolved)), 0);
	ASSERT_EQ(strcmp(resolved, "/class/state"), 0);
	ASSERT_EQ(gdx_file_resolve_in(root, "class/abs", resolved, sizeof(resolved)), -ENOENT);
	ASSERT_EQ(gdx_file_resolve_in(root, "class/../../..", resolved, sizeof(resolved)), 0);
	ASSERT_EQ(strcmp(resolved, "/"), 0);
	close(root);
	rm_scratch();
}

static void test_tree_links_stay_inside(void)
{
	tree_escapes(false);
}

static void test_tree_walk_links_stay_inside(void)
{
	tree_escapes(true);
}

/* Every path of a fixture tree (sysfs' relative links, as sysfs has them)
 * resolves to the same file by the walk as by openat2, at the same path
 * inside the tree; and a few that go nowhere fail alike. */
static void walk_tree_like_openat2(const char *root_path, const char *rel, int root, int *n)
{
	char sub[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	struct stat sa, sb;
	struct dirent *e;
	int fa, fb;
	DIR *d;

	fa = gdx_file_walk_in(root, rel, O_PATH, a, sizeof(a));
	if (gdx_file_have_openat2())
		fb = gdx_file_resolve_in(root, rel, b, sizeof(b));
	else
		fb = 0, snprintf(b, sizeof(b), "%s", a);
	if ((fa < 0) != (fb < 0))
		gdx_test_fail(__FILE__, __LINE__, "%s: walk %d, openat2 %d", rel, fa, fb);
	if (fa < 0)
		return;
	ASSERT_EQ(fstat(fa, &sa), 0);
	close(fa);
	snprintf(sub, sizeof(sub), "%s%s", root_path, b);
	ASSERT_EQ(stat(sub, &sb), 0);
	if (sa.st_ino != sb.st_ino || strcmp(a, b))
		gdx_test_fail(__FILE__, __LINE__, "%s: walk %s, openat2 %s", rel, a, b);
	(*n)++;
	snprintf(sub, sizeof(sub), "%s/%s", root_path, rel);
	/* follow directories by their own path only: links are visited, not
	 * descended (the tree's links lead to directories already visited) */
	if (lstat(sub, &sa) || !S_ISDIR(sa.st_mode))
		return;
	d = opendir(sub);
	ASSERT(d != NULL);
	while ((e = readdir(d))) {
		char next[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(next, sizeof(next), "%s/%s", rel, e->d_name);
		walk_tree_like_openat2(root_path, next, root, n);
	}
	closedir(d);
}

static void test_walk_agrees_with_openat2(void)
{
	static const char *const trees[] = {"tests/lib/fixtures/sysfs-gdr/healthy",
					    "tests/lib/fixtures/sysfs-gdr/acs",
					    "tests/lib/fixtures/sysfs-roce"};
	char real[PATH_MAX];
	int n = 0;

	for (size_t t = 0; t < sizeof(trees) / sizeof(trees[0]); t++) {
		int root;

		ASSERT(realpath(trees[t], real) != NULL);
		root = open(real, O_PATH | O_DIRECTORY);
		ASSERT(root >= 0);
		walk_tree_like_openat2(real, ".", root, &n);
		for (int i = 0; i < 4; i++)
			walk_tree_like_openat2(real,
					       (const char *[]){"nothing", "class/..", "/../..",
								"bus/pci/devices/x/.."}[i],
					       root, &n);
		close(root);
	}
	printf("  %d paths of the fixture trees agree (openat2 %s)\n", n,
	       gdx_file_have_openat2() ? "there" : "not there: the walk alone");
	ASSERT(n > 100);
}

static int count_entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;

	ASSERT(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

static void write_out(const char *path, const char *text, bool commit)
{
	struct gdx_file_out o;
	char why[256];

	ASSERT_EQ(gdx_file_out_open(path, &o, why, sizeof(why)), 0);
	ASSERT_EQ(write(o.fd, text, strlen(text)), (ssize_t)strlen(text));
	if (commit)
		ASSERT_EQ(gdx_file_out_commit(&o, why, sizeof(why)), 0);
	else
		gdx_file_out_abandon(&o);
}

/* An output at a path where something was planted: a FIFO (opening it to
 * write would wait for a reader), a link to a victim's file (which would be
 * overwritten), a file anyone may write (whose owner would read it): each
 * is replaced by a new file, the victim's untouched. */
static void test_output_replaces_what_was_planted(void)
{
	char buf[64];
	struct stat st;
	int fd, n;

	scratch();
	ASSERT_EQ(mkfifo(at("plot.svg"), 0666), 0);
	write_out(at("plot.svg"), "<svg/>", true);
	ASSERT_EQ(lstat(at("plot.svg"), &st), 0);
	ASSERT(S_ISREG(st.st_mode));
	put("victim", "the victim's own\n");
	ASSERT_EQ(unlink(at("plot.svg")), 0);
	ASSERT_EQ(symlink(at("victim"), at("plot.svg")), 0);
	write_out(at("plot.svg"), "<svg/>", true);
	fd = open(at("victim"), O_RDONLY);
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	ASSERT_EQ(strcmp(buf, "the victim's own\n"), 0);
	ASSERT_EQ(lstat(at("plot.svg"), &st), 0);
	ASSERT(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0666 & ~(unsigned)umask(022));
	umask(022);
	/* abandoned: the path as it was, no file left beside it */
	write_out(at("plot.svg"), "half", false);
	fd = open(at("plot.svg"), O_RDONLY);
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	ASSERT_EQ(strcmp(buf, "<svg/>"), 0);
	ASSERT_EQ(count_entries(), 2);
	rm_scratch();
}

GDX_TESTS_MAIN(TEST(test_fifo_refused_at_once, 5), TEST(test_devices_links_dirs_and_size, 5),
	       TEST(test_tree_links_stay_inside, 5), TEST(test_tree_walk_links_stay_inside, 5),
	       TEST(test_walk_agrees_with_openat2, 30),
	       TEST(test_output_replaces_what_was_planted, 5))
