/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor top: each process's NIC ports' counters, as the kernel keeps
 * them (retransmits, sequence errors, RNR NAKs: what the device reports),
 * from the NIC slots of its live file (gdx_qpstat.h): per QP counter bound
 * to the process's QPs where the kernel allowed it, else the port's totals.
 */
#include <stdio.h>
#include <string.h>

#include "stats/gdx_qpstat.h"

#include "tools/doctor/gdx_doctor.h"

/* Whether NIC slot k of p names a port an earlier slot of p names too
 * (escaped as how shows it): shown once. */
static bool top_nic_dup(const struct live_proc *p, int k, enum gdx_escape how)
{
	char a[GDX_ESCAPE_LEN(sizeof(p->nics[0].ibdev))], b[sizeof(a)];

	gdx_escape(how, p->nics[k].ibdev, a, sizeof(a));
	for (int j = 0; j < k; j++) {
		gdx_escape(how, p->nics[j].ibdev, b, sizeof(b));
		if (p->nics[j].port == p->nics[k].port && !strcmp(a, b))
			return true;
	}
	return false;
}

/* Whether counter i of n has the name (escaped as how prints it) of one
 * before it: two names that differ only in bytes that are not UTF-8 print
 * alike, and a JSON object holds a name once. */
static bool top_counter_dup(const struct gdx_live_nic *n, uint32_t i, enum gdx_escape how)
{
	char a[GDX_ESCAPE_LEN(GDX_LIVE_NIC_NAME)], b[sizeof(a)];

	gdx_escape(how, n->counters[i].name, a, sizeof(a));
	for (uint32_t j = 0; j < i; j++) {
		gdx_escape(how, n->counters[j].name, b, sizeof(b));
		if (!strcmp(a, b))
			return true;
	}
	return false;
}

static double top_nic_age_s(const struct gdx_live_nic *n, uint64_t now_ms)
{
	return n->read_ms && now_ms > n->read_ms ? (double)(now_ms - n->read_ms) / 1e3 : 0;
}

void top_nic_text(const struct live_proc *p, uint64_t now_ms)
{
	for (int k = 0; k < p->nnics; k++) {
		const struct gdx_live_nic *n = &p->nics[k];
		char nic[GDX_ESCAPE_LEN(sizeof(n->ibdev))];
		int shown = 0;

		if (top_nic_dup(p, k, GDX_ESCAPE_TEXT))
			continue;
		if (!k)
			printf("  NIC counters (the kernel's; not zero):\n");
		gdx_escape(GDX_ESCAPE_TEXT, n->ibdev, nic, sizeof(nic));
		printf("  %-12s %4u %s", nic, n->port, gdx_qpstat_source_name(n->source));
		if (n->source == GDX_LIVE_NIC_QP)
			printf(" %u, %u QP(s)%s", n->counter_id, n->qps,
			       n->unbound ? ", some not bound" : "");
		else if (n->source != GDX_LIVE_NIC_NONE)
			printf(" (every process's), %u QP(s) of this one's", n->qps);
		if (n->read_ms)
			printf(", read %.1f s ago", top_nic_age_s(n, now_ms));
		printf(":");
		for (uint32_t i = 0; i < n->ncounters; i++) {
			char name[GDX_ESCAPE_LEN(GDX_LIVE_NIC_NAME)];

			if (!n->counters[i].value || top_counter_dup(n, i, GDX_ESCAPE_TEXT))
				continue;
			gdx_escape(GDX_ESCAPE_TEXT, n->counters[i].name, name, sizeof(name));
			printf("%s%s %llu", shown++ % 6 ? ", " : "\n    ", name,
			       (unsigned long long)n->counters[i].value);
		}
		printf("%s\n", shown ? "" : " none");
	}
}

