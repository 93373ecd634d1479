/* SPDX-License-Identifier: MIT */
/*
 * Each GPU's NVLink-C2C attachment asked of the driver (plugin/gdr/gdx_gdr_c2c.h),
 * against a made-up NVML (tests/lib/fake/nvml.c) that plays a Grace node's
 * GPUs, an x86 node's, a driver older than the C2C fields, and no NVML.
 */
#include <stdlib.h>

#include "gdr/gdx_gdr_c2c.h"

#include "gdx_test.h"

#define FAKE_NVML "build/tests/lib/fake/libnvidia-ml.so"

static void probe(const char *spec, const char *lib, int *c2c)
{
	static const char *const pci[] = {"0009:01:00.0", "0019:01:00.0", "0000:1b:00.0"};

	if (spec)
		setenv("GDX_FAKE_NVML", spec, 1);
	else
		unsetenv("GDX_FAKE_NVML");
	for (int i = 0; i < 3; i++)
		c2c[i] = -1;
	gdx_gdr_c2c_probe(lib, pci, 3, c2c);
}

static void test_grace_gpus(void)
{
	int c2c[3];

	/* two links, one active; one link, none active; the third unknown to NVML */
	probe("0009:01:00.0=2:1,0019:01:00.0=1:0", FAKE_NVML, c2c);
	ASSERT_EQ(c2c[0], 1);
	ASSERT_EQ(c2c[1], 0);
	ASSERT_EQ(c2c[2], -1);
}

static void test_pcie_gpu(void)
{
	int c2c[3];

	probe("0000:1b:00.0=0:0", FAKE_NVML, c2c);
	ASSERT_EQ(c2c[2], 0);
	ASSERT_EQ(c2c[0], -1);
}

static void test_old_driver_or_none(void)
{
	int c2c[3];

	probe("0009:01:00.0=old", FAKE_NVML, c2c); /* no C2C fields: unknown */
	ASSERT_EQ(c2c[0], -1);
	probe(NULL, FAKE_NVML, c2c); /* nvmlInit fails */
	ASSERT_EQ(c2c[0], -1);
	probe("0009:01:00.0=2:1", "libnvidia-ml-gdx-test-missing.so.1", c2c);
	ASSERT_EQ(c2c[0], -1);
}

GDX_TESTS_MAIN(TEST(test_grace_gpus, 10), TEST(test_pcie_gpu, 10),
	       TEST(test_old_driver_or_none, 10))
