/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench's side channel: the listen handles and the go bytes between the
 * two ends. Pipes when both run here; one TCP connection when the client is
 * on another machine, opened by a hello that names the program and carries
 * the server's options, so that both ends run the same test.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gdx_bench.h"

#define BENCH_CHAN_MAGIC   0x47445842u /* "GDXB" */
#define BENCH_CHAN_VERSION 1u
/* How often a client that keeps trying says so. */
#define BENCH_DIAL_PROGRESS_S 5

struct bench_hello {
	uint32_t magic, version;
	uint32_t mode, factor, iters, warmup, depth, pad;
	uint64_t min_size, max_size;
};

void bench_xfer(int fd, void *buf, size_t len, int writing)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = writing ? write(fd, (char *)buf + done, len - done)
				    : read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			bench_die(
				"the other end closed the side channel (it failed or was stopped: "
				"its own output says why)");
		done += (size_t)n;
	}
}

int bench_chan_serve(int port)
{
	struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	int one = 1, zero = 0, lfd, fd;

	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		bench_die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)); /* IPv4 too */
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1))
		bench_die("cannot listen on port %d: %s", port, strerror(errno));
	fprintf(stderr, "gdx-bench: waiting for a client on port %d\n", port);
	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		bench_die("accept: %s", strerror(errno));
	close(lfd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int bench_chan_dial(const char *host, int port, int wait)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	time_t start = time(NULL), said = 0;
	char svc[16];
	int one = 1, err;

	snprintf(svc, sizeof(svc), "%d", port);
	err = getaddrinfo(host, svc, &hints, &res);
	if (err)
		bench_die("cannot resolve %s: %s", host, gai_strerror(err));
	for (;;) {
		time_t now;

		for (ai = res; ai; ai = ai->ai_next) {
			int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
					ai->ai_protocol);

			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				if (said)
					fprintf(stderr, "gdx-bench: reached %s port %d\n", host,
						port);
				return fd;
			}
			err = errno;
			close(fd);
		}
		now = time(NULL);
		if (now - start >= wait)
			bench_die(
				"cannot reach a gdx-bench server at %s port %d: %s (tried for %d s)",
				host, port, strerror(err), wait);
		/* The server may not be up yet: say so at once, then now and then. */
		if (!said || now - said >= BENCH_DIAL_PROGRESS_S) {
			fprintf(stderr,
				"gdx-bench: cannot reach %s port %d yet (%s); retrying, %d s left\n",
				host, port, strerror(err), (int)(wait - (now - start)));
			said = now;
		}
		sleep(1);
	}
}

void bench_chan_send_opts(int fd, const struct bench_opts *o)
{
	struct bench_hello h = {
		.magic = htobe32(BENCH_CHAN_MAGIC),
		.version = htobe32(BENCH_CHAN_VERSION),
		.mode = htobe32((uint32_t)o->mode),
		.factor = htobe32((uint32_t)o->factor),
		.iters = htobe32((uint32_t)o->iters),
		.warmup = htobe32((uint32_t)o->warmup),
		.depth = htobe32((uint32_t)o->depth),
		.min_size = htobe64(o->min_size),
		.max_size = htobe64(o->max_size),
	};
	struct bench_hello reply;

	bench_xfer(fd, &h, sizeof(h), 1);
	bench_xfer(fd, &reply, sizeof(reply), 0);
	if (be32toh(reply.magic) != BENCH_CHAN_MAGIC ||
	    be32toh(reply.version) != BENCH_CHAN_VERSION)
		bench_die("the client is not gdx-bench side-channel version %u (magic 0x%08x, "
			  "version %u)",
			  BENCH_CHAN_VERSION, be32toh(reply.magic), be32toh(reply.version));
}

void bench_chan_recv_opts(int fd, struct bench_opts *o)
{
	struct bench_hello h;

	bench_xfer(fd, &h, sizeof(h), 0);
	if (be32toh(h.magic) != BENCH_CHAN_MAGIC || be32toh(h.version) != BENCH_CHAN_VERSION)
		bench_die("the server is not gdx-bench side-channel version %u (magic 0x%08x, "
			  "version %u)",
			  BENCH_CHAN_VERSION, be32toh(h.magic), be32toh(h.version));
	o->mode = (enum bench_mode)be32toh(h.mode);
	o->factor = (int)be32toh(h.factor);
	o->iters = (int)be32toh(h.iters);
	o->warmup = (int)be32toh(h.warmup);
	o->depth = (int)be32toh(h.depth);
	o->min_size = be64toh(h.min_size);
	o->max_size = be64toh(h.max_size);
	if (o->mode > BENCH_LAT || o->factor < 2 || o->iters < 1 || o->warmup < 0 || o->depth < 1 ||
	    o->depth > 32 || o->max_size > BENCH_SIZE_MAX || o->min_size > o->max_size)
		bench_die("the server sent options out of range (mode %d, depth %d, sizes %zu-%zu)",
			  (int)o->mode, o->depth, o->min_size, o->max_size);
	h.magic = htobe32(BENCH_CHAN_MAGIC);
	h.version = htobe32(BENCH_CHAN_VERSION);
	bench_xfer(fd, &h, sizeof(h), 1);
}
