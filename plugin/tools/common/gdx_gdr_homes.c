/* SPDX-License-Identifier: MIT */
/* The facts' Data Direct functions (gdx_gdr_homes.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "dev/gdx_gdr_facts.h"
#include "tools/common/gdx_gdr_homes.h"

/* Adds one (copied) to h; -ENOSPC when full. */
static int gdx_gdr_homes_add(struct gdx_gdr_homes *h, const char *nic, const char *pci)
{
	if (h->n == GDX_GDR_MAX_NICS)
		return -ENOSPC;
	snprintf(h->nic[h->n], sizeof(h->nic[h->n]), "%s", nic);
	snprintf(h->pci[h->n], sizeof(h->pci[h->n]), "%s", pci);
	h->home[h->n] = (struct gdx_topo_home){.nic = h->nic[h->n], .pci = h->pci[h->n]};
	h->n++;
	return 0;
}

/* The facts the homes pass skips: the probe's own read takes them. */
static void gdx_gdr_skip_str(void *arg, const char *s)
{
	(void)arg, (void)s;
}

static void gdx_gdr_skip_u64(void *arg, uint64_t v)
{
	(void)arg, (void)v;
}

static void gdx_gdr_skip_cuda(void *arg, int version, int err)
{
	(void)arg, (void)version, (void)err;
}

static int gdx_gdr_skip_gpu(void *arg, const char *busid, int gdr, int dmabuf, int c2c)
{
	(void)arg, (void)busid, (void)gdr, (void)dmabuf, (void)c2c;
	return 0;
}

static int gdx_gdr_skip_dmabuf(void *arg, const char *nic, int err)
{
	(void)arg, (void)nic, (void)err;
	return 0;
}

static void gdx_gdr_skip(void *arg)
{
	(void)arg;
}

static void gdx_gdr_skip_int(void *arg, int v)
{
	(void)arg, (void)v;
}

static int gdx_gdr_fact_home(void *arg, const char *nic, const char *pci)
{
	return gdx_gdr_homes_add(arg, nic, pci) ? -EINVAL : 0;
}

int gdx_gdr_facts_homes(const char *root, const char *file, struct gdx_gdr_homes *h, char *why,
			size_t why_len)
{
	static const struct gdx_gdr_fact_ops ops = {
		.kernel = gdx_gdr_skip_str,
		.memlock = gdx_gdr_skip_u64,
		.cuda = gdx_gdr_skip_cuda,
		.gpu = gdx_gdr_skip_gpu,
		.dmabuf = gdx_gdr_skip_dmabuf,
		.hostname = gdx_gdr_skip_str,
		.nccl_here = gdx_gdr_skip,
		.nccl_version = gdx_gdr_skip_int,
		.data_direct = gdx_gdr_fact_home,
	};

	h->n = 0;
	return gdx_gdr_facts_read(root, file, &ops, h, why, why_len);
}
