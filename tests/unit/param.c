/* SPDX-License-Identifier: MIT */
/* NCCL_GDX_* parsing. */
#include <errno.h>

#include <gdx/gdx_env.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_verbs.h>

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void test_defaults(void)
{
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.gid_index, -1);
	ASSERT_EQ(gdx_params.timeout, 20);
	ASSERT_EQ(gdx_params.retry_cnt, 6);
	ASSERT_EQ(gdx_params.addr_family, 4);
	ASSERT_EQ(gdx_params.sl, -1);
	ASSERT_EQ(gdx_params.tc, -1);
	ASSERT_EQ(gdx_params.fifo_tc, -1);
	ASSERT_EQ(strcmp(gdx_params.hca, ""), 0);
}

static void test_values_and_info_line(void)
{
	gdx_log_set(gdx_test_logger);
	setenv("NCCL_GDX_GID_INDEX", "3", 1);
	setenv("NCCL_GDX_HCA", "=rxe0", 1);
	setenv("NCCL_GDX_TIMEOUT", "0x10", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.gid_index, 3);
	ASSERT_EQ(gdx_params.timeout, 16);
	ASSERT_EQ(strcmp(gdx_params.hca, "=rxe0"), 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_GID_INDEX set by environment to 3");
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* A value is the environment's, whoever set it: logged escaped, so that a
 * newline cannot add a line to the job's log nor an escape sequence act on
 * the terminal that reads it, taken or refused, ours or a twin. */
static void test_values_logged_escaped(void)
{
	static const char forged[] = "rxe0\nNET/GDX plugin: WARN forged\x1b[31m";

	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	setenv("NCCL_GDX_HCA", forged, 1);
	setenv("NCCL_IB_GID_INDEX", "1\r\x07", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(strcmp(gdx_params.hca, forged), 0); /* the value itself is as set */
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_HCA set by environment to "
					      "rxe0\\x0aNET/GDX plugin: WARN forged\\x1b[31m");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "set by NCCL_IB_GID_INDEX to 1\\x0d\\x07");
	ASSERT(!strchr(gdx_test_infos(), '\x1b'));
	ASSERT(!strstr(gdx_test_infos(), "\nNET/GDX plugin: WARN forged"));
	unsetenv("NCCL_GDX_HCA");
	unsetenv("NCCL_IB_GID_INDEX");
	gdx_test_log_clear();
	setenv("NCCL_GDX_TIMEOUT", "1\n\x1b]0;title\x07", 1);
	setenv("NCCL_GDX_ADDR_FAMILY", "4\n", 1);
	ASSERT_EQ(gdx_params_load(), -EINVAL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "NCCL_GDX_TIMEOUT=\"1\\x0a\\x1b]0;title\\x07\" is not an integer");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_ADDR_FAMILY=\"4\\x0a\" must be");
	ASSERT(!strchr(gdx_test_warnings(), '\x1b'));
	unsetenv("NCCL_GDX_TIMEOUT");
	unsetenv("NCCL_GDX_ADDR_FAMILY");
}

static void expect_refused(const char *var, const char *value, const char *needle)
{
	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	setenv(var, value, 1);
	ASSERT_EQ(gdx_params_load(), -EINVAL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), needle);
	unsetenv(var);
}

static void test_malformed(void)
{
	expect_refused("NCCL_GDX_GID_INDEX", "three",
		       "NCCL_GDX_GID_INDEX=\"three\" is not an integer");
	expect_refused("NCCL_GDX_TIMEOUT", "12abc", "NCCL_GDX_TIMEOUT");
	expect_refused("NCCL_GDX_TIMEOUT", "99999999999", "not an integer");
	expect_refused("NCCL_GDX_TIMEOUT", "32", "NCCL_GDX_TIMEOUT=32 is out of range 0-31");
	expect_refused("NCCL_GDX_RETRY_CNT", "8", "out of range 0-7");
	expect_refused("NCCL_GDX_SL", "16", "out of range -1-15");
	expect_refused("NCCL_GDX_ADDR_FAMILY", "5", "must be AF_INET or AF_INET6");
	expect_refused("NCCL_GDX_CTS_BATCH", "0", "NCCL_GDX_CTS_BATCH=0 is out of range 1-32");
	expect_refused("NCCL_GDX_CTS_BATCH", "33", "out of range 1-32");
}

static void test_table_is_complete(void)
{
	ASSERT(gdx_param_count >= 10);
	for (int i = 0; i < gdx_param_count; i++) {
		ASSERT(gdx_param_infos[i].name && *gdx_param_infos[i].name);
		ASSERT(gdx_param_infos[i].help && strlen(gdx_param_infos[i].help) > 10);
		ASSERT(gdx_param_infos[i].def);
	}
}

/* The variables read outside the table: unset and empty both read as unset,
 * as NCCL reads its own. */
