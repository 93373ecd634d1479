/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the saved-tree walker (gdx_file.c): a saved sysfs
 * tree is whatever its maker put there, links leading anywhere included,
 * and check --sysfs-root reads it as root.
 *
 *   make fuzz && build/tests/fuzz/tree_walk -max_total_time=60 NEW_DIR \
 *           tests/fuzz/corpus/tree_walk
 *
 * Each input is a small tree and the paths looked up in it: a line
 * "d NAME", "f NAME" or "l NAME TARGET" makes a directory, a file or a
 * symbolic link at NAME (a path inside the tree), a line "? PATH" is a
 * lookup; anything else is skipped. Beside the tree (its parent, which a
 * link leaving the tree would reach) lies a file nobody may read through
 * the tree.
 *
 * What must hold, for every lookup: the walk (the fallback where the kernel
 * has no openat2) finds a file exactly when openat2 RESOLVE_IN_ROOT does,
 * the same file at the same path inside the tree (resolve_in's /proc-made
 * path), and that file is in the tree: never the file beside it, never the
 * tree's parent. A lookup with O_NOFOLLOW refuses a link as its last
 * component alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/gdx_file.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_base[64], fuzz_tree[96];
static struct stat fuzz_outside, fuzz_parent;

static int fuzz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fuzz_cleanup(void)
{
	nftw(fuzz_base, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static void fuzz_setup(void)
{
	char path[128];
	FILE *f;

	if (fuzz_base[0])
		return;
	snprintf(fuzz_base, sizeof(fuzz_base), "/tmp/fuzz_tree_walk.XXXXXX");
	FUZZ_CHECK(mkdtemp(fuzz_base) != NULL);
	atexit(fuzz_cleanup);
	snprintf(path, sizeof(path), "%s/outside", fuzz_base);
	f = fopen(path, "w");
	FUZZ_CHECK(f && fputs("not the tree's\n", f) >= 0 && fclose(f) == 0);
	FUZZ_CHECK(stat(path, &fuzz_outside) == 0);
	FUZZ_CHECK(stat(fuzz_base, &fuzz_parent) == 0);
	snprintf(fuzz_tree, sizeof(fuzz_tree), "%s/tree", fuzz_base);
}

/* A path of the input's, kept inside the tree's directory: no "..", no
 * leading '/' (the maker's own files are made where the maker says). */
static bool fuzz_name_ok(const char *name)
{
	return *name && *name != '/' && !strstr(name, "..") && strlen(name) < 200;
}

static void fuzz_make(char *line)
{
	char path[PATH_MAX], *name = line + 2, *target;

	if (strlen(line) < 3 || line[1] != ' ')
		return;
	target = line[0] == 'l' ? strchr(name, ' ') : NULL;
	if (target)
		*target++ = '\0';
	if (!fuzz_name_ok(name))
		return;
	snprintf(path, sizeof(path), "%s/%s", fuzz_tree, name);
	if (line[0] == 'd') {
		mkdir(path, 0700);
	} else if (line[0] == 'f') {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

		if (fd >= 0)
			close(fd);
	} else if (line[0] == 'l' && target && *target) {
		/* the link's text is the input's, wherever it points */
		symlink(target, path);
	}
}

/* The same lookup both ways, with and without O_NOFOLLOW. */
static void fuzz_lookup(int root, const char *rel)
{
	for (int nofollow = 0; nofollow < 2; nofollow++) {
		int flags = O_PATH | (nofollow ? O_NOFOLLOW : 0);
		char walked[PATH_MAX], resolved[PATH_MAX], sub[PATH_MAX * 2];
		int fw = gdx_file_walk_in(root, rel, flags, walked, sizeof(walked));
		struct stat sw, sk;
		int ret;

		if (fw >= 0) {
			FUZZ_CHECK(fstat(fw, &sw) == 0);
			close(fw);
			/* in the tree: never the file beside it, nor the tree's parent */
			FUZZ_CHECK(!(sw.st_dev == fuzz_outside.st_dev &&
				     sw.st_ino == fuzz_outside.st_ino));
			FUZZ_CHECK(!(sw.st_dev == fuzz_parent.st_dev &&
				     sw.st_ino == fuzz_parent.st_ino));
			snprintf(sub, sizeof(sub), "%s%s", fuzz_tree,
				 strcmp(walked, "/") ? walked : "");
			FUZZ_CHECK(lstat(sub, &sk) == 0);
			FUZZ_CHECK(sk.st_ino == sw.st_ino);
		}
		if (!gdx_file_have_openat2() || nofollow)
			continue;
		/* openat2 RESOLVE_IN_ROOT: the same answer, at the same path */
		ret = gdx_file_resolve_in(root, rel, resolved, sizeof(resolved));
		FUZZ_CHECK((fw >= 0) == (ret == 0));
		if (!ret)
			FUZZ_CHECK(!strcmp(walked, resolved));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;
	int root, lookups = 0;

	FUZZ_CHECK(text != NULL);
	fuzz_setup();
	memcpy(text, data, size);
	text[size] = '\0';
	nftw(fuzz_tree, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
	FUZZ_CHECK(mkdir(fuzz_tree, 0700) == 0);
	root = open(fuzz_tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	FUZZ_CHECK(root >= 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '?' && line[1] == ' ' && lookups < 32) {
			fuzz_lookup(root, line + 2);
			lookups++;
		} else if (strchr("dfl", line[0])) {
			fuzz_make(line);
		}
	}
	close(root);
	free(text);
	return 0;
}
