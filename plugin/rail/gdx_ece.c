/* SPDX-License-Identifier: MIT */
/* Enhanced Connection Establishment on a rail's QPs (gdx_ece.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rail/gdx_ece.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

void gdx_ece_query(struct gdx_rail *r, struct gdx_wire_ece *out)
{
	struct ibv_ece ece;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!gdx_params.ece_enable || !r->nqps)
		return;
	memset(&ece, 0, sizeof(ece));
	ret = ibv_query_ece(r->qps[0].qp, &ece);
	if (ret) {
		/* net_ib's rule: a provider that has none is not an error */
		if (!__atomic_exchange_n(&r->dev->ece_said, 1, __ATOMIC_RELAXED))
			GDX_INFO(NCCL_NET,
				 "%s: ECE %s (ibv_query_ece: %s); connections on it go without",
				 r->dev->ibdev,
				 ret == EOPNOTSUPP || ret == ENOTSUP
					 ? "not supported by the provider"
					 : "could not be read",
				 strerror(ret));
		return;
	}
	out->vendor_id = ece.vendor_id;
	out->options = ece.options;
	out->comp_mask = ece.comp_mask;
	out->supported = 1;
}

void gdx_ece_common(const struct gdx_wire_ece *local, const struct gdx_wire_ece *remote,
		    struct gdx_wire_ece *out)
{
	struct gdx_wire_ece e = {0};

	if (local->supported && remote->supported && local->vendor_id == remote->vendor_id) {
		e.vendor_id = local->vendor_id;
		e.options = local->options & remote->options;
		e.comp_mask = local->comp_mask & remote->comp_mask;
		e.supported = 1;
	}
	*out = e;
}

const char *gdx_ece_str(const struct gdx_wire_ece *e, char *buf, size_t len)
{
	if (!e->supported)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "vendor 0x%x options 0x%x", e->vendor_id, e->options);
	return buf;
}
