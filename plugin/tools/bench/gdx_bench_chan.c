/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench's side channel: the listen handles and the go bytes between the
 * two ends. Pipes when both run here; one TCP connection when the client is
 * on another machine. The server listens on the plugin's out-of-band
 * interface only, and takes as its client only a connection that proves it
 * knows the token the server printed for this run (a challenge each way,
 * SipHash-2-4 under the token: the token never crosses the wire): nothing,
 * the plugin's handles least of all, goes to anyone else, and a connection
 * that says nothing is closed after BENCH_PROOF_S while the server goes on
 * listening. Then a hello that carries the server's options, so that both
 * ends run the same test.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sys/gdx_door.h"
#include "sys/gdx_sock.h"
#include "sys/gdx_time.h"
#include "tools/common/gdx_escape.h"

#include "tools/bench/gdx_bench_state.h"
#include "tools/common/gdx_json.h" /* json_siphash_keyed */

#define BENCH_CHAN_MAGIC 0x47445842u /* "GDXB" */
/* 2: the client proves the server's token before anything is sent to it;
 * 3: each end says who it is, and the server sends the client its figures */
#define BENCH_CHAN_VERSION 3u
/* How often a client that keeps trying says so. */
#define BENCH_DIAL_PROGRESS_S 5
/* A connection to the server has this long to prove the token, and this
 * many are being proven at once (the oldest closed for a new one): a client
 * that says nothing, or many, hold the server no longer. */
#define BENCH_PROOF_S	10
#define BENCH_PROOF_MAX 64
/* Connections the kernel queues before they are taken. */
#define BENCH_BACKLOG 128

/* What each side mixes into its proof, so that one side's proof is never
 * the other's. */
static const char bench_client_words[16] = "gdx-bench client";
static const char bench_server_words[16] = "gdx-bench server";

/* The server's first words: a challenge, fresh for each connection. */
struct bench_challenge {
	uint32_t magic, version;
	uint8_t nonce[16];
};

/* The client's proof: a challenge of its own and SipHash-2-4, under the
 * token, of both challenges: the token itself never crosses the wire. */
struct bench_proof {
	uint32_t magic, version;
	uint8_t nonce[16];
	uint64_t tag;
};

/* The server's options, and its own proof over them and both challenges:
 * a client runs only what the server that printed the token sent. */
struct bench_hello {
	uint32_t magic, version;
	uint32_t mode, factor, iters, warmup, depth, pad;
	uint64_t min_size, max_size;
	uint64_t tag;
};

/* SipHash-2-4 under the token of words, the two challenges (first, second)
 * and what follows (len bytes, or none). */
static uint64_t bench_tag(const uint8_t token[16], const char words[16], const uint8_t *first,
			  const uint8_t *second, const void *more, size_t len)
{
	uint8_t buf[48 + sizeof(struct bench_hello)];
	uint64_t key[2];

	memcpy(key, token, sizeof(key));
	key[0] = le64toh(key[0]);
	key[1] = le64toh(key[1]);
	memcpy(buf, words, 16);
	memcpy(buf + 16, first, 16);
	memcpy(buf + 32, second, 16);
	if (len)
		memcpy(buf + 48, more, len);
	return htole64(json_siphash_keyed(key, buf, 48 + len));
}

/* Equal, in a time that says nothing of where they differ. */
static bool bench_same(uint64_t a, uint64_t b)
{
	volatile uint64_t d = a ^ b;

	return d == 0;
}

static void bench_random(void *buf, size_t len)
{
	if (getrandom(buf, len, 0) != (ssize_t)len)
		bench_die("getrandom: %s", strerror(errno));
}

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

/* The address -S listens on: the interface the plugin's out-of-band
 * traffic takes (NCCL_GDX_SOCKET_IFNAME, else NCCL_SOCKET_IFNAME, else as
 * NCCL picks: gdx_sock.h), never every address of the machine. */
