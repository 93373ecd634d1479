/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's out-of-band ring (rma/gdx_rma_boot.h) against connections
 * that are not a rank's: the ring needs only sockets, so its ranks run here
 * as threads on loopback, with no RDMA device. Silent connections, many
 * from one address and from several, made before and while the ranks
 * connect, and hellos that are not the ring's, delay no rank: connect is
 * whole within a few hello deadlines (0.4.3 waited on the first silent one
 * until its ten handshake timeouts ran out), and an all-gather over it
 * then carries every rank's bytes. A connection that knows a rank's handle
 * and claims to be its previous rank, racing the real one, is never
 * silent: either it is not answered, or a rank's connect fails with a WARN
 * that names the ring; two such claims at once refuse the ring.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rma/gdx_rma_boot.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

#include "gdx_test.h"

#define RANKS 4
#define BLOCK 256
/* the hello deadline here, and the ring's whole wait (ten of these) */
#define HELLO_MS	"300"
#define HANDSHAKE_MS	"2000"
#define WITHIN_HELLOS_S 1.5 /* a few hello deadlines */

/* ---- a logger for many threads ---- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_warn_text[1 << 15];

__attribute__((format(printf, 5, 6))) static void ring_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level != NCCL_LOG_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (strlen(log_warn_text) + strlen(msg) + 2 < sizeof(log_warn_text)) {
		strcat(log_warn_text, msg);
		strcat(log_warn_text, "\n");
	}
	pthread_mutex_unlock(&log_lock);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- ranks ---- */

struct rank {
	int rank, nranks, lfd, ret;
	uint64_t nonce;
	struct gdx_rma_handle handle;
	void **handles;
	struct gdx_rma_boot boot;
	uint8_t all[RANKS * BLOCK];
	double took_s;
	pthread_t thread;
	bool gather; /* an all-gather after the ring */
};

static void setup(void)
{
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", HELLO_MS, 1);
	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", HANDSHAKE_MS, 1);
	gdx_log_set(ring_logger);
	ASSERT_EQ(gdx_params_load(), 0);
	log_warn_text[0] = '\0';
}

static void ranks_listen(struct rank *r, int n, void **handles)
{
	char addr[64];

	for (int i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].rank = i;
		r[i].nranks = n;
		r[i].handles = handles;
		r[i].gather = true;
		ASSERT_EQ(gdx_rma_boot_listen(&r[i].handle, &r[i].lfd, &r[i].nonce, addr,
					      sizeof(addr)),
			  0);
		handles[i] = &r[i].handle;
	}
}

static void block_fill(uint8_t *b, int rank)
{
	for (int i = 0; i < BLOCK; i++)
		b[i] = (uint8_t)(rank * 37 + i);
}

static void *rank_run(void *arg)
{
	struct rank *r = arg;
	double t0 = now_s();

	r->ret = gdx_rma_boot_ring(&r->boot, r->lfd, r->nonce, r->handles, r->nranks, r->rank);
	r->took_s = now_s() - t0;
	if (!r->ret && r->gather) {
		block_fill(r->all + (size_t)r->rank * BLOCK, r->rank);
		r->ret = gdx_rma_boot_allgather(&r->boot, r->all, BLOCK, "test");
	}
	return NULL;
}

static void rank_start(struct rank *r)
{
	ASSERT_EQ(pthread_create(&r->thread, NULL, rank_run, r), 0);
}

static void ranks_end(struct rank *r, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_join(r[i].thread, NULL);
		if (r[i].ret == 0)
			gdx_rma_boot_close(&r[i].boot);
		close(r[i].lfd);
	}
}

/* Every rank's connect whole, quickly, and every block where it belongs. */
static void ranks_check(const struct rank *r, int n)
{
	for (int i = 0; i < n; i++) {
		if (r[i].ret)
			printf("# rank %d: %s\n%s", i, strerror(-r[i].ret), log_warn_text);
		ASSERT_EQ(r[i].ret, 0);
		if (r[i].took_s >= WITHIN_HELLOS_S)
			printf("# rank %d took %.2f s\n", i, r[i].took_s);
		ASSERT(r[i].took_s < WITHIN_HELLOS_S);
		for (int k = 0; k < n; k++) {
			uint8_t want[BLOCK];

			block_fill(want, k);
			ASSERT_EQ(memcmp(r[i].all + (size_t)k * BLOCK, want, BLOCK), 0);
		}
	}
}

/* ---- strangers ---- */

