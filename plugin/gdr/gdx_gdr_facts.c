/* SPDX-License-Identifier: MIT */
/* The facts file of the GPUDirect probe (tests only; gdx_gdr_facts.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/gdx_file.h"
#include "gdr/gdx_gdr_facts.h"
#include "sys/gdx_sysfs.h"

const struct gdx_gdr_errno gdx_gdr_errnos[] = {
	{"EBADF", EBADF},   {"EOPNOTSUPP", EOPNOTSUPP}, {"EPROTONOSUPPORT", EPROTONOSUPPORT},
	{"EINVAL", EINVAL}, {"EFAULT", EFAULT},		{"ENOSYS", ENOSYS},
	{"EACCES", EACCES}, {"ENOMEM", ENOMEM},		{"EPERM", EPERM},
};
const size_t gdx_gdr_nerrnos = sizeof(gdx_gdr_errnos) / sizeof(gdx_gdr_errnos[0]);

static int gdx_gdr_parse_errno(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < gdx_gdr_nerrnos; i++)
		if (!strcmp(s, gdx_gdr_errnos[i].name))
			return gdx_gdr_errnos[i].value;
	v = strtol(s, &end, 10);
	return *end || v <= 0 || v > 4095 ? -1 : (int)v;
}

static int gdx_gdr_parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!strcmp(s, "unlimited") || !strcmp(s, "infinity")) {
		*out = GDX_GDR_FACT_UNLIMITED;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': v <<= 10; break;
	case 'M': v <<= 20; break;
	case 'G': v <<= 30; break;
	default: return -EINVAL;
	}
	if (*end && end[1])
		return -EINVAL;
	*out = v;
	return 0;
}

/* "gdr=1 dmabuf=0" after a gpu line's bus id. */
static int gdx_gdr_parse_gpu_attrs(char **save, int *gdr, int *dmabuf, int *c2c)
{
	char *tok;

	*gdr = *dmabuf = *c2c = -1;
	while ((tok = strtok_r(NULL, " \t", save))) {
		int v;

		if (sscanf(tok, "gdr=%d", &v) == 1)
			*gdr = !!v;
		else if (sscanf(tok, "dmabuf=%d", &v) == 1)
			*dmabuf = !!v;
		else if (sscanf(tok, "c2c=%d", &v) == 1)
			*c2c = !!v;
		else
			return -EINVAL;
	}
	return 0;
}

static int gdx_gdr_fact(char *line, const struct gdx_gdr_fact_ops *ops, void *arg)
{
	char *save, *key = strtok_r(line, " \t", &save), *a = strtok_r(NULL, " \t", &save);

	if (!key)
		return 0;
	if (!a)
		return -EINVAL;
	if (!strcmp(key, "kernel")) {
		if (ops->kernel)
			ops->kernel(arg, a);
	} else if (!strcmp(key, "memlock")) {
		uint64_t bytes;

		if (gdx_gdr_parse_bytes(a, &bytes))
			return -EINVAL;
		if (ops->memlock)
			ops->memlock(arg, bytes);
	} else if (!strcmp(key, "cuda")) {
		char *b = strtok_r(NULL, " \t", &save);
		int version = 0, err = 0;

		if (!strcmp(a, "error") && b)
			err = atoi(b);
		else if (strcmp(a, "none") && (version = atoi(a)) <= 0)
			return -EINVAL;
		if (ops->cuda)
			ops->cuda(arg, version, err);
	} else if (!strcmp(key, "gpu")) {
		int gdr, dmabuf, c2c;

		if (gdx_gdr_parse_gpu_attrs(&save, &gdr, &dmabuf, &c2c))
			return -EINVAL;
		return ops->gpu ? ops->gpu(arg, a, gdr, dmabuf, c2c) : 0;
	} else if (!strcmp(key, "hostname")) {
		if (ops->hostname)
			ops->hostname(arg, a);
	} else if (!strcmp(key, "nccl") && !strcmp(a, "this-machine")) {
		if (ops->nccl_here)
			ops->nccl_here(arg);
	} else if (!strcmp(key, "nccl")) {
		unsigned major, minor, patch;
		char end;

		/* 2.9 on: major * 10000 + minor * 100 + patch */
		if (sscanf(a, "%u.%u.%u%c", &major, &minor, &patch, &end) != 3 || major != 2 ||
		    minor < 9 || minor > 99 || patch > 99)
			return -EINVAL;
		if (ops->nccl_version)
			ops->nccl_version(arg, (int)(major * 10000 + minor * 100 + patch));
	} else if (!strcmp(key, "datadirect")) {
		char *pci = strtok_r(NULL, " \t", &save);
		unsigned dom, bus, dev, fn;
		char end;

		if (!pci || sscanf(pci, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &end) != 4 ||
		    strlen(pci) >= 16 || strlen(a) >= 64)
			return -EINVAL;
		return ops->data_direct ? ops->data_direct(arg, a, pci) : 0;
	} else if (!strcmp(key, "dmabuf")) {
		char *e = strtok_r(NULL, " \t", &save);
		int err = e ? gdx_gdr_parse_errno(e) : -1;

		if (err < 0)
			return -EINVAL;
		return ops->dmabuf ? ops->dmabuf(arg, a, err) : 0;
	} else {
		return -EINVAL;
	}
	return 0;
}

int gdx_gdr_facts_read(const char *root, const char *file, const struct gdx_gdr_fact_ops *ops,
		       void *arg, char *why, size_t why_len)
{
	char line[256], *text = NULL, *at, *end;
	int lineno = 0, ret;
	size_t len = 0;

	/* a user's file, maybe a saved tree's: read whole as a hostile input
	 * (no FIFO waited on, no link out of the tree), at most its bound */
	ret = root ? gdx_sysfs_read_file_in(root, file, GDX_GDR_FACTS_MAX, &text, &len, why,
					    why_len)
		   : gdx_file_read(AT_FDCWD, file, 0, GDX_GDR_FACTS_MAX, 0, &text, &len, why,
				   why_len);
	if (ret)
		return ret;
	for (at = text; !ret && at < text + len; at = end + (*end == '\n')) {
		size_t n;

		end = at + strcspn(at, "\n");
		n = (size_t)(end - at) < sizeof(line) ? (size_t)(end - at) : sizeof(line) - 1;
		memcpy(line, at, n);
		line[n] = '\0';
		lineno++;
		line[strcspn(line, "#")] = '\0';
		ret = gdx_gdr_fact(line, ops, arg);
		if (ret)
			snprintf(why, why_len, "%s%s%s:%d: not a fact this probe knows",
				 root ? root : "", root ? "/" : "", file, lineno);
	}
	free(text);
	return ret;
}
