/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sys/gdx_name_list.h"
#include "sys/gdx_log.h"
#include "sys/gdx_sock.h"

static bool gdx_sock_if_link_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	/* 169.254/16: no route between hosts */
	return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 16) == 0xa9fe;
}

/*
 * NCCL's order of preference without NCCL_SOCKET_IFNAME: InfiniBand (ib*),
 * then anything but docker*, lo and virbr*, then those three as last
 * resorts. Link-local addresses never: they do not route between hosts.
 */
static int gdx_sock_if_class(const struct ifaddrs *ifa)
{
	if (!strncmp(ifa->ifa_name, "ib", 2))
		return 0;
	if (!strncmp(ifa->ifa_name, "docker", 6))
		return 2;
	if ((ifa->ifa_flags & IFF_LOOPBACK) || !strncmp(ifa->ifa_name, "lo", 2))
		return 3;
	if (!strncmp(ifa->ifa_name, "virbr", 5))
		return 4;
	return 1;
}

/* Up, running, with an IPv4 or IPv6 address that is not link-local, of the
 * family NCCL_SOCKET_FAMILY forces when it does. */
static bool gdx_sock_if_usable(const struct ifaddrs *ifa, const char *family)
{
	int fam;

	if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING))
		return false;
	fam = ifa->ifa_addr->sa_family;
	if ((fam != AF_INET && fam != AF_INET6) || gdx_sock_if_link_local(ifa->ifa_addr))
		return false;
	return !family || !((!strcmp(family, "AF_INET") && fam != AF_INET) ||
			    (!strcmp(family, "AF_INET6") && fam != AF_INET6));
}

int gdx_sock_usable_ifs(const struct ifaddrs *list, const char *family, char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
		bool seen = false;
		int w;

		if (!gdx_sock_if_usable(ifa, family))
			continue;
		/* an interface once, whatever its number of addresses */
		for (const struct ifaddrs *o = list; o != ifa && !seen; o = o->ifa_next)
			seen = gdx_sock_if_usable(o, family) && !strcmp(o->ifa_name, ifa->ifa_name);
		if (seen)
			continue;
		n++;
		if (used >= len)
			continue;
		w = snprintf(buf + used, len - used, "%s%s", n > 1 ? ", " : "", ifa->ifa_name);
		if (w < 0 || (size_t)w >= len - used) {
			/* cut between names, never inside one */
			buf[used] = '\0';
			if (used + 5 < len)
				strcat(buf, ", ...");
			used = len;
		} else {
			used += (size_t)w;
		}
	}
	return n;
}

int gdx_sock_list_ifs(const char *family, char *buf, size_t len)
{
	struct ifaddrs *ifas;
	int n;

	if (getifaddrs(&ifas)) {
		snprintf(buf, len, "(getifaddrs: %s)", strerror(errno));
		return -errno;
	}
	n = gdx_sock_usable_ifs(ifas, family, buf, len);
	freeifaddrs(ifas);
	return n;
}

int gdx_sock_pick_if(const struct ifaddrs *list, const char *spec, const char *family,
		     struct gdx_sockaddr *addr_p, char *ifname_p)
{
	struct gdx_name_list filter;
	const struct ifaddrs *best = NULL;
	int best_rank = 0;
	const char *err;
	bool given = spec && *spec;

	if (gdx_name_list_parse(spec, false, &filter, &err)) {
		GDX_WARN("interface list %s is malformed: %s", GDX_LOG_QUOTED(spec), err);
		return -EINVAL;
	}
	for (const struct ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
		int rank;

		if (!gdx_sock_if_usable(ifa, family))
			continue;
		if (given && !gdx_name_list_match(&filter, ifa->ifa_name, -1))
			continue;
		/* lower is better: the class (none when named), then IPv4, then order */
		rank = (given ? 0 : gdx_sock_if_class(ifa)) * 2 +
		       (ifa->ifa_addr->sa_family == AF_INET6) + 1;
		if (!best || rank < best_rank) {
			best = ifa;
			best_rank = rank;
		}
	}
	if (!best)
		return -ENODEV;
	memset(addr_p, 0, sizeof(*addr_p));
	addr_p->len = best->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
							   : sizeof(struct sockaddr_in6);
	memcpy(&addr_p->u, best->ifa_addr, addr_p->len);
	snprintf(ifname_p, GDX_IFNAME_MAX, "%s", best->ifa_name);
	return 0;
}

int gdx_sock_find_if(const char *spec, const char *family, struct gdx_sockaddr *addr_p,
		     char *ifname_p)
{
	struct ifaddrs *ifas;
	int ret;

	if (getifaddrs(&ifas))
		return -errno;
	ret = gdx_sock_pick_if(ifas, spec, family, addr_p, ifname_p);
	freeifaddrs(ifas);
	return ret;
}

static int gdx_sock_new(int family, int *fd_p)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -errno;
	/* The handshake is a few small messages each way. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fd_p = fd;
	return 0;
}

int gdx_sock_listen(const struct gdx_sockaddr *addr, int *fd_p, struct gdx_sockaddr *bound_p)
{
	struct gdx_sockaddr a = *addr;
	int fd, ret;

	ret = gdx_sock_new(a.u.sa.sa_family, &fd);
	if (ret)
		return ret;
	if (a.u.sa.sa_family == AF_INET)
		a.u.in.sin_port = 0;
	else
		a.u.in6.sin6_port = 0;
	if (bind(fd, &a.u.sa, a.len) || listen(fd, 128))
		goto err_close;
	bound_p->len = sizeof(bound_p->u);
	if (getsockname(fd, &bound_p->u.sa, &bound_p->len))
		goto err_close;
	*fd_p = fd;
	return 0;

err_close:
	ret = -errno;
	close(fd);
	return ret;
}

int gdx_sock_connect_start(const struct gdx_sockaddr *to, int *fd_p)
{
	int fd, ret;

	ret = gdx_sock_new(to->u.sa.sa_family, &fd);
	if (ret)
		return ret;
	if (connect(fd, &to->u.sa, to->len) && errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*fd_p = fd;
	return 0;
}

int gdx_sock_connect_done(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, 0) < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (!p.revents)
		return -EAGAIN;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	return -err;
}

int gdx_sock_accept(int lfd, int *fd_p)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int one = 1;

	if (fd < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
			errno == ECONNABORTED)
			       ? -EAGAIN
			       : -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fd_p = fd;
	return 0;
}

static int gdx_sock_io_err(void)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return -EAGAIN;
	if (errno == EPIPE)
		return -ECONNRESET;
	return -errno;
}

int gdx_sock_send_some(int fd, struct gdx_xfer *x)
{
	while (x->off < x->len) {
		ssize_t n = send(fd, (char *)x->buf + x->off, x->len - x->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return gdx_sock_io_err();
		x->off += (size_t)n;
	}
	return 0;
}

int gdx_sock_recv_some(int fd, struct gdx_xfer *x)
{
	while (x->off < x->len) {
		ssize_t n = recv(fd, (char *)x->buf + x->off, x->len - x->off, MSG_DONTWAIT);

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return gdx_sock_io_err();
		x->off += (size_t)n;
	}
	return 0;
}

bool gdx_sock_peer_gone(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0)
		return true;
	return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

void gdx_sock_addr_str(const struct gdx_sockaddr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->u.sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->u.in.sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(a->u.in.sin_port));
	} else if (a->u.sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->u.in6.sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(a->u.in6.sin6_port));
	} else {
		snprintf(buf, len, "(family %d)", a->u.sa.sa_family);
	}
}
