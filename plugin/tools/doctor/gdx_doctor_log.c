/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor log: what a job really did, from its NCCL_DEBUG=INFO output.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_log.h"
#include "tools/common/gdx_escape.h"
#include "sys/gdx_file.h"
#include "sys/gdx_log.h"

/*
 * What a job really did, from its NCCL_DEBUG=INFO output: the plugin's
 * verdict per NIC (direct or staged: one word per device in its INIT line,
 * and why in a line of its own), and the bytes each NIC moved: each
 * process's summary per NIC port at finalize (INIT), or, in logs with NET
 * and of 0.3.2 and earlier, the counts each comm logs when it closes. A
 * process's summary replaces the counts of the comms it sums, so that a log
 * holding both counts each byte once. Bytes through host memory on a NIC
 * that advertises GPUDirect RDMA mean NCCL staged them anyway
 * (NCCL_NET_GDR_LEVEL, or host buffers): the silent slowdown this command
 * exists to show. A log where the plugin's init failed ("plugin disabled",
 * after the WARN that says why) tells that, and the network NCCL says it
 * used instead ("Using network IB"): a problem found (exit 2), not a log
 * short of data (8).
 *
 * The plugin's lines start with GDX_LOG_PREFIX; up to 0.3.2 with
 * GDX_LOG_PREFIX_OLD, which NCCL's own lines about the network share
 * ("NET/GDX : GPU Direct RDMA Enabled for HCA 0 ..."): those are not the
 * plugin's.
 *
 * A log is other processes' output, on a shared node maybe other users':
 * the memory taken is fixed (one line at a time, fixed tables), a number
 * out of range makes its line not the plugin's, and everything printed that
 * came from the log is escaped (gdx_escape.h).
 *
 * A line of the plugin also holds what others chose: a peer's device name,
 * the words of a peer's failover note. The plugin quotes them
 * (gdx_log_quote), and each line is read here by its fixed shape from the
 * start of its message, never by words found anywhere in it: a peer's
 * words can neither make a line into another nor add counts. Sums that
 * would pass 2^64-1 are not made: the line is refused, and said, for a
 * saturated sum could never be undone by the process's summary.
 */
/* The slot of (host, name) in the index: its entry, or the empty slot
 * where it would go. The hash is keyed at random per process, so that no
 * log can aim its names at one chain. */
static int *log_nic_slot(struct log_scan *ls, const char *host, const char *name, size_t len)
{
	char key[2 * LOG_NAME_MAX];
	size_t hl = strlen(host);
	uint64_t h;

	memcpy(key, host, hl);
	key[hl] = '\0';
	memcpy(key + hl + 1, name, len);
	h = json_hash(key, hl + 1 + len);
	for (size_t i = 0;; i++) {
		int *slot = &ls->nic_index[(h + i) % LOG_NIC_SLOTS];
		const struct log_nic *nic = *slot ? &ls->nics[*slot - 1] : NULL;

		if (!nic || (!strcmp(nic->node, host) && strlen(nic->name) == len &&
			     !strncmp(nic->name, name, len)))
			return slot;
	}
}

/* The row of a NIC on a host (its first len bytes of name), made when new;
 * NULL when the name is too long or the table is full. */
static struct log_nic *log_nic(struct log_scan *ls, const char *host, const char *name, size_t len)
{
	struct log_nic *nic;
	int *slot;

	if (len >= sizeof(ls->nics[0].name))
		return NULL;
	slot = log_nic_slot(ls, host, name, len);
	if (*slot)
		return &ls->nics[*slot - 1];
	if (ls->n == LOG_MAX_NICS) {
		ls->more_nics++;
		return NULL;
	}
	nic = &ls->nics[ls->n++];
	memset(nic, 0, sizeof(*nic));
	snprintf(nic->node, sizeof(nic->node), "%s", host);
	memcpy(nic->name, name, len);
	*slot = ls->n;
	return nic;
}

/* The host of a process's key, "host:pid": its part before the last ':'
 * ("" for a line without NCCL's head). */
static void log_host_of(const char *proc, char *host, size_t len)
{
	const char *colon = strrchr(proc, ':');
	size_t n = colon ? (size_t)(colon - proc) : strlen(proc);

	snprintf(host, len, "%.*s", (int)n, proc);
}

