/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA probing (gdx_gdr.h): the facts, gathered once. Every file
 * is read under a sysfs root so fixtures stand in for /sys; the CUDA driver
 * is opened with dlopen so the plugin runs, and says why it stages, where
 * there is none. What the facts mean is gdx_gdr_verdict.c's.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "sys/gdx_env.h"
#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_c2c.h"
#include "gdr/gdx_gdr_facts.h"
#include "topo/gdx_topo_nccl.h"
#include "sys/gdx_sysfs.h"
#include <nccl/net_common.h>

/* CUDA driver API values (cuda.h, CUDA 13.0), so no CUDA header is needed. */
#define GDX_CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED 116
#define GDX_CU_ATTR_DMA_BUF_SUPPORTED	      124
#define GDX_CU_ATTR_GDR_WITH_CUDA_VMM	      110
#define GDX_CU_ERROR_NO_DEVICE		      100

#define GDX_PCI_EXT_CAP_START 0x100
#define GDX_PCI_EXT_CAP_END   0x1000
#define GDX_PCI_EXT_CAP_ACS   0x000d
#define GDX_PCI_ACS_CTRL      6 /* offset of ACS Control in the capability */

/* ---- names ---- */

void gdx_gdr_acs_bits(unsigned ctrl, char *buf, size_t len)
{
	static const char *const names[] = {"SrcValid",	   "TransBlk",	 "ReqRedir",   "CmpltRedir",
					    "UpstreamFwd", "EgressCtrl", "DirectTrans"};
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(ctrl & (1u << i)) || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", names[i]);
	}
}

/* ---- DMA-BUF ---- */

int gdx_gdr_dmabuf_probe(struct ibv_pd *pd)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	if (mr) {
		ibv_dereg_mr(mr);
		return 0;
	}
	return errno ? errno : EINVAL;
}

bool gdx_gdr_dmabuf_errno_ok(int err)
{
	return err != EOPNOTSUPP && err != EPROTONOSUPPORT;
}

/* ---- small helpers ---- */

void gdx_gdr_setf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* A PCI bus id "dddd:bb:dd.f" in canonical lower case; false when s is not one. */
static bool gdx_gdr_busid(const char *s, char out[GDX_TOPO_PCI_LEN])
{
	unsigned dom, bus, dev, fn;
	int end = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &end) != 4 || s[end] ||
	    !strchr(s, '.') || bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	/* VMD puts devices in domains above 0xffff: five digits still fit. */
	snprintf(out, GDX_TOPO_PCI_LEN, "%04x:%02x:%02x.%x", dom & 0xfffff, bus, dev, fn);
	return dom <= 0xfffff;
}

/* A PCI function's file, as a path inside the sysfs tree p->sysfs_root. */
static void gdx_gdr_pci_file(const char *bdf, const char *file, char *path, size_t len)
{
	snprintf(path, len, "bus/pci/devices/%s/%s", bdf, file);
}

/* ---- host facts ---- */

static const struct {
	const char *marker, *name;
} gdx_gdr_peermem_markers[] = {
	/* nvidia_peermem first: the in-driver module of every current driver. */
	{"module/nvidia_peermem/version", "nvidia_peermem"},
	{"kernel/mm/memory_peers/nv_mem/version", "nv_peer_mem"},
	{"kernel/mm/memory_peers/nv_mem_nc/version", "nv_peer_mem"},
};

static void gdx_gdr_probe_peermem(struct gdx_gdr_probe *p)
{
	for (size_t i = 0; i < sizeof(gdx_gdr_peermem_markers) / sizeof(gdx_gdr_peermem_markers[0]);
	     i++) {
		if (gdx_sysfs_exists_in(p->sysfs_root, gdx_gdr_peermem_markers[i].marker)) {
			p->peermem = true;
			snprintf(p->peermem_name, sizeof(p->peermem_name), "%s",
				 gdx_gdr_peermem_markers[i].name);
			snprintf(p->peermem_marker, sizeof(p->peermem_marker), "%s",
				 gdx_gdr_peermem_markers[i].marker);
			return;
		}
	}
	snprintf(p->peermem_name, sizeof(p->peermem_name), "nvidia_peermem");
}