static void bench_chan_addr(int port, struct gdx_sockaddr *addr, char *ifname)
{
	const char *spec = getenv("NCCL_GDX_SOCKET_IFNAME"), *var = "NCCL_GDX_SOCKET_IFNAME";
	const char *family = getenv("NCCL_SOCKET_FAMILY");
	char have[512];
	int ret;

	if (!spec || !*spec) {
		spec = getenv("NCCL_SOCKET_IFNAME");
		var = "NCCL_SOCKET_IFNAME";
	}
	if (spec && strlen(spec) < 2)
		spec = NULL; /* NCCL takes its variable only when longer than one character */
	ret = gdx_sock_find_if(spec ? spec : "", family, addr, ifname);
	if (ret && ret != -ENODEV)
		bench_die("no interface to listen on: %s", strerror(-ret));
	/* the value matched nothing: what there is to choose from */
	if (ret && spec && gdx_sock_list_ifs(family, have, sizeof(have)) > 0) {
		char shown[GDX_ESCAPE_LEN(80)];

		gdx_escape(GDX_ESCAPE_TEXT, spec, shown, sizeof(shown));
		bench_die("%s=\"%s\" matches none of this host's usable interfaces (up, with an "
			  "address that is not link-local): %s",
			  var, shown, have);
	}
	if (ret)
		bench_die("no interface to listen on: this host has none up with an address that "
			  "is not link-local");
	if (addr->u.sa.sa_family == AF_INET)
		addr->u.in.sin_port = htons((uint16_t)port);
	else
		addr->u.in6.sin6_port = htons((uint16_t)port);
}

/*
 * The server's door (sys/gdx_door.h), as the plugin's listeners have it: a
 * connection gets the challenge as it is taken and has BENCH_PROOF_S to
 * send its proof; BENCH_PROOF_MAX are proven at once, and the oldest
 * unproven one is closed for a new one, so no silent connection, nor a
 * flood of them, holds up the client that proves the token. What is closed
 * costs a few lines a second, however many connections come.
 */
struct bench_serve {
	const uint8_t *token;
	int fd; /* the client, once it proved the token */
	uint8_t nonces[32];
	char from[80];
	time_t said_s; /* the second lines were said in, and how many */
	int said;
	uint32_t unsaid; /* closed for what they sent, past the lines' limit */
};

/* Lines about single connections, in one second at most. */
#define BENCH_SAY_MAX 5

static void bench_said(struct bench_serve *s, const char *from, const char *why)
{
	time_t now = time(NULL);

	if (now != s->said_s) {
		s->said_s = now;
		s->said = 0;
	}
	if (s->said++ >= BENCH_SAY_MAX) {
		s->unsaid++;
		return;
	}
	fprintf(stderr, "gdx-bench: closed the connection from %s: %s; still waiting\n", from, why);
}

/* The challenge, fresh for each connection. */
static int bench_greet(void *arg, struct gdx_door_conn *c)
{
	struct bench_challenge ch = {.magic = htobe32(BENCH_CHAN_MAGIC),
				     .version = htobe32(BENCH_CHAN_VERSION)};

	(void)arg;
	_Static_assert(sizeof(ch) <= GDX_DOOR_GREETING_MAX, "the door writes the challenge");
	bench_random(ch.nonce, sizeof(ch.nonce));
	memcpy(c->greeting, &ch, sizeof(ch));
	c->greeting_len = sizeof(ch);
	return 0;
}

/* A whole proof: kept when it proves the token under c's challenge. */
static int bench_check(void *arg, struct gdx_door_conn *c)
{
	struct bench_serve *s = arg;
	struct bench_challenge ch;
	struct bench_proof proof;

	_Static_assert(sizeof(proof) <= GDX_DOOR_HELLO_MAX, "the door reads a proof whole");
	memcpy(&ch, c->greeting, sizeof(ch));
	memcpy(&proof, c->hello, sizeof(proof));
	if (be32toh(proof.magic) != BENCH_CHAN_MAGIC ||
	    be32toh(proof.version) != BENCH_CHAN_VERSION) {
		bench_said(s, c->peer, "not gdx-bench side-channel version 3");
		return -EPROTO;
	}
	if (!bench_same(proof.tag,
			bench_tag(s->token, bench_client_words, ch.nonce, proof.nonce, NULL, 0))) {
		bench_said(s, c->peer, "it did not prove the token (a wrong --token)");
		return -EACCES;
	}
	if (s->fd >= 0) {
		bench_said(s, c->peer, "another client proved the token first");
		return -EEXIST;
	}
	s->fd = c->fd;
	memcpy(s->nonces, ch.nonce, 16);
	memcpy(s->nonces + 16, proof.nonce, 16);
	snprintf(s->from, sizeof(s->from), "%s", c->peer);
	return 0;
}

static void bench_lost(void *arg, const struct gdx_door_conn *c, int err)
{
	(void)err;
	bench_said(arg, c->peer, "it closed before proving the token");
}

