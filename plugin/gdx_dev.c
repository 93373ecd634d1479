/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_dev.h>
#include <gdx/gdx_hca.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_gdr.h>
#include <gdx/gdx_gdr_verdict.h>
#include <gdx/gdx_sysfs.h>
#include <gdx/gdx_topo.h>

static struct gdx_dev gdx_devs[GDX_MAX_DEVS];
static int gdx_ndevs;
static struct gdx_ibctx *gdx_ibctxs;
static int gdx_nibctxs;
/* Written at init and by gdx_vdev_fuse() (NCCL's makeVDevice, on the thread
 * that creates communicators); entries never move once written. */
static struct gdx_vdev gdx_vdevs[GDX_MAX_DEVS];
static int gdx_nvdevs;
static pthread_mutex_t gdx_vdev_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* The realpath of the device's PCI function, or NULL for a virtual device such
 * as rxe, whose "device" link is missing or not on the PCI bus. */
static char *gdx_dev_pci_path(const char *ibdev)
{
	char link[PATH_MAX + 32], real[PATH_MAX], subsys[PATH_MAX];
	const char *base;

	snprintf(link, sizeof(link), "%s/class/infiniband/%s/device", gdx_sysfs_root(), ibdev);
	if (!realpath(link, real))
		return NULL;
	snprintf(link, sizeof(link), "%s/subsystem", real);
	if (!realpath(link, subsys))
		return NULL;
	base = strrchr(subsys, '/');
	if (!base || strcmp(base, "/pci") != 0)
		return NULL;
	return strdup(real);
}

static int gdx_dev_add_port(struct gdx_ibctx *ib, const char *ibdev, int ib_port,
			    const struct ibv_port_attr *pa, int nports)
{
	struct gdx_dev *d;

	if (gdx_ndevs == GDX_MAX_DEVS) {
		GDX_WARN("more than %d devices; ignoring %s port %d", GDX_MAX_DEVS, ibdev, ib_port);
		return 0;
	}
	d = &gdx_devs[gdx_ndevs];
	memset(d, 0, sizeof(*d));
	snprintf(d->ibdev, sizeof(d->ibdev), "%s", ibdev);
	if (nports > 1)
		snprintf(d->name, sizeof(d->name), "%s:%d", ibdev, ib_port);
	else
		snprintf(d->name, sizeof(d->name), "%s", ibdev);
	d->ib_port = ib_port;
	d->guid = be64toh(ib->attr.sys_image_guid);
	/* Ports of one ASIC seen through several functions share a guid; NCCL
	 * takes equal (guid, port) as one physical port, so keep them apart. */
	d->port = ib_port;
	for (int i = 0; i < gdx_ndevs; i++)
		if (gdx_devs[i].guid == d->guid && gdx_devs[i].port >= d->port)
			d->port = gdx_devs[i].port + 1;
	d->pci_path = gdx_dev_pci_path(ibdev);
	d->speed_mbps = gdx_dev_speed_mbps(pa->active_speed, pa->active_width);
	d->link_layer = pa->link_layer;
	d->max_qp = ib->attr.max_qp;
	d->active_mtu = pa->active_mtu;
	d->lid = pa->lid;
	d->max_msg_sz = pa->max_msg_sz;
	d->rail_id = -1;
	d->ptr_support = NCCL_PTR_HOST;
	d->ib = ib;
	GDX_INFO(NCCL_INIT | NCCL_NET, "device %d: %s port %d, %s, %d Mbps, pci %s", gdx_ndevs,
		 ibdev, ib_port, pa->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
		 d->speed_mbps, d->pci_path ? d->pci_path : "none (virtual device)");
	gdx_ndevs++;
	return 1;
}

/* Adds the device's usable ports; returns how many were added. */
static int gdx_dev_scan(struct gdx_ibctx *ib, const char *ibdev,
			const struct gdx_hca_filter *filter, int *seen_ports)
{
	int added = 0;

	for (int p = 1; p <= ib->attr.phys_port_cnt; p++) {
		struct ibv_port_attr pa;

		if (ibv_query_port(ib->ctx, (uint8_t)p, &pa))
			continue;
		(*seen_ports)++;
		if (pa.state != IBV_PORT_ACTIVE)
			continue;
		if (pa.link_layer != IBV_LINK_LAYER_ETHERNET &&
		    pa.link_layer != IBV_LINK_LAYER_INFINIBAND)
			continue;
		if (!gdx_hca_filter_match(filter, ibdev, p))
			continue;
		added += gdx_dev_add_port(ib, ibdev, p, &pa, ib->attr.phys_port_cnt);
	}
	return added;
}