static void test_foreign_variables(void)
{
	unsetenv("NCCL_NET_GDR_LEVEL");
	ASSERT(gdx_env(GDX_ENV_NET_GDR_LEVEL) == NULL);
	setenv("NCCL_NET_GDR_LEVEL", "", 1);
	ASSERT(gdx_env(GDX_ENV_NET_GDR_LEVEL) == NULL);
	setenv("NCCL_NET_GDR_LEVEL", "PHB", 1);
	ASSERT_EQ(strcmp(gdx_env(GDX_ENV_NET_GDR_LEVEL), "PHB"), 0);
	ASSERT_EQ(strcmp(gdx_env_name(GDX_ENV_SYSFS_ROOT), "GDX_SYSFS_ROOT"), 0);
	unsetenv("NCCL_NET_GDR_LEVEL");
	setenv("NCCL_GDX_RAILS", "off", 1);
	ASSERT_EQ(strcmp(gdx_param_env("RAILS"), "off"), 0);
	unsetenv("NCCL_GDX_RAILS");
	ASSERT(gdx_param_env("RAILS") == NULL);
}

/*
 * A site's NCCL_IB_* settings carry over when the NCCL_GDX_* twin is unset,
 * read as NCCL reads them (base 0, trailing text ignored, NCCL's own value
 * names), with an INFO naming the variable that set each; ours win. A value
 * NCCL takes is never a reason for init to fail: one outside what verbs
 * takes WARNs and leaves the default.
 */
static void test_nccl_twins(void)
{
	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	setenv("NCCL_IB_TIMEOUT", "22", 1);
	setenv("NCCL_IB_RETRY_CNT", "7", 1);
	setenv("NCCL_IB_ADDR_FAMILY", "AF_INET6", 1);
	setenv("NCCL_IB_GID_INDEX", "3xyz", 1); /* NCCL's strtoll: 3 */
	setenv("NCCL_IB_TC", "0x68", 1);
	setenv("NCCL_IB_SL", "99", 1); /* NCCL would hand this to verbs */
	setenv("NCCL_IB_HCA", "=mlx5_0:1:2:0", 1);
	setenv("NCCL_SOCKET_IFNAME", "e", 1); /* one character: NCCL ignores it */
	setenv("NCCL_GDX_PKEY", "2", 1);
	setenv("NCCL_IB_PKEY", "5", 1); /* ours is set: the twin is not read */
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.timeout, 22);
	ASSERT_EQ(gdx_params.retry_cnt, 7);
	ASSERT_EQ(gdx_params.addr_family, 6);
	ASSERT_EQ(gdx_params.gid_index, 3);
	ASSERT_EQ(gdx_params.tc, 104);
	ASSERT_EQ(gdx_params.sl, -1);
	ASSERT_EQ(gdx_params.pkey, 2);
	ASSERT_EQ(strcmp(gdx_params.hca, "=mlx5_0:1:2:0"), 0);
	ASSERT_EQ(strcmp(gdx_params.socket_ifname, ""), 0);
	ASSERT_EQ(gdx_param_src("TIMEOUT"), GDX_PARAM_TWIN);
	ASSERT_EQ(gdx_param_src("PKEY"), GDX_PARAM_OURS);
	ASSERT_EQ(gdx_param_src("SOCKET_IFNAME"), GDX_PARAM_DEFAULT);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_TIMEOUT set by NCCL_IB_TIMEOUT to 22");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_PKEY set by environment to 2");
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "NCCL_IB_SL=99 is outside -1-15, which this plugin takes: using "
			    "NCCL_GDX_SL's default -1");
	ASSERT_EQ(gdx_test_warning_count(), 1);
	/* NCCL reads anything but AF_INET6 as AF_INET */
	setenv("NCCL_IB_ADDR_FAMILY", "inet6", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.addr_family, 4);
	/* ours wins over the twin */
	setenv("NCCL_GDX_TIMEOUT", "18", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.timeout, 18);
	for (const char *const *v =
		     (const char *const[]){"NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
					   "NCCL_IB_ADDR_FAMILY", "NCCL_IB_GID_INDEX", "NCCL_IB_TC",
					   "NCCL_IB_SL", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME",
					   "NCCL_GDX_PKEY", "NCCL_IB_PKEY", "NCCL_GDX_TIMEOUT",
					   NULL};
	     *v; v++)
		unsetenv(*v);
}

/* The service level and traffic class a connection's sender chooses, as
 * net_ib: ours (or NCCL_IB_SL/TC) when set, else NCCL's traffic class for
 * the communicator for both (on InfiniBand the class becomes the SL), else 0. */
static void test_qos_as_net_ib(void)
{
	uint8_t sl, tc;

	ASSERT_EQ(gdx_params_load(), 0);
	gdx_rail_qos(-1, &sl, &tc);
	ASSERT_EQ(sl, 0);
	ASSERT_EQ(tc, 0);
	gdx_rail_qos(5, &sl, &tc);
	ASSERT_EQ(sl, 5);
	ASSERT_EQ(tc, 5);
	setenv("NCCL_IB_SL", "3", 1);
	setenv("NCCL_GDX_TC", "96", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	gdx_rail_qos(5, &sl, &tc);
	ASSERT_EQ(sl, 3);
	ASSERT_EQ(tc, 96);
	unsetenv("NCCL_IB_SL");
	unsetenv("NCCL_GDX_TC");
}

GDX_TESTS_MAIN(TEST(test_defaults, 5), TEST(test_values_and_info_line, 5),
	       TEST(test_values_logged_escaped, 5), TEST(test_malformed, 5),
	       TEST(test_table_is_complete, 5), TEST(test_foreign_variables, 5),
	       TEST(test_nccl_twins, 5), TEST(test_qos_as_net_ib, 5))