/* What the door closed unread since the last line: one connection in the
 * words of one, more in one line. */
static void bench_tell_shed(struct bench_serve *s, const struct gdx_door_shed *d)
{
	uint32_t n = d->silent + d->busy + d->full;

	if (!n) {
		fprintf(stderr,
			"gdx-bench: closed %u more connection(s) that closed or sent no proof of "
			"the token; still waiting\n",
			s->unsaid);
		s->unsaid = 0;
		return;
	}
	if (n == 1 && !s->unsaid) {
		fprintf(stderr, "gdx-bench: closed the connection from %s: %s; still waiting\n",
			d->full ? d->full_last : d->last,
			d->silent ? "no proof of the token within 10 s"
				  : "more connections came than are proven at once");
		return;
	}
	fprintf(stderr,
		"gdx-bench: closed %u connection(s) that proved nothing: %u without a proof "
		"within %d s, %u the oldest of more than %d being proven at once (the last from "
		"%s), %u more that closed or sent no proof of the token; still waiting\n",
		n, d->silent, BENCH_PROOF_S, d->busy + d->full, BENCH_PROOF_MAX,
		d->full ? d->full_last : d->last, s->unsaid);
	s->unsaid = 0;
}

int bench_chan_serve(int port, const uint8_t token[16], uint8_t nonces[32])
{
	struct bench_serve s = {.token = token, .fd = -1};
	const struct gdx_door_ops ops = {
		.hello_len = sizeof(struct bench_proof),
		.hello_ms = BENCH_PROOF_S * 1000,
		.max_held = BENCH_PROOF_MAX,
		.max_per_addr = BENCH_PROOF_MAX,
		.greet = bench_greet,
		.check = bench_check,
		.lost = bench_lost,
		.arg = &s,
	};
	struct gdx_sockaddr addr;
	struct gdx_door door;
	char ifname[GDX_IFNAME_MAX], shown[80], hex[33];
	int one = 1, lfd;

	bench_chan_addr(port, &addr, ifname);
	gdx_sock_addr_str(&addr, shown, sizeof(shown));
	lfd = socket(addr.u.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		bench_die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, &addr.u.sa, addr.len) || listen(lfd, BENCH_BACKLOG))
		bench_die("cannot listen on %s (%s): %s", shown, ifname, strerror(errno));
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", token[i]);
	fprintf(stderr,
		"gdx-bench: waiting for a client on %s (%s); this run's token: %s\n"
		"gdx-bench: the client: gdx-bench -C HOST -p %d --token %s\n",
		shown, ifname, hex, port, hex);
	gdx_door_init(&door, lfd, &ops);
	while (s.fd < 0) {
		struct pollfd fds[1 + GDX_DOOR_MAX];
		struct gdx_door_shed shed;
		bool due;
		int budget = 2 * BENCH_PROOF_MAX, n = gdx_door_pollfds(&door, fds);

		if (poll(fds, (nfds_t)n, 1000) < 0 && errno != EINTR)
			bench_die("poll: %s", strerror(errno));
		/* out of descriptors: those held go by their deadline */
		gdx_door_take(&door, &budget, gdx_now_ms());
		gdx_door_sweep(&door, gdx_now_ms());
		due = gdx_door_tell(&door, gdx_now_ms(), false, &shed);
		if (!due && s.unsaid && time(NULL) != s.said_s) {
			memset(&shed, 0, sizeof(shed));
			due = true; /* those past the lines' limit, a second later */
		}
		if (due)
			bench_tell_shed(&s, &shed);
	}
	/* the client: the others go, and so does the listening socket */
	gdx_door_close(&door);
	close(lfd);
	memcpy(nonces, s.nonces, 32);
	fprintf(stderr, "gdx-bench: the client at %s proved the token\n", s.from);
	bench_set_link("the client at %s", s.from);
	one = fcntl(s.fd, F_GETFL);
	fcntl(s.fd, F_SETFL, one & ~O_NONBLOCK);
	setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	return s.fd;
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

void bench_chan_send_opts(int fd, const struct bench_opts *o, const uint8_t nonces[32])
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

	/* the server's proof: over the client's challenge first */
	h.tag = bench_tag(o->token, bench_server_words, nonces + 16, nonces, &h,
			  offsetof(struct bench_hello, tag));
	bench_xfer(fd, &h, sizeof(h), 1);
	bench_xfer(fd, &reply, sizeof(reply), 0);
	if (be32toh(reply.magic) != BENCH_CHAN_MAGIC ||
	    be32toh(reply.version) != BENCH_CHAN_VERSION)
		bench_die("the client is not gdx-bench side-channel version %u (magic 0x%08x, "
			  "version %u)",
			  BENCH_CHAN_VERSION, be32toh(reply.magic), be32toh(reply.version));
}

