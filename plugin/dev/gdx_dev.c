/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gdx_data_direct.h"
#include "dev/gdx_dev.h"
#include "dev/gdx_dev_topo.h"
#include "sys/gdx_nccl_version.h"
#include "dev/gdx_dev_seen.h"
#include "dev/gdx_dev_speed.h"
#include "dev/gdx_gid.h"
#include "sys/gdx_name_list.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include "sys/gdx_sysfs.h"
#include "topo/gdx_topo.h"
#include "topo/gdx_topo_nccl.h"

static struct gdx_dev gdx_devs[GDX_MAX_DEVS];
static int gdx_ndevs;
static struct gdx_ibctx *gdx_ibctxs;
static int gdx_nibctxs;
/* The physical ports first, then fused devices. Written at init and by
 * gdx_vdev_fuse() (NCCL's makeVDevice, on the thread that creates
 * communicators); entries never move once written. */
static struct gdx_vdev gdx_vdevs[GDX_MAX_DEVS];
static int gdx_nvdevs;
/* What NCCL numbers its devices by: NCCL's index -> gdx_vdevs index
 * (gdx_devs_view()); appended to by makeVDevice, never reordered. */
static int gdx_view_map[GDX_MAX_DEVS];
static int gdx_nview;
static int gdx_view_kind = -1; /* enum gdx_view once chosen */
static pthread_mutex_t gdx_vdev_lock = PTHREAD_MUTEX_INITIALIZER;
/* The topology a fused device's far members are found in, loaded once per
 * load when the first is made (gdx_dev_topology). */
static struct gdx_topo *gdx_dev_topo;
static bool gdx_dev_topo_tried;

/* Under gdx_vdev_lock: each fused device's speed, the sum of its members'. */
static void gdx_vdevs_speed_sum(void)
{
	for (int i = 0; i < gdx_nvdevs; i++) {
		struct gdx_vdev *v = &gdx_vdevs[i];
		int sum = 0;

		for (int k = 0; k < v->nmembers; k++)
			sum += __atomic_load_n(&v->members[k]->speed_mbps, __ATOMIC_RELAXED);
		__atomic_store_n(&v->speed_mbps, sum, __ATOMIC_RELAXED);
	}
}

/* One device's port asked again; one line when its speed moved. */
static void gdx_dev_speed_refresh_one(struct gdx_dev *d)
{
	struct ibv_port_attr pa;
	int was = __atomic_load_n(&d->speed_mbps, __ATOMIC_RELAXED), now;

	if (ibv_query_port(d->ib->ctx, (uint8_t)d->ib_port, &pa))
		return;
	now = gdx_dev_port_speed(d->ib->ctx, d->ibdev, d->ib_port, &pa);
	if (now <= 0 || now == was)
		return;
	__atomic_store_n(&d->speed_mbps, now, __ATOMIC_RELAXED);
	if (now < was)
		GDX_WARN("%s port %d: speed changed from %d to %d Mb/s (a member of its link "
			 "aggregate down?): its rails are weighted by it and NCCL's properties say "
			 "it; ibv_devinfo -v -d %s shows the port",
			 d->ibdev, d->ib_port, was, now, d->ibdev);
	else
		GDX_INFO(NCCL_NET,
			 "%s port %d: speed changed from %d to %d Mb/s: its rails are "
			 "weighted by it and NCCL's properties say it",
			 d->ibdev, d->ib_port, was, now);
}

void gdx_dev_speed_changed(struct gdx_dev *dev, int port)
{
	if (dev->ib_port == port)
		gdx_dev_speed_refresh_one(dev);
	pthread_mutex_lock(&gdx_vdev_lock);
	for (int i = 0; i < gdx_ndevs; i++)
		if (&gdx_devs[i] != dev && gdx_devs[i].ib == dev->ib && gdx_devs[i].ib_port == port)
			gdx_dev_speed_refresh_one(&gdx_devs[i]);
	gdx_vdevs_speed_sum();
	pthread_mutex_unlock(&gdx_vdev_lock);
}

/* ", rail R plane P" for the INFO line, "" when the user gave neither. */
static const char *gdx_dev_ids(int rail, int plane, char *buf, size_t len)
{
	buf[0] = '\0';
	if (rail >= 0 || plane >= 0)
		snprintf(buf, len, ", rail %d plane %d", rail, plane);
	return buf;
}
int gdx_dev_ro_takes(struct ibv_context *ctx)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *page;
	int ret;

	pd = ibv_alloc_pd(ctx);
	page = aligned_alloc(4096, 4096);
	if (!pd || !page) {
		ret = -ENOMEM;
	} else {
		mr = ibv_reg_mr(pd, page, 4096,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_RELAXED_ORDERING);
		ret = mr ? 1 : (errno ? -errno : -EINVAL);
		if (mr)
			ibv_dereg_mr(mr);
	}
	free(page);
	if (pd)
		ibv_dealloc_pd(pd);
	return ret;
}

bool gdx_dev_ar_default(uint8_t link_layer)
{
	/* net_ib's default: adaptive routing on InfiniBand, not on RoCE */
	if (gdx_params.adaptive_routing < 0)
		return link_layer == IBV_LINK_LAYER_INFINIBAND;
	return gdx_params.adaptive_routing == 1;
}