static void gdx_gdr_set_kernel(struct gdx_gdr_probe *p, const char *release)
{
	snprintf(p->kernel, sizeof(p->kernel), "%s", release);
	if (sscanf(release, "%d.%d", &p->kernel_major, &p->kernel_minor) != 2)
		p->kernel_major = p->kernel_minor = 0;
}

bool gdx_gdr_kernel_dmabuf(const struct gdx_gdr_probe *p)
{
	/* 0.0 is unknown: let the NIC's probe decide. */
	return p->kernel_major == 0 || p->kernel_major > 5 ||
	       (p->kernel_major == 5 && p->kernel_minor >= 12);
}

/* ---- CUDA through the driver library ---- */

typedef int (*gdx_cu_init_fn)(unsigned flags);
typedef int (*gdx_cu_int_fn)(int *value);
typedef int (*gdx_cu_get_fn)(int *dev, int ordinal);
typedef int (*gdx_cu_busid_fn)(char *buf, int len, int dev);
typedef int (*gdx_cu_attr_fn)(int *value, int attr, int dev);

struct gdx_cu {
	gdx_cu_init_fn init;
	gdx_cu_int_fn driver_version, device_count;
	gdx_cu_get_fn device_get;
	gdx_cu_busid_fn bus_id;
	gdx_cu_attr_fn attr;
};

static int gdx_gdr_add_gpu(struct gdx_gdr_probe *p, const char *pci);

static int gdx_gdr_cu_attr(const struct gdx_cu *cu, int attr, int dev)
{
	int v = -1;

	/* Drivers older than the attribute say CUDA_ERROR_INVALID_VALUE: unknown. */
	return cu->attr(&v, attr, dev) == 0 ? !!v : -1;
}

static void gdx_gdr_probe_cuda(struct gdx_gdr_probe *p, const char *lib)
{
	struct gdx_cu cu;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	int n = 0, ret;

	if (!h) {
		p->cuda = GDX_GDR_CUDA_NONE;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "%s cannot be loaded", lib);
		return;
	}
	*(void **)&cu.init = dlsym(h, "cuInit");
	*(void **)&cu.driver_version = dlsym(h, "cuDriverGetVersion");
	*(void **)&cu.device_count = dlsym(h, "cuDeviceGetCount");
	*(void **)&cu.device_get = dlsym(h, "cuDeviceGet");
	*(void **)&cu.bus_id = dlsym(h, "cuDeviceGetPCIBusId");
	*(void **)&cu.attr = dlsym(h, "cuDeviceGetAttribute");
	if (!cu.init || !cu.driver_version || !cu.device_count || !cu.device_get || !cu.bus_id ||
	    !cu.attr) {
		p->cuda = GDX_GDR_CUDA_ERROR;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why),
			     "%s lacks the driver API (not the NVIDIA driver's library?)", lib);
		dlclose(h);
		return;
	}
	/* From here the library stays loaded: unloading CUDA once it is
	 * initialized is not safe, and in NCCL's process it is loaded anyway. */
	if (cu.driver_version(&p->cuda_version))
		p->cuda_version = 0;
	ret = cu.init(0);
	if (ret == GDX_CU_ERROR_NO_DEVICE)
		ret = 0; /* a driver on a machine without GPU: zero devices */
	else if (ret == 0)
		ret = cu.device_count(&n);
	if (ret) {
		p->cuda = GDX_GDR_CUDA_ERROR;
		p->cuda_err = ret;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "cuInit failed with CUDA error %d",
			     ret);
		return;
	}
	p->cuda = GDX_GDR_CUDA_OK;
	for (int i = 0; i < n; i++) {
		char bus[64], pci[GDX_TOPO_PCI_LEN];
		int dev, g;

		if (cu.device_get(&dev, i) || cu.bus_id(bus, (int)sizeof(bus), dev) ||
		    !gdx_gdr_busid(bus, pci))
			continue;
		g = gdx_gdr_add_gpu(p, pci);
		if (g < 0)
			break;
		p->gpus[g].cuda_index = i;
		p->gpus[g].gdr_attr =
			gdx_gdr_cu_attr(&cu, GDX_CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED, dev);
		p->gpus[g].dmabuf_attr = gdx_gdr_cu_attr(&cu, GDX_CU_ATTR_DMA_BUF_SUPPORTED, dev);
		p->gpus[g].vmm_gdr_attr = gdx_gdr_cu_attr(&cu, GDX_CU_ATTR_GDR_WITH_CUDA_VMM, dev);
	}
}

