/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA detection on real rxe devices, in the VM (no GPU, no CUDA
 * driver, no peer-memory module): the DMA-BUF probe on a real protection
 * domain, the live probe's verdict and line for every rxe, and gdx-doctor
 * check run as an operator would, its report and exit status.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_facts.h"
#include "gdr/gdx_gdr_verdict.h"
#include <nccl/net_common.h>

#include "gdx_test.h"

#define ASSERT_STR_EQ(a, b)                                                                    \
	do {                                                                                   \
		const char *_x = (a), *_y = (b);                                               \
		if (strcmp(_x, _y))                                                            \
			gdx_test_fail(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"", #a, _x, _y); \
	} while (0)

struct rxe {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

static void rxe_open(const char *name, struct rxe *r)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	ASSERT(list != NULL);
	r->ctx = NULL;
	for (int i = 0; list[i] && !r->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!r->ctx)
		gdx_test_fail(__FILE__, __LINE__, "cannot open %s", name);
	r->pd = ibv_alloc_pd(r->ctx);
	ASSERT(r->pd != NULL);
}

static void rxe_close(struct rxe *r)
{
	ibv_dealloc_pd(r->pd);
	ibv_close_device(r->ctx);
}

/* NCCL's probe, fd -1: rxe has no dma-buf support, so the answer is no. */
static void test_dmabuf_probe_rxe(void)
{
	struct rxe r;
	int err;

	rxe_open("rxe0", &r);
	err = gdx_gdr_dmabuf_probe(r.pd);
	if (gdx_gdr_dmabuf_errno_ok(err)) {
		/* A kernel whose rxe takes dma-buf: worth knowing, not a failure. */
		printf("# rxe0 accepts dma-buf registrations (probe errno %d, %s)\n", err,
		       strerror(err));
	} else {
		ASSERT(err == EOPNOTSUPP || err == EPROTONOSUPPORT);
		printf("# rxe0 refuses dma-buf: %s\n", strerror(err));
	}
	rxe_close(&r);
}

/* The live probe as init would run it: staged, and the line says why. */
static void test_live_verdicts(void)
{
	const char *names[] = {"rxe0", "rxe1", "rxe2", "rxe3"};
	struct gdx_gdr_probe *p;
	struct gdx_gdr_verdict v;
	char why[256], line[GDX_GDR_LINE_LEN];

	ASSERT_EQ(gdx_gdr_probe_init(NULL, &p, why, sizeof(why)), 0);
	ASSERT(!p->from_facts);
	ASSERT_EQ(p->cuda, GDX_GDR_CUDA_NONE);
	ASSERT_EQ(p->ngpus, 0);
	ASSERT(!p->peermem);
	ASSERT(p->nnics >= 4);
	for (int i = 0; i < 4; i++) {
		struct rxe r;
		int n;

		rxe_open(names[i], &r);
		n = gdx_gdr_probe_nic(p, names[i], r.pd);
		ASSERT(n >= 0);
		ASSERT_EQ(p->nics[n].pci[0], '\0'); /* virtual: no PCI function */
		ASSERT(p->nics[n].dmabuf >= 0);
		rxe_close(&r);

		ASSERT_EQ(gdx_gdr_nic_verdict(p, names[i], GDX_GDR_POLICY_AUTO, &v), 0);
		ASSERT_EQ(v.mode, GDX_GDR_STAGED);
		ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST);
		ASSERT(!v.warn);
		snprintf(line, sizeof(line),
			 "%s: staged through host memory: no NVIDIA GPU (no CUDA driver)",
			 names[i]);
		ASSERT_STR_EQ(v.line, line);
		ASSERT_EQ(gdx_gdr_nic_verdict(p, names[i], GDX_GDR_POLICY_ON, &v), 0);
		ASSERT_EQ(v.mode, GDX_GDR_BROKEN);
		ASSERT(v.warn);
	}
	gdx_gdr_probe_free(p);
}

