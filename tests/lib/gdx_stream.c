/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

const ncclNet_v7_t *gdx_stream_net(void)
{
	static struct gdx_plugin plugin;
	static pid_t loaded_by;

	/* once per process: a child forked after the load loads its own */
	if (loaded_by != getpid()) {
		gdx_plugin_load(&plugin);
		ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
		loaded_by = getpid();
	}
	return plugin.v7;
}

/* The receiver, in a process of its own: takes messages until the sender
 * closes, checking every byte. */
static void gdx_stream_receiver(int wr, int dev, size_t size)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	const ncclNet_v7_t *n = gdx_stream_net();
	void *lc = NULL, *rc = NULL, *req[GDX_STREAM_DEPTH] = {0};
	struct gdx_buf b[GDX_STREAM_DEPTH];
	uint64_t seq[GDX_STREAM_DEPTH], next = 0;
	double t0;

	ASSERT_EQ(n->listen(dev, handle, &lc), ncclSuccess);
	ASSERT_EQ(write(wr, handle, sizeof(handle)), (ssize_t)sizeof(handle));
	for (t0 = gdx_now_s(); !rc && gdx_now_s() - t0 < 30;)
		ASSERT_EQ(n->accept(lc, &rc, NULL), ncclSuccess);
	ASSERT(rc);
	for (int i = 0; i < GDX_STREAM_DEPTH; i++)
		gdx_buf_alloc(n, rc, size, 0, &b[i]);
	for (;;) {
		for (int i = 0; i < GDX_STREAM_DEPTH; i++) {
			int sz = (int)size, tag = 0, done = 0, got = 0;
			void *data = b[i].mem;
			ncclResult_t res;

			if (!req[i]) {
				ASSERT_EQ(n->irecv(rc, 1, &data, &sz, &tag, &b[i].mh, &req[i]),
					  ncclSuccess);
				seq[i] = next++;
				continue;
			}
			res = n->test(req[i], &done, &got);
			if (res != ncclSuccess)
				exit(0); /* the sender closed: the stream is over */
			if (!done)
				continue;
			ASSERT_EQ(got, (int)size);
			ASSERT_EQ(gdx_check(b[i].mem, size, (uint32_t)seq[i]), -1);
			req[i] = NULL;
		}
	}
}

static void *gdx_stream_sender(void *p)
{
	struct gdx_stream *st = p;
	void *req[GDX_STREAM_DEPTH] = {0};
	uint64_t next = 0;

	while (!st->stop && st->res == ncclSuccess) {
		for (int i = 0; i < GDX_STREAM_DEPTH && st->res == ncclSuccess; i++) {
			int done = 0, got = 0;

			if (!req[i]) {
				gdx_fill(st->b[i].mem, st->size, (uint32_t)next);
				st->res = st->n->isend(st->sc, st->b[i].mem, (int)st->size, 0,
						       st->b[i].mh, &req[i]);
				if (req[i])
					next++;
				continue;
			}
			st->res = st->n->test(req[i], &done, &got);
			if (done) {
				__atomic_add_fetch(&st->bytes, (uint64_t)got, __ATOMIC_RELAXED);
				__atomic_add_fetch(&st->msgs, 1, __ATOMIC_RELAXED);
				req[i] = NULL;
			}
		}
	}
	/* what is still in flight completes, and counts */
	for (int i = 0; i < GDX_STREAM_DEPTH && st->res == ncclSuccess; i++) {
		int got = 0;

		if (!req[i])
			continue;
		st->res = gdx_wait(st->n, req[i], &got, 30);
		if (st->res == ncclSuccess) {
			__atomic_add_fetch(&st->bytes, (uint64_t)got, __ATOMIC_RELAXED);
			__atomic_add_fetch(&st->msgs, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

void gdx_stream_fork(struct gdx_stream *st, int rdev, size_t size)
{
	int fds[2];

	memset(st, 0, sizeof(*st));
	st->size = size;
	ASSERT_EQ(pipe(fds), 0);
	st->child = fork();
	ASSERT(st->child >= 0);
	if (st->child == 0) {
		close(fds[0]);
		gdx_stream_receiver(fds[1], rdev, size);
	}
	close(fds[1]);
	st->handle_fd = fds[0];
}

void gdx_stream_connect(struct gdx_stream *st, int sdev)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	double t0;

	st->n = gdx_stream_net();
	ASSERT_EQ(read(st->handle_fd, handle, sizeof(handle)), (ssize_t)sizeof(handle));
	close(st->handle_fd);
	for (t0 = gdx_now_s(); !st->sc && gdx_now_s() - t0 < 30;)
		ASSERT_EQ(st->n->connect(sdev, handle, &st->sc, NULL), ncclSuccess);
	ASSERT(st->sc);
	for (int i = 0; i < GDX_STREAM_DEPTH; i++)
		gdx_buf_alloc(st->n, st->sc, st->size, 0, &st->b[i]);
	ASSERT_EQ(pthread_create(&st->thread, NULL, gdx_stream_sender, st), 0);
}

void gdx_stream_start(struct gdx_stream *st, int sdev, int rdev, size_t size)
{
	gdx_stream_fork(st, rdev, size);
	gdx_stream_connect(st, sdev);
}

void gdx_stream_pause(struct gdx_stream *st)
{
	if (st->stop)
		return;
	st->stop = 1;
	ASSERT_EQ(pthread_join(st->thread, NULL), 0);
	ASSERT_EQ(st->res, ncclSuccess);
}

void gdx_stream_stop(struct gdx_stream *st)
{
	int status;

	gdx_stream_pause(st);
	for (int i = 0; i < GDX_STREAM_DEPTH; i++)
		gdx_buf_free(st->n, st->sc, &st->b[i]);
	ASSERT_EQ(st->n->closeSend(st->sc), ncclSuccess);
	ASSERT_EQ(waitpid(st->child, &status, 0), st->child);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int gdx_stream_moves(struct gdx_stream *st, uint64_t n, double timeout_s)
{
	uint64_t from = __atomic_load_n(&st->msgs, __ATOMIC_RELAXED);

	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < timeout_s;) {
		if (__atomic_load_n(&st->msgs, __ATOMIC_RELAXED) >= from + n)
			return 1;
		usleep(10000);
	}
	return 0;
}

int gdx_run(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int status;

	ASSERT(f);
	while (n + 1 < len && !feof(f)) {
		size_t k = fread(out + n, 1, len - n - 1, f);

		if (!k)
			break;
		n += k;
	}
	out[n] = '\0';
	status = pclose(f);
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
}
