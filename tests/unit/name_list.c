/* SPDX-License-Identifier: MIT */
/* NCCL_GDX_HCA / NCCL_SOCKET_IFNAME filter syntax. */
#include "sys/gdx_name_list.h"

#include "gdx_test.h"

static struct gdx_name_list parse_ok(const char *spec, bool with_ports)
{
	struct gdx_name_list f;
	const char *err = NULL;

	if (gdx_name_list_parse(spec, with_ports, &f, &err))
		gdx_test_fail(__FILE__, __LINE__, "\"%s\" refused: %s", spec, err);
	return f;
}

static void test_empty_matches_all(void)
{
	struct gdx_name_list f = parse_ok("", true);

	ASSERT(gdx_name_list_match(&f, "mlx5_0", 1));
	ASSERT(gdx_name_list_match(&f, "rxe7", 2));
	f = parse_ok(NULL, true);
	ASSERT(gdx_name_list_match(&f, "mlx5_0", 1));
}

static void test_prefix_and_exact(void)
{
	struct gdx_name_list f = parse_ok("mlx5_1", true);

	ASSERT(gdx_name_list_match(&f, "mlx5_1", 1));
	ASSERT(gdx_name_list_match(&f, "mlx5_10", 1)); /* NCCL's documented prefix pitfall */
	ASSERT(!gdx_name_list_match(&f, "mlx5_2", 1));
	f = parse_ok("=mlx5_1", true);
	ASSERT(gdx_name_list_match(&f, "mlx5_1", 1));
	ASSERT(!gdx_name_list_match(&f, "mlx5_10", 1));
}

static void test_ports(void)
{
	struct gdx_name_list f = parse_ok("mlx5_0:1,mlx5_1:2", true);

	ASSERT_EQ(f.n, 2);
	ASSERT(gdx_name_list_match(&f, "mlx5_0", 1));
	ASSERT(!gdx_name_list_match(&f, "mlx5_0", 2));
	ASSERT(gdx_name_list_match(&f, "mlx5_1", 2));
	ASSERT(!gdx_name_list_match(&f, "mlx5_1", 1));
}

static void test_exclude(void)
{
	struct gdx_name_list f = parse_ok("^mlx5_0", true);

	ASSERT(!gdx_name_list_match(&f, "mlx5_0", 1));
	ASSERT(gdx_name_list_match(&f, "mlx5_1", 1));
	f = parse_ok("^=rxe1:1", true);
	ASSERT(f.exclude && f.exact);
	ASSERT(!gdx_name_list_match(&f, "rxe1", 1));
	ASSERT(gdx_name_list_match(&f, "rxe1", 2));
	ASSERT(gdx_name_list_match(&f, "rxe10", 1));
}

static void test_interface_names_keep_colons(void)
{
	struct gdx_name_list f = parse_ok("eth0:1", false);

	ASSERT(gdx_name_list_match(&f, "eth0:1", -1));
	ASSERT(!gdx_name_list_match(&f, "eth0", -1));
}

static void test_malformed(void)
{
	static const char *const bad[] = {"mlx5_0:x",
					  "mlx5_0:0",
					  "mlx5_0:256",
					  ",mlx5_0",
					  "mlx5_0,,mlx5_1",
					  "^",
					  "=",
					  "^=",
					  ":1",
					  "mlx5_0:1:x",
					  "mlx5_0:1:2:y",
					  "mlx5_0:1:2:3:4",
					  "mlx5_0:1:99999"};
	struct gdx_name_list f;
	char many[512] = "";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *err = NULL;

		if (gdx_name_list_parse(bad[i], true, &f, &err) == 0)
			gdx_test_fail(__FILE__, __LINE__, "\"%s\" was accepted", bad[i]);
		ASSERT(err && *err);
	}
	for (int i = 0; i < 33; i++)
		strcat(many, i ? ",d" : "d");
	const char *err = NULL;
	ASSERT(gdx_name_list_parse(many, true, &f, &err) != 0);
	ASSERT_STR_CONTAINS(err, "more than 32");
}

/* NCCL 2.30's name:port:rail:plane: the ids of the matching entry; empty
 * fields are "any port" and "no id". */
static void test_rail_and_plane(void)
{
	struct gdx_name_list f = parse_ok("=mlx5_0:1:3:0,mlx5_1::4,mlx5_2:,mlx5_3", true);
	const struct gdx_name_list_entry *e;

	e = gdx_name_list_find(&f, "mlx5_0", 1);
	ASSERT(e && e->port == 1 && e->rail == 3 && e->plane == 0);
	ASSERT(gdx_name_list_find(&f, "mlx5_0", 2) == NULL);
	e = gdx_name_list_find(&f, "mlx5_1", 2);
	ASSERT(e && e->port == -1 && e->rail == 4 && e->plane == -1);
	e = gdx_name_list_find(&f, "mlx5_2", 1);
	ASSERT(e && e->port == -1 && e->rail == -1);
	ASSERT(gdx_name_list_match(&f, "mlx5_3", 1));
	/* an excluding list names no device it keeps */
	f = parse_ok("^mlx5_0:1:3:0", true);
	ASSERT(gdx_name_list_match(&f, "mlx5_1", 1));
	ASSERT(!gdx_name_list_match(&f, "mlx5_0", 1));
}

GDX_TESTS_MAIN(TEST(test_empty_matches_all, 5), TEST(test_prefix_and_exact, 5), TEST(test_ports, 5),
	       TEST(test_exclude, 5), TEST(test_interface_names_keep_colons, 5),
	       TEST(test_malformed, 5), TEST(test_rail_and_plane, 5))