/* Once per device: its ports share the answer. */
static int gdx_dev_ro_probe(struct gdx_ibctx *ib)
{
	if (!ib->ro_probe)
		ib->ro_probe = gdx_dev_ro_takes(ib->ctx);
	return ib->ro_probe;
}

static void gdx_dev_ro(struct gdx_dev *d)
{
	int probe;

	if (gdx_params.pci_relaxed_ordering == 0) {
		d->ro = false;
		snprintf(d->ro_why, sizeof(d->ro_why), "NCCL_GDX_PCI_RELAXED_ORDERING=0");
		return;
	}
	if (gdx_params.pci_relaxed_ordering == 1) {
		d->ro = d->ib->ro = true;
		snprintf(d->ro_why, sizeof(d->ro_why), "NCCL_GDX_PCI_RELAXED_ORDERING=1");
		return;
	}
	probe = gdx_dev_ro_probe(d->ib);
	d->ro = d->ib->ro = probe > 0;
	if (d->ro)
		snprintf(d->ro_why, sizeof(d->ro_why), "the provider takes it");
	else
		snprintf(d->ro_why, sizeof(d->ro_why), "the provider refuses it: %s",
			 strerror(-probe));
}

/* dd_path: the device is the NIC seen through its Data Direct function
 * there, named as net_ib names it ("mlx5_0_dma"); NULL: its own function. */
static int gdx_dev_add_port(struct gdx_ibctx *ib, const char *ibdev, int ib_port,
			    const struct ibv_port_attr *pa, int nports,
			    const struct gdx_name_list_entry *listed, const char *dd_path)
{
	struct gdx_dev *d;
	char ids[48];

	if (gdx_ndevs == GDX_MAX_DEVS) {
		GDX_WARN("more than %d devices; ignoring %s port %d", GDX_MAX_DEVS, ibdev, ib_port);
		return 0;
	}
	d = &gdx_devs[gdx_ndevs];
	memset(d, 0, sizeof(*d));
	snprintf(d->ibdev, sizeof(d->ibdev), "%s", ibdev);
	if (nports > 1)
		snprintf(d->name, sizeof(d->name), "%s%s:%d", ibdev, dd_path ? "_dma" : "",
			 ib_port);
	else
		snprintf(d->name, sizeof(d->name), "%s%s", ibdev, dd_path ? "_dma" : "");
	d->data_direct = dd_path != NULL;
	d->ib_port = ib_port;
	d->guid = be64toh(ib->attr.sys_image_guid);
	/* Ports of one ASIC seen through several functions share a guid; NCCL
	 * takes equal (guid, port) as one physical port, so keep them apart. */
	d->port = ib_port;
	for (int i = 0; i < gdx_ndevs; i++)
		if (gdx_devs[i].guid == d->guid && gdx_devs[i].port >= d->port)
			d->port = gdx_devs[i].port + 1;
	d->pci_path = dd_path ? strdup(dd_path) : gdx_sysfs_ib_pci_path(ibdev);
	d->speed_mbps = gdx_dev_port_speed(ib->ctx, ibdev, ib_port, pa);
	d->link_layer = pa->link_layer;
	d->max_qp = ib->attr.max_qp;
	d->active_mtu = pa->active_mtu;
	d->lid = pa->lid;
	d->max_msg_sz = pa->max_msg_sz;
	/* v12's railId and planeId: the user's (NCCL_IB_HCA's name:port:rail:plane),
	 * never guessed from PCIe locality, which says nothing about cabling */
	d->rail_id = listed ? listed->rail : -1;
	d->plane_id = listed ? listed->plane : -1;
	d->ptr_support = NCCL_PTR_HOST;
	d->gid_auto_index = -1;
	d->ib = ib;
	d->ar = gdx_dev_ar_default(pa->link_layer);
	gdx_dev_ro(d);
	GDX_INFO(NCCL_NET,
		 "device %d: %s%s port %d, %s, %d Mbps, pci %s%s%s, adaptive routing %s, relaxed "
		 "ordering %s (%s)",
		 gdx_ndevs, ibdev, d->data_direct ? "_dma" : "", ib_port,
		 pa->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB", d->speed_mbps,
		 d->pci_path ? d->pci_path : "none (virtual device)",
		 d->data_direct ? " (Data Direct DMA function)" : "",
		 gdx_dev_ids(d->rail_id, d->plane_id, ids, sizeof(ids)), d->ar ? "on" : "off",
		 d->ro ? "on" : "off", d->ro_why);
	gdx_ndevs++;
	return 1;
}

