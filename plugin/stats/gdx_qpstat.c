/* SPDX-License-Identifier: MIT */
/* The NIC's counters for the plugin's QPs, over RDMA netlink (gdx_qpstat.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "stats/gdx_qpstat.h"
#include "sys/gdx_sysfs.h"
#include "sys/gdx_time.h"

/* NIC ports one process counts on at most; more are not read. */
#define GDX_QPSTAT_PORTS 32
/* How long an answer of the kernel's is waited for: it answers in the
 * sender's own system call, so this only bounds a kernel that does not. */
#define GDX_QPSTAT_WAIT_MS 100
/* Reads of the counters at most this often (ms). */
#define GDX_QPSTAT_EVERY_MS 1000
/* A datagram of the kernel's: a device dump's part, or a counter's list. */
#define GDX_QPSTAT_BUF 32768

/* ---- messages ---- */

static int gdx_nl_put(void *buf, size_t len, size_t *off, uint16_t type, const void *val,
		      size_t vlen)
{
	struct nlattr *a = (struct nlattr *)((char *)buf + *off);

	if (*off + NLA_ALIGN(NLA_HDRLEN + vlen) > len)
		return -EMSGSIZE;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + vlen);
	memcpy((char *)a + NLA_HDRLEN, val, vlen);
	memset((char *)a + NLA_HDRLEN + vlen, 0, NLA_ALIGN(vlen) - vlen);
	*off += NLA_ALIGN(NLA_HDRLEN + vlen);
	return 0;
}

static int gdx_nl_u32(void *buf, size_t len, size_t *off, uint16_t type, uint32_t v)
{
	return gdx_nl_put(buf, len, off, type, &v, sizeof(v));
}

/* A request's header for op; the attributes follow at *off. */
static int gdx_nl_start(void *buf, size_t len, size_t *off, uint32_t seq, int op, uint16_t flags)
{
	struct nlmsghdr *h = buf;

	if (len < NLMSG_HDRLEN)
		return -EMSGSIZE;
	memset(h, 0, NLMSG_HDRLEN);
	h->nlmsg_type = (uint16_t)RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	h->nlmsg_seq = seq;
	*off = NLMSG_HDRLEN;
	return 0;
}

static int gdx_nl_end(void *buf, size_t off)
{
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)off;
	return (int)off;
}

int gdx_qpstat_msg_devs(void *buf, size_t len, uint32_t seq)
{
	size_t off;

	if (gdx_nl_start(buf, len, &off, seq, RDMA_NLDEV_CMD_GET, NLM_F_DUMP))
		return -EMSGSIZE;
	return gdx_nl_end(buf, off);
}

/* DEV_INDEX and PORT_INDEX, which every STAT request names. */
static int gdx_nl_port(void *buf, size_t len, size_t *off, uint32_t seq, int op, uint32_t dev,
		       uint32_t port)
{
	if (gdx_nl_start(buf, len, off, seq, op, 0) ||
	    gdx_nl_u32(buf, len, off, RDMA_NLDEV_ATTR_DEV_INDEX, dev) ||
	    gdx_nl_u32(buf, len, off, RDMA_NLDEV_ATTR_PORT_INDEX, port))
		return -EMSGSIZE;
	return 0;
}

int gdx_qpstat_msg_port(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port)
{
	size_t off;

	if (gdx_nl_port(buf, len, &off, seq, RDMA_NLDEV_CMD_STAT_GET, dev, port))
		return -EMSGSIZE;
	return gdx_nl_end(buf, off);
}

int gdx_qpstat_msg_bind(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port,
			uint32_t qpn, uint32_t counter_id)
{
	size_t off;

	if (gdx_nl_port(buf, len, &off, seq, RDMA_NLDEV_CMD_STAT_SET, dev, port) ||
	    gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP) ||
	    gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL) ||
	    gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_RES_LQPN, qpn) ||
	    (counter_id && gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter_id)))
		return -EMSGSIZE;
	return gdx_nl_end(buf, off);
}

int gdx_qpstat_msg_counter(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port,
			   uint32_t counter_id)
{
	size_t off;

	if (gdx_nl_port(buf, len, &off, seq, RDMA_NLDEV_CMD_STAT_GET, dev, port) ||
	    gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP) ||
	    gdx_nl_u32(buf, len, &off, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter_id))
		return -EMSGSIZE;
	return gdx_nl_end(buf, off);
}