/* ---- GPUs and NICs ---- */

static unsigned long long gdx_gdr_busid_key(const char *pci)
{
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;

	sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
	return ((unsigned long long)dom << 24) | (bus << 16) | (dev << 8) | fn;
}

static void gdx_gdr_gpu_init(struct gdx_gdr_gpu *g, const char *pci)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->pci, sizeof(g->pci), "%s", pci);
	g->cuda_index = -1;
	g->gdr_attr = -1;
	g->dmabuf_attr = -1;
	g->vmm_gdr_attr = -1;
	g->c2c = -1;
	g->topo = -1;
}

/* Index of the GPU with that bus id, added in bus id order when new. Paths
 * are not computed yet when GPUs are added, so indices may still move. */
static int gdx_gdr_add_gpu(struct gdx_gdr_probe *p, const char *pci)
{
	unsigned long long key = gdx_gdr_busid_key(pci);
	int i = gdx_gdr_find_gpu(p, pci);

	if (i >= 0)
		return i;
	if (p->ngpus == GDX_GDR_MAX_GPUS)
		return -ENOSPC;
	for (i = p->ngpus; i > 0 && gdx_gdr_busid_key(p->gpus[i - 1].pci) > key; i--)
		p->gpus[i] = p->gpus[i - 1];
	gdx_gdr_gpu_init(&p->gpus[i], pci);
	p->ngpus++;
	return i;
}

int gdx_gdr_find_gpu(const struct gdx_gdr_probe *p, const char *pci)
{
	for (int i = 0; pci && i < p->ngpus; i++)
		if (!strcasecmp(p->gpus[i].pci, pci))
			return i;
	return -1;
}

int gdx_gdr_find_nic(const struct gdx_gdr_probe *p, const char *ibdev)
{
	for (int i = 0; ibdev && i < p->nnics; i++)
		if (!strcmp(p->nics[i].name, ibdev))
			return i;
	return -1;
}

/* The IOMMU domain type of a PCI device: its iommu_group's "type". */
static enum gdx_gdr_iommu gdx_gdr_iommu_of(const struct gdx_gdr_probe *p, const char *bdf,
					   char *type, size_t len)
{
	char path[PATH_MAX];

	type[0] = '\0';
	if (!bdf[0])
		return GDX_GDR_IOMMU_OFF;
	gdx_gdr_pci_file(bdf, "iommu_group", path, sizeof(path));
	if (!gdx_sysfs_exists_in(p->sysfs_root, path))
		return GDX_GDR_IOMMU_OFF;
	gdx_gdr_pci_file(bdf, "iommu_group/type", path, sizeof(path));
	/* Kernels before 5.11 have no type file: the mode is on the command line. */
	if (gdx_sysfs_read_line_in(p->sysfs_root, path, type, len) || !type[0])
		return GDX_GDR_IOMMU_UNKNOWN;
	return strcmp(type, "identity") ? GDX_GDR_IOMMU_TRANSLATING : GDX_GDR_IOMMU_IDENTITY;
}

