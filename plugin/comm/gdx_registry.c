/* SPDX-License-Identifier: MIT */
/* The live comms (gdx_registry.h): a pointer set under a lock of its own. */
#include <errno.h>
#include <pthread.h>

#include "comm/gdx_comm.h"
#include "comm/gdx_ptrset.h"
#include "comm/gdx_registry.h"

static pthread_mutex_t gdx_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdx_ptrset gdx_registered;

int gdx_registry_add(const void *comm)
{
	int ret;

	pthread_mutex_lock(&gdx_registry_lock);
	ret = gdx_ptrset_add(&gdx_registered, comm);
	pthread_mutex_unlock(&gdx_registry_lock);
	return ret;
}

int gdx_registry_remove(const void *comm)
{
	int ret;

	pthread_mutex_lock(&gdx_registry_lock);
	ret = gdx_ptrset_remove(&gdx_registered, comm) ? -EBADF : 0;
	pthread_mutex_unlock(&gdx_registry_lock);
	return ret;
}

bool gdx_registry_has(const void *comm)
{
	bool found;

	pthread_mutex_lock(&gdx_registry_lock);
	found = gdx_ptrset_has(&gdx_registered, comm);
	pthread_mutex_unlock(&gdx_registry_lock);
	return found;
}

int gdx_registry_count(void)
{
	int n;

	pthread_mutex_lock(&gdx_registry_lock);
	n = (int)gdx_registered.n;
	pthread_mutex_unlock(&gdx_registry_lock);
	return n;
}

static bool gdx_registry_owned_by(const void *comm, void *ctx)
{
	const uint32_t kind = *(const uint32_t *)comm;
	const struct gdx_ctx *owner;

	/* one-sided RMA's comms are here too (the devices stay while they are
	 * open); their owner is an RMA init, never a net context */
	if (kind != GDX_KIND_LISTEN && kind != GDX_KIND_SEND && kind != GDX_KIND_RECV)
		return false;
	owner = kind == GDX_KIND_LISTEN ? ((const struct gdx_listen_comm *)comm)->ctx
					: ((const struct gdx_comm *)comm)->ctx;

	return owner == ctx;
}

const void *gdx_registry_find_owned(struct gdx_ctx *ctx)
{
	const void *comm;

	pthread_mutex_lock(&gdx_registry_lock);
	comm = gdx_ptrset_first(&gdx_registered, gdx_registry_owned_by, ctx);
	pthread_mutex_unlock(&gdx_registry_lock);
	return comm;
}

void gdx_registry_fini(void)
{
	gdx_ptrset_free(&gdx_registered);
}