/* The attribute at p, within the len bytes left: its type (flags off) and
 * payload, and the length to step over; -EBADMSG when it does not fit. */
static int gdx_nl_attr(const char *p, size_t len, uint16_t *type, const char **val, size_t *vlen,
		       size_t *step)
{
	struct nlattr a;

	if (len < NLA_HDRLEN)
		return -EBADMSG;
	memcpy(&a, p, sizeof(a));
	if (a.nla_len < NLA_HDRLEN || (size_t)a.nla_len > len)
		return -EBADMSG;
	*type = a.nla_type & NLA_TYPE_MASK;
	*val = p + NLA_HDRLEN;
	*vlen = a.nla_len - NLA_HDRLEN;
	*step = (size_t)NLA_ALIGN(a.nla_len) < len ? (size_t)NLA_ALIGN(a.nla_len) : len;
	return 0;
}

static int gdx_nl_get_u32(const char *val, size_t vlen, uint32_t *out)
{
	if (vlen < sizeof(*out))
		return -EBADMSG;
	memcpy(out, val, sizeof(*out));
	return 0;
}

/* One HWCOUNTER_ENTRY's name and value into r (while there is room). */
static int gdx_qpstat_entry(const char *p, size_t len, struct gdx_qpstat_reply *r)
{
	const char *name = NULL, *val;
	size_t name_len = 0, vlen, step;
	bool has_value = false;
	uint64_t value = 0;
	uint16_t type;

	for (; len; p += step, len -= step) {
		if (gdx_nl_attr(p, len, &type, &val, &vlen, &step))
			return -EBADMSG;
		if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME) {
			name = val;
			name_len = strnlen(val, vlen);
		} else if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE) {
			if (vlen != sizeof(value))
				return -EBADMSG;
			memcpy(&value, val, sizeof(value));
			has_value = true;
		}
	}
	if (!name || !name_len || !has_value)
		return -EBADMSG;
	if (r->n == GDX_LIVE_NIC_COUNTERS) {
		r->cut = true;
		return 0;
	}
	if (name_len >= GDX_LIVE_NIC_NAME)
		name_len = GDX_LIVE_NIC_NAME - 1;
	memcpy(r->c[r->n].name, name, name_len);
	r->c[r->n].name[name_len] = '\0';
	r->c[r->n].value = value;
	r->n++;
	return 0;
}

static int gdx_qpstat_hwcounters(const char *p, size_t len, struct gdx_qpstat_reply *r)
{
	const char *val;
	size_t vlen, step;
	uint16_t type;

	for (; len; p += step, len -= step) {
		if (gdx_nl_attr(p, len, &type, &val, &vlen, &step))
			return -EBADMSG;
		if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY && gdx_qpstat_entry(val, vlen, r))
			return -EBADMSG;
	}
	return 0;
}

int gdx_qpstat_parse(const void *buf, size_t len, struct gdx_qpstat_reply *r, size_t *used)
{
	const char *p = buf, *val;
	struct nlmsghdr h;
	size_t left, vlen, step;
	uint16_t type;

	memset(r, 0, offsetof(struct gdx_qpstat_reply, c));
	*used = len;
	if (!len)
		return -ENODATA;
	if (len < NLMSG_HDRLEN)
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
		return -EBADMSG;
	*used = NLMSG_ALIGN(h.nlmsg_len) < len ? NLMSG_ALIGN(h.nlmsg_len) : len;
	r->seq = h.nlmsg_seq;
	if (h.nlmsg_type == NLMSG_DONE) {
		r->kind = GDX_QPSTAT_MSG_DONE;
		return 0;
	}
	if (h.nlmsg_type == NLMSG_ERROR) {
		int32_t e;

		if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
			return -EBADMSG;
		memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
		r->kind = GDX_QPSTAT_MSG_ERROR;
		/* the kernel's is 0 or -errno; anything else is not an errno */
		r->err = e <= 0 && e > -4096 ? e : -EPROTO;
		return 0;
	}
	r->kind = GDX_QPSTAT_MSG_DATA;
	p += NLMSG_HDRLEN;
	for (left = h.nlmsg_len - NLMSG_HDRLEN; left; p += step, left -= step) {
		if (gdx_nl_attr(p, left, &type, &val, &vlen, &step))
			return -EBADMSG;
		switch (type) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			if (gdx_nl_get_u32(val, vlen, &r->dev_index))
				return -EBADMSG;
			r->has_dev = true;
			break;
		case RDMA_NLDEV_ATTR_PORT_INDEX:
			if (gdx_nl_get_u32(val, vlen, &r->port))
				return -EBADMSG;
			r->has_port = true;
			break;
		case RDMA_NLDEV_ATTR_STAT_COUNTER_ID:
			if (gdx_nl_get_u32(val, vlen, &r->counter_id))
				return -EBADMSG;
			r->has_counter = true;
			break;
		case RDMA_NLDEV_ATTR_DEV_NAME: {
			size_t n = strnlen(val, vlen);

			n = n < sizeof(r->dev_name) ? n : sizeof(r->dev_name) - 1;
			memcpy(r->dev_name, val, n);
			r->dev_name[n] = '\0';
			break;
		}
		case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			if (gdx_qpstat_hwcounters(val, vlen, r))
				return -EBADMSG;
			break;
		default: break; /* what this reader has no use for */
		}
	}
	return 0;
}

