/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>

struct gdx_params gdx_params;

const struct gdx_param_info gdx_param_infos[] = {
#define GDX_PARAM_INFO(type, field, name, def, help) {name, #type, def, help},
	GDX_PARAM_TABLE(GDX_PARAM_INFO)
#undef GDX_PARAM_INFO
};
const int gdx_param_count = sizeof(gdx_param_infos) / sizeof(gdx_param_infos[0]);

static int gdx_param_parse_int(const char *name, const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX) {
		GDX_WARN("NCCL_GDX_%s=\"%s\" is not an integer", name, s);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

static int gdx_param_parse_str(const char *name, const char *s, const char **out)
{
	(void)name;
	*out = s;
	return 0;
}

const char *gdx_param_env(const char *name)
{
	char var[64] = "NCCL_GDX_";

	strncat(var, name, sizeof(var) - strlen(var) - 1);
	return getenv(var);
}

/* Reads NCCL_GDX_<name>, falling back to the table's default. */
static const char *gdx_param_raw(const char *name, const char *def, int *from_env)
{
	const char *v = gdx_param_env(name);

	*from_env = v != NULL;
	return v ? v : def;
}

int gdx_params_load(void)
{
	int from_env;
	const char *s;
	int ret = 0;

#define GDX_PARAM_LOAD(type, field, name, def, help)            \
	s = gdx_param_raw(name, def, &from_env);                \
	if (gdx_param_parse_##type(name, s, &gdx_params.field)) \
		ret = -EINVAL;                                  \
	else if (from_env)                                      \
		GDX_INFO(NCCL_ENV | NCCL_INIT, "NCCL_GDX_%s set by environment to %s", name, s);
	GDX_PARAM_TABLE(GDX_PARAM_LOAD)
#undef GDX_PARAM_LOAD
	if (ret)
		return ret;
	if (gdx_params.retry_cnt < 0 || gdx_params.retry_cnt > 6) {
		GDX_WARN("NCCL_GDX_RETRY_CNT=%d is out of range 0-6 (7 retries forever on rxe)",
			 gdx_params.retry_cnt);
		return -EINVAL;
	}
	if (gdx_params.timeout < 1 || gdx_params.timeout > 31) {
		GDX_WARN("NCCL_GDX_TIMEOUT=%d is out of range 1-31", gdx_params.timeout);
		return -EINVAL;
	}
	if (gdx_params.sl < 0 || gdx_params.sl > 15 || gdx_params.tc < 0 || gdx_params.tc > 255) {
		GDX_WARN("NCCL_GDX_SL=%d / NCCL_GDX_TC=%d out of range (0-15 / 0-255)",
			 gdx_params.sl, gdx_params.tc);
		return -EINVAL;
	}
	if (gdx_params.stripe_min < 0) {
		GDX_WARN("NCCL_GDX_STRIPE_MIN=%d must not be negative", gdx_params.stripe_min);
		return -EINVAL;
	}
	if (gdx_params.cts_batch < 1 || gdx_params.cts_batch > 32) {
		GDX_WARN("NCCL_GDX_CTS_BATCH=%d is out of range 1-32", gdx_params.cts_batch);
		return -EINVAL;
	}
	if (gdx_params.addr_family != 4 && gdx_params.addr_family != 6) {
		GDX_WARN("NCCL_GDX_ADDR_FAMILY=%d must be 4 or 6", gdx_params.addr_family);
		return -EINVAL;
	}
	return 0;
}
