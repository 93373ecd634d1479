/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check's one-sided RMA line: whether this plugin would carry
 * NCCL's one-sided traffic (host RMA, the GIN proxy), which of its
 * ncclRmaPlugin_vN the NCCL found would take, and every reason NCCL would
 * not use it: the opt-in, the NCCL release, NCCL's own conditions for RMA
 * at all (NCCL_CROSS_NIC, cuMem GPUDirect RDMA on every GPU, symmetric
 * windows, host RMA contexts), another RMA plugin tried first, NICs that
 * cannot reach GPU memory. Facts: NCCL's RMA plugin loader (2.30.7 on), its
 * tables in include/nccl/rma*.h; libnccl-net-gdx-rma(7) sets
 * out when NCCL takes them.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <nccl/net_common.h>
#include "sys/gdx_env.h"
#include "sys/gdx_param.h"

#include "tools/doctor/gdx_doctor_check.h"

__attribute__((format(printf, 2, 3))) static void check_rma_why(struct check_rma *r,
								const char *fmt, ...)
{
	va_list ap;

	if (r->nwhy == CHECK_RMA_WHY)
		return;
	va_start(ap, fmt);
	vsnprintf(r->why[r->nwhy++], sizeof(r->why[0]), fmt, ap);
	va_end(ap);
}

/* What NCCL's own conditions for RMA say of this node's GPUs. */
static void check_rma_gpus(struct check *c)
{
	const struct gdx_gdr_probe *p = c->p;
	int lacking = 0, unknown = 0, direct = 0;

	for (int g = 0; g < p->ngpus; g++) {
		lacking += p->gpus[g].vmm_gdr_attr == 0;
		unknown += p->gpus[g].vmm_gdr_attr < 0;
	}
	if (!p->ngpus)
		check_rma_why(&c->rma, "no GPU here: NCCL's RMA moves GPU memory");
	else if (lacking)
		check_rma_why(
			&c->rma,
			"%d of %d GPU(s) report no cuMem GPUDirect RDMA "
			"(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED 0): NCCL "
			"uses RMA only where every GPU does",
			lacking, p->ngpus);
	else if (unknown)
		check_rma_why(
			&c->rma,
			"cuMem GPUDirect RDMA not probed on %d GPU(s) (no CUDA driver here, or "
			"a facts file): NCCL uses RMA only where every GPU reports "
			"CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED",
			unknown);
	for (int n = 0; n < p->nnics; n++)
		direct += (c->nic_v[n].ptr_support & NCCL_PTR_CUDA) != 0;
	if (p->ngpus && !direct)
		check_rma_why(
			&c->rma,
			"no NIC here reaches GPU memory: NCCL's windows are GPU memory, which "
			"regMrSym refuses without GPUDirect RDMA (NCCL's own IB proxy needs it "
			"too)");
}

void check_rma(struct check *c)
{
	const struct check_nccl *n = &c->nccl;
	const struct nccl_loader *l = n->judged;
	const char *v = gdx_param_env("RMA");
	const char *plugins = gdx_env(GDX_ENV_RMA_PLUGIN);
	char tries[96];

	memset(&c->rma, 0, sizeof(c->rma));
	c->rma.asked = v && !strcmp(v, "1");
	if (n->ours)
		c->rma.api = nccl_loader_rma_pick(l, n->lib_rma);
	nccl_loader_rma_tries(l, tries, sizeof(tries));
	if (!l->rma[0])
		check_rma_why(&c->rma,
			      "NCCL %s loads no RMA plugin (the loader came with 2.30.7): its "
			      "one-sided traffic, if any, runs on its GIN plugin or its own proxy",
			      l->releases);
	else if (!n->ours)
		check_rma_why(&c->rma, "NCCL does not load this plugin as its net plugin: it "
				       "never looks for its RMA tables");
	else if (!c->rma.api)
		check_rma_why(&c->rma, "this plugin exports none of the %s NCCL looks for", tries);
	if (!c->rma.asked)
		check_rma_why(&c->rma,
			      "NCCL_GDX_RMA is not 1: the tables' init declines and NCCL keeps its "
			      "own RMA proxy (set NCCL_GDX_RMA=1 to carry it over this plugin's "
			      "rails)");
	if (plugins && strcmp(plugins, "none"))
		check_rma_why(
			&c->rma,
			"NCCL_RMA_PLUGIN=%s is tried first: if it loads and its init succeeds, "
			"NCCL takes it and not this plugin's tables",
			plugins);
	else if (!plugins && dlopen("libnccl-rma.so", RTLD_LAZY | RTLD_LOCAL))
		check_rma_why(
			&c->rma,
			"libnccl-rma.so is in the library path and NCCL tries it first: if its "
			"init succeeds, NCCL takes it and not this plugin's tables");
	if (gdx_env(GDX_ENV_CROSS_NIC) && !strcmp(gdx_env(GDX_ENV_CROSS_NIC), "0"))
		check_rma_why(&c->rma, "NCCL_CROSS_NIC=0: NCCL uses no RMA at all");
	if (gdx_env(GDX_ENV_NUM_RMA_CTX) && !strcmp(gdx_env(GDX_ENV_NUM_RMA_CTX), "0"))
		check_rma_why(&c->rma, "NCCL_NUM_RMA_CTX=0: NCCL's host RMA is off");
	if (gdx_env(GDX_ENV_WIN_ENABLE) && !strcmp(gdx_env(GDX_ENV_WIN_ENABLE), "0"))
		check_rma_why(&c->rma,
			      "NCCL_WIN_ENABLE=0: no symmetric windows, so no RMA to carry");
	check_rma_gpus(c);
}