static struct sockaddr_in handle_addr(const struct gdx_rma_handle *h)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = h->port};

	memcpy(&a.sin_addr, h->addr, 4);
	return a;
}

/* A connection to h's port from src (a loopback address, all of 127/8 is
 * this host's). */
static int stranger(const struct gdx_rma_handle *h, const char *src)
{
	struct sockaddr_in to = handle_addr(h), from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT(fd >= 0);
	ASSERT_EQ(inet_pton(AF_INET, src, &from.sin_addr), 1);
	ASSERT_EQ(bind(fd, (const struct sockaddr *)&from, sizeof(from)), 0);
	ASSERT_EQ(connect(fd, (const struct sockaddr *)&to, sizeof(to)), 0);
	return fd;
}

/* The ring's hello as rank `as` of nranks sends it to the holder of nonce. */
struct ring_hello {
	uint64_t magic;
	uint32_t version, rank, nranks, reserved;
	uint64_t nonce;
};

static void hello_pack(struct ring_hello *h, int as, int nranks, uint64_t nonce)
{
	memset(h, 0, sizeof(*h));
	h->magic = htole64(GDX_RMA_MAGIC);
	h->version = htole32(GDX_RMA_VERSION);
	h->rank = htole32((uint32_t)as);
	h->nranks = htole32((uint32_t)nranks);
	h->nonce = htole64(nonce);
}

/* Connections that the flood thread makes while the ranks connect. */
struct flood {
	const struct rank *r;
	int fds[RANKS * 40], n;
	pthread_t thread;
};

static void *flood_run(void *arg)
{
	struct flood *f = arg;

	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < RANKS; i++)
			f->fds[f->n++] = stranger(&f->r[i].handle, "127.0.0.1");
		usleep(5000);
	}
	return NULL;
}

/*
 * Before the ranks start: 40 silent connections to each rank from one
 * address (over the bound per address), 20 from each of four more (over
 * the bound in all), and to each rank hellos that are not its neighbour's:
 * a wrong nonce, another rank's number, half a hello, bytes of no hello.
 * While they connect, more silent ones. No rank waits for any of them.
 */
static void test_strangers_delay_no_rank(void)
{
	enum { ONE = 40, MANY = 20, OTHERS = 4 };
	static int fds[RANKS * (ONE + MANY * OTHERS + 4)];
	struct rank r[RANKS];
	void *handles[RANKS];
	struct flood fl = {.r = r};
	int n = 0;

	setup();
	ranks_listen(r, RANKS, handles);
	for (int i = 0; i < RANKS; i++) {
		int prev = (i + RANKS - 1) % RANKS;
		struct ring_hello h;
		char src[32];

		for (int k = 0; k < ONE; k++)
			fds[n++] = stranger(&r[i].handle, "127.0.0.1");
		for (int a = 0; a < OTHERS; a++)
			for (int k = 0; k < MANY; k++) {
				snprintf(src, sizeof(src), "127.0.0.%d", 2 + a);
				fds[n++] = stranger(&r[i].handle, src);
			}
		hello_pack(&h, prev, RANKS, r[i].nonce ^ 1);
		fds[n] = stranger(&r[i].handle, "127.0.0.1");
		ASSERT_EQ(write(fds[n++], &h, sizeof(h)), (ssize_t)sizeof(h));
		hello_pack(&h, (prev + 2) % RANKS, RANKS, r[i].nonce);
		fds[n] = stranger(&r[i].handle, "127.0.0.1");
		ASSERT_EQ(write(fds[n++], &h, sizeof(h)), (ssize_t)sizeof(h));
		hello_pack(&h, prev, RANKS, r[i].nonce);
		fds[n] = stranger(&r[i].handle, "127.0.0.1");
		ASSERT_EQ(write(fds[n++], &h, sizeof(h) / 2), (ssize_t)sizeof(h) / 2);
		fds[n] = stranger(&r[i].handle, "127.0.0.1");
		ASSERT_EQ(write(fds[n++], "GET / HTTP/1.0\r\n\r\n", 18), 18);
	}
	ASSERT_EQ(pthread_create(&fl.thread, NULL, flood_run, &fl), 0);
	for (int i = 0; i < RANKS; i++)
		rank_start(&r[i]);
	pthread_join(fl.thread, NULL);
	ranks_end(r, RANKS);
	ranks_check(r, RANKS);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < fl.n; i++)
		close(fl.fds[i]);
}

/* Whether fd's peer answered (the ring's hello back) before it closed or
 * limit_s passed. */
