/* SPDX-License-Identifier: MIT */
/*
 * The device table: one NCCL device per active verbs port that passes
 * NCCL_GDX_HCA. Built once per load by init(); read-only afterwards except for
 * the lazily allocated protection domain, which takes the device's lock.
 */
#ifndef GDX_DEV_H
#define GDX_DEV_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>

#include <gdx/gdx_regcache.h>
#include <gdx/gdx_wire.h>

#define GDX_MAX_DEVS	64
#define GDX_GDR_WHY_MAX 512

/* One opened verbs device, shared by its ports. */
struct gdx_ibctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;	    /* allocated on first use, under lock */
	struct gdx_regcache *cache; /* registrations on pd: made by gdx_reg.c, under lock */
	int fatal;		    /* a device-fatal async event was seen */
	pthread_mutex_t lock;
	struct ibv_device_attr attr;
};

struct gdx_dev {
	char name[GDX_DEV_NAME_MAX]; /* what NCCL sees: "mlx5_0", or "mlx5_0:2" */
	char ibdev[IBV_SYSFS_NAME_MAX];
	int ib_port;
	int port;	/* ib_port, made distinct among devices of one guid */
	char *pci_path; /* sysfs realpath of the PCI function, or NULL */
	uint64_t guid;	/* sys_image_guid, host order */
	int speed_mbps;
	int link_layer; /* IBV_LINK_LAYER_* */
	int max_qp;
	enum ibv_mtu active_mtu;
	uint16_t lid;
	uint32_t max_msg_sz;
	int rail_id;		       /* topology group of the NIC (v12 railId), -1 unknown */
	uint64_t port_down_ms;	       /* when a PORT_ERR event said the port went down; 0: up */
	int ptr_support;	       /* NCCL_PTR_* it advertises (the GPUDirect verdict) */
	char gdr_why[GDX_GDR_WHY_MAX]; /* why it advertises what it does, for refusals */
	/* Bytes moved by closed comms, by the memory they came from or went to. */
	uint64_t bytes_gpu, bytes_host;
	struct gdx_ibctx *ib;
};

/*
 * What NCCL sees as one device: a physical port, or several fused into rails
 * that one connection stripes over. Physical ports come first, each its own
 * one-member device; fused devices follow (NCCL_GDX_RAILS, makeVDevice).
 */
#define GDX_VDEV_NAME_MAX (GDX_MAX_RAILS * GDX_DEV_NAME_MAX)

struct gdx_vdev {
	char name[GDX_VDEV_NAME_MAX]; /* members joined with '+' */
	int nmembers;
	struct gdx_dev *members[GDX_MAX_RAILS];
	int phys[GDX_MAX_RAILS]; /* physical indices of the members */
	int speed_mbps;		 /* sum over the members */
};

int gdx_vdevs_count(void);
struct gdx_vdev *gdx_vdev_get(int index);
/* Appends a fused device of the physical devices phys[0..n-1] (distinct, one
 * link layer, min..max members). Returns its index, or -EINVAL with *err_p
 * saying what was wrong. Takes the table lock: callable after init. */
int gdx_vdev_fuse(const int *phys, int n, int min_members, int max_members, const char **err_p);
/* Reads the topology (live, or NCCL_GDX_TOPO_FILE): each device's rail id,
 * and with NCCL_GDX_RAILS=auto one fused device per GPU rail group of two or
 * more active NICs. Without a readable topology, says so and does neither. */
int gdx_devs_topology(void);
/* Decides each device's ptrSupport from the GPUDirect probe (gdx_gdr.c) and
 * logs one line per NIC saying which path it takes and why. -ENODEV after the
 * WARNs when NCCL_GDX_GDR=on cannot be met. */
int gdx_devs_gdr(void);
/* Applies NCCL_GDX_RAILS: "off", "auto" (topology-driven; see gdx_dev.c) or
 * groups "a+b,c+d" of device names. Returns 0 or -EINVAL after a WARN. */
int gdx_vdevs_from_spec(const char *spec);

/* Discovers devices (idempotent per load). Returns the count (> 0) or a negative
 * errno after one WARN saying why there is no usable device. */
int gdx_devs_init(void);
/* Releases everything; safe when nothing was discovered. */
void gdx_devs_fini(void);
int gdx_devs_count(void);
struct gdx_dev *gdx_dev_get(int index);
/* The device's protection domain, allocated on first use. */
int gdx_dev_pd(struct gdx_dev *dev, struct ibv_pd **pd_p);

/* Mbps for an active_speed/active_width pair, 0 when unknown. */
int gdx_dev_speed_mbps(unsigned active_speed, unsigned active_width);

#endif
