/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "sys/gdx_env.h"

static const char *const gdx_env_names[] = {
#define GDX_ENV_NAME(id, name, owner, why) name,
	GDX_ENV_TABLE(GDX_ENV_NAME)
#undef GDX_ENV_NAME
};

const char *gdx_env(enum gdx_env_var v)
{
	const char *s = getenv(gdx_env_names[v]);

	return s && *s ? s : NULL;
}

const char *gdx_env_name(enum gdx_env_var v)
{
	return gdx_env_names[v];
}
