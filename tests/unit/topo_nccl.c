/* SPDX-License-Identifier: MIT */
/* NCCL's topology file (gdx_topo_nccl.h): the GPUs, NICs and NCCL's path
 * classes read from its tree; what it refuses; and the plugin's topology
 * following it over hwloc's (gdx_topo_opts.nccl_file) on the ND H100 v5
 * fixtures (tests/lib/fixtures/topo/ndv5.xml, nccl-topo/ndv5-topo.xml). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/gdx_topo.h"
#include "topo/gdx_topo_nccl.h"

#include "gdx_test.h"

#define NDV5_NCCL  "tests/lib/fixtures/nccl-topo/ndv5-topo.xml"
#define NDV5_HWLOC "tests/lib/fixtures/topo/ndv5.xml"

static int parse(const char *text, struct gdx_topo_nccl **t, char *why, size_t len)
{
	return gdx_topo_nccl_parse(text, strlen(text), t, why, len);
}

static int nic_of(const struct gdx_topo_nccl *t, const char *key)
{
	for (int i = 0; i < t->nnics; i++)
		if (!strcmp(t->nics[i].pci, key) || !strcmp(t->nics[i].name, key))
			return i;
	return -1;
}

/* Azure's shape: every GPU PIX to its one NIC, PHB to the others of its
 * CPU, SYS across. */
