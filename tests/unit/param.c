/* SPDX-License-Identifier: MIT */
/* NCCL_GDX_* parsing. */
#include <errno.h>

#include "sys/gdx_env.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "tools/common/gdx_param_twin.h"
#include "rail/gdx_rail.h"

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

/*
 * A twin's value outside the range this plugin takes (NCCL_IB_TIMEOUT=99:
 * NCCL hands it to verbs as it is, where the QP's 5-bit field has no room
 * for it) is not taken: the WARN, the INFO line and the source all name the
 * value applied, the default, never the one refused.
 */
static void test_twin_refused_all_say_default(void)
{
	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	setenv("NCCL_IB_TIMEOUT", "99", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.timeout, 20);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "NCCL_IB_TIMEOUT=99 is outside 0-31, which this plugin takes: using "
			    "NCCL_GDX_TIMEOUT's default 20");
	if (strstr(gdx_test_infos(), "to 99"))
		gdx_test_fail(__FILE__, __LINE__, "an INFO line says 99 is taken: %s",
			      gdx_test_infos());
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_TIMEOUT keeps its default 20: "
					      "NCCL_IB_TIMEOUT=99 is refused (outside 0-31)");
	ASSERT_NE(gdx_param_src("TIMEOUT"), GDX_PARAM_TWIN);
	ASSERT_NE(gdx_param_src("TIMEOUT"), GDX_PARAM_OURS);
	/* in range again: taken, and said so */
	setenv("NCCL_IB_TIMEOUT", "18", 1);
	gdx_test_log_clear();
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.timeout, 18);
	ASSERT_EQ(gdx_param_src("TIMEOUT"), GDX_PARAM_TWIN);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_TIMEOUT set by NCCL_IB_TIMEOUT to 18");
	unsetenv("NCCL_IB_TIMEOUT");
}

/*
 * NCCL's resiliency settings (2.29.7, 2.30.3) are twins, read with NCCL's
 * value domains: a switch is on for any value but 0; NCCL gives up after
 * the first failed recovery attempt for any attempts maximum up to 1; NCCL
 * fails its recovery for an alive-message sequence over 10, which this
 * plugin takes as a value outside its range (a WARN, the default). Unset,
 * this plugin recovers, and never gives up.
 */
static void test_resiliency_twins(void)
{
	static const char *const vars[] = {
		"NCCL_IB_RESILIENCY_PORT_FAILOVER",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT",
	};

	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.failover, 0);
	ASSERT_EQ(gdx_params.recovery, 1);
	ASSERT_EQ(gdx_params.recovery_attempts, 0);
	ASSERT_EQ(gdx_params.recovery_start_ms, 100);
	ASSERT_EQ(gdx_params.recovery_probes, 1);
	setenv(vars[0], "2", 1);
	setenv(vars[1], "3", 1);
	setenv(vars[2], "250", 1);
	setenv(vars[3], "0", 1);
	setenv(vars[4], "4", 1);
	setenv(vars[5], "4000", 1);
	setenv(vars[6], "5000", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.failover, 1);
	ASSERT_EQ(gdx_params.recovery, 1);
	ASSERT_EQ(gdx_params.recovery_start_ms, 250);
	ASSERT_EQ(gdx_params.recovery_attempts, 1);
	ASSERT_EQ(gdx_params.recovery_probes, 4);
	ASSERT_EQ(gdx_params.recovery_probe_ms, 4000);
	ASSERT_EQ(gdx_params.recovery_answer_ms, 5000);
	ASSERT_EQ(gdx_param_src("RECOVERY_ATTEMPTS"), GDX_PARAM_TWIN);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_FAILOVER set by "
					      "NCCL_IB_RESILIENCY_PORT_FAILOVER to 2");
	ASSERT_EQ(gdx_test_warning_count(), 0);
	setenv(vars[1], "0", 1);
	setenv(vars[3], "-3", 1);
	setenv(vars[4], "11", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.recovery, 0);
	ASSERT_EQ(gdx_params.recovery_attempts, 1);
	ASSERT_EQ(gdx_params.recovery_probes, 1);
	ASSERT_STR_CONTAINS(
		gdx_test_warnings(),
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE=11 is outside "
		"1-10");
	setenv(vars[3], "7", 1);
	setenv("NCCL_GDX_RECOVERY_ATTEMPTS", "0", 1); /* ours wins: never give up */
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.recovery_attempts, 0);
	unsetenv("NCCL_GDX_RECOVERY_ATTEMPTS");
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.recovery_attempts, 7);
	/* ours is strict: a switch is 0 or 1 */
	expect_refused("NCCL_GDX_RECOVERY", "2", "NCCL_GDX_RECOVERY=2 is out of range 0-1");
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* NCCL's variables with no twin here are accepted, never a reason for init
 * to fail: those NCCL's transport applies and this plugin does not get one
 * INFO line each saying so and why; NCCL's own (NCCL_IB_DISABLE) none. */
