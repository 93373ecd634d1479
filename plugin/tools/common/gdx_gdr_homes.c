/* SPDX-License-Identifier: MIT */
/* The facts' Data Direct functions (gdx_gdr_homes.h). */
#include <errno.h>
#include <stdio.h>

#include "gdr/gdx_gdr_facts.h"
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

static int gdx_gdr_fact_home(void *arg, const char *nic, const char *pci)
{
	return gdx_gdr_homes_add(arg, nic, pci) ? -EINVAL : 0;
}

int gdx_gdr_facts_homes(const char *root, const char *file, struct gdx_gdr_homes *h, char *why,
			size_t why_len)
{
	/* every other fact is checked and skipped: the probe's own read takes it */
	static const struct gdx_gdr_fact_ops ops = {.data_direct = gdx_gdr_fact_home};

	h->n = 0;
	return gdx_gdr_facts_read(root, file, &ops, h, why, why_len);
}