const char *gdx_qpstat_source_name(uint32_t source)
{
	switch (source) {
	case GDX_LIVE_NIC_QP: return "qp counter";
	case GDX_LIVE_NIC_PORT: return "port totals";
	case GDX_LIVE_NIC_SYSFS: return "sysfs port totals";
	default: return "none";
	}
}

/* ---- the plugin's side ---- */

/* One NIC port the process has QPs on. */
struct gdx_qpstat_port {
	char ibdev[32];
	int port;
	int64_t dev_index; /* RDMA netlink's; -1: not found */
	bool decided;	   /* source chosen (and said) */
	int qps;
	uint32_t counter_id; /* GDX_LIVE_NIC_QP: 0 when no QP is bound now */
	uint32_t unbound;    /* QPs the counter does not count */
	/* GDX_LIVE_NIC_QP: what counters freed since counted (their QPs all
	 * gone, the kernel let them go), so that the values never go back */
	uint64_t base[GDX_LIVE_NIC_COUNTERS];
	struct gdx_live_nic *live; /* the slot, or own */
	struct gdx_live_nic own;
};

static pthread_mutex_t gdx_qpstat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdx_qpstat_port gdx_qpstat_ports[GDX_QPSTAT_PORTS];
static int gdx_qpstat_nports;
static int gdx_qpstat_fd = -1;
static uint32_t gdx_qpstat_seq;
static uint64_t gdx_qpstat_last_ms; /* atomic */
static char gdx_qpstat_buf[GDX_QPSTAT_BUF];

/* The socket, opened the first time: -errno when there is none. */
static int gdx_qpstat_sock(void)
{
	struct sockaddr_nl a = {.nl_family = AF_NETLINK};

	if (gdx_qpstat_fd >= 0)
		return 0;
	gdx_qpstat_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_RDMA);
	if (gdx_qpstat_fd < 0)
		return -errno;
	if (bind(gdx_qpstat_fd, (struct sockaddr *)&a, sizeof(a))) {
		int ret = -errno;

		close(gdx_qpstat_fd);
		gdx_qpstat_fd = -1;
		return ret;
	}
	return 0;
}

/* Sends the request of len bytes in gdx_qpstat_buf (its sequence number
 * seq) and takes the answers to it, each into r and on to fn (arg) until
 * fn returns other than 0 (1: done) or a dump ends; answers to earlier
 * requests (one that timed out) are dropped. Waits GDX_QPSTAT_WAIT_MS at
 * most for each datagram. 0, or -errno: the kernel's refusal, -ETIMEDOUT,
 * -EBADMSG. Under gdx_qpstat_lock. */
