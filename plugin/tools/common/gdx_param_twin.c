/* SPDX-License-Identifier: MIT */
/* An NCCL variable's NCCL_GDX_* twin (gdx_param_twin.h). */
#include <string.h>

#include "tools/common/gdx_param_twin.h"

const struct gdx_param_info *gdx_param_of_twin(const char *nccl_var)
{
	for (int i = 0; i < gdx_param_count; i++)
		if (gdx_param_infos[i].twin && !strcmp(gdx_param_infos[i].twin, nccl_var))
			return &gdx_param_infos[i];
	return NULL;
}