/* BAR1 size from the "resource" file: one "start end flags" line per BAR. */
static uint64_t gdx_gdr_bar1_of(const struct gdx_gdr_probe *p, const char *bdf)
{
	unsigned long long start, end, flags;
	char path[PATH_MAX], text[256], *line;
	ssize_t n;

	gdx_gdr_pci_file(bdf, "resource", path, sizeof(path));
	n = gdx_sysfs_read_in(p->sysfs_root, path, text, sizeof(text) - 1);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* NVIDIA GPUs: BAR0 registers, BAR1 the framebuffer aperture: line 2 */
	line = strchr(text, '\n');
	if (line && sscanf(line + 1, "%llx %llx %llx", &start, &end, &flags) == 3 && start &&
	    end > start)
		return end - start + 1;
	return 0;
}

/* The PCI function behind an RDMA device: the "device" link of its class
 * entry, when it leads to a PCI device (rxe and siw have none). */
static void gdx_gdr_nic_pci(const struct gdx_gdr_probe *p, const char *ibdev,
			    char out[GDX_TOPO_PCI_LEN])
{
	char link[PATH_MAX], real[PATH_MAX];
	const char *base;

	out[0] = '\0';
	snprintf(link, sizeof(link), "class/infiniband/%s/device", ibdev);
	if (gdx_sysfs_realpath_in(p->sysfs_root, link, real, sizeof(real)) ||
	    !strstr(real, "/devices/pci"))
		return;
	base = strrchr(real, '/');
	if (base && !gdx_gdr_busid(base + 1, out))
		out[0] = '\0';
}

static int gdx_gdr_add_nic(struct gdx_gdr_probe *p, const char *ibdev)
{
	struct gdx_gdr_nic *n;
	int i = gdx_gdr_find_nic(p, ibdev);

	if (i >= 0)
		return i;
	if (p->nnics == GDX_GDR_MAX_NICS)
		return -ENOSPC;
	n = &p->nics[p->nnics];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", ibdev);
	n->dmabuf = -1;
	n->topo = -1;
	return p->nnics++;
}

static int gdx_gdr_cmp_name(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Every RDMA device of the sysfs tree, mlx5_9 before mlx5_10. */
static void gdx_gdr_list_nics(struct gdx_gdr_probe *p)
{
	char *names[GDX_GDR_MAX_NICS];
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = gdx_sysfs_opendir_in(p->sysfs_root, "class/infiniband");
	if (!d)
		return;
	while ((e = readdir(d)) && n < GDX_GDR_MAX_NICS) {
		if (e->d_name[0] == '.')
			continue;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), gdx_gdr_cmp_name);
	for (int i = 0; i < n; i++) {
		gdx_gdr_add_nic(p, names[i]);
		free(names[i]);
	}
}

/* ---- the path between a GPU and a NIC ---- */

#define GDX_GDR_CHAIN_MAX 16

struct gdx_gdr_chain {
	char host[32]; /* "pci0000:15": the root bus */
	char bdf[GDX_GDR_CHAIN_MAX][GDX_TOPO_PCI_LEN];
	int n; /* the device itself last */
};

/*
 * The PCI functions from the root bus down to bdf, read from the path that
 * <root>/bus/pci/devices/<bdf> resolves to inside the tree, which nests
 * every device below its bridges:
 * ".../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:1b:00.0".
 */
static int gdx_gdr_chain_of(const struct gdx_gdr_probe *p, const char *bdf, struct gdx_gdr_chain *c)
{
	char link[PATH_MAX], real[PATH_MAX], *s, *tok, *save;

	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(link, sizeof(link), "bus/pci/devices/%s", bdf);
	ret = gdx_sysfs_realpath_in(p->sysfs_root, link, real, sizeof(real));
	if (ret)
		return ret;
	s = strstr(real, "/devices/pci");
	if (!s)
		return -EINVAL;
	s += strlen("/devices/");
	for (tok = strtok_r(s, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!c->host[0] && !strncmp(tok, "pci", 3))
			snprintf(c->host, sizeof(c->host), "%s", tok);
		else if (c->n < GDX_GDR_CHAIN_MAX && gdx_gdr_busid(tok, c->bdf[c->n]))
			c->n++;
	}
	return c->n && !strcmp(c->bdf[c->n - 1], bdf) ? 0 : -EINVAL;
}

