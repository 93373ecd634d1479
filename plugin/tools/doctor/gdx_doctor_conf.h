/* SPDX-License-Identifier: MIT */
/*
 * NCCL's configuration files in gdx-doctor (gdx_doctor_conf.c): read and
 * applied once, at the start of every command (tools/common/gdx_nccl_conf.h),
 * so that what a command reads of the environment is what NCCL would see;
 * and where each value came from, for the commands to say.
 */
#ifndef GDX_DOCTOR_CONF_H
#define GDX_DOCTOR_CONF_H

#include <stddef.h>
#include <stdio.h>

#include "tools/common/gdx_nccl_conf.h"

/* What the start read; empty before it, or where it ran out of memory. */
extern struct gdx_nccl_conf doctor_conf;

/* Reads and applies the files (main, before the command). */
void doctor_conf_load(void);

/* " (from /etc/nccl.conf:6)" when name's value came from a file, "" when
 * from the environment or unset; into buf. */
const char *doctor_conf_from(const char *name, char *buf, size_t len);
/* The file and line name's value came from, "environment", or NULL when
 * unset: for JSON's "from". */
const char *doctor_conf_source(const char *name, char *buf, size_t len);

/* The files, what they set and the notes on them: env's section, and
 * check's lines (indent 2, header given). */
void doctor_conf_text(FILE *f, const char *header);
/* "\"nccl_conf\": {\"files\": [...], \"variables\": [...], \"notes\": [...]}" */
void doctor_conf_json(FILE *f);

#endif
