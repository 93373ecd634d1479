/* SPDX-License-Identifier: MIT */
/*
 * The parameter table read from NCCL's side (gdx_param_twin.c): which
 * NCCL_GDX_* parameter an NCCL variable is the twin of, for gdx-doctor env.
 * The plugin reads a twin from its parameter, never this way round.
 */
#ifndef GDX_PARAM_TWIN_H
#define GDX_PARAM_TWIN_H

#include "sys/gdx_param.h"

/* The NCCL_GDX_* parameter whose twin NCCL's variable is; NULL for none. */
const struct gdx_param_info *gdx_param_of_twin(const char *nccl_var);

#endif