int gdx_devs_init(void)
{
	struct gdx_hca_filter filter;
	struct ibv_device **list;
	const char *err;
	int nlist = 0, seen_ports = 0;

	if (gdx_ndevs)
		return gdx_ndevs;
	if (gdx_hca_filter_parse(gdx_params.hca, true, &filter, &err)) {
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
	gdx_ibctxs = calloc((size_t)nlist, sizeof(*gdx_ibctxs));
	if (!gdx_ibctxs) {
		ibv_free_device_list(list);
		return -ENOMEM;
	}
	for (int i = 0; i < nlist; i++) {
		struct gdx_ibctx *ib = &gdx_ibctxs[gdx_nibctxs];
		const char *ibdev = ibv_get_device_name(list[i]);

		ib->ctx = ibv_open_device(list[i]);
		if (!ib->ctx) {
			GDX_WARN("ibv_open_device(%s) failed: %s; skipping it", ibdev,
				 strerror(errno));
			continue;
		}
		/* Async events are read without a thread, from comms that wait
		 * (gdx_event.c), so the descriptor must never block. */
		fcntl(ib->ctx->async_fd, F_SETFL, fcntl(ib->ctx->async_fd, F_GETFL) | O_NONBLOCK);
		if (ibv_query_device(ib->ctx, &ib->attr) ||
		    gdx_dev_scan(ib, ibdev, &filter, &seen_ports) == 0) {
			ibv_close_device(ib->ctx);
			ib->ctx = NULL;
			continue;
		}
		pthread_mutex_init(&ib->lock, NULL);
		gdx_nibctxs++;
	}
	ibv_free_device_list(list);
	for (int i = 0; i < gdx_ndevs; i++) {
		struct gdx_vdev *v = &gdx_vdevs[i];

		memcpy(v->name, gdx_devs[i].name, sizeof(gdx_devs[i].name));
		v->nmembers = 1;
		v->members[0] = &gdx_devs[i];
		v->phys[0] = i;
		v->speed_mbps = gdx_devs[i].speed_mbps;
	}
	gdx_nvdevs = gdx_ndevs;
	if (gdx_ndevs == 0) {
		GDX_WARN("none of %d RDMA devices (%d ports) has an active port%s%s%s", nlist,
			 seen_ports, filter.n ? " passing NCCL_GDX_HCA=\"" : "",
			 filter.n ? gdx_params.hca : "", filter.n ? "\"" : "");
		gdx_devs_fini();
		return -ENODEV;
	}
	return gdx_ndevs;
}

void gdx_devs_fini(void)
{
	for (int i = 0; i < gdx_ndevs; i++)
		free(gdx_devs[i].pci_path);
	gdx_ndevs = 0;
	gdx_nvdevs = 0;
	for (int i = 0; i < gdx_nibctxs; i++) {
		struct gdx_ibctx *ib = &gdx_ibctxs[i];

		gdx_regcache_destroy(ib->cache);
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
	return __atomic_load_n(&gdx_nvdevs, __ATOMIC_ACQUIRE);
}

struct gdx_vdev *gdx_vdev_get(int index)
{
	return index >= 0 && index < gdx_vdevs_count() ? &gdx_vdevs[index] : NULL;
}

int gdx_vdev_fuse(const int *phys, int n, int min_members, int max_members, const char **err_p)
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
	pthread_mutex_lock(&gdx_vdev_lock);
	index = gdx_nvdevs;
	if (index == GDX_MAX_DEVS) {
		pthread_mutex_unlock(&gdx_vdev_lock);
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
	__atomic_store_n(&gdx_nvdevs, index + 1, __ATOMIC_RELEASE);
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

/* One group "a+b+c" of spec, len bytes long. */
static int gdx_vdev_parse_group(const char *s, size_t len)
{
	int phys[GDX_MAX_RAILS], n = 0, ret;
	const char *end = s + len, *err;

	while (s < end) {
		const char *plus = memchr(s, '+', (size_t)(end - s));
		size_t l = plus ? (size_t)(plus - s) : (size_t)(end - s);

		if (n == GDX_MAX_RAILS) {
			GDX_WARN("NCCL_GDX_RAILS: group \"%.*s\" has more than %d members",
				 (int)len, end - len, GDX_MAX_RAILS);
			return -EINVAL;
		}
		phys[n] = gdx_dev_find(s, l);
		if (phys[n] < 0) {
			GDX_WARN("NCCL_GDX_RAILS: no active device \"%.*s\"", (int)l, s);
			return -EINVAL;
		}
		n++;
		s += l + (plus ? 1 : 0);
	}
	ret = gdx_vdev_fuse(phys, n, 2, GDX_MAX_RAILS, &err);
	if (ret < 0) {
		GDX_WARN("NCCL_GDX_RAILS: group \"%.*s\" refused: %s", (int)len, end - len, err);
		return ret;
	}
	GDX_INFO(NCCL_INIT | NCCL_NET, "device %d: %s, %d rails, %d Mbps", ret, gdx_vdevs[ret].name,
		 n, gdx_vdevs[ret].speed_mbps);
	return 0;
}

static void gdx_devs_auto_rails(const struct gdx_topo *t)
{
	const char *names[GDX_MAX_DEVS];
	int members[GDX_MAX_DEVS][8], counts[GDX_MAX_DEVS], n;

	for (int i = 0; i < gdx_ndevs; i++)
		names[i] = gdx_devs[i].ibdev; /* as hwloc names the NIC */
	n = gdx_topo_auto_rails(t, names, gdx_ndevs, members, counts, GDX_MAX_DEVS, GDX_MAX_RAILS);
	for (int g = 0; g < n; g++) {
		const char *err;
		int d = gdx_vdev_fuse(members[g], counts[g], 2, GDX_MAX_RAILS, &err);

		if (d < 0)
			GDX_INFO(NCCL_INIT | NCCL_NET,
				 "NCCL_GDX_RAILS=auto: group %d not fused: %s", g, err);
		else
			GDX_INFO(NCCL_INIT | NCCL_NET,
				 "device %d: %s, %d rails (NCCL_GDX_RAILS=auto: NICs equally near "
				 "one GPU)",
				 d, gdx_vdevs[d].name, counts[g]);
	}
}

int gdx_devs_topology(void)
{
	const char *file =
		gdx_params.topo_file && *gdx_params.topo_file ? gdx_params.topo_file : NULL;
	const char *rails = gdx_params.rails;
	struct gdx_topo *t;
	char why[256] = "";
	int ret;

	ret = gdx_topo_load(file, &t, why, sizeof(why));
	if (ret) {
		if (file) {
			GDX_WARN("NCCL_GDX_TOPO_FILE=%s: %s", file, why[0] ? why : strerror(-ret));
			return ret;
		}
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "no topology (%s): rail ids unknown, nothing fused "
			 "automatically",
			 why[0] ? why : strerror(-ret));
		return 0;
	}
	for (int i = 0; i < gdx_ndevs; i++)
		gdx_devs[i].rail_id = gdx_topo_group_of(t, gdx_devs[i].ibdev);
	if (!rails || !*rails || !strcmp(rails, "auto"))
		gdx_devs_auto_rails(t);
	gdx_topo_free(t);
	return 0;
}

int gdx_devs_gdr(void)
{
	const char *file =
		gdx_params.topo_file && *gdx_params.topo_file ? gdx_params.topo_file : NULL;
	struct gdx_gdr_opts o = {.xml = file};
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
	if (gdx_gdr_probe_init(&o, &probe, why, sizeof(why))) {
		GDX_WARN("GPUDirect RDMA probe failed (%s): host memory only", why);
		return policy == GDX_GDR_POLICY_ON ? -ENODEV : 0;
	}
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
		if (v.warn)
			GDX_WARN("%s", v.line);
		else
			GDX_INFO(NCCL_INIT | NCCL_NET, "%s", v.line);
		if (v.mode == GDX_GDR_BROKEN)
			ret = -ENODEV;
	}
	gdx_gdr_probe_free(probe);
	return ret;
}

int gdx_vdevs_from_spec(const char *spec)
{
	const char *s = spec;

	if (!spec || !*spec || !strcmp(spec, "off") || !strcmp(spec, "auto"))
		return 0; /* "auto": see gdx_devs_auto_rails() */
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		int ret;

		if (len == 0) {
			GDX_WARN("NCCL_GDX_RAILS=\"%s\": empty group", spec);
			return -EINVAL;
		}
		ret = gdx_vdev_parse_group(s, len);
		if (ret)
			return ret;
		s += len + (comma ? 1 : 0);
	}
	return 0;
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