/* Adds the device's usable ports; returns how many were added. */
static int gdx_dev_scan(struct gdx_ibctx *ib, const char *ibdev, const struct gdx_name_list *filter,
			int *seen_ports, const char *dd_path)
{
	int added = 0;

	for (int p = 1; p <= ib->attr.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		enum gdx_seen_fate fate = GDX_SEEN_TAKEN;

		if (ibv_query_port(ib->ctx, (uint8_t)p, &pa)) {
			gdx_seen_add(ibdev, p, NULL, GDX_SEEN_QUERY, -1);
			continue;
		}
		(*seen_ports)++;
		/* the user's filter first: a port it leaves out is not a rail
		 * lost, whatever its state */
		if (!gdx_name_list_match(filter, ibdev, p))
			fate = GDX_SEEN_FILTERED;
		else if (pa.state != IBV_PORT_ACTIVE)
			fate = GDX_SEEN_NOT_ACTIVE;
		else if (pa.link_layer != IBV_LINK_LAYER_ETHERNET &&
			 pa.link_layer != IBV_LINK_LAYER_INFINIBAND)
			fate = GDX_SEEN_LINK;
		else if (!gdx_dev_add_port(ib, ibdev, p, &pa, ib->attr.phys_port_cnt,
					   filter->exclude ? NULL
							   : gdx_name_list_find(filter, ibdev, p),
					   dd_path))
			fate = GDX_SEEN_FULL;
		else
			added++;
		gdx_seen_add(ibdev, p, &pa, fate, fate == GDX_SEEN_TAKEN ? gdx_ndevs - 1 : -1);
	}
	return added;
}

/* NCCL_GDX_DATA_DIRECT=2: devices first.. of ib (its own function) again,
 * as "<ibdev>_dma" on a context of their own whose DMA-BUF registrations are
 * for the Data Direct function. Each keeps its sibling's (guid, port), as in
 * net_ib: one physical port, whose bandwidth NCCL's search counts once. */
