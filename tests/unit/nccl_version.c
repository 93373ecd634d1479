/* SPDX-License-Identifier: MIT */
/*
 * The version of the NCCL in the process (plugin/sys/gdx_nccl_version.h):
 * none before NCCL is loaded, and once a real libnccl.so.2 is, loaded
 * locally as a framework's extension module loads it (RTLD_LOCAL, so not
 * in the global scope), the version that library itself reports.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "sys/gdx_nccl_version.h"

#include "gdx_test.h"

static const char *const nccl_libs[] = {"/usr/local/cuda/lib64/libnccl.so.2",
					"/usr/local/cuda/lib/libnccl.so.2"};

static void test_none_loaded(void)
{
	ASSERT_EQ(gdx_nccl_version(), 0);
}

static void test_loaded_locally(void)
{
	int (*get)(int *), want = 0;
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(nccl_libs) / sizeof(nccl_libs[0]); i++)
		if (access(nccl_libs[i], R_OK) == 0)
			h = dlopen(nccl_libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		gdx_test_fail(__FILE__, __LINE__, "no libnccl.so.2 under /usr/local/cuda to load");
	*(void **)&get = dlsym(h, "ncclGetVersion");
	ASSERT(get && get(&want) == 0 && want > 20000);
	ASSERT_EQ(gdx_nccl_version(), want);
}

GDX_TESTS_MAIN(TEST(test_none_loaded, 10), TEST(test_loaded_locally, 30))