void top_nic_json(const struct live_proc *p, uint64_t now_ms)
{
	bool first = true;

	printf("\"nic_counters\": [");
	for (int k = 0; k < p->nnics; k++) {
		const struct gdx_live_nic *n = &p->nics[k];

		if (top_nic_dup(p, k, GDX_ESCAPE_TEXT))
			continue;
		printf("%s{\"nic\": ", first ? "" : ", ");
		first = false;
		json_str(stdout, n->ibdev);
		printf(", \"port\": %u, \"source\": \"%s\", \"counter_id\": %u, \"qps\": %u, "
		       "\"unbound_qps\": %u, \"read_age_s\": %.3f, \"counters\": {",
		       n->port, gdx_qpstat_source_name(n->source), n->counter_id, n->qps,
		       n->unbound, top_nic_age_s(n, now_ms));
		for (uint32_t i = 0, shown = 0; i < n->ncounters; i++) {
			if (top_counter_dup(n, i, GDX_ESCAPE_JSON))
				continue;
			printf("%s", shown++ ? ", " : "");
			json_str(stdout, n->counters[i].name);
			printf(": %llu", (unsigned long long)n->counters[i].value);
		}
		printf("}}");
	}
	printf("]");
}

void top_prom_id(const struct live_proc *p, char *out, size_t len)
{
	char host[GDX_ESCAPE_LEN(sizeof(p->hdr.host))], job[GDX_ESCAPE_LEN(sizeof(p->hdr.job))];
	char rank[16] = "";

	gdx_escape(GDX_ESCAPE_PROM_LABEL, p->hdr.host, host, sizeof(host));
	gdx_escape(GDX_ESCAPE_PROM_LABEL, p->hdr.job, job, sizeof(job));
	if (p->hdr.rank >= 0)
		snprintf(rank, sizeof(rank), "%d", (int)p->hdr.rank);
	snprintf(out, len, "pid=\"%d\",host=\"%s\",job_id=\"%s\",rank=\"%s\"", p->pid, host, job,
		 rank);
}

/* A port's totals, every process's: the RDMA netlink's or sysfs's. */
static bool top_nic_port_wide(const struct gdx_live_nic *n)
{
	return n->source != GDX_LIVE_NIC_NONE && n->source != GDX_LIVE_NIC_QP;
}

/* Whether NIC slots a of p and b of q are the same port of the same host,
 * as the labels show them. */
static bool top_nic_same_port(const struct live_proc *p, int a, const struct live_proc *q, int b)
{
	char x[GDX_ESCAPE_LEN(sizeof(p->nics[0].ibdev))], y[sizeof(x)];
	char hx[GDX_ESCAPE_LEN(sizeof(p->hdr.host))], hy[sizeof(hx)];

	if (p->nics[a].port != q->nics[b].port)
		return false;
	gdx_escape(GDX_ESCAPE_PROM_LABEL, p->nics[a].ibdev, x, sizeof(x));
	gdx_escape(GDX_ESCAPE_PROM_LABEL, q->nics[b].ibdev, y, sizeof(y));
	gdx_escape(GDX_ESCAPE_PROM_LABEL, p->hdr.host, hx, sizeof(hx));
	gdx_escape(GDX_ESCAPE_PROM_LABEL, q->hdr.host, hy, sizeof(hy));
	return !strcmp(x, y) && !strcmp(hx, hy);
}

/* Whether port-wide slot k of process i is the first of its port in s: a
 * port's totals are said once, whichever processes read them. */
static bool top_nic_port_first(const struct live_snap *s, int i, int k)
{
	for (int j = 0; j <= i; j++)
		for (int m = 0; m < (j == i ? k : s->procs[j].nnics); m++)
			if (top_nic_port_wide(&s->procs[j].nics[m]) &&
			    top_nic_same_port(&s->procs[j], m, &s->procs[i], k))
				return false;
	return true;
}

