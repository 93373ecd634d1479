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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/gdx_regcache.h"
#include "wire/gdx_wire.h"

#define GDX_MAX_DEVS	64
#define GDX_GDR_WHY_MAX 512

/* One opened verbs device, shared by its ports. */
struct gdx_ibctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;		   /* allocated on first use, under lock */
	struct gdx_regcache *cache;	   /* registrations on pd: made by gdx_reg.c, under lock */
	struct gdx_regcache *dmabuf_cache; /* DMA-BUF registrations on pd: the same */
	struct gdx_regcache *rma_dmabuf_cache; /* one-sided RMA's DMA-BUF ones (gdx_reg.c) */
	int fatal;			       /* a device-fatal async event was seen */
	uint64_t events_ms;		       /* when its async events were last read (ms) */
	int ro_probe;			       /* relaxed ordering: 0 not tried, 1 taken, -errno */
	bool ro;			       /* data registrations ask for it (gdx_reg.c) */
	bool data_direct; /* its DMA-BUF registrations are for the Data Direct function */
	pthread_mutex_t lock;
	struct ibv_device_attr attr;
};

struct gdx_dev {
	char name[GDX_DEV_NAME_MAX]; /* what NCCL sees: "mlx5_0", "mlx5_0:2", "mlx5_0_dma" */
	char ibdev[IBV_SYSFS_NAME_MAX];
	int ib_port;
	int port;	  /* ib_port, made distinct among devices of one guid */
	char *pci_path;	  /* sysfs realpath of the PCI function, or NULL; a Data
			   * Direct device's: the DMA function's (gdx_data_direct.h) */
	bool data_direct; /* "<ibdev>_dma": the NIC seen through its Data Direct function */
	uint64_t guid;	  /* sys_image_guid, host order */
	int speed_mbps;
	int link_layer; /* IBV_LINK_LAYER_* */
	int max_qp;
	enum ibv_mtu active_mtu;
	uint16_t lid;
	uint32_t max_msg_sz;
	int rail_id, plane_id;	/* v12's railId/planeId, from NCCL_GDX_HCA; -1 none */
	uint64_t port_down_ms;	/* when a PORT_ERR event said the port went down; 0: up */
	uint64_t port_query_ms; /* when the failover last asked the port itself */
	/* The GID the automatic choice last made (gdx_rail.c, under ib->lock):
	 * a connection checks that index still holds it with one query instead
	 * of reading the port's whole GID table again; -1 before the first. */
	int gid_auto_index;
	union ibv_gid gid_auto;
	int ptr_support;	       /* NCCL_PTR_* it advertises (the GPUDirect verdict) */
	bool ar;		       /* adaptive routing (NCCL_GDX_ADAPTIVE_ROUTING) */
	bool ro;		       /* relaxed ordering on data registrations */
	char ro_why[64];	       /* why ro is what it is, for the INFO line and doctor */
	int ece_said;		       /* the INFO line on its ECE was logged */
	char gdr_why[GDX_GDR_WHY_MAX]; /* why it advertises what it does, for refusals */
	/* What closed comms did on this port since the last summary
	 * (gdx_devs_report()): bytes by the memory they came from or went to,
	 * comms that had a rail here, and times such a rail was taken out. */
	uint64_t bytes_gpu, bytes_host;
	uint64_t comms, failovers;
	struct gdx_ibctx *ib;
};

/*
 * What NCCL sees as one device: a physical port, or a rail group of several
 * fused into one, which a connection stripes over with one rail per member.
 * Physical ports come first, each its own one-member device; fused devices
 * follow (NCCL_GDX_RAILS, makeVDevice).
 */
#define GDX_VDEV_NAME_MAX (GDX_MAX_RAILS * GDX_DEV_NAME_MAX)

struct gdx_vdev {
	char name[GDX_VDEV_NAME_MAX]; /* members joined with '+' */
	int nmembers;
	struct gdx_dev *members[GDX_MAX_RAILS];
	int phys[GDX_MAX_RAILS]; /* physical indices of the members */
	int speed_mbps;		 /* sum over the members */
	int rail_id, plane_id;	 /* the members' when they share one, else -1 */
	/* Members that stand by (NCCL_GDX_STANDBY): far from the GPU the device
	 * serves where another is near (gdx_topo_far_members); a connection's
	 * sender puts no data on them while a near member's rail is up. */
	uint32_t far;
};

