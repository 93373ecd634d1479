/* SPDX-License-Identifier: MIT */
/*
 * A made-up libnvidia-ml for tests/unit/gdr_c2c.c: the four calls the
 * plugin's C2C probe makes (plugin/gdr/gdx_gdr_c2c.c), answering from
 * GDX_FAKE_NVML, "BUSID=LINKS:ACTIVE,..." (0009:01:00.0=2:1 is a GPU with two
 * C2C links, one active; =old is a driver without the C2C fields). A bus id
 * not listed is a GPU NVML does not know. Built as a shared object of its
 * own, dlopen()ed as the driver's library is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The build hides symbols by default; these are the library's interface. */
#define FAKE_API __attribute__((visibility("default")))

struct fake_field;
FAKE_API int nvmlInit_v2(void);
FAKE_API int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev);
FAKE_API int nvmlDeviceGetFieldValues(void *dev, int count, struct fake_field *v);

struct fake_field {
	unsigned int field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type, nvml_return;
	union {
		unsigned int ui;
		unsigned long long ull;
	} value;
};

struct fake_gpu {
	char pci[32];
	unsigned links, active;
	int old;
};

static struct fake_gpu gpus[8];

int nvmlInit_v2(void)
{
	const char *spec = getenv("GDX_FAKE_NVML");
	char buf[512], *save, *tok;
	int n = 0;

	if (!spec)
		return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		snprintf(gpus[n].pci, sizeof(gpus[n].pci), "%s", tok);
		gpus[n].old = !strcmp(eq + 1, "old");
		if (!gpus[n].old && sscanf(eq + 1, "%u:%u", &gpus[n].links, &gpus[n].active) != 2)
			continue;
		n++;
	}
	return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev)
{
	for (int i = 0; i < 8; i++)
		if (gpus[i].pci[0] && !strcasecmp(gpus[i].pci, pci)) {
			*dev = &gpus[i];
			return 0;
		}
	return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetFieldValues(void *dev, int count, struct fake_field *v)
{
	struct fake_gpu *g = dev;

	for (int i = 0; i < count; i++) {
		v[i].nvml_return = g->old ? 2 /* NVML_ERROR_INVALID_ARGUMENT */ : 0;
		if (v[i].field_id == 170)
			v[i].value.ui = g->links;
		else if (v[i].field_id == 171)
			v[i].value.ui = v[i].scope_id < g->active;
		else
			v[i].nvml_return = 2;
	}
	return 0;
}
