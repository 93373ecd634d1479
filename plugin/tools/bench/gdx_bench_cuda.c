/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench --mem cuda: buffers in GPU memory, from the CUDA driver API
 * loaded at run time, so that the program runs (and says why not) on a
 * machine without CUDA. The primary context of --gpu, as NCCL uses.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/bench/gdx_bench_state.h"

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;
typedef unsigned long long cu_ptr;

static struct {
	void *lib;
	cu_result (*init)(unsigned int flags);
	cu_result (*device_get)(cu_device *dev, int ordinal);
	cu_result (*ctx_retain)(cu_context *ctx, cu_device dev);
	cu_result (*ctx_set)(cu_context ctx);
	cu_result (*mem_alloc)(cu_ptr *ptr, size_t size);
	cu_result (*mem_free)(cu_ptr ptr);
	cu_result (*error_string)(cu_result err, const char **str);
} cu;

static void *bench_cuda_sym(const char *name)
{
	void *f = dlsym(cu.lib, name);

	if (!f)
		bench_die("--mem cuda: the CUDA driver has no %s", name);
	return f;
}

static void bench_cuda_check(cu_result r, const char *what, int gpu)
{
	const char *str = NULL;

	if (r == 0)
		return;
	if (cu.error_string)
		cu.error_string(r, &str);
	bench_die("--mem cuda: %s on GPU %d failed: %s (CUDA error %d)", what, gpu,
		  str ? str : "unknown", r);
}

static void bench_cuda_open(int gpu)
{
	cu_device dev;
	cu_context ctx;

	if (cu.lib)
		return;
	cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu.lib)
		bench_die("--mem cuda: cannot load the CUDA driver (libcuda.so.1): %s", dlerror());
	*(void **)&cu.init = bench_cuda_sym("cuInit");
	*(void **)&cu.device_get = bench_cuda_sym("cuDeviceGet");
	*(void **)&cu.ctx_retain = bench_cuda_sym("cuDevicePrimaryCtxRetain");
	*(void **)&cu.ctx_set = bench_cuda_sym("cuCtxSetCurrent");
	*(void **)&cu.mem_alloc = bench_cuda_sym("cuMemAlloc_v2");
	*(void **)&cu.mem_free = bench_cuda_sym("cuMemFree_v2");
	*(void **)&cu.error_string = bench_cuda_sym("cuGetErrorString");
	bench_cuda_check(cu.init(0), "cuInit", gpu);
	bench_cuda_check(cu.device_get(&dev, gpu), "cuDeviceGet", gpu);
	bench_cuda_check(cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain", gpu);
	bench_cuda_check(cu.ctx_set(ctx), "cuCtxSetCurrent", gpu);
}

void *bench_cuda_alloc(size_t n, int gpu)
{
	cu_ptr p = 0;

	bench_cuda_open(gpu);
	bench_cuda_check(cu.mem_alloc(&p, n), "cuMemAlloc", gpu);
	return (void *)(uintptr_t)p;
}

void bench_cuda_free(void *p)
{
	if (p && cu.mem_free)
		cu.mem_free((cu_ptr)(uintptr_t)p);
}
