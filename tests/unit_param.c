/* SPDX-License-Identifier: MIT */
/* NCCL_GDX_* parsing. */
#include <errno.h>

#include <gdx/gdx_env.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void test_defaults(void)
{
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.gid_index, -1);
	ASSERT_EQ(gdx_params.timeout, 20);
	ASSERT_EQ(gdx_params.retry_cnt, 6);
	ASSERT_EQ(gdx_params.addr_family, 4);
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
	expect_refused("NCCL_GDX_TIMEOUT", "0", "out of range 1-31");
	expect_refused("NCCL_GDX_RETRY_CNT", "7", "7 retries forever");
	expect_refused("NCCL_GDX_SL", "16", "out of range");
	expect_refused("NCCL_GDX_ADDR_FAMILY", "5", "must be 4 or 6");
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
	unsetenv("NCCL_SOCKET_IFNAME");
	ASSERT(gdx_env(GDX_ENV_SOCKET_IFNAME) == NULL);
	setenv("NCCL_SOCKET_IFNAME", "", 1);
	ASSERT(gdx_env(GDX_ENV_SOCKET_IFNAME) == NULL);
	setenv("NCCL_SOCKET_IFNAME", "=eth0", 1);
	ASSERT_EQ(strcmp(gdx_env(GDX_ENV_SOCKET_IFNAME), "=eth0"), 0);
	ASSERT_EQ(strcmp(gdx_env_name(GDX_ENV_SYSFS_ROOT), "GDX_SYSFS_ROOT"), 0);
	unsetenv("NCCL_SOCKET_IFNAME");
	setenv("NCCL_GDX_RAILS", "off", 1);
	ASSERT_EQ(strcmp(gdx_param_env("RAILS"), "off"), 0);
	unsetenv("NCCL_GDX_RAILS");
	ASSERT(gdx_param_env("RAILS") == NULL);
}

GDX_TESTS_MAIN(TEST(test_defaults, 5), TEST(test_values_and_info_line, 5), TEST(test_malformed, 5),
	       TEST(test_table_is_complete, 5), TEST(test_foreign_variables, 5))