/*
 * ACS Control of one bridge from its config space: -1 when the extended
 * space cannot be read (an unprivileged read returns only the first 64 bytes),
 * 0 when it has no ACS capability.
 */
static int gdx_gdr_acs_ctrl(const struct gdx_gdr_probe *p, const char *bdf)
{
	unsigned char cfg[GDX_PCI_EXT_CAP_END];
	char path[PATH_MAX];
	unsigned off = GDX_PCI_EXT_CAP_START;
	ssize_t n;

	gdx_gdr_pci_file(bdf, "config", path, sizeof(path));
	n = gdx_sysfs_read_in(p->sysfs_root, path, cfg, sizeof(cfg));
	if (n < 256)
		return -1;
	/* A conventional function has 256 bytes and no extended capabilities. */
	for (int hops = 0; hops < 1024 && off + 8 <= (unsigned)n; hops++) {
		unsigned hdr = cfg[off] | cfg[off + 1] << 8 | cfg[off + 2] << 16 |
			       (unsigned)cfg[off + 3] << 24;

		if (hdr == 0 || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == GDX_PCI_EXT_CAP_ACS)
			return cfg[off + GDX_PCI_ACS_CTRL] | cfg[off + GDX_PCI_ACS_CTRL + 1] << 8;
		if ((hdr >> 20) < GDX_PCI_EXT_CAP_START)
			break;
		off = (hdr >> 20) & 0xffc;
	}
	return 0;
}

static void gdx_gdr_acs_bridge(const struct gdx_gdr_probe *p, const char *bdf,
			       struct gdx_gdr_path *path)
{
	int ctrl = gdx_gdr_acs_ctrl(p, bdf);

	path->nbridges++;
	if (path->acs == GDX_GDR_ACS_ON)
		return;
	if (ctrl < 0) {
		if (path->acs != GDX_GDR_ACS_UNKNOWN)
			snprintf(path->acs_bridge, sizeof(path->acs_bridge), "%s", bdf);
		path->acs = GDX_GDR_ACS_UNKNOWN;
	} else if (ctrl & GDX_GDR_ACS_BAD) {
		path->acs = GDX_GDR_ACS_ON;
		path->acs_ctrl = (unsigned)ctrl;
		snprintf(path->acs_bridge, sizeof(path->acs_bridge), "%s", bdf);
	} else if (path->acs == GDX_GDR_ACS_NA) {
		path->acs = GDX_GDR_ACS_OFF;
	}
}

/*
 * ACS on every bridge a peer-to-peer transaction between GPU and NIC passes:
 * below the port where their chains meet (that port included), or, when they
 * do not meet below the root complex, every bridge of both chains.
 */
static void gdx_gdr_acs_path(const struct gdx_gdr_probe *p, const char *gpu, const char *nic,
			     struct gdx_gdr_path *path)
{
	struct gdx_gdr_chain g, n;
	int common = 0;

	if (!nic[0] || gdx_gdr_chain_of(p, gpu, &g) || gdx_gdr_chain_of(p, nic, &n))
		return;
	if (!strcmp(g.host, n.host))
		while (common < g.n - 1 && common < n.n - 1 &&
		       !strcmp(g.bdf[common], n.bdf[common]))
			common++;
	if (common)
		gdx_gdr_acs_bridge(p, g.bdf[common - 1], path);
	for (int i = common; i < g.n - 1; i++)
		gdx_gdr_acs_bridge(p, g.bdf[i], path);
	for (int i = common; i < n.n - 1; i++)
		gdx_gdr_acs_bridge(p, n.bdf[i], path);
	if (path->acs == GDX_GDR_ACS_NA && path->nbridges == 0)
		path->acs = GDX_GDR_ACS_OFF; /* both right on the root bus */
}

