/* SPDX-License-Identifier: MIT */
/*
 * connect() from several threads at once, as NCCL's proxy threads call it:
 * the sweep of abandoned connects never frees one that another thread is
 * driving, never takes a clock read older than a stamp for a long silence,
 * and leaves nothing behind. Deterministic cases with a test clock
 * (gdx_conn_test_clock) and a logger that holds a thread where it logs;
 * then many threads at once. Runs on loopback with no RDMA device: a connect
 * that gets past TCP stops at the missing device, so the connects kept
 * under way go to a listener whose backlog is full (TCP never completes).
 * make test runs this file under ThreadSanitizer too (build-tsan).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_conn.h"
#include "conn/gdx_connect.h"
#include "conn/gdx_handshake.h"
#include "conn/gdx_listen.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_time.h"

#include "gdx_test.h"

/* ---- a logger for many threads: locked, and able to hold a thread ---- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_cond = PTHREAD_COND_INITIALIZER;
static char log_text[1 << 16];
static int log_warns;
static __thread bool hold_on_warn; /* this thread stops at its next WARN */
static bool held, released;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

__attribute__((format(printf, 5, 6))) static void race_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024];
	struct timespec until;
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (strlen(log_text) + strlen(msg) + 2 < sizeof(log_text)) {
		strcat(log_text, msg);
		strcat(log_text, "\n");
	}
	if (level == NCCL_LOG_WARN)
		log_warns++;
	if (level == NCCL_LOG_WARN && hold_on_warn) {
		hold_on_warn = false;
		held = true;
		pthread_cond_broadcast(&log_cond);
		deadline_in(&until, 2000);
		while (!released && pthread_cond_timedwait(&log_cond, &log_lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&log_lock);
	if (getenv("GDX_TEST_VERBOSE"))
		fprintf(stderr, "  [%s] %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
}

static bool log_has(const char *needle)
{
	bool found;

	pthread_mutex_lock(&log_lock);
	found = strstr(log_text, needle) != NULL;
	pthread_mutex_unlock(&log_lock);
	return found;
}

/* Waits (up to 2 s) until a thread is held in the logger. */
static void wait_held(void)
{
	struct timespec until;

	deadline_in(&until, 2000);
	pthread_mutex_lock(&log_lock);
	while (!held && pthread_cond_timedwait(&log_cond, &log_lock, &until) == 0)
		;
	ASSERT(held);
	pthread_mutex_unlock(&log_lock);
}

static void release_held(void)
{
	pthread_mutex_lock(&log_lock);
	released = true;
	pthread_cond_broadcast(&log_cond);
	pthread_mutex_unlock(&log_lock);
}

/* ---- a clock the test sets, which can stop the thread reading it ---- */

static uint64_t fake_ms;
static __thread bool stop_at_clock; /* this thread stops at its next read */
static bool clock_stopped, clock_go;

static uint64_t fake_clock(void)
{
	uint64_t v = __atomic_load_n(&fake_ms, __ATOMIC_ACQUIRE);
	struct timespec until;

	if (stop_at_clock) {
		/* the thread has read the time and is preempted: it goes on when
		 * the test says so, or after 300 ms (when the test itself waits
		 * for something this thread holds) */
		stop_at_clock = false;
		pthread_mutex_lock(&log_lock);
		clock_stopped = true;
		pthread_cond_broadcast(&log_cond);
		deadline_in(&until, 300);
		while (!clock_go && pthread_cond_timedwait(&log_cond, &log_lock, &until) == 0)
			;
		pthread_mutex_unlock(&log_lock);
	}
	return v;
}

static void fake_set(uint64_t ms)
{
	__atomic_store_n(&fake_ms, ms, __ATOMIC_RELEASE);
}

/* ---- peers ---- */

static void setup(const char *timeout_ms)
{
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	setenv("NCCL_GDX_HANDSHAKE_TIMEOUT_MS", timeout_ms, 1);
	gdx_log_set(race_logger);
	ASSERT_EQ(gdx_params_load(), 0);
}

static struct sockaddr_in loopback_any(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void handle_for(struct gdx_handle *h, const struct sockaddr_in *a, uint64_t nonce)
{
	gdx_handle_pack(h, AF_INET, &a->sin_addr, a->sin_port, 0, nonce, 1, 1);
}

/* A listener whose backlog is full: a connect to it stays in TCP's
 * handshake, so the plugin keeps it under way without a device. */
struct stalled {
	int lfd, filler;
	struct sockaddr_in addr;
};

static void stalled_open(struct stalled *s)
{
	socklen_t len = sizeof(s->addr);

	s->addr = loopback_any();
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT(s->lfd >= 0);
	ASSERT_EQ(bind(s->lfd, (struct sockaddr *)&s->addr, sizeof(s->addr)), 0);
	ASSERT_EQ(getsockname(s->lfd, (struct sockaddr *)&s->addr, &len), 0);
	ASSERT_EQ(listen(s->lfd, 0), 0);
	s->filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(connect(s->filler, (struct sockaddr *)&s->addr, sizeof(s->addr)), 0);
}

static void stalled_close(struct stalled *s)
{
	close(s->filler);
	close(s->lfd);
}

/* A port nobody listens on: a connect to it is refused at its second call. */
static struct sockaddr_in closed_port(void)
{
	struct sockaddr_in a = loopback_any();
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT(fd >= 0);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return a;
}

static int lowest_free_fd(void)
{
	int fd = dup(0);

	ASSERT(fd >= 0);
	close(fd);
	return fd;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int connect_once(struct gdx_handle *h)
{
	struct gdx_send_comm *sc = (void *)1;
	int ret = gdx_connect(NULL, 0, -1, h, &sc);

	ASSERT(sc == NULL); /* no device: never a comm */
	return ret;
}

/* ---- the cases ---- */

struct thread_arg {
	struct gdx_handle *h;
	int ret;
};

static void *connect_stopped_at_clock(void *p)
{
	struct thread_arg *t = p;

	stop_at_clock = true;
	t->ret = connect_once(t->h);
	return NULL;
}

/*
 * Thread A reads the clock, then is preempted; thread B drives its connect
 * and stamps it later than A's reading; A sweeps. A's "now" minus B's stamp
 * must not wrap into a long silence and free B's connect.
 */
static void test_sweep_never_sees_time_go_backwards(void)
{
	struct stalled st;
	struct gdx_handle hb, ha;
	struct thread_arg a = {&ha, -1};
	struct timespec until;
	pthread_t ta;
	int fds;

	setup("1000");
	stalled_open(&st);
	fds = count_fds();
	handle_for(&hb, &st.addr, 0xb);
	handle_for(&ha, &st.addr, 0xa);
	fake_set(10000);
	gdx_conn_test_clock(fake_clock);
	ASSERT_EQ(connect_once(&hb), 0);
	ASSERT_EQ(gdx_connects_pending(), 1);
	ASSERT_EQ(pthread_create(&ta, NULL, connect_stopped_at_clock, &a), 0);
	deadline_in(&until, 2000);
	pthread_mutex_lock(&log_lock);
	while (!clock_stopped && pthread_cond_timedwait(&log_cond, &log_lock, &until) == 0)
		;
	ASSERT(clock_stopped);
	pthread_mutex_unlock(&log_lock);
	/* half a second later (within the timeout), B drives its connect */
	fake_set(10500);
	ASSERT_EQ(connect_once(&hb), 0);
	pthread_mutex_lock(&log_lock);
	clock_go = true;
	pthread_cond_broadcast(&log_cond);
	pthread_mutex_unlock(&log_lock);
	ASSERT_EQ(pthread_join(ta, NULL), 0);
	ASSERT_EQ(a.ret, 0);
	ASSERT(!log_has("abandoned"));
	ASSERT_EQ(gdx_connects_pending(), 2);
	ASSERT_EQ(connect_once(&hb), 0); /* the same connect, resumed */
	ASSERT_EQ(gdx_connects_pending(), 2);
	/* once the time is really up both are abandoned and freed; this call
	 * then starts B's again */
	fake_set(10500 + 1001);
	ASSERT_EQ(connect_once(&hb), 0);
	ASSERT(log_has("abandoned"));
	ASSERT_EQ(gdx_connects_pending(), 1);
	gdx_conn_fini();
	ASSERT_EQ(gdx_connects_pending(), 0);
	ASSERT_EQ(count_fds(), fds);
	gdx_conn_test_clock(NULL);
	stalled_close(&st);
}

static void *connect_held_at_warn(void *p)
{
	struct thread_arg *t = p;

	hold_on_warn = true;
	t->ret = connect_once(t->h);
	return NULL;
}

/*
 * Thread B drives a connect that fails (the port refuses) and is held where
 * it logs the failure, its connect not yet freed. Time passes the timeout and
 * thread A's connect sweeps: B's connect is in use, not abandoned, and is
 * freed once, by B.
 */
static void test_connect_in_use_is_never_swept(void)
{
	struct stalled st, gone;
	struct gdx_handle hb, ha;
	struct thread_arg b = {&hb, 1};
	struct pollfd p = {.events = POLLOUT};
	pthread_t tb;
	int fds;

	setup("1000");
	stalled_open(&st);
	stalled_open(&gone);
	fds = count_fds();
	handle_for(&hb, &gone.addr, 0xb);
	handle_for(&ha, &st.addr, 0xa);
	fake_set(10000);
	gdx_conn_test_clock(fake_clock);
	p.fd = lowest_free_fd();	 /* the socket B's connect is about to make */
	ASSERT_EQ(connect_once(&hb), 0); /* in TCP's handshake */
	ASSERT_EQ(count_fds(), fds + 1);
	/* its listener goes: the SYN sent again is refused (about 1 s on) */
	stalled_close(&gone);
	ASSERT_EQ(poll(&p, 1, 5000), 1);
	ASSERT_EQ(pthread_create(&tb, NULL, connect_held_at_warn, &b), 0);
	wait_held();
	fake_set(20000); /* B's connect was last called 10 s ago */
	ASSERT_EQ(connect_once(&ha), 0);
	ASSERT(!log_has("abandoned"));
	release_held();
	ASSERT_EQ(pthread_join(tb, NULL), 0);
	ASSERT_EQ(b.ret, -ECONNREFUSED);
	ASSERT(log_has("Connection refused"));
	ASSERT_EQ(gdx_connects_pending(), 1); /* A's */
	gdx_conn_fini();
	ASSERT_EQ(count_fds(), fds - 2); /* gone's two are closed */
	gdx_conn_test_clock(NULL);
	stalled_close(&st);
}

/*
 * Two threads calling connect with one handle buffer (NCCL never does; a
 * driver might): one connect exists for it, and only one thread drives it at
 * a time.
 */
struct shared_arg {
	struct gdx_handle *h;
	int calls, bad;
};

static void *connect_shared(void *p)
{
	struct shared_arg *s = p;

	for (int i = 0; i < s->calls; i++) {
		int ret = connect_once(s->h);

		if (ret)
			__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_one_handle_two_threads(void)
{
	struct stalled st;
	struct gdx_handle h;
	struct shared_arg s = {&h, 2000, 0};
	pthread_t t[2];
	int fds;

	setup("30000");
	stalled_open(&st);
	fds = count_fds();
	handle_for(&h, &st.addr, 0x5);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, connect_shared, &s), 0);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	ASSERT_EQ(s.bad, 0);
	ASSERT_EQ(gdx_connects_pending(), 1);
	ASSERT_EQ(count_fds(), fds + 1); /* one socket, in TCP's handshake */
	gdx_conn_fini();
	ASSERT_EQ(count_fds(), fds);
	stalled_close(&st);
}

/*
 * Many threads connecting at once, with a 5 ms handshake timeout so that
 * every call sweeps what the others leave: connects that reach the listener
 * and stop at the missing device, connects left in TCP's handshake and
 * abandoned, connects refused; the listener accepting all the while. Every
 * call returns at once with 0 or the expected error; once all stop, the
 * sweep frees every connect left and no descriptor remains.
 */
#define RACE_THREADS 12

struct race {
	struct gdx_handle listener, stalled, refused;
	double until;
	int unexpected;
	int calls;
};

static void *race_body(void *p)
{
	struct race *r = p;
	struct gdx_handle h;
	unsigned seed = (unsigned)(uintptr_t)&h;

	for (uint64_t k = 1; now_s() < r->until; k++) {
		int pick = rand_r(&seed) % 3, ret = 0;

		/* a new connect each round: another nonce, the same buffer */
		h = pick == 0 ? r->listener : pick == 1 ? r->stalled : r->refused;
		h.nonce = htole64(k);
		for (int call = 0; call < 3 && !ret; call++) {
			ret = connect_once(&h);
			__atomic_fetch_add(&r->calls, 1, __ATOMIC_RELAXED);
			if (pick == 1 && ret == 0 && rand_r(&seed) % 2)
				break; /* abandoned, left to the sweep */
			if (pick != 1)
				usleep(200);
		}
		if (ret != 0 && ret != -ENODEV && ret != -ECONNREFUSED && ret != -ECONNRESET)
			__atomic_fetch_add(&r->unexpected, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_many_threads_connect_at_once(void)
{
	struct gdx_handle lh, bad;
	struct gdx_listen_comm *lc;
	struct sockaddr_in refused = closed_port();
	struct race r;
	struct stalled st;
	pthread_t t[RACE_THREADS];
	int fds;

	setup("5");
	stalled_open(&st);
	fds = count_fds();
	ASSERT_EQ(gdx_listen(NULL, 0, &lh, &lc), 0);
	r.listener = lh;
	handle_for(&r.stalled, &st.addr, 0);
	handle_for(&r.refused, &refused, 0);
	r.until = now_s() + 1.5;
	r.unexpected = 0;
	r.calls = 0;
	for (int i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, race_body, &r), 0);
	while (now_s() < r.until) { /* the listener, driven by one thread as NCCL does */
		struct gdx_recv_comm *rc = (void *)1;

		ASSERT_EQ(gdx_accept(lc, &rc), 0);
		ASSERT(rc == NULL);
		usleep(500);
	}
	for (int i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(pthread_join(t[i], NULL), 0);
	printf("  %d connect calls from %d threads\n", r.calls, RACE_THREADS);
	ASSERT_EQ(r.unexpected, 0);
	ASSERT(r.calls > 100);
	/* past the timeout, any call sweeps what is left: a foreign handle's
	 * call, refused before it starts anything of its own */
	usleep(20000);
	bad = lh;
	bad.magic = 0;
	ASSERT_EQ(connect_once(&bad), -EPROTONOSUPPORT);
	ASSERT_EQ(gdx_connects_pending(), 0);
	ASSERT_EQ(gdx_close_listen(lc), 0);
	ASSERT_EQ(count_fds(), fds);
	stalled_close(&st);
}

GDX_TESTS_MAIN(TEST(test_sweep_never_sees_time_go_backwards, 10),
	       TEST(test_connect_in_use_is_never_swept, 10), TEST(test_one_handle_two_threads, 20),
	       TEST(test_many_threads_connect_at_once, 30))