static void test_nccl_variables_noted(void)
{
	static const char *const vars[] = {
		"NCCL_IB_OOO_RQ",
		"NCCL_IB_DATA_DIRECT",
		"NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
		"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE",
		"NCCL_IB_DISABLE",
	};

	gdx_log_set(gdx_test_logger);
	gdx_test_log_clear();
	setenv(vars[0], "1", 1);
	setenv(vars[1], "2", 1);
	setenv(vars[2], "50", 1);
	setenv(vars[3], "junk", 1);
	setenv(vars[4], "1", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_IB_OOO_RQ=1 is NCCL's IB transport's and is "
					      "not applied by this plugin: an out-of-order receive "
					      "queue (mlx5's OOO data placement) would break");
	/* a twin now (tests/unit/data_direct.c): taken, not noted */
	ASSERT_STR_CONTAINS(gdx_test_infos(),
			    "NCCL_GDX_DATA_DIRECT set by NCCL_IB_DATA_DIRECT to 2");
	ASSERT(!strstr(gdx_test_infos(), "NCCL_IB_DATA_DIRECT=2 is NCCL's IB transport's"));
	ASSERT_STR_CONTAINS(gdx_test_infos(),
			    "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY=50 is NCCL's");
	ASSERT_STR_CONTAINS(gdx_test_infos(),
			    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE=junk is NCCL's");
	ASSERT(!strstr(gdx_test_infos(), "NCCL_IB_DISABLE"));
	ASSERT(!strstr(strstr(gdx_test_infos(), "NCCL_IB_OOO_RQ=1") + 1, "NCCL_IB_OOO_RQ=1"));
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* The two tables agree: every twin row of NCCL's table is the twin of one
 * parameter, and every parameter's NCCL_IB_* twin has its row. */
static void test_nccl_table_and_twins(void)
{
	int twins = 0;

	ASSERT(gdx_nccl_var_count >= 40);
	for (int i = 0; i < gdx_nccl_var_count; i++) {
		const struct gdx_nccl_var *n = &gdx_nccl_vars[i];

		ASSERT(!strncmp(n->name, "NCCL_IB_", 8));
		ASSERT(strlen(n->what) > 5);
		ASSERT_EQ(n->kind == GDX_NCCL_twin, gdx_param_of_twin(n->name) != NULL);
		twins += n->kind == GDX_NCCL_twin;
	}
	for (int i = 0; i < gdx_param_count; i++)
		twins -=
			gdx_param_infos[i].twin && !strncmp(gdx_param_infos[i].twin, "NCCL_IB_", 8);
	ASSERT_EQ(twins, 0);
}

GDX_TESTS_MAIN(TEST(test_defaults, 5), TEST(test_values_and_info_line, 5),
	       TEST(test_values_logged_escaped, 5), TEST(test_malformed, 5),
	       TEST(test_table_is_complete, 5), TEST(test_foreign_variables, 5),
	       TEST(test_nccl_twins, 5), TEST(test_twin_refused_all_say_default, 5),
	       TEST(test_qos_as_net_ib, 5), TEST(test_resiliency_twins, 5),
	       TEST(test_nccl_variables_noted, 5), TEST(test_nccl_table_and_twins, 5))