/* Whether a + b fits 64 bits: a sum that would not is refused, never
 * saturated (what a saturated sum held is lost for good). */
static bool log_fits(unsigned long long a, unsigned long long b)
{
	return a <= ULLONG_MAX - b;
}

/* Adds a line's counts to a NIC's or a process's sums (checked with
 * log_fits first). */
static void log_add(unsigned long long *gpu_sum, unsigned long long *host_sum, unsigned long *comms,
		    unsigned long long gpu, unsigned long long host, unsigned long n)
{
	*gpu_sum += gpu;
	*host_sum += host;
	*comms += n;
}

/* s after prefix, or NULL when s does not start with it (or is NULL). */
static const char *log_after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return !s || strncmp(s, prefix, n) ? NULL : s + n;
}

/* A count in decimal digits at s (no sign, no space): *v, and what follows;
 * NULL when there is none or it does not fit 64 bits. */
static const char *log_count(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return NULL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == ERANGE ? NULL : end;
}

static struct log_rail *log_rail(struct log_scan *ls, const char *host, const char *nic)
{
	for (int i = 0; i < ls->nrails; i++)
		if (!strcmp(ls->rails[i].nic, nic) && !strcmp(ls->rails[i].host, host))
			return &ls->rails[i];
	if (ls->nrails == LOG_MAX_RAILS) {
		ls->more_rails++;
		return NULL;
	}
	memset(&ls->rails[ls->nrails], 0, sizeof(ls->rails[0]));
	snprintf(ls->rails[ls->nrails].nic, sizeof(ls->rails[0].nic), "%s", nic);
	snprintf(ls->rails[ls->nrails].host, sizeof(ls->rails[0].host), "%s", host);
	return &ls->rails[ls->nrails++];
}

#define LOG_TAKEN_OUT ") taken out of the connection with "

/* The length of the word the plugin writes at s: an address, a time, a
 * NIC's name (no space, none of stop). */
static size_t log_word(const char *s, const char *stop)
{
	size_t n = 0;

	while (s[n] && s[n] != ' ' && !strchr(stop, s[n]))
		n++;
	return n;
}

/* s after a name the plugin quoted ("...", \" and \\ inside), or NULL when
 * s is not one. */
