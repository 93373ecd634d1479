/* SPDX-License-Identifier: MIT */
/* NVLink-C2C attachment of each GPU, from NVML (gdx_gdr_c2c.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gdr/gdx_gdr_c2c.h"

/* NVML's ABI (nvml.h): field ids and the field value record. */
#define GDX_NVML_FI_DEV_C2C_LINK_COUNT	    170
#define GDX_NVML_FI_DEV_C2C_LINK_GET_STATUS 171 /* 1: active */

struct gdx_nvml_field {
	unsigned int field_id;
	unsigned int scope_id;
	long long timestamp;
	long long latency_usec;
	int value_type;
	int nvml_return; /* 0: NVML_SUCCESS */
	union {
		double d;
		unsigned int ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
	} value;
};

typedef int (*gdx_nvml_init_fn)(void);
typedef int (*gdx_nvml_handle_fn)(const char *busid, void **dev);
typedef int (*gdx_nvml_fields_fn)(void *dev, int count, struct gdx_nvml_field *values);

/* 1 with an active C2C link, 0 with none, -1 when NVML does not say. */
static int gdx_gdr_c2c_of(gdx_nvml_fields_fn fields, void *dev)
{
	struct gdx_nvml_field fv;
	unsigned links;

	memset(&fv, 0, sizeof(fv));
	fv.field_id = GDX_NVML_FI_DEV_C2C_LINK_COUNT;
	if (fields(dev, 1, &fv) != 0 || fv.nvml_return != 0)
		return -1; /* a driver older than the field: unknown */
	links = fv.value.ui;
	for (unsigned l = 0; l < links && l < 64; l++) {
		memset(&fv, 0, sizeof(fv));
		fv.field_id = GDX_NVML_FI_DEV_C2C_LINK_GET_STATUS;
		fv.scope_id = l;
		if (fields(dev, 1, &fv) == 0 && fv.nvml_return == 0 && fv.value.ui == 1)
			return 1;
	}
	return 0;
}

void gdx_gdr_c2c_probe(const char *lib, const char *const *pci, int n, int *c2c)
{
	gdx_nvml_init_fn init;
	gdx_nvml_handle_fn handle;
	gdx_nvml_fields_fn fields;
	void *h = dlopen(lib ? lib : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&handle = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	if (!handle)
		*(void **)&handle = dlsym(h, "nvmlDeviceGetHandleByPciBusId");
	*(void **)&fields = dlsym(h, "nvmlDeviceGetFieldValues");
	if (!init || !handle || !fields || init() != 0) {
		dlclose(h);
		return;
	}
	/* From here NVML stays loaded, as CUDA does (gdx_gdr.c). */
	for (int g = 0; g < n; g++) {
		void *dev = NULL;
		int v;

		if (handle(pci[g], &dev) == 0 && dev && (v = gdx_gdr_c2c_of(fields, dev)) >= 0)
			c2c[g] = v;
	}
}