const struct gdx_gdr_path *gdx_gdr_path(const struct gdx_gdr_probe *p, int gpu, int nic)
{
	if (gpu < 0 || gpu >= p->ngpus || nic < 0 || nic >= p->nnics || !p->paths)
		return NULL;
	return &p->paths[(size_t)gpu * GDX_GDR_MAX_NICS + (size_t)nic];
}

static void gdx_gdr_fill_path(struct gdx_gdr_probe *p, const struct gdx_topo *t, int g, int n)
{
	struct gdx_gdr_path *path = &p->paths[(size_t)g * GDX_GDR_MAX_NICS + (size_t)n];

	memset(path, 0, sizeof(*path));
	path->cls = t && p->gpus[g].topo >= 0 && p->nics[n].topo >= 0
			    ? gdx_topo_path(t, p->gpus[g].topo, p->nics[n].topo)
			    : GDX_PATH_UNKNOWN;
	gdx_gdr_acs_path(p, p->gpus[g].pci, p->nics[n].pci, path);
}

static void gdx_gdr_fill_nic(struct gdx_gdr_probe *p, const struct gdx_topo *t, int n)
{
	struct gdx_gdr_nic *nic = &p->nics[n];

	gdx_gdr_nic_pci(p, nic->name, nic->pci);
	if (t) {
		nic->topo = gdx_topo_find_nic(t, nic->name);
		if (!nic->pci[0] && nic->topo >= 0)
			snprintf(nic->pci, sizeof(nic->pci), "%s", gdx_topo_nic(t, nic->topo)->pci);
	}
	nic->iommu = gdx_gdr_iommu_of(p, nic->pci, nic->iommu_type, sizeof(nic->iommu_type));
	for (int g = 0; p->paths && g < p->ngpus; g++)
		gdx_gdr_fill_path(p, t, g, n);
}

/* ---- the facts file (tests; gdx_gdr_facts.h) ---- */

/* What the callbacks fill; GPUs of the file are CUDA's, in the file's order. */
struct gdx_gdr_fact_ctx {
	struct gdx_gdr_probe *p;
	int ncuda;
};

static void gdx_gdr_fact_kernel(void *arg, const char *release)
{
	gdx_gdr_set_kernel(((struct gdx_gdr_fact_ctx *)arg)->p, release);
}

static void gdx_gdr_fact_memlock(void *arg, uint64_t bytes)
{
	struct gdx_gdr_probe *p = ((struct gdx_gdr_fact_ctx *)arg)->p;

	p->memlock = bytes == GDX_GDR_FACT_UNLIMITED ? GDX_GDR_MEMLOCK_INFINITY : bytes;
	p->memlock_unknown = false;
}

static void gdx_gdr_fact_cuda(void *arg, int version, int err)
{
	struct gdx_gdr_probe *p = ((struct gdx_gdr_fact_ctx *)arg)->p;

	if (err) {
		p->cuda = GDX_GDR_CUDA_ERROR;
		p->cuda_err = err;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "cuInit failed with CUDA error %d",
			     err);
	} else if (version) {
		p->cuda = GDX_GDR_CUDA_OK;
		p->cuda_version = version;
	} else {
		p->cuda = GDX_GDR_CUDA_NONE;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "libcuda.so.1 cannot be loaded");
	}
}

static int gdx_gdr_fact_gpu(void *arg, const char *busid, int gdr, int dmabuf, int c2c)
{
	struct gdx_gdr_fact_ctx *fc = arg;
	char pci[GDX_TOPO_PCI_LEN];
	int i;

	if (!gdx_gdr_busid(busid, pci) || (i = gdx_gdr_add_gpu(fc->p, pci)) < 0)
		return -EINVAL;
	fc->p->gpus[i].cuda_index = fc->ncuda++;
	if (gdr >= 0)
		fc->p->gpus[i].gdr_attr = gdr;
	if (dmabuf >= 0)
		fc->p->gpus[i].dmabuf_attr = dmabuf;
	if (c2c >= 0)
		fc->p->gpus[i].c2c = c2c;
	return 0;
}