/* Reads len bytes the server sends, or dies saying what it is not. */
static void bench_chan_read(int fd, void *buf, size_t len, const char *what)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			bench_die("the server closed the side channel %s", what);
		done += (size_t)r;
	}
}

void bench_chan_recv_opts(int fd, struct bench_opts *o)
{
	struct bench_challenge ch;
	struct bench_proof proof = {.magic = htobe32(BENCH_CHAN_MAGIC),
				    .version = htobe32(BENCH_CHAN_VERSION)};
	struct bench_hello h;

	bench_chan_read(fd, &ch, sizeof(ch), "before it said anything");
	if (be32toh(ch.magic) != BENCH_CHAN_MAGIC || be32toh(ch.version) != BENCH_CHAN_VERSION)
		bench_die("the server is not gdx-bench side-channel version %u (magic 0x%08x, "
			  "version %u)",
			  BENCH_CHAN_VERSION, be32toh(ch.magic), be32toh(ch.version));
	bench_random(proof.nonce, sizeof(proof.nonce));
	proof.tag = bench_tag(o->token, bench_client_words, ch.nonce, proof.nonce, NULL, 0);
	bench_xfer(fd, &proof, sizeof(proof), 1);
	bench_chan_read(fd, &h, sizeof(h),
			"after this client's proof: a wrong --token (the server's own output "
			"says)");
	if (be32toh(h.magic) != BENCH_CHAN_MAGIC || be32toh(h.version) != BENCH_CHAN_VERSION)
		bench_die("the server is not gdx-bench side-channel version %u (magic 0x%08x, "
			  "version %u)",
			  BENCH_CHAN_VERSION, be32toh(h.magic), be32toh(h.version));
	if (!bench_same(h.tag, bench_tag(o->token, bench_server_words, proof.nonce, ch.nonce, &h,
					 offsetof(struct bench_hello, tag))))
		bench_die("the server did not prove the token: not the gdx-bench server that "
			  "printed it");
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

/* What the other end said of itself, cut to what prints as itself. */
static void bench_name_clean(char *s)
{
	s[BENCH_NAME_MAX - 1] = '\0';
	for (char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._+:-", *p))
			*p = '?';
}

void bench_who_send(int fd, const char *dev)
{
	struct bench_who w = {{0}};

	if (gethostname(w.host, sizeof(w.host) - 1))
		snprintf(w.host, sizeof(w.host), "?");
	w.host[sizeof(w.host) - 1] = '\0';
	snprintf(w.dev, sizeof(w.dev), "%s", dev);
	bench_xfer(fd, &w, sizeof(w), 1);
}

void bench_who_recv(int fd, struct bench_who *w)
{
	bench_xfer(fd, w, sizeof(*w), 0);
	bench_name_clean(w->host);
	bench_name_clean(w->dev);
}

/* Figures cross as the bits of their doubles, big-endian. */
static uint64_t bench_bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return htobe64(u);
}

static double bench_unbits(uint64_t u)
{
	double v;

	u = be64toh(u);
	memcpy(&v, &u, sizeof(v));
	return v;
}

void bench_fig_send(int fd, const struct bench_fig *f)
{
	uint64_t w[4] = {bench_bits(f->secs), bench_bits(f->med), bench_bits(f->p99),
			 bench_bits(f->min)};

	bench_xfer(fd, w, sizeof(w), 1);
}

void bench_fig_recv(int fd, struct bench_fig *f)
{
	uint64_t w[4];

	bench_xfer(fd, w, sizeof(w), 0);
	*f = (struct bench_fig){bench_unbits(w[0]), bench_unbits(w[1]), bench_unbits(w[2]),
				bench_unbits(w[3])};
}

void bench_counts_send(int fd, const unsigned long long counts[2])
{
	uint64_t w[2] = {htobe64(counts[0]), htobe64(counts[1])};

	bench_xfer(fd, w, sizeof(w), 1);
}

void bench_counts_recv(int fd, unsigned long long counts[2])
{
	uint64_t w[2];

	bench_xfer(fd, w, sizeof(w), 0);
	counts[0] = be64toh(w[0]);
	counts[1] = be64toh(w[1]);
}
