/* SPDX-License-Identifier: MIT */
/*
 * The NIC's own counters for the plugin's QPs (gdx_qpstat.c): what `rdma
 * statistic qp` shows, asked of the kernel over RDMA netlink (NETLINK_RDMA,
 * RDMA_NLDEV_CMD_STAT_*) with a raw socket. Each QP is bound, as it is
 * made, to one counter per NIC port of the process's (the kernel's manual
 * mode, as `rdma statistic qp bind link DEV/PORT lqpn N` does); where the
 * kernel refuses (binding wants CAP_NET_ADMIN; soft devices such as rxe
 * have no per-QP counters) the port's totals stand in, every process's
 * (`rdma statistic show link DEV/PORT`), else sysfs hw_counters; one INFO
 * line per port says which. They are read about once a second, by a comm
 * that waits (gdx_cq_check_peer), never on the data path, each netlink
 * answer waited for a bounded time, into a live slot per port (role
 * GDX_LIVE_NIC, gdx_live_layout.h) that gdx-doctor top shows. A comm whose
 * QP failed writes one line per QP: its number, state, last completion
 * status and its port's counters.
 */
#ifndef GDX_QPSTAT_H
#define GDX_QPSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gdx/gdx_live_layout.h>

struct gdx_comm;
struct gdx_dev;
struct ibv_qp;

/* ---- the plugin's side ---- */

/* QP qp of device dev, at INIT (its port set): bound to the port's counter,
 * or the port's totals chosen the first time (one INFO line per port).
 * Before ibv_destroy_qp: it is no longer counted. Control path only: a
 * netlink round trip, a bounded wait. */
void gdx_qpstat_qp_add(struct gdx_dev *dev, struct ibv_qp *qp);
void gdx_qpstat_qp_del(struct gdx_dev *dev, struct ibv_qp *qp);
/* Every port's counters read into its live slot when a second has passed
 * since the last read; it never waits for another thread that reads. */
void gdx_qpstat_tick(uint64_t now_ms);
/* One line per QP of the comm (GDX_WARN when it failed, else INFO): qp
 * number, state (ibv_query_qp), last completion status, and the counters
 * of its port read now (those not zero). why says what led to it. Once per
 * rail of a comm; rail < 0: every rail, else that one (a rail taken out). */
void gdx_qpstat_dump(struct gdx_comm *c, int rail, const char *why);
/* A comm closes: its ports' last figures read into their slots; the lines
 * of its rails not yet written when it failed or lost a rail. */
void gdx_qpstat_closing(struct gdx_comm *c);
/* At the last finalize: the live slots given back, the socket closed, the
 * ports forgotten (the next init starts again). */
void gdx_qpstat_fini(void);

/* The source's name: "qp counter", "port totals", "sysfs port totals", "none". */
const char *gdx_qpstat_source_name(uint32_t source);

/* For the tests only: no other file of the plugin uses what follows. The
 * netlink messages, built and parsed without a socket. */

/* What one netlink message said. */
enum gdx_qpstat_msg {
	GDX_QPSTAT_MSG_DATA = 0, /* an answer: the fields below */
	GDX_QPSTAT_MSG_DONE,	 /* the end of a dump */
	GDX_QPSTAT_MSG_ERROR,	 /* the kernel's error (err: 0 or -errno) */
};

struct gdx_qpstat_reply {
	enum gdx_qpstat_msg kind;
	int err;
	uint32_t seq;
	bool has_dev, has_port, has_counter;
	uint32_t dev_index, port, counter_id;
	char dev_name[64];
	int n;	  /* counters, as the kernel listed them */
	bool cut; /* more than GDX_LIVE_NIC_COUNTERS: the rest left out */
	struct gdx_live_nic_counter c[GDX_LIVE_NIC_COUNTERS];
};

/* Requests into buf (len bytes): the message's length, or -EMSGSIZE. A
 * dump of the RDMA devices (their indexes by name); a port's totals; a QP
 * bound to counter_id (0: to a new one); a bound counter's values. */
int gdx_qpstat_msg_devs(void *buf, size_t len, uint32_t seq);
int gdx_qpstat_msg_port(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port);
int gdx_qpstat_msg_bind(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port,
			uint32_t qpn, uint32_t counter_id);
int gdx_qpstat_msg_counter(void *buf, size_t len, uint32_t seq, uint32_t dev, uint32_t port,
			   uint32_t counter_id);

/*
 * The first netlink message of the len bytes at buf (a datagram the kernel
 * sent, or anything: nothing in it is trusted) into r; *used gets its
 * length, aligned, so that the caller steps to the next. Returns 0, or
 * -EBADMSG when a length is out of bounds (the message's, an attribute's)
 * or a counter lacks its name or value, -ENODATA for an empty buffer.
 * Counters past GDX_LIVE_NIC_COUNTERS are left out (r->cut); names are
 * cut to fit and always terminated.
 */
int gdx_qpstat_parse(const void *buf, size_t len, struct gdx_qpstat_reply *r, size_t *used);

#endif