static const char *log_quoted(const char *s)
{
	if (!s || *s != '"')
		return NULL;
	for (s++; *s && *s != '"'; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s == '"' ? s + 1 : NULL;
}

/* The length of a cause, up to the ';' that ends it: one inside a quoted
 * string (the peer's words the plugin quotes in it) is not the end. */
static size_t log_cause_len(const char *c)
{
	const char *q;
	size_t n = 0;

	while (c[n] && c[n] != ';') {
		q = c[n] == '"' ? log_quoted(c + n) : NULL;
		n = q ? (size_t)(q - c) : n + 1;
	}
	return n;
}

#define LOG_TAKEN_OUT ") taken out of the connection with "

/*
 * The cause in the rest of a line that takes a rail out, from just after
 * "peer ": the peer's device name, chosen by the peer, then LOG_TAKEN_OUT
 * "<addr> at <time>: <cause>; ...". The plugin quotes the name ("...", \"
 * and \\ inside), so the cause is after the closing quote whatever the name
 * holds. 0.4.0 and earlier printed it bare: the line's words after the
 * name are then found by LOG_TAKEN_OUT, unless the line has that twice (a
 * name, or a cause, that holds it): which one is the plugin's cannot be
 * told, and the cause is said to be unknown. Returns the cause and its
 * length in *len, or NULL when the line is not one of these.
 */
static const char *log_taken_out_cause(const char *peer, size_t *len)
{
	static const char unknown[] = "unknown: the peer's device name in this line is not "
				      "quoted, and holds what follows it";
	const char *c = peer, *at;

	if (*c == '"') {
		c = log_after(log_quoted(c), LOG_TAKEN_OUT);
	} else {
		c = strstr(c, LOG_TAKEN_OUT);
		if (c && strstr(c + 1, LOG_TAKEN_OUT)) {
			*len = strlen(unknown);
			return unknown;
		}
		c = c ? c + strlen(LOG_TAKEN_OUT) : NULL;
	}
	/* the address and the time have no space: "<addr> at <time>: " */
	at = c ? c + strcspn(c, " ") : NULL;
	c = log_after(at, " at ");
	at = c ? c + strcspn(c, " ") : NULL;
	if (!at || at == c || at[-1] != ':' || *at != ' ')
		return NULL;
	c = at + 1;
	*len = log_cause_len(c);
	return c;
}

/*
 * The rail lines, each by its shape from just after "<dev>": "<dev>: rail
 * N (<nic> port P, peer "<name>") taken out of the connection with <addr>
 * at <time>: <cause>; ...", "<dev>: rail N (<nic>) back in the connection
 * with <addr> at <time> after X s down ..." and "<dev>: every rail of the
 * connection with <addr> ...". The peer's words sit only where the shape
 * has them (its quoted name, the cause, a restore's refusal after "rail N
 * (<nic>): "), so that they can make no line into another: a cause holding
 * "back in the connection with" is no rail back.
 */
static void log_rail_line(struct log_scan *ls, const char *host, const char *colon)
{
	const char *c = log_after(colon, ": rail "), *rest;
	unsigned long long r, port;
	struct log_rail *rail;
	char nic[64], *end;
	size_t len;
	double secs;

	if (log_after(colon, ": every rail of the connection with ")) {
		ls->all_down++;
		return;
	}
	c = log_after(log_count(c, &r), " (");
	if (!c)
		return;
	len = log_word(c, ")");
	if (!len || len >= sizeof(nic))
		return;
	memcpy(nic, c, len);
	nic[len] = '\0';
	rest = log_after(log_count(log_after(c + len, " port "), &port), ", peer ");
	if (rest) {
		const char *cause;
		size_t cause_len = 0;

		/* the one line of this shape: a bare name of 0.4.0's counts
		 * too, its cause unknown where the line cannot tell */
		if (*rest == '"' ? !log_after(log_quoted(rest), LOG_TAKEN_OUT)
				 : !strstr(rest, LOG_TAKEN_OUT))
			return;
		rail = log_rail(ls, host, nic);
		if (!rail)
			return;
		rail->downs++;
		cause = log_taken_out_cause(rest, &cause_len);
		if (cause)
			snprintf(rail->cause, sizeof(rail->cause), "%.*s", (int)cause_len, cause);
		return;
	}
	rest = log_after(c + len, ") back in the connection with ");
	if (!rest)
		return; /* a rail's other lines: a restore attempt, its counts */
	rail = log_rail(ls, host, nic);
	if (!rail)
		return;
	rail->backs++;
	rest = log_after(rest + log_word(rest, ""), " at ");
	rest = rest ? log_after(rest + log_word(rest, ""), " after ") : NULL;
	if (!rest || !isdigit((unsigned char)*rest))
		return;
	secs = strtod(rest, &end);
	if (log_after(end, " s down") && secs >= 0 && secs <= LOG_MAX_DOWN_S)
		rail->down_s += secs;
}

static unsigned long long log_sub(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : 0;
}

/* The text after the plugin's prefix in line, or NULL when the line is not
 * the plugin's. The first prefix of either form is the plugin's: one after
 * it is in what the line quotes (a peer's device name holding "NET/GDX
 * plugin: "), not a line of its own. */
static const char *log_plugin_text(const char *line)
{
	const char *p = strstr(line, GDX_LOG_PREFIX), *old = strstr(line, GDX_LOG_PREFIX_OLD);

	if (p && (!old || p < old))
		return p + strlen(GDX_LOG_PREFIX);
	if (!old)
		return NULL;
	p = old + strlen(GDX_LOG_PREFIX_OLD);
	/* NCCL's own line under the network's name (src/graph/topo.cc,
	 * src/transport/net.cc), not the plugin's */
	return log_after(p, "GPU Direct RDMA ") ? NULL : p;
}

/*
 * The process of a line, from the head NCCL writes before it,
 * "host:pid:tid [dev] NCCL INFO ": "host:pid" into key; "" when the line has
 * no such head (every such line then counts as one process).
 */
static void log_proc(const char *line, const char *text, char *key, size_t len)
{
	const char *end = strstr(line, " ["), *start, *colon;

	key[0] = '\0';
	if (!end || end >= text)
		return;
	for (start = end; start > line && start[-1] != ' '; start--)
		;
	for (colon = end; colon > start && *colon != ':'; colon--)
		;
	if (colon > start && (size_t)(colon - start) < len) {
		memcpy(key, start, (size_t)(colon - start));
		key[colon - start] = '\0';
	}
}

static struct log_pending *log_pending(struct log_scan *ls, const char *proc, const char *nic,
				       size_t nic_len)
{
	struct log_pending *pe;

	if (nic_len >= LOG_NAME_MAX)
		return NULL;
	for (int i = 0; i < ls->npending; i++) {
		pe = &ls->pending[i];
		if (!strcmp(pe->proc, proc) && strlen(pe->nic) == nic_len &&
		    !strncmp(pe->nic, nic, nic_len))
			return pe;
	}
	if (ls->npending == LOG_MAX_PENDING) {
		ls->more_pending++;
		return NULL;
	}
	pe = &ls->pending[ls->npending++];
	memset(pe, 0, sizeof(*pe));
	snprintf(pe->proc, sizeof(pe->proc), "%s", proc);
	memcpy(pe->nic, nic, nic_len);
	return pe;
}

/* A process's summary is in: the counts of its comms it replaces leave
 * the NICs' sums, and their pairs the table. */
static void log_retract(struct log_scan *ls, const char *proc)
{
	char host[LOG_NAME_MAX];
	int kept = 0;

	for (int i = 0; i < ls->npending; i++) {
		struct log_pending *pe = &ls->pending[i];
		struct log_nic *nic;

		if (strcmp(pe->proc, proc)) {
			ls->pending[kept++] = *pe;
			continue;
		}
		log_host_of(proc, host, sizeof(host));
		nic = log_nic(ls, host, pe->nic, strlen(pe->nic));
		if (nic) {
			nic->gpu = log_sub(nic->gpu, pe->gpu);
			nic->host = log_sub(nic->host, pe->host);
			nic->comms = nic->comms > pe->comms ? nic->comms - pe->comms : 0;
		}
	}
	ls->npending = kept;
}

/* "<nic>: <kind> comm with <addr> closed: G bytes GPU-direct, H bytes
 * through host memory...": one comm's counts, until its process's summary.
 * Its shape from the start: every word before the counts is the plugin's
 * (the kind, the address), so that no other line of the plugin (one that
 * quotes a peer's name holding " closed: ") counts bytes. */
static bool log_comm_line(struct log_scan *ls, const char *proc, const char *p, const char *colon)
{
	const char *c = log_after(colon, ": ");
	unsigned long long gpu, host;
	char node[LOG_NAME_MAX];
	struct log_pending *pe;
	struct log_nic *nic;
	size_t len = (size_t)(colon - p), kind = c ? strspn(c, "abcdefghijklmnopqrstuvwxyz") : 0;

	c = kind ? log_after(c + kind, " comm with ") : NULL;
	len = c ? log_word(c, "") : 0;
	c = len ? log_after(c + len, " closed: ") : NULL;
	c = log_after(log_count(c, &gpu), " bytes GPU-direct, ");
	if (!log_after(log_count(c, &host), " bytes through host memory"))
		return false;
	len = (size_t)(colon - p);
	log_host_of(proc, node, sizeof(node));
	nic = log_nic(ls, node, p, len);
	pe = log_pending(ls, proc, p, len);
	if ((nic && (!log_fits(nic->gpu, gpu) || !log_fits(nic->host, host))) ||
	    (pe && (!log_fits(pe->gpu, gpu) || !log_fits(pe->host, host)))) {
		ls->refused++;
		return true;
	}
	ls->counts++;
	if (nic)
		log_add(&nic->gpu, &nic->host, &nic->comms, gpu, host, 1);
	if (pe)
		log_add(&pe->gpu, &pe->host, &pe->comms, gpu, host, 1);
	return true;
}

/* "<nic> port P: N comm(s) closed, G bytes GPU-direct, H bytes through host
 * memory, F rail failover(s)": what a process's comms moved on one NIC port
 * since its last summary (after 0.3.2, at finalize). */
static bool log_summary_line(struct log_scan *ls, const char *proc, const char *node, const char *p)
{
	const char *port = strstr(p, " port "), *c;
	unsigned long long n, gpu, host, fo, portnum;
	struct log_nic *nic;

	if (!port || port == p || memchr(p, ' ', (size_t)(port - p)))
		return false;
	c = log_after(log_count(port + strlen(" port "), &portnum), ": ");
	c = log_after(log_count(c, &n), " comm(s) closed, ");
	c = log_after(log_count(c, &gpu), " bytes GPU-direct, ");
	c = log_after(log_count(c, &host), " bytes through host memory, ");
	if (!log_after(log_count(c, &fo), " rail failover(s)") || n > ULONG_MAX)
		return false;
	log_retract(ls, proc);
	nic = log_nic(ls, node, p, (size_t)(port - p));
	if (nic && (!log_fits(nic->gpu, gpu) || !log_fits(nic->host, host) ||
		    nic->comms > ULONG_MAX - n)) {
		ls->refused++;
		return true;
	}
	ls->counts++;
	if (nic)
		log_add(&nic->gpu, &nic->host, &nic->comms, gpu, host, (unsigned long)n);
	return true;
}

/* The INIT line after 0.3.2: "libnccl-net-gdx V, ...; using
 * [0]mlx5_0:1/RoCE/direct [1]rxe0:1+rxe2:1/RoCE/staged; OOB ...": each
 * device's verdict in one word, for the NICs no line of its own explains. */
static void log_init_line(struct log_scan *ls, const char *node, const char *p)
{
	const char *c = strstr(p, "; using ");

	if (!c)
		return;
	c += strlen("; using ");
	while (*c == '[') {
		size_t len = strcspn(c, " ;");
		const char *end = c + len, *names = memchr(c, ']', len), *word, *ll;
		bool direct;

		if (!names)
			return;
		names++;
		ll = memchr(names, '/', (size_t)(end - names));
		word = ll ? memchr(ll + 1, '/', (size_t)(end - ll - 1)) : NULL;
		if (!word)
			return;
		word++;
		direct = (size_t)(end - word) == strlen("direct") && !strncmp(word, "direct", 6);
		if (!direct &&
		    !((size_t)(end - word) == strlen("staged") && !strncmp(word, "staged", 6)))
			return;
		while (names < ll) {
			size_t n = strcspn(names, "+/"), name_len = strcspn(names, ":+/");
			struct log_nic *nic = name_len && name_len <= n
						      ? log_nic(ls, node, names, name_len)
						      : NULL;

			if (nic && !nic->verdict[0]) {
				snprintf(nic->verdict, sizeof(nic->verdict), "%s",
					 direct ? "GPUDirect RDMA (INIT line; NET says how)"
						: "staged through host memory (INIT line; NET "
						  "says why)");
				nic->direct = direct;
			}
			names += n + (names[n] == '+');
		}
		c = end + (*end == ' ');
	}
}

/* NCCL's "Using network X" (init.cc): the network a communicator runs on,
 * each name kept once. */
static void log_net_line(struct log_scan *ls, const char *line)
{
	const char *c = strstr(line, "NCCL INFO Using network ");
	size_t len;

	if (!c)
		return;
	c += strlen("NCCL INFO Using network ");
	len = strcspn(c, " \r");
	if (!len || len >= LOG_NAME_MAX)
		return;
	for (int i = 0; i < ls->nnets; i++)
		if (strlen(ls->nets[i]) == len && !strncmp(ls->nets[i], c, len))
			return;
	if (ls->nnets < LOG_MAX_NETS) {
		memcpy(ls->nets[ls->nnets], c, len);
		ls->nets[ls->nnets++][len] = '\0';
	}
}

/* The plugin's own lines about its init: each WARN kept until the next (the
 * one before "plugin disabled" says why), and the disabled lines counted. */
static bool log_disabled_line(struct log_scan *ls, const char *line, const char *proc,
			      const char *p)
{
	const char *warn = strstr(line, "NCCL WARN ");

	if (log_after(p, "plugin disabled (")) {
		if (!ls->disabled++)
			log_host_of(proc, ls->disabled_node, sizeof(ls->disabled_node));
		if (!ls->disabled_why[0] && ls->last_warn[0] && !strcmp(ls->last_warn_proc, proc))
			memcpy(ls->disabled_why, ls->last_warn, sizeof(ls->disabled_why));
		return true;
	}
	if (warn && warn < p) {
		snprintf(ls->last_warn, sizeof(ls->last_warn), "%s", p);
		snprintf(ls->last_warn_proc, sizeof(ls->last_warn_proc), "%s", proc);
	}
	return false;
}

/* The plugin's line p counted by its level (NCCL's "NCCL WARN " before it),
 * a WARN kept when it is new. */
static void log_level_line(struct log_scan *ls, const char *line, const char *proc, const char *p)
{
	const char *warn = strstr(line, "NCCL WARN ");
	int i;

	if (!warn || warn > p) {
		ls->info_lines++;
		return;
	}
	ls->warn_lines++;
	for (i = 0; i < ls->nwarns; i++)
		if (!strncmp(ls->warns[i], p, sizeof(ls->warns[i]) - 1)) {
			ls->warn_times[i]++;
			return;
		}
	if (ls->nwarns == LOG_MAX_WARNS) {
		ls->more_warns++;
		return;
	}
	snprintf(ls->warns[ls->nwarns], sizeof(ls->warns[0]), "%s", p);
	snprintf(ls->warn_procs[ls->nwarns], sizeof(ls->warn_procs[0]), "%s", proc);
	ls->warn_times[ls->nwarns++] = 1;
}

static void log_line(struct log_scan *ls, const char *line)
{
	const char *p = log_plugin_text(line), *colon, *space;
	char proc[LOG_NAME_MAX], node[LOG_NAME_MAX];
	struct log_nic *nic;

	if (!p) {
		log_net_line(ls, line);
		return;
	}
	ls->plugin_lines++;
	log_proc(line, p, proc, sizeof(proc));
	log_host_of(proc, node, sizeof(node));
	log_level_line(ls, line, proc, p);
	if (log_disabled_line(ls, line, proc, p))
		return;
	if (log_after(p, "connected ") || log_after(p, "accepted "))
		ls->connections++;
	if (log_after(p, "libnccl-net-gdx ")) {
		log_init_line(ls, node, p);
		return;
	}
	if (log_summary_line(ls, proc, node, p))
		return;
	/* "<nic>: ...": the name up to the first ": " ("mlx5_0:2: ..."), no
	 * space in it */
	colon = strstr(p, ": ");
	space = strchr(p, ' ');
	if (!colon || colon == p || space < colon + 1)
		return;
	if (log_comm_line(ls, proc, p, colon))
		return;
	if (log_after(colon, ": rail ") || log_after(colon, ": every rail of the connection")) {
		log_rail_line(ls, node, colon);
	} else if (log_after(colon, ": GPUDirect RDMA via ") ||
		   log_after(colon, ": staged through host memory")) {
		nic = log_nic(ls, node, p, (size_t)(colon - p));
		if (nic) {
			snprintf(nic->verdict, sizeof(nic->verdict), "%.*s",
				 (int)strcspn(colon + 2, "\n"), colon + 2);
			nic->direct = log_after(colon, ": GPUDirect RDMA via ") != NULL;
		}
	}
}

/* One line of in into buf, without its newline; a line longer than
 * size - 1 bytes is read to its end and *long_line set. false at the end of
 * the input (or an error). */
static bool log_read_line(FILE *in, char *buf, size_t size, bool *long_line)
{
	size_t n = 0;
	int c;

	*long_line = false;
	while ((c = getc(in)) != EOF && c != '\n') {
		if (n + 1 < size)
			buf[n++] = (char)c;
		else
			*long_line = true;
	}
	buf[n] = '\0';
	return c != EOF || n || *long_line;
}

int log_scan_stream(struct log_scan *ls, FILE *in)
{
	char line[LOG_MAX_LINE + 1];
	bool long_line;

	while (log_read_line(in, line, sizeof(line), &long_line)) {
		if (long_line)
			ls->long_lines++;
		else
			log_line(ls, line);
	}
	ls->files++;
	return ferror(in) ? (errno ? errno : EIO) : 0;
}
