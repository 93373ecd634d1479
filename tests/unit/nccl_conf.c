/* SPDX-License-Identifier: MIT */
/* NCCL's configuration files as gdx-doctor reads them (gdx_nccl_conf.h):
 * the order (environment, NCCL_CONF_FILE or ~/.nccl.conf, /etc/nccl.conf),
 * the syntax (comments, no '=', CRLF, untrimmed names), where each value
 * came from, and the files refused: a FIFO, another user's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/common/gdx_nccl_conf.h"

#include "gdx_test.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gdx-nccl-conf-XXXXXX");
	ASSERT(mkdtemp(dir) != NULL);
}

static void teardown(const char *const *names)
{
	char path[128];

	for (; *names; names++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *names);
		unlink(path);
	}
	rmdir(dir);
}

static bool has_note(const struct gdx_nccl_conf *c, const char *text)
{
	for (int i = 0; i < c->nnotes; i++)
		if (strstr(c->notes[i], text))
			return true;
	return false;
}

/* environment > the user's file > the system's; the first line of a file wins */
static void test_precedence(void)
{
	static const char *const names[] = {".nccl.conf", "nccl.conf", NULL};
	char sys[128], src[1100];
	struct gdx_nccl_conf c;

	setup();
	snprintf(sys, sizeof(sys), "%s/nccl.conf", dir);
	write_file(".nccl.conf", "GDXT_A=user\nGDXT_B=user\nGDXT_B=second\n");
	write_file("nccl.conf", "GDXT_A=sys\nGDXT_B=sys\nGDXT_C=sys\n");
	setenv("GDXT_A", "env", 1);
	unsetenv("GDXT_B");
	unsetenv("GDXT_C");
	ASSERT_EQ(gdx_nccl_conf_load(&(struct gdx_nccl_conf_paths){.home = dir, .system = sys}, &c),
		  0);
	ASSERT_EQ(c.nfiles, 2);
	ASSERT_EQ(c.files[0].kind, GDX_NCCL_CONF_USER);
	ASSERT_EQ(strcmp(getenv("GDXT_A"), "env"), 0);
	ASSERT_EQ(strcmp(getenv("GDXT_B"), "user"), 0);
	ASSERT_EQ(strcmp(getenv("GDXT_C"), "sys"), 0);
	ASSERT_EQ(strcmp(gdx_nccl_conf_source(&c, "GDXT_A", src, sizeof(src)), "environment"), 0);
	ASSERT_STR_CONTAINS(gdx_nccl_conf_source(&c, "GDXT_B", src, sizeof(src)), ".nccl.conf:2");
	ASSERT_STR_CONTAINS(gdx_nccl_conf_source(&c, "GDXT_C", src, sizeof(src)), "nccl.conf:3");
	ASSERT(gdx_nccl_conf_source(&c, "GDXT_NONE", src, sizeof(src)) == NULL);
	gdx_nccl_conf_free(&c);
	unsetenv("GDXT_A");
	unsetenv("GDXT_B");
	unsetenv("GDXT_C");
	teardown(names);
}

/* NCCL_CONF_FILE replaces ~/.nccl.conf, never /etc/nccl.conf */
static void test_named_file(void)
{
	static const char *const names[] = {".nccl.conf", "named.conf", "nccl.conf", NULL};
	char sys[128], named[128];
	struct gdx_nccl_conf c;

	setup();
	snprintf(sys, sizeof(sys), "%s/nccl.conf", dir);
	snprintf(named, sizeof(named), "%s/named.conf", dir);
	write_file(".nccl.conf", "GDXT_A=user\n");
	write_file("named.conf", "GDXT_A=named\n");
	write_file("nccl.conf", "GDXT_B=sys\n");
	unsetenv("GDXT_A");
	unsetenv("GDXT_B");
	ASSERT_EQ(gdx_nccl_conf_load(
			  &(struct gdx_nccl_conf_paths){.named = named, .home = dir, .system = sys},
			  &c),
		  0);
	ASSERT_EQ(c.files[0].kind, GDX_NCCL_CONF_NAMED);
	ASSERT_EQ(strcmp(getenv("GDXT_A"), "named"), 0);
	ASSERT_EQ(strcmp(getenv("GDXT_B"), "sys"), 0);
	gdx_nccl_conf_free(&c);
	unsetenv("GDXT_A");
	unsetenv("GDXT_B");
	teardown(names);
}

