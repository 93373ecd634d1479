/* SPDX-License-Identifier: MIT */
/* The GPUDirect probe's facts in words (gdx_gdr_names.h). */
#include <stddef.h>
#include <stdio.h>

#include <nccl/net_common.h>

#include "gdr/gdx_gdr_facts.h"
#include "tools/common/gdx_gdr_names.h"

const char *gdx_gdr_acs_name(enum gdx_gdr_acs a)
{
	switch (a) {
	case GDX_GDR_ACS_OFF: return "off";
	case GDX_GDR_ACS_ON: return "on";
	case GDX_GDR_ACS_UNKNOWN: return "unknown";
	default: return "n/a";
	}
}

const char *gdx_gdr_iommu_name(enum gdx_gdr_iommu i)
{
	switch (i) {
	case GDX_GDR_IOMMU_IDENTITY: return "identity";
	case GDX_GDR_IOMMU_TRANSLATING: return "translating";
	case GDX_GDR_IOMMU_UNKNOWN: return "unknown";
	default: return "off";
	}
}

const char *gdx_gdr_errno_name(int err)
{
	for (size_t i = 0; i < gdx_gdr_nerrnos; i++)
		if (gdx_gdr_errnos[i].value == err)
			return gdx_gdr_errnos[i].name;
	return NULL;
}

const char *gdx_gdr_policy_name(enum gdx_gdr_policy p)
{
	switch (p) {
	case GDX_GDR_POLICY_ON: return "on";
	case GDX_GDR_POLICY_OFF: return "off";
	default: return "auto";
	}
}

const char *gdx_gdr_mode_name(enum gdx_gdr_mode m)
{
	switch (m) {
	case GDX_GDR_DIRECT: return "direct";
	case GDX_GDR_STAGED: return "staged";
	default: return "broken";
	}
}

void gdx_gdr_ptr_name(int ptr, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", ptr & NCCL_PTR_HOST ? "HOST" : "",
		 ptr & NCCL_PTR_CUDA ? ",CUDA" : "", ptr & NCCL_PTR_DMABUF ? ",DMABUF" : "");
}