static int gdx_gdr_fact_dmabuf(void *arg, const char *nic, int err)
{
	struct gdx_gdr_probe *p = ((struct gdx_gdr_fact_ctx *)arg)->p;
	int i = gdx_gdr_add_nic(p, nic);

	if (i < 0)
		return -EINVAL;
	p->nics[i].dmabuf_errno = err;
	p->nics[i].dmabuf = gdx_gdr_dmabuf_errno_ok(err);
	return 0;
}

static void gdx_gdr_fact_hostname(void *arg, const char *name)
{
	struct gdx_gdr_probe *p = ((struct gdx_gdr_fact_ctx *)arg)->p;

	snprintf(p->hostname, sizeof(p->hostname), "%s", name);
}

static void gdx_gdr_fact_nccl_here(void *arg)
{
	((struct gdx_gdr_fact_ctx *)arg)->p->nccl_here = true;
}

static void gdx_gdr_fact_nccl_version(void *arg, int code)
{
	((struct gdx_gdr_fact_ctx *)arg)->p->rule.version = code;
}

static int gdx_gdr_read_facts(struct gdx_gdr_probe *p, const char *file, bool in_tree, char *why,
			      size_t why_len)
{
	static const struct gdx_gdr_fact_ops ops = {
		.kernel = gdx_gdr_fact_kernel,
		.memlock = gdx_gdr_fact_memlock,
		.cuda = gdx_gdr_fact_cuda,
		.gpu = gdx_gdr_fact_gpu,
		.dmabuf = gdx_gdr_fact_dmabuf,
		.hostname = gdx_gdr_fact_hostname,
		.nccl_here = gdx_gdr_fact_nccl_here,
		.nccl_version = gdx_gdr_fact_nccl_version,
	};
	struct gdx_gdr_fact_ctx fc = {p, 0};

	p->from_facts = true;
	if (p->saved) {
		/* A saved tree's facts: what they do not say is unknown. */
		p->cuda = GDX_GDR_CUDA_UNKNOWN;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "not in the tree's facts");
		p->memlock_unknown = true;
	} else {
		gdx_gdr_fact_cuda(&fc, 0, 0); /* no CUDA unless the file says so */
	}
	return gdx_gdr_facts_read(in_tree ? p->sysfs_root : NULL, file, &ops, &fc, why, why_len);
}

/* ---- init ---- */

/* Each GPU's NVLink-C2C attachment, from NVML (gdx_gdr_c2c.h). */
static void gdx_gdr_probe_c2c(struct gdx_gdr_probe *p, const char *lib)
{
	const char *pci[GDX_GDR_MAX_GPUS];
	int c2c[GDX_GDR_MAX_GPUS];

	for (int g = 0; g < p->ngpus; g++) {
		pci[g] = p->gpus[g].pci;
		c2c[g] = p->gpus[g].c2c;
	}
	gdx_gdr_c2c_probe(lib, pci, p->ngpus, c2c);
	for (int g = 0; g < p->ngpus; g++)
		p->gpus[g].c2c = c2c[g];
}

static void gdx_gdr_probe_live(struct gdx_gdr_probe *p, const struct gdx_gdr_opts *o)
{
	struct utsname u;
	struct rlimit rl;

	if (uname(&u) == 0)
		gdx_gdr_set_kernel(p, u.release);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		p->memlock = rl.rlim_cur;
	gdx_gdr_probe_cuda(p, o->cuda_lib ? o->cuda_lib : "libcuda.so.1");
	gdx_gdr_probe_c2c(p, o->nvml_lib);
}