static void gdx_dev_dd_twins(struct ibv_device *dev, const struct gdx_ibctx *ib, int first,
			     const char *dd_path)
{
	struct gdx_ibctx *dd = &gdx_ibctxs[gdx_nibctxs];
	int last = gdx_ndevs, added = 0;

	dd->ctx = ibv_open_device(dev);
	if (!dd->ctx) {
		GDX_WARN("ibv_open_device(%s) for its Data Direct device failed: %s",
			 ibv_get_device_name(dev), strerror(errno));
		return;
	}
	fcntl(dd->ctx->async_fd, F_SETFL, fcntl(dd->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	dd->attr = ib->attr;
	dd->data_direct = true;
	for (int i = first; i < last; i++) {
		const struct gdx_dev *own = &gdx_devs[i];
		struct gdx_name_list_entry ids = {.rail = own->rail_id, .plane = own->plane_id};
		struct ibv_port_attr pa;

		if (ibv_query_port(dd->ctx, (uint8_t)own->ib_port, &pa) ||
		    !gdx_dev_add_port(dd, own->ibdev, own->ib_port, &pa, dd->attr.phys_port_cnt,
				      &ids, dd_path))
			continue;
		gdx_devs[gdx_ndevs - 1].port = own->port;
		added++;
	}
	if (!added) {
		ibv_close_device(dd->ctx);
		dd->ctx = NULL;
		return;
	}
	pthread_mutex_init(&dd->lock, NULL);
	gdx_nibctxs++;
}

/* NCCL_GDX_ADDR_RANGE must parse; its twin, as NCCL does, is ignored with a
 * note when it does not. */
static int gdx_addr_range_check(void)
{
	struct gdx_gid_range r;

	if (!gdx_gid_range_parse(gdx_params.addr_range, &r))
		return 0;
	if (gdx_param_src("ADDR_RANGE") == GDX_PARAM_TWIN) {
		GDX_INFO(NCCL_INIT | NCCL_ENV, "NCCL_IB_ADDR_RANGE=%s is not address/bits: ignored",
			 gdx_params.addr_range);
		gdx_params.addr_range = "";
		return 0;
	}
	GDX_WARN("NCCL_GDX_ADDR_RANGE=\"%s\" is not an address range such as 10.0.0.0/8",
		 gdx_params.addr_range);
	return -EINVAL;
}

int gdx_devs_init(void)
{
	struct gdx_name_list filter;
	struct ibv_device **list;
	const char *err;
	int nlist = 0, seen_ports = 0;

	if (gdx_ndevs)
		return gdx_ndevs;
	gdx_seen_reset();
	if (gdx_addr_range_check())
		return -EINVAL;
	if (gdx_name_list_parse(gdx_params.hca, true, &filter, &err)) {
		GDX_WARN("NCCL_GDX_HCA=\"%s\" is malformed: %s", gdx_params.hca, err);
		return -EINVAL;
	}
	list = ibv_get_device_list(&nlist);
	if (!list || nlist == 0) {
		GDX_WARN("no RDMA device found (ibv_get_device_list: %s); is a verbs provider "
			 "installed and the kernel driver loaded?",
			 list ? "empty" : strerror(errno));
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	/* twice: each device's Data Direct twin may need a context of its own */
	gdx_ibctxs = calloc(2 * (size_t)nlist, sizeof(*gdx_ibctxs));
	if (!gdx_ibctxs) {
		ibv_free_device_list(list);
		return -ENOMEM;
	}
	for (int i = 0; i < nlist; i++) {
		struct gdx_ibctx *ib = &gdx_ibctxs[gdx_nibctxs];
		const char *ibdev = ibv_get_device_name(list[i]);
		char dd_path[PATH_MAX];
		int dd, first = gdx_ndevs;

		ib->ctx = ibv_open_device(list[i]);
		if (!ib->ctx) {
			GDX_WARN("ibv_open_device(%s) failed: %s; skipping it", ibdev,
				 strerror(errno));
			gdx_seen_add(ibdev, 0, NULL, GDX_SEEN_OPEN, -1);
			continue;
		}
		/* Async events are read without a thread, from comms that wait
		 * (gdx_event.c), so the descriptor must never block. */
		fcntl(ib->ctx->async_fd, F_SETFL, fcntl(ib->ctx->async_fd, F_GETFL) | O_NONBLOCK);
		if (ibv_query_device(ib->ctx, &ib->attr)) {
			gdx_seen_add(ibdev, 0, NULL, GDX_SEEN_OPEN, -1);
			ibv_close_device(ib->ctx);
			ib->ctx = NULL;
			continue;
		}
		dd = gdx_dd_path(list[i], ib->ctx, dd_path, sizeof(dd_path));
		ib->data_direct = dd && gdx_params.data_direct == GDX_DD_ONLY;
		if (gdx_dev_scan(ib, ibdev, &filter, &seen_ports,
				 ib->data_direct ? dd_path : NULL) == 0) {
			ibv_close_device(ib->ctx);
			ib->ctx = NULL;
			continue;
		}
		pthread_mutex_init(&ib->lock, NULL);
		gdx_nibctxs++;
		if (dd && gdx_params.data_direct == GDX_DD_BOTH)
			gdx_dev_dd_twins(list[i], ib, first, dd_path);
	}
	ibv_free_device_list(list);
	for (int i = 0; i < gdx_ndevs; i++) {
		struct gdx_vdev *v = &gdx_vdevs[i];

		memcpy(v->name, gdx_devs[i].name, sizeof(gdx_devs[i].name));
		v->nmembers = 1;
		v->members[0] = &gdx_devs[i];
		v->phys[0] = i;
		v->speed_mbps = gdx_devs[i].speed_mbps;
		v->rail_id = gdx_devs[i].rail_id;
		v->plane_id = gdx_devs[i].plane_id;
		gdx_view_map[i] = i; /* until gdx_devs_view() */
	}
	gdx_nvdevs = gdx_nview = gdx_ndevs;
	if (gdx_ndevs == 0) {
		gdx_seen_none(nlist, seen_ports, &filter);
		gdx_devs_fini();
		return -ENODEV;
	}
	return gdx_ndevs;
}

void gdx_devs_fini(void)
{
	for (int i = 0; i < gdx_ndevs; i++)
		free(gdx_devs[i].pci_path);
	gdx_topo_free(gdx_dev_topo);
	gdx_dev_topo = NULL;
	gdx_dev_topo_tried = false;
	gdx_ndevs = 0;
	gdx_nvdevs = 0;
	gdx_nview = 0;
	gdx_view_kind = -1;
	for (int i = 0; i < gdx_nibctxs; i++) {
		struct gdx_ibctx *ib = &gdx_ibctxs[i];

		gdx_regcache_destroy(ib->cache);
		gdx_regcache_destroy(ib->dmabuf_cache);
		gdx_regcache_destroy(ib->rma_dmabuf_cache);
		if (ib->pd && ibv_dealloc_pd(ib->pd))
			GDX_WARN("ibv_dealloc_pd failed at unload: memory still registered");
		ibv_close_device(ib->ctx);
		pthread_mutex_destroy(&ib->lock);
	}
	free(gdx_ibctxs);
	gdx_ibctxs = NULL;
	gdx_nibctxs = 0;
}

int gdx_devs_count(void)
{
	return gdx_ndevs;
}

struct gdx_dev *gdx_dev_get(int index)
{
	return index >= 0 && index < gdx_ndevs ? &gdx_devs[index] : NULL;
}

int gdx_vdevs_count(void)
{
	return __atomic_load_n(&gdx_nview, __ATOMIC_ACQUIRE);
}

struct gdx_vdev *gdx_vdev_get(int index)
{
	return index >= 0 && index < gdx_vdevs_count() ? &gdx_vdevs[gdx_view_map[index]] : NULL;
}

/* The members' id when they share one, else none (NCCL_NET_ID_UNDEF). */
static int gdx_vdev_common_id(const struct gdx_vdev *v, bool plane)
{
	int id = plane ? v->members[0]->plane_id : v->members[0]->rail_id;

	for (int i = 1; i < v->nmembers; i++)
		if ((plane ? v->members[i]->plane_id : v->members[i]->rail_id) != id)
			return -1;
	return id;
}

/* Where the topology places this table's NICs that are not where hwloc
 * hangs them: a Data Direct device's at its DMA function. With
 * NCCL_GDX_DATA_DIRECT=2 the NIC's one name stands for both of its devices,
 * which stay at its own function. */
static int gdx_dev_topo_homes(struct gdx_topo_home *homes)
{
	int n = 0;

	for (int i = 0; i < gdx_ndevs && gdx_params.data_direct == GDX_DD_ONLY; i++) {
		const char *bus = gdx_devs[i].pci_path ? strrchr(gdx_devs[i].pci_path, '/') : NULL;

		if (gdx_devs[i].data_direct && bus)
			homes[n++] =
				(struct gdx_topo_home){.nic = gdx_devs[i].ibdev, .pci = bus + 1};
	}
	return n;
}

/* NCCL_GDX_TOPO_FILE's topology or this machine's, once per load; NULL
 * when there is none (said in one INFO line). */
static const struct gdx_topo *gdx_dev_topology(void)
{
	const char *file =
		gdx_params.topo_file && *gdx_params.topo_file ? gdx_params.topo_file : NULL;
	struct gdx_topo_home homes[GDX_MAX_DEVS];
	char why[256] = "";
	int ret;

	if (gdx_dev_topo_tried)
		return gdx_dev_topo;
	gdx_dev_topo_tried = true;
	ret = gdx_dev_topo_load(file, homes, gdx_dev_topo_homes(homes), &gdx_dev_topo, why,
				sizeof(why));
	if (ret) {
		gdx_dev_topo = NULL;
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "no topology (%s): fused devices stripe over every member",
			 why[0] ? why : strerror(-ret));
	}
	return gdx_dev_topo;
}

/* Which members of a fused device stand by (NCCL_GDX_STANDBY): those the
 * GPU it serves reaches through a host bridge where another member shares
 * a PCIe switch with it; said in one INFO line. */
static void gdx_vdev_standby(struct gdx_vdev *v)
{
	const char *names[GDX_MAX_RAILS];
	enum gdx_path cls[GDX_MAX_RAILS];
	const struct gdx_topo *t;
	char near[128] = "", far[128] = "";
	int gpu = -1;

	v->far = 0;
	if (!gdx_params.standby || v->nmembers < 2 || !(t = gdx_dev_topology()))
		return;
	for (int i = 0; i < v->nmembers; i++)
		names[i] = v->members[i]->ibdev; /* as hwloc names the NIC */
	v->far = gdx_topo_far_members(t, names, v->nmembers, &gpu, cls);
	if (!v->far)
		return;
	for (int i = 0; i < v->nmembers; i++) {
		char *b = v->far & (1u << i) ? far : near;
		size_t used = strlen(b);

		snprintf(b + used, sizeof(near) - used, "%s%s (%s)", used ? ", " : "", names[i],
			 gdx_path_name(cls[i]));
	}
	GDX_INFO(NCCL_INIT | NCCL_NET,
		 "%s: %s stand(s) by for GPU %s, where %s share(s) its PCIe switch: data goes "
		 "there only while none of those is up (NCCL_GDX_STANDBY=0: every member "
		 "carries)",
		 v->name, far, gdx_topo_gpu(t, gpu)->pci, near);
}

/* Appends a fused device to gdx_vdevs (not to what NCCL sees); its index
 * there, or -EINVAL with *err_p. Under gdx_vdev_lock. */
static int gdx_vdev_add(const int *phys, int n, int min_members, int max_members,
			const char **err_p)
{
	struct gdx_vdev *v;
	int index;

	if (n < min_members || n > max_members) {
		*err_p = n < min_members ? "a fused device needs at least 2 members"
					 : "too many members for one fused device";
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (phys[i] < 0 || phys[i] >= gdx_ndevs) {
			*err_p = "no such device";
			return -EINVAL;
		}
		for (int j = 0; j < i; j++) {
			if (phys[j] == phys[i]) {
				*err_p = "a device is listed twice";
				return -EINVAL;
			}
		}
		if (gdx_devs[phys[i]].link_layer != gdx_devs[phys[0]].link_layer) {
			*err_p = "InfiniBand and RoCE devices cannot be fused";
			return -EINVAL;
		}
	}
	index = gdx_nvdevs;
	if (index == GDX_MAX_DEVS || gdx_nview == GDX_MAX_DEVS) {
		*err_p = "device table full";
		return -EINVAL;
	}
	v = &gdx_vdevs[index];
	memset(v, 0, sizeof(*v));
	for (int i = 0; i < n; i++) {
		struct gdx_dev *d = &gdx_devs[phys[i]];
		size_t used = strlen(v->name);

		snprintf(v->name + used, sizeof(v->name) - used, "%s%s", i ? "+" : "", d->name);
		v->members[i] = d;
		v->phys[i] = phys[i];
		v->speed_mbps += d->speed_mbps;
	}
	v->nmembers = n;
	v->rail_id = gdx_vdev_common_id(v, false);
	v->plane_id = gdx_vdev_common_id(v, true);
	gdx_vdev_standby(v);
	gdx_nvdevs = index + 1;
	return index;
}

int gdx_vdev_fuse(const int *phys, int n, int min_members, int max_members, const char **err_p)
{
	int index;

	pthread_mutex_lock(&gdx_vdev_lock);
	index = gdx_vdev_add(phys, n, min_members, max_members, err_p);
	if (index >= 0) {
		/* NCCL reads it right after the devices it has: append */
		gdx_view_map[gdx_nview] = index;
		index = gdx_nview;
		__atomic_store_n(&gdx_nview, index + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&gdx_vdev_lock);
	return index;
}

static int gdx_dev_find(const char *name, size_t len)
{
	for (int i = 0; i < gdx_ndevs; i++)
		if (strlen(gdx_devs[i].name) == len && !strncmp(gdx_devs[i].name, name, len))
			return i;
	return -1;
}

/* Groups of physical devices NCCL_GDX_RAILS asks to fuse. */
struct gdx_rail_groups {
	int n;
	int counts[GDX_MAX_DEVS];
	int members[GDX_MAX_DEVS][GDX_MAX_RAILS];
};

/* A group's members must be fusable, and in no other group. */
static int gdx_rails_check(const struct gdx_rail_groups *g, int k, const char *what)
{
	const char *err;

	if (g->counts[k] < 2) {
		err = "a fused device needs at least 2 members";
		goto refuse;
	}
	for (int i = 0; i < g->counts[k]; i++) {
		const struct gdx_dev *d = &gdx_devs[g->members[k][i]];

		for (int j = 0; j < i; j++)
			if (g->members[k][j] == g->members[k][i]) {
				err = "a device is listed twice";
				goto refuse;
			}
		if (d->link_layer != gdx_devs[g->members[k][0]].link_layer) {
			err = "InfiniBand and RoCE devices cannot be fused";
			goto refuse;
		}
		for (int o = 0; o < k; o++)
			for (int j = 0; j < g->counts[o]; j++)
				if (g->members[o][j] == g->members[k][i]) {
					err = "a device is in two groups";
					goto refuse;
				}
	}
	return 0;
refuse:
	GDX_WARN("NCCL_GDX_RAILS: group \"%s\" refused: %s", what, err);
	return -EINVAL;
}

/* Explicit groups "a+b,c+d" of device names. */
static int gdx_rails_parse(const char *spec, struct gdx_rail_groups *g)
{
	for (const char *s = spec; *s;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		const char *end = s + len;
		char what[GDX_VDEV_NAME_MAX];
		int k = g->n;

		if (len == 0) {
			GDX_WARN("NCCL_GDX_RAILS=\"%s\": empty group", spec);
			return -EINVAL;
		}
		if (k == GDX_MAX_DEVS) {
			GDX_WARN("NCCL_GDX_RAILS=\"%s\": more than %d groups", spec, GDX_MAX_DEVS);
			return -EINVAL;
		}
		snprintf(what, sizeof(what), "%.*s", (int)len, s);
		g->counts[k] = 0;
		while (s < end) {
			const char *plus = memchr(s, '+', (size_t)(end - s));
			size_t l = plus ? (size_t)(plus - s) : (size_t)(end - s);
			int d = gdx_dev_find(s, l);

			if (g->counts[k] == GDX_MAX_RAILS) {
				GDX_WARN("NCCL_GDX_RAILS: group \"%s\" has more than %d members",
					 what, GDX_MAX_RAILS);
				return -EINVAL;
			}
			if (d < 0) {
				GDX_WARN("NCCL_GDX_RAILS: no active device \"%.*s\"", (int)l, s);
				return -EINVAL;
			}
			g->members[k][g->counts[k]++] = d;
			s += l + (plus ? 1 : 0);
		}
		if (gdx_rails_check(g, k, what))
			return -EINVAL;
		g->n++;
		s = end + (comma ? 1 : 0);
	}
	return 0;
}

/* auto: the ports of one NIC (one PCI device, one guid, one link layer),
 * the NICs net_ib fused itself for NCCL 2.20-2.23; a virtual device (no
 * PCI path) stands alone. */
static void gdx_rails_ports(struct gdx_rail_groups *g)
{
	bool used[GDX_MAX_DEVS] = {false};

	for (int i = 0; i < gdx_ndevs; i++) {
		const struct gdx_dev *a = &gdx_devs[i];
		int k = g->n;

		if (used[i] || !a->pci_path)
			continue;
		g->counts[k] = 0;
		for (int j = i; j < gdx_ndevs && g->counts[k] < GDX_MAX_RAILS; j++) {
			const struct gdx_dev *b = &gdx_devs[j];

			if (!used[j] && b->pci_path && !strcmp(a->pci_path, b->pci_path) &&
			    a->guid == b->guid && a->link_layer == b->link_layer) {
				g->members[k][g->counts[k]++] = j;
				used[j] = true;
			}
		}
		if (g->counts[k] > 1)
			g->n++;
	}
}

/* gpu: for each GPU, its NICs at its best path class when there are two or
 * more, from the topology (live, or NCCL_GDX_TOPO_FILE). */
static int gdx_rails_gpu(struct gdx_rail_groups *g)
{
	const char *file =
		gdx_params.topo_file && *gdx_params.topo_file ? gdx_params.topo_file : NULL;
	const char *names[GDX_MAX_DEVS];
	int members[GDX_MAX_DEVS][8];
	struct gdx_topo_home homes[GDX_MAX_DEVS];
	struct gdx_topo *t;
	char why[256] = "";
	int ret, n;

	ret = gdx_dev_topo_load(file, homes, gdx_dev_topo_homes(homes), &t, why, sizeof(why));
	if (ret) {
		if (file) {
			GDX_WARN("NCCL_GDX_TOPO_FILE=%s: %s", file, why[0] ? why : strerror(-ret));
			return ret;
		}
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "NCCL_GDX_RAILS=gpu: no topology (%s): nothing fused",
			 why[0] ? why : strerror(-ret));
		return 0;
	}
	for (int i = 0; i < gdx_ndevs; i++)
		names[i] = gdx_devs[i].ibdev; /* as hwloc names the NIC */
	n = gdx_topo_auto_groups(t, names, gdx_ndevs, members, g->counts, GDX_MAX_DEVS,
				 GDX_MAX_RAILS);
	gdx_topo_free(t);
	for (int k = 0; k < n; k++) {
		memcpy(g->members[g->n], members[k], sizeof(int) * (size_t)g->counts[k]);
		g->counts[g->n] = g->counts[k];
		if (!gdx_rails_check(g, g->n, "gpu"))
			g->n++;
	}
	return 0;
}

/* The groups as NCCL 2.24+ takes them: NCCL_NET_FORCE_MERGE="a,b;c,d". */
static void gdx_rails_force_merge(const struct gdx_rail_groups *g, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < g->n; k++)
		for (int i = 0; i < g->counts[k] && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 i   ? ","
						 : k ? ";"
						     : "",
						 gdx_devs[g->members[k][i]].name);
}

/* NCCL's numbering with the groups fused: each group where its first member
 * was, its members gone, the other devices as they were. */
static int gdx_view_fused(const struct gdx_rail_groups *g)
{
	int made[GDX_MAX_DEVS], n = 0;
	bool placed[GDX_MAX_DEVS] = {false};

	for (int k = 0; k < g->n; k++) {
		const char *err;

		made[k] = gdx_vdev_add(g->members[k], g->counts[k], 2, GDX_MAX_RAILS, &err);
		if (made[k] < 0) {
			GDX_WARN("NCCL_GDX_RAILS: group %d refused: %s", k, err);
			return -EINVAL;
		}
	}
	for (int i = 0; i < gdx_ndevs; i++) {
		int k = -1;

		for (int o = 0; o < g->n && k < 0; o++)
			for (int j = 0; j < g->counts[o]; j++)
				if (g->members[o][j] == i)
					k = o;
		if (k < 0)
			gdx_view_map[n++] = i;
		else if (!placed[k]) {
			placed[k] = true;
			gdx_view_map[n++] = made[k];
			GDX_INFO(
				NCCL_NET,
				"device %d: %s, %d rails, %d Mbps (fused at init, NCCL_GDX_RAILS=%s; "
				"its NICs are not devices of their own)",
				n - 1, gdx_vdevs[made[k]].name, g->counts[k],
				gdx_vdevs[made[k]].speed_mbps, gdx_params.rails);
		}
	}
	__atomic_store_n(&gdx_nview, n, __ATOMIC_RELEASE);
	return 0;
}

int gdx_devs_view(enum gdx_view view)
{
	const char *spec = gdx_params.rails && *gdx_params.rails ? gdx_params.rails : "auto";
	struct gdx_rail_groups *g;
	char merge[GDX_MAX_DEVS * (GDX_DEV_NAME_MAX + 1)];
	int ret = 0;

	if (gdx_view_kind >= 0)
		return gdx_view_kind == (int)view ? 0 : -EBUSY;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	if (!strcmp(spec, "auto")) {
		if (view == GDX_VIEW_FUSED)
			gdx_rails_ports(g); /* NCCL 2.24+ fuses a NIC's ports itself */
	} else if (!strcmp(spec, "gpu")) {
		ret = gdx_rails_gpu(g);
	} else if (strcmp(spec, "off")) {
		ret = gdx_rails_parse(spec, g);
	}
	if (!ret && view == GDX_VIEW_PHYSICAL && g->n) {
		gdx_rails_force_merge(g, merge, sizeof(merge));
		GDX_WARN(
			"NCCL_GDX_RAILS=%s is not applied: NCCL 2.24 and later (net API v9+) "
			"fuse NICs themselves, through makeVDevice, and must see every physical "
			"port; to fuse these set NCCL_NET_FORCE_MERGE=%s (or NCCL_NET_MERGE_LEVEL=PIX "
			"for the NICs behind each PCIe switch)",
			spec, merge);
	} else if (!ret && view == GDX_VIEW_FUSED) {
		ret = gdx_view_fused(g);
	}
	free(g);
	if (!ret)
		gdx_view_kind = (int)view;
	return ret;
}

int gdx_devs_gdr(void)
{
	const char *file =
		gdx_params.topo_file && *gdx_params.topo_file ? gdx_params.topo_file : NULL;
	struct gdx_topo_home homes[GDX_MAX_DEVS];
	struct gdx_gdr_opts o = {.xml = file, .nccl_version = gdx_nccl_version(), .homes = homes};
	enum gdx_gdr_policy policy;
	struct gdx_gdr_probe *probe;
	char why[256] = "", text[GDX_GDR_LINE_LEN];
	int ret = 0;

	if (gdx_gdr_policy_parse(gdx_params.gdr, &policy)) {
		GDX_WARN("NCCL_GDX_GDR=\"%s\" must be auto, on or off", gdx_params.gdr);
		return -EINVAL;
	}
	if (policy == GDX_GDR_POLICY_OFF) {
		for (int i = 0; i < gdx_ndevs; i++)
			snprintf(gdx_devs[i].gdr_why, sizeof(gdx_devs[i].gdr_why),
				 "NCCL_GDX_GDR=off");
		GDX_INFO(NCCL_INIT | NCCL_NET, "NCCL_GDX_GDR=off: host memory only on every NIC");
		return 0;
	}
	o.nhomes = gdx_dev_topo_homes(homes);
	if (gdx_gdr_probe_init(&o, &probe, why, sizeof(why))) {
		GDX_WARN("GPUDirect RDMA probe failed (%s): host memory only", why);
		return policy == GDX_GDR_POLICY_ON ? -ENODEV : 0;
	}
	/* A topology asked for and not read leaves the GPUs unknown: every
	 * NIC would stage without a word of why. */
	if (file && !probe->have_topo)
		GDX_WARN("NCCL_GDX_TOPO_FILE=%s cannot be read: %s; the GPUs and their paths are "
			 "unknown, so every NIC stages through host memory; fix: the file (lstopo "
			 "--of xml FILE), or unset it to read this machine's",
			 GDX_LOG_QUOTED(file), probe->topo_why);
	if (gdx_gdr_memlock_check(probe, text, sizeof(text)) != GDX_GDR_LEVEL_OK)
		GDX_WARN("%s", text);
	for (int i = 0; i < gdx_ndevs; i++) {
		struct gdx_dev *d = &gdx_devs[i];
		struct gdx_gdr_verdict v;
		struct ibv_pd *pd;

		if (gdx_dev_pd(d, &pd) == 0)
			gdx_gdr_probe_nic(probe, d->ibdev, pd);
		if (gdx_gdr_nic_verdict(probe, d->ibdev, policy, &v))
			continue;
		d->ptr_support = v.ptr_support;
		snprintf(d->gdr_why, sizeof(d->gdr_why), "%s", v.reason);
		/* A line that says the job runs slower than it could keeps its
		 * level: degraded (WARN), staged with a fix, or direct where NCCL
		 * stages it anyway (beyond NCCL_NET_GDR_LEVEL). The others (no
		 * GPU here, a healthy path) are the INIT line's one word, and
		 * this line under NET. */
		if (v.warn)
			GDX_WARN("%s", v.line);
		else if (v.fix[0] || (v.mode == GDX_GDR_DIRECT && v.path != GDX_PATH_UNKNOWN &&
				      v.nccl_within != 1))
			GDX_INFO(NCCL_INIT | NCCL_NET, "%s", v.line);
		else
			GDX_INFO(NCCL_NET, "%s", v.line);
		if (v.mode == GDX_GDR_BROKEN)
			ret = -ENODEV;
	}
	gdx_gdr_probe_free(probe);
	return ret;
}

void gdx_devs_using(char *buf, size_t len)
{
	/* NCCL's logger formats into 1 KiB: the rest of the line needs room */
	size_t max = len < 640 ? len : 640, used = 0;
	int n = gdx_vdevs_count();

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const struct gdx_vdev *v = gdx_vdev_get(i);
		int ptr = NCCL_PTR_CUDA | NCCL_PTR_DMABUF;
		char one[GDX_MAX_RAILS * (IBV_SYSFS_NAME_MAX + 8) + 32];
		size_t off;

		off = (size_t)snprintf(one, sizeof(one), " [%d]", i);
		for (int m = 0; m < v->nmembers && off < sizeof(one); m++) {
			off += (size_t)snprintf(one + off, sizeof(one) - off, "%s%s:%d",
						m ? "+" : "", v->members[m]->ibdev,
						v->members[m]->ib_port);
			ptr &= v->members[m]->ptr_support;
		}
		if (off < sizeof(one))
			snprintf(one + off, sizeof(one) - off, "/%s/%s",
				 v->members[0]->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE"
										      : "IB",
				 ptr ? "direct" : "staged");
		if (used + strlen(one) + 16 > max) {
			snprintf(buf + used, len - used, " (+%d more)", n - i);
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s", one);
	}
}

void gdx_devs_report(void)
{
	for (int i = 0; i < gdx_ndevs; i++) {
		struct gdx_dev *d = &gdx_devs[i];
		uint64_t comms = __atomic_exchange_n(&d->comms, 0, __ATOMIC_RELAXED);
		uint64_t gpu = __atomic_exchange_n(&d->bytes_gpu, 0, __ATOMIC_RELAXED);
		uint64_t host = __atomic_exchange_n(&d->bytes_host, 0, __ATOMIC_RELAXED);
		uint64_t downs = __atomic_exchange_n(&d->failovers, 0, __ATOMIC_RELAXED);

		if (!comms)
			continue;
		GDX_INFO(
			NCCL_INIT | NCCL_NET,
			"%s port %d: %llu comm(s) closed, %llu bytes GPU-direct, %llu bytes through "
			"host memory, %llu rail failover(s)",
			d->ibdev, d->ib_port, (unsigned long long)comms, (unsigned long long)gpu,
			(unsigned long long)host, (unsigned long long)downs);
	}
}

int gdx_dev_pd(struct gdx_dev *dev, struct ibv_pd **pd_p)
{
	struct gdx_ibctx *ib = dev->ib;
	int ret = 0;

	pthread_mutex_lock(&ib->lock);
	if (!ib->pd) {
		ib->pd = ibv_alloc_pd(ib->ctx);
		if (!ib->pd) {
			ret = errno ? -errno : -ENOMEM;
			GDX_WARN("ibv_alloc_pd(%s) failed: %s", dev->ibdev, strerror(-ret));
		}
	}
	*pd_p = ib->pd;
	pthread_mutex_unlock(&ib->lock);
	return ret;
}