static int gdx_qpstat_talk(int len, uint32_t seq, struct gdx_qpstat_reply *r,
			   int (*fn)(struct gdx_qpstat_reply *r, void *arg), void *arg)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	int ret = gdx_qpstat_sock();

	if (ret)
		return ret;
	if (len < 0)
		return len;
	if (sendto(gdx_qpstat_fd, gdx_qpstat_buf, (size_t)len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != len)
		return errno ? -errno : -EIO;
	for (;;) {
		struct pollfd pfd = {.fd = gdx_qpstat_fd, .events = POLLIN};
		ssize_t n = recv(gdx_qpstat_fd, gdx_qpstat_buf, sizeof(gdx_qpstat_buf),
				 MSG_DONTWAIT | MSG_TRUNC);
		size_t off = 0, used;

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (poll(&pfd, 1, GDX_QPSTAT_WAIT_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		if ((size_t)n > sizeof(gdx_qpstat_buf))
			return -EMSGSIZE; /* cut: the rest of it is not there to parse */
		while (off < (size_t)n) {
			ret = gdx_qpstat_parse(gdx_qpstat_buf + off, (size_t)n - off, r, &used);
			off += used;
			if (ret)
				return ret;
			if (r->seq != seq)
				continue;
			if (r->kind == GDX_QPSTAT_MSG_DONE)
				return 0;
			if (r->kind == GDX_QPSTAT_MSG_ERROR)
				return r->err;
			ret = fn(r, arg);
			if (ret)
				return ret > 0 ? 0 : ret;
		}
	}
}

static int gdx_qpstat_first(struct gdx_qpstat_reply *r, void *arg)
{
	(void)r;
	(void)arg;
	return 1;
}

struct gdx_qpstat_find {
	const char *name;
	int64_t index;
};

/* A device of the dump: the one looked for? The dump is read to its end
 * either way, so that none of it is left for the next request. */
static int gdx_qpstat_find_dev(struct gdx_qpstat_reply *r, void *arg)
{
	struct gdx_qpstat_find *f = arg;

	if (r->has_dev && !strcmp(r->dev_name, f->name))
		f->index = r->dev_index;
	return 0;
}

static struct gdx_qpstat_reply gdx_qpstat_reply;

static uint32_t gdx_qpstat_next_seq(void)
{
	return ++gdx_qpstat_seq ? gdx_qpstat_seq : ++gdx_qpstat_seq;
}

static int64_t gdx_qpstat_dev_index(const char *ibdev)
{
	struct gdx_qpstat_find f = {.name = ibdev, .index = -1};
	uint32_t seq = gdx_qpstat_next_seq();
	int ret = gdx_qpstat_talk(gdx_qpstat_msg_devs(gdx_qpstat_buf, sizeof(gdx_qpstat_buf), seq),
				  seq, &gdx_qpstat_reply, gdx_qpstat_find_dev, &f);

	return ret ? ret : f.index;
}

/* The counters of r into the port's slot, added to base (a bound
 * counter's), their names first. */
static void gdx_qpstat_store(struct gdx_qpstat_port *p, const struct gdx_qpstat_reply *r,
			     const uint64_t *base)
{
	struct gdx_live_nic *l = p->live;
	uint32_t n = (uint32_t)r->n;

	for (uint32_t i = 0; i < n; i++) {
		if (strcmp(l->counters[i].name, r->c[i].name))
			memcpy(l->counters[i].name, r->c[i].name, sizeof(r->c[i].name));
		l->counters[i].value = r->c[i].value + (base ? base[i] : 0);
	}
	__atomic_store_n(&l->ncounters, n, __ATOMIC_RELEASE);
	l->read_ms = gdx_now_ms();
}

/* The port's hw_counters in sysfs into r: 0, or -errno. */
static int gdx_qpstat_sysfs(const struct gdx_qpstat_port *p, struct gdx_qpstat_reply *r)
{
	char rel[128], line[64];
	struct dirent *e;
	DIR *d;

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/hw_counters", p->ibdev, p->port);
	d = gdx_sysfs_opendir_in(gdx_sysfs_root(), rel);
	if (!d)
		return -errno;
	memset(r, 0, offsetof(struct gdx_qpstat_reply, c));
	while ((e = readdir(d)) && r->n < GDX_LIVE_NIC_COUNTERS) {
		char file[sizeof(rel) + 64], *end;
		unsigned long long v;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan") ||
		    strlen(e->d_name) >= GDX_LIVE_NIC_NAME)
			continue;
		snprintf(file, sizeof(file), "%s/%s", rel, e->d_name);
		if (gdx_sysfs_read_line_in(gdx_sysfs_root(), file, line, sizeof(line)))
			continue;
		errno = 0;
		v = strtoull(line, &end, 10);
		if (errno || end == line)
			continue;
		snprintf(r->c[r->n].name, sizeof(r->c[r->n].name), "%s", e->d_name);
		r->c[r->n++].value = v;
	}
	closedir(d);
	return r->n ? 0 : -ENOENT;
}

/* The port's counters read now into its slot, from its source: 0, -errno. */
static int gdx_qpstat_read(struct gdx_qpstat_port *p)
{
	struct gdx_qpstat_reply *r = &gdx_qpstat_reply;
	uint32_t seq = gdx_qpstat_next_seq();
	int ret;

	switch (p->live->source) {
	case GDX_LIVE_NIC_QP:
		if (!p->counter_id)
			return 0; /* none bound now: the values stay */
		ret = gdx_qpstat_talk(gdx_qpstat_msg_counter(gdx_qpstat_buf, sizeof(gdx_qpstat_buf),
							     seq, (uint32_t)p->dev_index,
							     (uint32_t)p->port, p->counter_id),
				      seq, r, gdx_qpstat_first, NULL);
		if (ret == -ENOENT || ret == -EINVAL) {
			/* its QPs all gone, the kernel freed it: what it
			 * counted stays in the totals */
			for (uint32_t i = 0; i < p->live->ncounters; i++)
				p->base[i] = p->live->counters[i].value;
			p->counter_id = 0;
			return 0;
		}
		if (!ret)
			gdx_qpstat_store(p, r, p->base);
		return ret;
	case GDX_LIVE_NIC_PORT:
		ret = gdx_qpstat_talk(gdx_qpstat_msg_port(gdx_qpstat_buf, sizeof(gdx_qpstat_buf),
							  seq, (uint32_t)p->dev_index,
							  (uint32_t)p->port),
				      seq, r, gdx_qpstat_first, NULL);
		if (!ret)
			gdx_qpstat_store(p, r, NULL);
		return ret;
	case GDX_LIVE_NIC_SYSFS:
		ret = gdx_qpstat_sysfs(p, r);
		if (!ret)
			gdx_qpstat_store(p, r, NULL);
		return ret;
	default: return 0;
	}
}

/* QP qpn bound to the port's counter (a new one when it has none):
 * 0, or the kernel's -errno. */
static int gdx_qpstat_bind(struct gdx_qpstat_port *p, uint32_t qpn)
{
	struct gdx_qpstat_reply *r = &gdx_qpstat_reply;
	uint32_t seq = gdx_qpstat_next_seq();
	int ret = gdx_qpstat_talk(gdx_qpstat_msg_bind(gdx_qpstat_buf, sizeof(gdx_qpstat_buf), seq,
						      (uint32_t)p->dev_index, (uint32_t)p->port,
						      qpn, p->counter_id),
				  seq, r, gdx_qpstat_first, NULL);

	if (ret)
		return ret;
	if (!r->has_counter || !r->counter_id)
		return -EBADMSG;
	p->counter_id = r->counter_id;
	return 0;
}

/* The port's source, chosen at its first QP, said once: its own counter
 * where the kernel binds one, else its totals by netlink, else sysfs. */
static void gdx_qpstat_decide(struct gdx_qpstat_port *p, uint32_t qpn)
{
	struct gdx_live_nic *l = p->live;
	char why[160] = "";
	int ret = p->dev_index < 0 ? (int)p->dev_index : gdx_qpstat_bind(p, qpn);

	p->decided = true;
	if (!ret) {
		l->source = GDX_LIVE_NIC_QP;
		l->counter_id = p->counter_id;
		GDX_INFO(NCCL_NET,
			 "%s/%d: NIC counters per QP: the plugin's QPs bound to counter %u "
			 "(rdma statistic qp show link %s/%d)",
			 p->ibdev, p->port, p->counter_id, p->ibdev, p->port);
		return;
	}
	snprintf(why, sizeof(why), "%s: %s%s",
		 p->dev_index < 0 ? "no RDMA netlink device" : "binding QPs refused",
		 strerror(-ret),
		 ret == -EPERM				? " (needs CAP_NET_ADMIN)"
		 : ret == -EOPNOTSUPP || ret == -ENOMEM ? " (the device has no per-QP counters)"
							: "");
	if (p->dev_index >= 0) {
		l->source = GDX_LIVE_NIC_PORT;
		if (!gdx_qpstat_read(p)) {
			GDX_INFO(NCCL_NET,
				 "%s/%d: NIC counters are the port's totals, every process's "
				 "(rdma statistic show link %s/%d), not per QP: %s",
				 p->ibdev, p->port, p->ibdev, p->port, why);
			return;
		}
	}
	l->source = GDX_LIVE_NIC_SYSFS;
	if (!gdx_qpstat_read(p)) {
		GDX_INFO(NCCL_NET,
			 "%s/%d: NIC counters are the port's totals, every process's, from sysfs "
			 "hw_counters, not per QP: %s",
			 p->ibdev, p->port, why);
		return;
	}
	l->source = GDX_LIVE_NIC_NONE;
	GDX_INFO(NCCL_NET, "%s/%d: no NIC counters: %s, and the port has no hw_counters in sysfs",
		 p->ibdev, p->port, why);
}

static struct gdx_qpstat_port *gdx_qpstat_port_of(const struct gdx_dev *dev, bool make)
{
	struct gdx_qpstat_port *p;

	for (int i = 0; i < gdx_qpstat_nports; i++)
		if (gdx_qpstat_ports[i].port == dev->ib_port &&
		    !strcmp(gdx_qpstat_ports[i].ibdev, dev->ibdev))
			return &gdx_qpstat_ports[i];
	if (!make || gdx_qpstat_nports == GDX_QPSTAT_PORTS)
		return NULL;
	p = &gdx_qpstat_ports[gdx_qpstat_nports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->ibdev, sizeof(p->ibdev), "%.31s", dev->ibdev);
	p->port = dev->ib_port;
	p->dev_index = gdx_qpstat_dev_index(p->ibdev);
	p->live = gdx_live_nic_open(&p->own, p->ibdev, p->port);
	return p;
}

void gdx_qpstat_qp_add(struct gdx_dev *dev, struct ibv_qp *qp)
{
	struct gdx_qpstat_port *p;

	pthread_mutex_lock(&gdx_qpstat_lock);
	p = gdx_qpstat_port_of(dev, true);
	if (!p)
		goto out;
	p->qps++;
	p->live->qps = (uint32_t)p->qps;
	if (!p->decided) {
		gdx_qpstat_decide(p, qp->qp_num);
	} else if (p->live->source == GDX_LIVE_NIC_QP) {
		uint32_t was = p->counter_id;
		int ret = gdx_qpstat_bind(p, qp->qp_num);

		if (ret && was) {
			/* the counter went with its last QP: a new one */
			for (uint32_t i = 0; i < p->live->ncounters; i++)
				p->base[i] = p->live->counters[i].value;
			p->counter_id = 0;
			ret = gdx_qpstat_bind(p, qp->qp_num);
		}
		if (ret) {
			p->counter_id = was;
			p->unbound++;
			GDX_INFO(NCCL_NET, "%s/%d: qp 0x%x not bound to a NIC counter: %s",
				 p->ibdev, p->port, qp->qp_num, strerror(-ret));
		}
		p->live->counter_id = p->counter_id;
		p->live->unbound = p->unbound;
	}
out:
	pthread_mutex_unlock(&gdx_qpstat_lock);
}

void gdx_qpstat_qp_del(struct gdx_dev *dev, struct ibv_qp *qp)
{
	struct gdx_qpstat_port *p;

	(void)qp;
	pthread_mutex_lock(&gdx_qpstat_lock);
	p = gdx_qpstat_port_of(dev, false);
	if (p && p->qps > 0) {
		p->qps--;
		p->live->qps = (uint32_t)p->qps;
	}
	/* the last QP gone: no descriptor is kept while no comm is open (the
	 * next QP opens the socket again) */
	for (int i = 0; i < gdx_qpstat_nports && gdx_qpstat_fd >= 0; i++)
		if (gdx_qpstat_ports[i].qps)
			goto out;
	if (gdx_qpstat_fd >= 0)
		close(gdx_qpstat_fd);
	gdx_qpstat_fd = -1;
out:
	pthread_mutex_unlock(&gdx_qpstat_lock);
}

void gdx_qpstat_tick(uint64_t now)
{
	uint64_t last = __atomic_load_n(&gdx_qpstat_last_ms, __ATOMIC_RELAXED);

	if (now - last < GDX_QPSTAT_EVERY_MS ||
	    !__atomic_compare_exchange_n(&gdx_qpstat_last_ms, &last, now, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	/* another thread reading them: this round is its */
	if (pthread_mutex_trylock(&gdx_qpstat_lock))
		return;
	for (int i = 0; i < gdx_qpstat_nports; i++)
		gdx_qpstat_read(&gdx_qpstat_ports[i]);
	pthread_mutex_unlock(&gdx_qpstat_lock);
}

/* Every port's counters read now, waiting for a reader that holds them (a
 * comm's close: its last figures stay in the slot). */
static void gdx_qpstat_refresh(void)
{
	pthread_mutex_lock(&gdx_qpstat_lock);
	for (int i = 0; i < gdx_qpstat_nports; i++)
		gdx_qpstat_read(&gdx_qpstat_ports[i]);
	pthread_mutex_unlock(&gdx_qpstat_lock);
}

static const char *gdx_qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",	   [IBV_QPS_SQD] = "SQD",   [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

/* "retry_exceeded_err 1, rcvd_seq_err 40" of the port's counters not zero,
 * read now, and where they come from. */
static void gdx_qpstat_text(const struct gdx_dev *dev, char *buf, size_t len)
{
	struct gdx_qpstat_port *p;
	size_t off = 0;

	buf[0] = '\0';
	pthread_mutex_lock(&gdx_qpstat_lock);
	p = gdx_qpstat_port_of(dev, false);
	if (!p || p->live->source == GDX_LIVE_NIC_NONE) {
		snprintf(buf, len, "no NIC counters");
		goto out;
	}
	gdx_qpstat_read(p);
	if (p->live->source == GDX_LIVE_NIC_QP)
		off = (size_t)snprintf(buf, len, "counter %u of its port's %d QPs:", p->counter_id,
				       p->qps);
	else
		off = (size_t)snprintf(buf, len,
				       "%s of %s/%d:", gdx_qpstat_source_name(p->live->source),
				       p->ibdev, p->port);
	for (uint32_t i = 0; i < p->live->ncounters && off < len; i++)
		if (p->live->counters[i].value)
			off += (size_t)snprintf(buf + off, len - off, " %s %llu,",
						p->live->counters[i].name,
						(unsigned long long)p->live->counters[i].value);
	if (off < len && buf[off - 1] == ',')
		buf[off - 1] = '\0';
	else if (off < len)
		snprintf(buf + off, len - off, " all zero");
out:
	pthread_mutex_unlock(&gdx_qpstat_lock);
}

void gdx_qpstat_dump(struct gdx_comm *c, int rail, const char *why)
{
	char counters[1024];

	for (int r = rail < 0 ? 0 : rail; r < (rail < 0 ? c->ch.nrails : rail + 1); r++) {
		struct gdx_rail *ra = &c->ch.rails[r];

		if (c->qp_dumped & (1u << r))
			continue;
		c->qp_dumped |= 1u << r;
		gdx_qpstat_text(ra->dev, counters, sizeof(counters));
		for (int i = 0; i < ra->nqps; i++) {
			struct gdx_qp *q = &ra->qps[i];
			struct ibv_qp_attr attr = {0};
			struct ibv_qp_init_attr init;
			char last[96];
			int ret;

			if (!q->qp)
				continue;
			ret = ibv_query_qp(q->qp, &attr, IBV_QP_STATE, &init);
			if (q->failed)
				snprintf(last, sizeof(last),
					 "last failed completion %s (status %d)",
					 ibv_wc_status_str((enum ibv_wc_status)q->failed_status),
					 q->failed_status);
			else
				snprintf(last, sizeof(last), "no failed completion (%u WRs done)",
					 q->wr_done);
			gdx_log(c->err ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_NET, __func__,
				__LINE__,
				GDX_LOG_PREFIX
				"%s rail %d (%s/%d), peer %s: qp 0x%x %s, %s; %s (%s)",
				c->dev_name, r, ra->dev->ibdev, ra->dev->ib_port, c->peer,
				q->qp->qp_num,
				ret ? "state unknown" : gdx_qp_state_name(attr.qp_state), last,
				counters, why);
		}
	}
}

void gdx_qpstat_closing(struct gdx_comm *c)
{
	/* a peer that went away (-ECONNRESET) says nothing of the QPs */
	bool lost = c->err && c->err != -ECONNRESET;

	for (int r = 0; r < c->ch.nrails; r++)
		lost |= c->ch.run[r].downs != 0;
	if (lost)
		gdx_qpstat_dump(c, -1, "closed after an error");
	gdx_qpstat_refresh();
}

void gdx_qpstat_fini(void)
{
	pthread_mutex_lock(&gdx_qpstat_lock);
	for (int i = 0; i < gdx_qpstat_nports; i++)
		gdx_live_nic_close(gdx_qpstat_ports[i].live, &gdx_qpstat_ports[i].own);
	gdx_qpstat_nports = 0;
	if (gdx_qpstat_fd >= 0)
		close(gdx_qpstat_fd);
	gdx_qpstat_fd = -1;
	__atomic_store_n(&gdx_qpstat_last_ms, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&gdx_qpstat_lock);
}