int gdx_gdr_probe_init(const struct gdx_gdr_opts *o, struct gdx_gdr_probe **p_out, char *why,
		       size_t why_len)
{
	static const struct gdx_gdr_opts none;
	struct gdx_topo_opts to = {.fd = -1};
	struct gdx_topo *owned = NULL;
	const struct gdx_topo *t;
	struct gdx_gdr_probe *p;
	int ret = 0;

	o = o ? o : &none;
	to.xml = o->xml;
	to.homes = o->homes;
	to.nhomes = o->nhomes;
	to.nccl_file = gdx_topo_nccl_file(o->xml); /* this machine's, as NCCL sees it */
	gdx_gdr_setf(why, why_len, "%s", "");
	p = calloc(1, sizeof(*p));
	if (!p) {
		gdx_gdr_setf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s",
		 o->sysfs_root ? o->sysfs_root : gdx_sysfs_root());
	p->memlock = GDX_GDR_MEMLOCK_INFINITY;
	p->saved = o->saved;
	gdx_gdr_rule_init(&p->rule, o->nccl_version);
	gdx_gdr_probe_peermem(p);

	t = o->topo;
	if (!t && o->saved && !o->xml)
		gdx_gdr_setf(p->topo_why, sizeof(p->topo_why),
			     "a saved tree without topo.xml; give its hwloc XML");
	else if (!t && gdx_topo_load_opts(&to, &owned, p->topo_why, sizeof(p->topo_why)) == 0)
		t = owned;
	p->have_topo = t != NULL;
	for (int i = 0; t && i < gdx_topo_ngpus(t); i++)
		if (gdx_gdr_add_gpu(p, gdx_topo_gpu(t, i)->pci) < 0)
			break;
	gdx_gdr_list_nics(p);
	if (o->facts) {
		ret = gdx_gdr_read_facts(p, o->facts, o->facts_in_tree, why, why_len);
	} else if (o->saved) {
		/* A saved tree without facts: nothing of this machine stands in. */
		p->cuda = GDX_GDR_CUDA_UNKNOWN;
		gdx_gdr_setf(p->cuda_why, sizeof(p->cuda_why), "a saved tree without facts");
		p->memlock_unknown = true;
	} else {
		gdx_gdr_probe_live(p, o);
	}
	if (ret)
		goto out;

	p->paths = calloc((size_t)p->ngpus * GDX_GDR_MAX_NICS + 1, sizeof(*p->paths));
	if (!p->paths) {
		gdx_gdr_setf(why, why_len, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (int g = 0; g < p->ngpus; g++) {
		struct gdx_gdr_gpu *gpu = &p->gpus[g];

		gpu->topo = t ? gdx_topo_find_gpu(t, gpu->pci) : -1;
		/* NCCL's topology file can say C2C where the driver did not */
		if (gpu->c2c < 0 && gpu->topo >= 0)
			gpu->c2c = gdx_topo_gpu(t, gpu->topo)->c2c;
		gpu->iommu =
			gdx_gdr_iommu_of(p, gpu->pci, gpu->iommu_type, sizeof(gpu->iommu_type));
		gpu->bar1 = gdx_gdr_bar1_of(p, gpu->pci);
	}
	for (int n = 0; n < p->nnics; n++)
		gdx_gdr_fill_nic(p, t, n);
out:
	gdx_topo_free(owned);
	if (ret) {
		gdx_gdr_probe_free(p);
		return ret;
	}
	*p_out = p;
	return 0;
}

void gdx_gdr_probe_free(struct gdx_gdr_probe *p)
{
	if (!p)
		return;
	free(p->paths);
	free(p);
}

int gdx_gdr_probe_nic(struct gdx_gdr_probe *p, const char *ibdev, struct ibv_pd *pd)
{
	int n = gdx_gdr_find_nic(p, ibdev);

	if (n < 0) {
		n = gdx_gdr_add_nic(p, ibdev);
		if (n < 0)
			return n;
		/* No topology kept: its path classes stay unknown. */
		gdx_gdr_fill_nic(p, NULL, n);
	}
	if (pd) {
		p->nics[n].dmabuf_errno = gdx_gdr_dmabuf_probe(pd);
		p->nics[n].dmabuf = gdx_gdr_dmabuf_errno_ok(p->nics[n].dmabuf_errno);
	}
	return n;
}