static void test_ndv5_pairs(void)
{
	struct gdx_topo_nccl *t;
	char why[256];

	ASSERT_EQ(gdx_topo_nccl_read(-1, NDV5_NCCL, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->ngpus, 8);
	ASSERT_EQ(t->nnics, 8);
	for (int g = 0; g < 8; g++) {
		char pci[16];

		snprintf(pci, sizeof(pci), "%04x:00:00.0", g + 1);
		ASSERT_EQ(strcmp(t->gpus[g].pci, pci), 0);
		ASSERT_EQ(t->gpus[g].c2c, 0);
		for (int n = 0; n < 8; n++)
			ASSERT_EQ(gdx_topo_nccl_path(t, g, n), n == g		? GDX_TNC_PIX
							       : n / 4 == g / 4 ? GDX_TNC_PHB
										: GDX_TNC_SYS);
	}
	ASSERT_EQ(gdx_topo_nccl_path(t, 8, 0), GDX_TNC_UNKNOWN);
	gdx_topo_nccl_free(t);
}

/* Nested switches (PXB), a NIC's ports by <net> name, a <nic> without PCI,
 * a GPU's <c2c>, comments, single quotes, two spaces, a bus id without domain. */
static void test_classes_names_c2c(void)
{
	static const char text[] =
		"<!-- a comment -->\n<system version=\"1\">\n"
		" <cpu numaid=\"0\">\n"
		"  <pci busid=\"0000:10:00.0\" class=\"0x060400\">\n"
		"   <pci busid=\"0000:11:00.0\" class=\"0x060400\">\n"
		"    <pci busid=\"0000:12:00.0\" class=\"0x030200\"><gpu dev=\"0\" sm=\"90\">"
		"<c2c bw=\"40\" count=\"10\"/></gpu></pci>\n"
		"    <pci busid=\"0000:13:00.0\" class=\"0x020700\"><nic>"
		"<net name=\"mlx5_0\" dev=\"0\"/><net name='mlx5_1'  dev=\"1\"/></nic></pci>\n"
		"   </pci>\n"
		"   <pci busid=\"14:00.0\" class=\"0x020000\"/>\n"
		"  </pci>\n"
		"  <nic><net name=\"rxe0\"/></nic>\n"
		"  <weird><pci busid=\"0000:99:00.0\" class=\"0x030200\"/></weird>\n"
		" </cpu>\n"
		" <cpu numaid=\"1\"><pci busid=\"0000:80:00.0\" class=\"0x020700\"/></cpu>\n"
		"</system>\n";
	struct gdx_topo_nccl *t;
	char why[256];

	ASSERT_EQ(parse(text, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->ngpus, 1); /* the one under <weird> is NCCL's to ignore */
	ASSERT_EQ(t->gpus[0].c2c, 1);
	ASSERT_EQ(t->nnics, 5);
	ASSERT_EQ(strcmp(t->nics[nic_of(t, "mlx5_1")].pci, "0000:13:00.0"), 0);
	ASSERT_EQ(gdx_topo_nccl_path(t, 0, nic_of(t, "mlx5_0")), GDX_TNC_PIX);
	ASSERT_EQ(gdx_topo_nccl_path(t, 0, nic_of(t, "mlx5_1")), GDX_TNC_PIX);
	ASSERT_EQ(gdx_topo_nccl_path(t, 0, nic_of(t, "0000:14:00.0")), GDX_TNC_PXB);
	ASSERT_EQ(gdx_topo_nccl_path(t, 0, nic_of(t, "rxe0")), GDX_TNC_PHB);
	ASSERT_EQ(t->nics[nic_of(t, "rxe0")].pci[0], '\0');
	ASSERT_EQ(gdx_topo_nccl_path(t, 0, nic_of(t, "0000:80:00.0")), GDX_TNC_SYS);
	gdx_topo_nccl_free(t);
}

static void refused(const char *text, const char *reason)
{
	struct gdx_topo_nccl *t = (void *)1;
	char why[256] = "";

	ASSERT_EQ(parse(text, &t, why, sizeof(why)), -EINVAL);
	ASSERT(t == NULL);
	ASSERT_STR_CONTAINS(why, reason);
}

static void test_refusals(void)
{
	char *deep, *wide, *long_value;
	size_t at = 0;

	refused("<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"",
		"unterminated tag");
	refused("<system version=\"1\"><cpu>", "unterminated elements");
	refused("<system version=\"1\"></cpu></system>", "does not match");
	refused("<system version=\"2\"></system>", "version 1 only");
	refused("<topology version=\"2.0\"><object type=\"Machine\"/></topology>", "hwloc's XML");
	refused("not xml at all", "'<' expected");
	refused("<system version=\"1\"><!-- never closed", "unterminated comment");
	refused("", "no <system> element");
	refused("<system version=1></system>", "quoted value");
	/* what NCCL's own parser fails on (src/graph/xml.cc) */
	refused("<?xml version=\"1.0\"?>\n<system version=\"1\"></system>", "XML declaration");
	refused("<system version=\"1\">\n\t<cpu/>\n</system>", "'<' expected");
	refused("<system\nversion=\"1\"></system>", "line break inside a tag");
	refused("<system version = \"1\"></system>", "'=' expected right after");
	refused("<system version=\"1\"></system >", "right after a closing tag's name");

	deep = malloc(64 * 16 + 64);
	ASSERT(deep != NULL);
	at += (size_t)sprintf(deep, "<system version=\"1\">");
	for (int i = 0; i < 64; i++)
		at += (size_t)sprintf(deep + at, "<a>");
	refused(deep, "nested deeper than 32");
	free(deep);

	/* more elements than NCCL keeps (its 256) */
	wide = malloc(300 * 40 + 64);
	ASSERT(wide != NULL);
	at = (size_t)sprintf(wide, "<system version=\"1\"><cpu>");
	for (int i = 0; i < 300; i++)
		at += (size_t)sprintf(wide + at, "%s<pci busid=\"0000:%02x:00.0\"/>",
				      i % 100 ? "" : "</cpu><cpu>", i & 0xff);
	sprintf(wide + at, "</cpu></system>");
	refused(wide, "limited to 256");
	/* and more than 128 under one */
	at = (size_t)sprintf(wide, "<system version=\"1\"><cpu>");
	for (int i = 0; i < 130; i++)
		at += (size_t)sprintf(wide + at, "<pci busid=\"0000:%02x:00.0\"/>", i);
	sprintf(wide + at, "</cpu></system>");
	refused(wide, "128 elements under one");
	free(wide);

	long_value = malloc(400);
	ASSERT(long_value != NULL);
	sprintf(long_value, "<system version=\"1\" name=\"%0300d\"></system>", 0);
	refused(long_value, "over 254 bytes");
	free(long_value);
}

/* The file's checks: missing, too large, a FIFO, a directory. */
static void test_file_refusals(void)
{
	char dir[64] = "/tmp/gdx-nccl-topo-XXXXXX", path[96], why[256];
	struct gdx_topo_nccl *t;
	FILE *f;

	ASSERT_EQ(gdx_topo_nccl_read(-1, "tests/lib/fixtures/nccl-topo/none.xml", &t, why,
				     sizeof(why)),
		  -ENOENT);
	ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo.xml", dir);
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT_EQ(gdx_topo_nccl_read(-1, path, &t, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "FIFO");
	unlink(path);
	ASSERT_EQ(gdx_topo_nccl_read(-1, dir, &t, why, sizeof(why)), -EISDIR);
	snprintf(path, sizeof(path), "%s/huge.xml", dir);
	f = fopen(path, "w");
	ASSERT(f != NULL);
	ASSERT_EQ(fseek(f, (long)GDX_TOPO_NCCL_MAX + 1, SEEK_SET), 0);
	fputc(' ', f);
	fclose(f);
	ASSERT_EQ(gdx_topo_nccl_read(-1, path, &t, why, sizeof(why)), -EFBIG);
	unlink(path);
	rmdir(dir);
}

/* The plugin's topology: hwloc's two rails of four NODE NICs, or with
 * NCCL's file, eight PIX pairs and eight rails of one. */
static void test_topo_follows_file(void)
{
	struct gdx_topo_opts o = {.xml = NDV5_HWLOC, .fd = -1};
	struct gdx_topo *t;
	char why[256];

	ASSERT_EQ(gdx_topo_load_opts(&o, &t, why, sizeof(why)), 0);
	ASSERT_EQ(gdx_topo_ngpus(t), 8);
	ASSERT_EQ(gdx_topo_path(t, 0, gdx_topo_find_nic(t, "mlx5_0")), GDX_PATH_NODE);
	ASSERT_EQ(gdx_topo_path(t, 0, gdx_topo_find_nic(t, "mlx5_3")), GDX_PATH_NODE);
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	ASSERT_EQ(gdx_topo_group(t, 0)->nnics, 4);
	ASSERT_EQ(t->nccl_pairs, 0);
	gdx_topo_free(t);

	o.nccl_file = NDV5_NCCL;
	ASSERT_EQ(gdx_topo_load_opts(&o, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->nccl_err, 0);
	ASSERT_EQ(t->nccl_pairs, 64);
	ASSERT_EQ(gdx_topo_ngroups(t), 8);
	for (int g = 0; g < 8; g++) {
		char nic[16];
		const struct gdx_topo_group *grp = gdx_topo_group(t, g);

		snprintf(nic, sizeof(nic), "mlx5_%d", g);
		ASSERT_EQ(gdx_topo_path(t, g, gdx_topo_find_nic(t, nic)), GDX_PATH_PIX);
		ASSERT_EQ(grp->nnics, 1);
		ASSERT_EQ(grp->nics[0], gdx_topo_find_nic(t, nic));
		ASSERT_EQ(gdx_topo_gpu(t, g)->c2c, 0); /* the file says: no <c2c> */
	}
	ASSERT_EQ(gdx_topo_path(t, 0, gdx_topo_find_nic(t, "mlx5_1")), GDX_PATH_PHB);
	ASSERT_EQ(gdx_topo_path(t, 0, gdx_topo_find_nic(t, "mlx5_4")), GDX_PATH_SYS);
	gdx_topo_free(t);

	/* a file that cannot be read: hwloc's, and why says so */
	o.nccl_file = "tests/lib/fixtures/nccl-topo/none.xml";
	ASSERT_EQ(gdx_topo_load_opts(&o, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->nccl_err, -ENOENT);
	ASSERT_STR_CONTAINS(why, "none.xml");
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	gdx_topo_free(t);
}

/* The plugin's own file wins over NCCL's; this machine's topology
 * (gdx_topo_load(NULL), the plugin's) reads NCCL's. */
static void test_which_file(void)
{
	struct gdx_topo *t;
	char why[256];

	setenv("NCCL_TOPO_FILE", NDV5_NCCL, 1);
	ASSERT_EQ(strcmp(gdx_topo_nccl_file(NULL), NDV5_NCCL), 0);
	ASSERT(gdx_topo_nccl_file(NDV5_HWLOC) == NULL);
	ASSERT_EQ(gdx_topo_load(NULL, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->nccl_err, 0); /* read; none of its GPUs is this machine's */
	gdx_topo_free(t);
	ASSERT_EQ(gdx_topo_load(NDV5_HWLOC, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->nccl_pairs, 0); /* an hwloc file of the plugin's own: the whole story */
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	gdx_topo_free(t);
	setenv("NCCL_TOPO_FILE", "tests/lib/fixtures/nccl-topo/none.xml", 1);
	ASSERT_EQ(gdx_topo_load(NULL, &t, why, sizeof(why)), 0);
	ASSERT_EQ(t->nccl_err, -ENOENT);
	gdx_topo_free(t);
	unsetenv("NCCL_TOPO_FILE");
	ASSERT(gdx_topo_nccl_file(NULL) == NULL);
}

GDX_TESTS_MAIN(TEST(test_ndv5_pairs, 10), TEST(test_classes_names_c2c, 10), TEST(test_refusals, 10),
	       TEST(test_file_refusals, 10), TEST(test_topo_follows_file, 10),
	       TEST(test_which_file, 10))