/* build/tests/vm/gdr -> build/gdx-doctor */
static void doctor_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ASSERT(n > 0);
	exe[n] = '\0';
	snprintf(buf, len, "%s/../../gdx-doctor", dirname(exe));
}

/* Runs the doctor with env (VAR=VALUE, or -u VAR) first, as a job that
 * set NCCL_NET_PLUGIN to the plugin built beside it would; returns its exit
 * status, its output in out. */
static int doctor(const char *env, const char *args, char *out, size_t len)
{
	char cmd[2 * PATH_MAX + 256], path[PATH_MAX], plugin[PATH_MAX];
	size_t used = 0, r;
	int status;
	FILE *f;

	doctor_path(path, sizeof(path));
	ASSERT(access(path, X_OK) == 0);
	/* NCCL 2.21+ takes a path in NCCL_NET_PLUGIN (the NCCL in /usr/local/cuda) */
	snprintf(cmd, sizeof(cmd), "%s/libnccl-net-gdx.so", dirname(strdupa(path)));
	ASSERT(realpath(cmd, plugin) != NULL);
	/* env's options (-u) go before its first assignment: after one, the
	 * next word is the command */
	snprintf(cmd, sizeof(cmd), "env -u GDX_GDR_FACTS %s NCCL_NET_PLUGIN=%s %s %s 2>&1", env,
		 plugin, path, args);
	f = popen(cmd, "r");
	ASSERT(f != NULL);
	while (used + 1 < len && (r = fread(out + used, 1, len - used - 1, f)) > 0)
		used += r;
	out[used] = '\0';
	status = pclose(f);
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_doctor_check(void)
{
	static char out[1 << 17];
	int rc = doctor("-u NCCL_GDX_GDR", "check", out, sizeof(out));

	/* No GPU: host memory is the only path, so nothing is to be fixed. */
	ASSERT_EQ(rc, 0);
	{
		/* the header names the node, then what was judged */
		char host[256], head[300];

		ASSERT_EQ(gethostname(host, sizeof(host)), 0);
		host[sizeof(host) - 1] = 0;
		snprintf(head, sizeof(head), "gdx-doctor check: %s: this machine (", host);
		ASSERT_STR_CONTAINS(out, head);
	}
	ASSERT_STR_CONTAINS(out, "CUDA driver   none (libcuda.so.1 cannot be loaded)");
	ASSERT_STR_CONTAINS(out, "staged through host memory: no NVIDIA GPU (no CUDA driver)");
	ASSERT_STR_CONTAINS(out, "Result: healthy (exit 0)");
	for (int i = 0; i < 4; i++) {
		char row[64];

		snprintf(row, sizeof(row), "\n  rxe%d       1    ACTIVE   Ethernet", i);
		ASSERT_STR_CONTAINS(out, row);
		snprintf(row, sizeof(row), "\n  rxe%d       (none)        staged   HOST ", i);
		ASSERT_STR_CONTAINS(out, row);
	}
}

static void test_doctor_json_and_policy(void)
{
	static char out[1 << 17];

	ASSERT_EQ(doctor("-u NCCL_GDX_GDR", "check --json", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "\"status\": \"healthy\"");
	ASSERT_STR_CONTAINS(out, "\"cuda\": {\"state\": \"none\"");
	ASSERT_STR_CONTAINS(out, "\"verdict\": \"staged\", \"ptr_support\": [\"HOST\"]");
	/* GPUDirect RDMA required without a GPU: init would fail, the doctor says so. */
	ASSERT_EQ(doctor("NCCL_GDX_GDR=on", "check", out, sizeof(out)), 2);
	ASSERT_STR_CONTAINS(out, "[broken] rxe0: NCCL_GDX_GDR=on, but GPU memory cannot be "
				 "registered: no NVIDIA GPU (no CUDA driver)");
}

GDX_TESTS_MAIN(TEST(test_dmabuf_probe_rxe, 30), TEST(test_live_verdicts, 60),
	       TEST(test_doctor_check, 120), TEST(test_doctor_json_and_policy, 120))
