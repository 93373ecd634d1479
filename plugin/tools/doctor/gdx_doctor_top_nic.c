/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor top: each process's NIC ports' counters, as the kernel keeps
 * them (retransmits, sequence errors, RNR NAKs: what the device reports),
 * from the NIC slots of its live file (gdx_qpstat.h): per QP counter bound
 * to the process's QPs where the kernel allowed it, else the port's totals.
 */
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

void top_nic_prometheus(const struct live_snap *s)
{
	printf("# HELP gdx_nic_counter_total A NIC port's counter as the kernel keeps it (rdma "
	       "statistic): per QP counter of the process's QPs (scope qp) or the port's "
	       "totals (scope port).\n# TYPE gdx_nic_counter_total counter\n");
	for (int i = 0; i < s->nprocs; i++) {
		const struct live_proc *p = &s->procs[i];

		for (int k = 0; k < p->nnics; k++) {
			const struct gdx_live_nic *n = &p->nics[k];
			char nic[GDX_ESCAPE_LEN(sizeof(n->ibdev))];

			if (n->source == GDX_LIVE_NIC_NONE ||
			    top_nic_dup(p, k, GDX_ESCAPE_PROM_LABEL))
				continue;
			gdx_escape(GDX_ESCAPE_PROM_LABEL, n->ibdev, nic, sizeof(nic));
			for (uint32_t c = 0; c < n->ncounters; c++) {
				char name[GDX_ESCAPE_LEN(GDX_LIVE_NIC_NAME)];

				if (top_counter_dup(n, c, GDX_ESCAPE_PROM_LABEL))
					continue;
				gdx_escape(GDX_ESCAPE_PROM_LABEL, n->counters[c].name, name,
					   sizeof(name));
				printf("gdx_nic_counter_total{pid=\"%d\",nic=\"%s\",port=\"%u\","
				       "scope=\"%s\",counter=\"%s\"} %llu\n",
				       p->pid, nic, n->port,
				       n->source == GDX_LIVE_NIC_QP ? "qp" : "port", name,
				       (unsigned long long)n->counters[c].value);
			}
		}
	}
}