/*
 * How NCCL numbers the devices, decided by the table NCCL loaded. From
 * v9 (NCCL 2.24) NCCL takes the count at init as its physical NICs, fuses
 * them itself through makeVDevice and reads the fused devices after them:
 * it must see every physical port, once. v6-v8 have no makeVDevice: the
 * plugin fuses NCCL_GDX_RAILS's groups at init, and their members are not
 * devices of their own (NCCL would count one NIC twice, by its guid and port).
 */
enum gdx_view {
	GDX_VIEW_PHYSICAL, /* v9+: every physical port; NCCL fuses */
	GDX_VIEW_FUSED,	   /* v6-v8: NCCL_GDX_RAILS's groups, members hidden */
};

/* The devices as NCCL numbers them (the view). */
int gdx_vdevs_count(void);
struct gdx_vdev *gdx_vdev_get(int index);
/* Appends a fused device of the physical devices phys[0..n-1] (distinct, one
 * link layer, min..max members) after the devices NCCL sees. Returns its
 * NCCL index, or -EINVAL with *err_p saying what was wrong. Takes the table
 * lock: callable after init (makeVDevice). */
int gdx_vdev_fuse(const int *phys, int n, int min_members, int max_members, const char **err_p);
/* Applies NCCL_GDX_RAILS for the view, once per load: "auto" (the ports of
 * one NIC, fused in the v6-v8 view; NCCL's to fuse from v9), "gpu" (each
 * GPU's equally near NICs, from the topology), "off", or groups "a+b,c+d".
 * In the v9+ view groups are not applied: one WARN names the
 * NCCL_NET_FORCE_MERGE that asks NCCL for them. Returns 0, -EINVAL after a
 * WARN, or -EBUSY when the load already chose the other view. */
int gdx_devs_view(enum gdx_view view);
/* Decides each device's ptrSupport from the GPUDirect probe (gdx_gdr.c) and
 * logs one line per NIC saying which path it takes and why. -ENODEV after the
 * WARNs when NCCL_GDX_GDR=on cannot be met. */
int gdx_devs_gdr(void);

/* " [0]mlx5_0:1/RoCE/direct [1]rxe0:1+rxe2:1/RoCE/staged": the devices NCCL
 * sees, each with its NICs' ports, its link layer and its GPUDirect verdict
 * in one word (direct: GPU memory advertised; staged: host memory only), for
 * the INIT line. Cut with " (+N more)" where len runs short. */
void gdx_devs_using(char *buf, size_t len);
/* Logs at INIT, per physical port that closed comms since the last call, what
 * they moved (bytes GPU-direct and through host memory, comms, rails taken
 * out), then zeroes those counts: each summary covers its own comms once. */
void gdx_devs_report(void);

/* Discovers devices (idempotent per load). Returns the count (> 0) or a negative
 * errno after one WARN saying why there is no usable device. */
int gdx_devs_init(void);
/* Releases everything; safe when nothing was discovered. */
void gdx_devs_fini(void);
int gdx_devs_count(void);
/* The device's protection domain, allocated on first use. */
int gdx_dev_pd(struct gdx_dev *dev, struct ibv_pd **pd_p);

/* Whether the provider takes IBV_ACCESS_RELAXED_ORDERING: one page
 * registered with it (1), or the -errno of the refusal. libibverbs drops the
 * flag itself where the kernel has no optional access flags, and providers
 * may ignore it; a refusal is what turns it off. gdx-doctor asks too. */
int gdx_dev_ro_takes(struct ibv_context *ctx);
/* Adaptive routing for a port of this link layer: NCCL_GDX_ADAPTIVE_ROUTING,
 * or net_ib's default (on InfiniBand, off on RoCE). */
bool gdx_dev_ar_default(uint8_t link_layer);

/* The speed of dev's ib port `port` moved (IBV_EVENT_DEVICE_SPEED_CHANGE):
 * every device on it asked again, fused devices' sums made anew, one line
 * for each that changed. Comms follow at their next event poll. */
void gdx_dev_speed_changed(struct gdx_dev *dev, int port);

/* The physical device of the table at index (0 .. gdx_devs_count() - 1). */
struct gdx_dev *gdx_dev_get(int index);

#endif
