/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band TCP socket: interface choice, non-blocking listen, connect
 * and accept, and resumable transfers. Every call returns 0, -EAGAIN ("not
 * yet, call again") or a negative errno; none of them ever blocks.
 */
#ifndef GDX_SOCK_H
#define GDX_SOCK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct gdx_sockaddr {
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} u;
	socklen_t len;
};

/* A transfer that resumes where the last call stopped. */
struct gdx_xfer {
	void *buf;
	size_t len;
	size_t off;
};

#define GDX_IFNAME_MAX 32

/* gdx_sock_pick_if() (below) over this host's interfaces. */
int gdx_sock_find_if(const char *spec, const char *family, struct gdx_sockaddr *addr_p,
		     char *ifname_p);

/* The names of this host's interfaces the choice could take (up, running,
 * an address that is not link-local, of family when given), each once,
 * joined by ", " into buf (cut between names, ", ..." then); how many
 * there are, or a negative errno with the reason in buf. */
int gdx_sock_list_ifs(const char *family, char *buf, size_t len);

/* Binds an ephemeral port on addr and listens; the socket is non-blocking. */
int gdx_sock_listen(const struct gdx_sockaddr *addr, int *fd_p, struct gdx_sockaddr *bound_p);
/* Starts a non-blocking connect; finish it with gdx_sock_connect_done(). */
int gdx_sock_connect_start(const struct gdx_sockaddr *to, int *fd_p);
int gdx_sock_connect_done(int fd);
/* -EAGAIN while nobody is waiting. */
int gdx_sock_accept(int lfd, int *fd_p);

/* 0 when x is complete, -EAGAIN, -ECONNRESET when the peer closed. */
int gdx_sock_send_some(int fd, struct gdx_xfer *x);
int gdx_sock_recv_some(int fd, struct gdx_xfer *x);

/* Whether the peer's end has closed (it died, or closed its comm): false
 * while it is open. Consumes nothing. */
bool gdx_sock_peer_gone(int fd);

void gdx_sock_addr_str(const struct gdx_sockaddr *a, char *buf, size_t len);

/* For the tests only: no other file of the plugin uses what follows. */

struct ifaddrs;

/*
 * Picks the out-of-band interface from list (getifaddrs's): those spec names,
 * in NCCL_SOCKET_IFNAME's syntax (prefix list, '^' excludes, '=' exact); or
 * when spec is empty as NCCL picks, ib* first, then any but docker*, lo and
 * virbr*, then those. Never a link-local address; IPv4 before IPv6 unless
 * family ("AF_INET", "AF_INET6", NCCL_SOCKET_FAMILY's values) forces one.
 * Returns 0, -ENODEV when none qualifies, -EINVAL for a malformed spec.
 */
int gdx_sock_pick_if(const struct ifaddrs *list, const char *spec, const char *family,
		     struct gdx_sockaddr *addr_p, char *ifname_p);
/* gdx_sock_list_ifs() over list. */
int gdx_sock_usable_ifs(const struct ifaddrs *list, const char *family, char *buf, size_t len);

#endif
