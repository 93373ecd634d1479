/* SPDX-License-Identifier: MIT */
/*
 * A port's speed in Mb/s (gdx_dev_speed.h): what NCCL weighs its devices
 * by, and the plugin its stripes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dev/gdx_dev_speed.h"
#include "sys/gdx_param.h"
#include "sys/gdx_sysfs.h"

int gdx_dev_speed_mbps(unsigned active_speed, unsigned active_width)
{
	int lane, width;

	switch (active_speed) {
	case 1: lane = 2500; break;	/* SDR */
	case 2: lane = 5000; break;	/* DDR */
	case 4: lane = 10000; break;	/* QDR */
	case 8: lane = 10000; break;	/* FDR10 */
	case 16: lane = 14000; break;	/* FDR */
	case 32: lane = 25000; break;	/* EDR */
	case 64: lane = 50000; break;	/* HDR */
	case 128: lane = 100000; break; /* NDR */
	case 256: lane = 200000; break; /* XDR */
	default: return 0;
	}
	switch (active_width) {
	case 1: width = 1; break;
	case 2: width = 4; break;
	case 4: width = 8; break;
	case 8: width = 12; break;
	case 16: width = 2; break;
	default: return 0;
	}
	return lane * width;
}

int gdx_dev_rate_mbps(const char *rate)
{
	double gbps;
	char unit[8];

	if (!rate || sscanf(rate, "%lf %7s", &gbps, unit) != 2 || strcmp(unit, "Gb/sec") ||
	    gbps <= 0 || gbps > 1e6)
		return 0;
	return (int)(gbps * 1000 + 0.5);
}

/* rdma-core 57 and later (IBVERBS_1.16): the port's effective bandwidth in
 * 100 Mb/s units, the one speed that follows a LAG or multi-port function
 * losing a member. Weak: the plugin loads on an older libibverbs, where it
 * is NULL. */
int ibv_query_port_speed(struct ibv_context *context, uint32_t port_num, uint64_t *port_speed)
	__attribute__((weak));

/* The port's speed: ibv_query_port_speed where the library has it; else
 * NCCL's table of active_speed x width, or where the 8-bit active_speed
 * cannot say it (XDR and later are only in active_speed_ex, which this
 * rdma-core may not have), the kernel's sysfs rate ("800 Gb/sec (4X XDR)"). */
int gdx_dev_port_speed(struct ibv_context *ctx, const char *ibdev, int port,
		       const struct ibv_port_attr *pa)
{
	char path[PATH_MAX], rate[64];
	uint64_t speed = 0;
	int mbps;

	if (gdx_params.query_port_speed && ibv_query_port_speed &&
	    !ibv_query_port_speed(ctx, (uint32_t)port, &speed) && speed)
		return speed * 100 > INT_MAX ? INT_MAX : (int)(speed * 100);
	mbps = gdx_dev_speed_mbps(pa->active_speed, pa->active_width);
	if (mbps)
		return mbps;
	snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/rate", ibdev, port);
	return gdx_sysfs_read_line_in(gdx_sysfs_root(), path, rate, sizeof(rate))
		       ? 0
		       : gdx_dev_rate_mbps(rate);
}