static bool answered(int fd, double limit_s)
{
	struct ring_hello ack;
	size_t got = 0;
	double t0 = now_s();

	while (got < sizeof(ack) && now_s() - t0 < limit_s) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		k = read(fd, (char *)&ack + got, sizeof(ack) - got);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return got == sizeof(ack);
}

/* A connection to rank's door that holds its handle (every rank does:
 * NCCL gathers them) and says rank 1's whole hello: the previous rank's
 * claim, made by someone else. */
static int impostor(const struct rank *rank)
{
	struct ring_hello h;
	int fd = stranger(&rank->handle, "127.0.0.1");

	hello_pack(&h, 1, 2, rank->nonce);
	ASSERT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	return fd;
}

/*
 * A connection that holds rank 0's handle (every rank does: NCCL gathers
 * them) and claims to be rank 1, its previous rank, before rank 1 comes.
 * Rank 0 cannot tell it apart and takes it; but then rank 1, whose place it
 * took, is never answered, and its connect fails with a WARN that names
 * the ring (at once when rank 0 sees rank 1's claim while its ring is
 * being made, and refuses the ring itself; else when rank 0's listen socket
 * closes, as its listen comm does, or at the ring's deadline): no rank goes
 * on as if the ring were whole with nobody told.
 */
static void test_impostor_first_fails_the_real_rank(void)
{
	struct rank r[2];
	void *handles[2];
	int fd;

	setup();
	ranks_listen(r, 2, handles);
	r[0].gather = r[1].gather = false;
	fd = impostor(&r[0]);
	rank_start(&r[0]);
	ASSERT(answered(fd, 1.0));
	rank_start(&r[1]);
	ranks_end(r, 2);
	ASSERT(r[1].ret != 0);
	ASSERT(r[1].took_s < WITHIN_HELLOS_S);
	ASSERT_STR_CONTAINS(log_warn_text, "RMA connect: rank 1 ");
	if (r[0].ret)
		ASSERT_STR_CONTAINS(log_warn_text, "two connections claimed to be rank 1");
	printf("# rank 0 %s; rank 1: %s\n",
	       r[0].ret ? "saw two claims and refused the ring" : "went on with the impostor",
	       strerror(-r[1].ret));
	close(fd);
}

/*
 * The impostor and rank 1 both at rank 0's door before it looks: two
 * connections claim to be rank 1, so one of them is not, and rank 0
 * refuses the ring with a WARN that says so, answering neither (0.4.3
 * answered the first and went on with it).
 */
static void test_two_claims_refuse_the_ring(void)
{
	struct rank r[2];
	void *handles[2];
	int fd;

	setup();
	ranks_listen(r, 2, handles);
	r[0].gather = r[1].gather = false;
	fd = impostor(&r[0]);
	rank_start(&r[1]);
	usleep(200000); /* rank 1's hello waits at rank 0's door too */
	rank_start(&r[0]);
	ASSERT(!answered(fd, 1.0));
	ranks_end(r, 2);
	ASSERT_EQ(r[0].ret, -EEXIST);
	ASSERT(r[1].ret != 0);
	ASSERT(r[0].took_s < WITHIN_HELLOS_S && r[1].took_s < WITHIN_HELLOS_S + 0.2);
	ASSERT_STR_CONTAINS(log_warn_text,
			    "RMA connect: rank 0: two connections claimed to be rank 1 with this "
			    "rank's handle");
	close(fd);
}

/*
 * The same claim after the ring is whole: the ring's listen socket still
 * takes connections until its listen comm closes, and the late claimant
 * is closed unanswered.
 */
static void test_late_claimant_is_refused(void)
{
	struct rank r[2];
	void *handles[2];
	int fd;

	setup();
	ranks_listen(r, 2, handles);
	r[0].gather = r[1].gather = false;
	rank_start(&r[0]);
	rank_start(&r[1]);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i].thread, NULL);
	ASSERT_EQ(r[0].ret, 0);
	ASSERT_EQ(r[1].ret, 0);
	fd = impostor(&r[0]);
	for (int i = 0; i < 2; i++) {
		gdx_rma_boot_close(&r[i].boot);
		close(r[i].lfd);
	}
	ASSERT(!answered(fd, 1.0));
	close(fd);
}

GDX_TESTS_MAIN(TEST(test_strangers_delay_no_rank, 60),
	       TEST(test_impostor_first_fails_the_real_rank, 40),
	       TEST(test_two_claims_refuse_the_ring, 40), TEST(test_late_claimant_is_refused, 20))
