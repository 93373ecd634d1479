/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's verdict as metrics for node_exporter's textfile
 * collector (gdx_doctor_check_prom.c): --prometheus prints them, --textfile
 * FILE writes them to FILE in one step.
 */
#ifndef GDX_DOCTOR_CHECK_PROM_H
#define GDX_DOCTOR_CHECK_PROM_H

#include <stdio.h>

#include "tools/doctor/gdx_doctor_check.h"

/* The metrics, with their HELP and TYPE lines, to f. */
void check_prometheus(const struct check *c, FILE *f);

/* The metrics as the file path: a new file beside it, renamed onto it once
 * whole, never a half-written one in its place. DOCTOR_OK, else
 * DOCTOR_ERROR with why said on stderr (path untouched). */
int check_textfile(const struct check *c, const char *path);

#endif