/* The freshest reading of that port's totals among every process's. */
static const struct gdx_live_nic *top_nic_port_freshest(const struct live_snap *s, int i, int k)
{
	const struct gdx_live_nic *best = &s->procs[i].nics[k];

	for (int j = i; j < s->nprocs; j++)
		for (int m = 0; m < s->procs[j].nnics; m++) {
			const struct gdx_live_nic *n = &s->procs[j].nics[m];

			if (top_nic_port_wide(n) && n->read_ms > best->read_ms &&
			    top_nic_same_port(&s->procs[j], m, &s->procs[i], k))
				best = n;
		}
	return best;
}

/* The counters of n, each named once, as samples of metric with labels
 * before them. */
static void top_nic_samples(const char *metric, const char *labels, const struct gdx_live_nic *n)
{
	for (uint32_t c = 0; c < n->ncounters; c++) {
		char name[GDX_ESCAPE_LEN(GDX_LIVE_NIC_NAME)];

		if (top_counter_dup(n, c, GDX_ESCAPE_PROM_LABEL))
			continue;
		gdx_escape(GDX_ESCAPE_PROM_LABEL, n->counters[c].name, name, sizeof(name));
		printf("%s{%s,counter=\"%s\"} %llu\n", metric, labels, name,
		       (unsigned long long)n->counters[c].value);
	}
}

void top_nic_prometheus(const struct live_snap *s)
{
	char id[TOP_PROM_ID_LEN], labels[TOP_PROM_ID_LEN + 256];

	printf("# HELP gdx_nic_counter_total A NIC port's counter as the kernel keeps it (rdma "
	       "statistic), counted on the process's QPs alone (a per QP counter).\n"
	       "# TYPE gdx_nic_counter_total counter\n");
	for (int i = 0; i < s->nprocs; i++) {
		const struct live_proc *p = &s->procs[i];

		top_prom_id(p, id, sizeof(id));
		for (int k = 0; k < p->nnics; k++) {
			const struct gdx_live_nic *n = &p->nics[k];
			char nic[GDX_ESCAPE_LEN(sizeof(n->ibdev))];

			if (n->source != GDX_LIVE_NIC_QP ||
			    top_nic_dup(p, k, GDX_ESCAPE_PROM_LABEL))
				continue;
			gdx_escape(GDX_ESCAPE_PROM_LABEL, n->ibdev, nic, sizeof(nic));
			snprintf(labels, sizeof(labels), "%s,nic=\"%s\",port=\"%u\",scope=\"qp\"",
				 id, nic, n->port);
			top_nic_samples("gdx_nic_counter_total", labels, n);
		}
	}
	/* A port's totals count every process's traffic: once per port, with
	 * no process's labels, so that a sum over them counts it once. */
	printf("# HELP gdx_nic_port_counter_total A NIC port's counter as the kernel keeps it "
	       "(rdma statistic, sysfs hw_counters): the port's totals, every process's, once "
	       "per port.\n# TYPE gdx_nic_port_counter_total counter\n");
	for (int i = 0; i < s->nprocs; i++) {
		const struct live_proc *p = &s->procs[i];
		char host[GDX_ESCAPE_LEN(sizeof(p->hdr.host))];

		gdx_escape(GDX_ESCAPE_PROM_LABEL, p->hdr.host, host, sizeof(host));
		for (int k = 0; k < p->nnics; k++) {
			const struct gdx_live_nic *n = &p->nics[k];
			char nic[GDX_ESCAPE_LEN(sizeof(n->ibdev))];

			if (!top_nic_port_wide(n) || !top_nic_port_first(s, i, k))
				continue;
			gdx_escape(GDX_ESCAPE_PROM_LABEL, n->ibdev, nic, sizeof(nic));
			snprintf(labels, sizeof(labels), "host=\"%s\",nic=\"%s\",port=\"%u\"", host,
				 nic, n->port);
			top_nic_samples("gdx_nic_port_counter_total", labels,
					top_nic_port_freshest(s, i, k));
		}
	}
}