/* comments, blank lines, no '=', untrimmed names and values, CRLF, '=' in
 * the value, an empty name */
static void test_syntax(void)
{
	static const char *const names[] = {"nccl.conf", NULL};
	char sys[128];
	struct gdx_nccl_conf c;

	setup();
	snprintf(sys, sizeof(sys), "%s/nccl.conf", dir);
	write_file("nccl.conf", "# GDXT_A=comment\n\nGDXT_JUNK\nGDXT_A = spaced\nGDXT_B=x=y\n"
				"GDXT_C=dos\r\n=novalue\n #GDXT_D=indented\nGDXT_E=");
	unsetenv("GDXT_A");
	unsetenv("GDXT_A ");
	unsetenv("GDXT_B");
	unsetenv("GDXT_C");
	unsetenv("GDXT_E");
	ASSERT_EQ(gdx_nccl_conf_load(&(struct gdx_nccl_conf_paths){.home = dir, .system = sys}, &c),
		  0);
	ASSERT(getenv("GDXT_A") == NULL); /* commented out; the other is "GDXT_A " */
	ASSERT_EQ(strcmp(getenv("GDXT_A "), " spaced"), 0);
	ASSERT_EQ(strcmp(getenv("GDXT_B"), "x=y"), 0);
	ASSERT_EQ(strcmp(getenv("GDXT_C"), "dos\r"), 0); /* NCCL 2.29 keeps the CR */
	ASSERT_EQ(strcmp(getenv("GDXT_E"), ""), 0);
	ASSERT(has_note(&c, ":3: no '='"));
	ASSERT(has_note(&c, ":4: blanks in the name"));
	ASSERT(has_note(&c, ":6: ends in a CR"));
	ASSERT(has_note(&c, ":7: an empty name"));
	/* not a comment to NCCL: '#' only counts as the first byte */
	ASSERT(has_note(&c, ":8: blanks in the name"));
	ASSERT_EQ(strcmp(getenv(" #GDXT_D"), "indented"), 0);
	gdx_nccl_conf_free(&c);
	unsetenv("GDXT_A ");
	unsetenv("GDXT_B");
	unsetenv("GDXT_C");
	unsetenv("GDXT_E");
	unsetenv(" #GDXT_D");
	teardown(names);
}

/* A FIFO is refused at once; a file that is not there is skipped, as NCCL does */
static void test_fifo_and_missing(void)
{
	static const char *const names[] = {"nccl.conf", NULL};
	char sys[128];
	struct gdx_nccl_conf c;

	setup();
	snprintf(sys, sizeof(sys), "%s/nccl.conf", dir);
	ASSERT_EQ(mkfifo(sys, 0600), 0);
	ASSERT_EQ(gdx_nccl_conf_load(&(struct gdx_nccl_conf_paths){.home = dir, .system = sys}, &c),
		  0);
	ASSERT_EQ(c.files[0].err, -ENOENT); /* no ~/.nccl.conf: nothing said */
	ASSERT_EQ(c.files[1].err, -EINVAL);
	ASSERT(has_note(&c, "FIFO"));
	gdx_nccl_conf_free(&c);
	teardown(names);
}

/* A file owned by another user is not applied (root runs this to test it) */
static void test_other_owner(void)
{
	static const char *const names[] = {"nccl.conf", NULL};
	char sys[128];
	struct gdx_nccl_conf c;

	if (getuid() != 0)
		return; /* only root can give a file away */
	setup();
	snprintf(sys, sizeof(sys), "%s/nccl.conf", dir);
	write_file("nccl.conf", "GDXT_OWNED=1\n");
	ASSERT_EQ(chown(sys, 4242, 4242), 0);
	unsetenv("GDXT_OWNED");
	ASSERT_EQ(gdx_nccl_conf_load(&(struct gdx_nccl_conf_paths){.home = dir, .system = sys}, &c),
		  0);
	ASSERT(getenv("GDXT_OWNED") == NULL);
	ASSERT_EQ(c.files[1].err, -EPERM);
	ASSERT(has_note(&c, "owned by uid 4242"));
	gdx_nccl_conf_free(&c);
	teardown(names);
}

GDX_TESTS_MAIN(TEST(test_precedence, 10), TEST(test_named_file, 10), TEST(test_syntax, 10),
	       TEST(test_fifo_and_missing, 10), TEST(test_other_owner, 10))
