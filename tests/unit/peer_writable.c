/* SPDX-License-Identifier: MIT */
/*
 * What a peer past the handshake may write into a comm, with scripted verbs
 * (gdx_fake_nic.h), whose NIC lands a remote write only inside a
 * registration, as a real one does: only what that peer is allowed to say
 * (gdx_ctrl_span), never what this end staged and trusts.
 *
 * The attack of 0.4.1 (issue 47, row 2): the receiver's staged
 * clear-to-sends sat in the remote-writable control region, and a grouped
 * receive's completion read each buffer's posted size back from there. A
 * peer wrote 0x7ffff000 into those sizes, then claimed as much per buffer,
 * and test() reported two 4096-byte receives done with 2,147,479,552 bytes
 * each.
 */
#include <endian.h>
#include <stddef.h>
#include <stdio.h>

#include "data/gdx_p2p.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define BUF  4096u
#define HUGE 0x7ffff000u

/* The address a peer's write names for offset off of the other end's
 * control region (peer: the writing end). */
static uint64_t at(struct fake_end *peer, size_t off)
{
	return peer->c->remote_ctrl + off;
}

static void test_the_staging_is_not_peer_writable(void)
{
	struct fake_pair p;
	uint8_t junk[64] = {0xff};

	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 1, .nqps = 1});
	/* what each end's peer must be able to write */
	ASSERT(fake_peer_write(&p.s, at(&p.r, offsetof(struct gdx_ctrl, fifo)), junk,
			       sizeof(struct gdx_cts)));
	ASSERT(fake_peer_write(&p.s, at(&p.r, offsetof(struct gdx_ctrl, notes_in)), junk, 64));
	ASSERT(fake_peer_write(&p.r, at(&p.s, offsetof(struct gdx_ctrl, sizes)), junk, 64));
	ASSERT(fake_peer_write(&p.r, at(&p.s, offsetof(struct gdx_ctrl, notes_in)), junk, 64));
	/* a receive comm's FIFO offsets name nothing the sender may write: the
	 * receiver stages its clear-to-sends elsewhere, and no key reaches it.
	 * Neither their sizes (row 2) nor their addresses, which the debug
	 * builds' piece check reads its bytes at (S5: the sanitizer builds
	 * run this test with that check in) */
	for (uint32_t i = 0; i < GDX_FIFO_ENTRIES; i++) {
		uint64_t e = offsetof(struct gdx_ctrl, fifo) + i * sizeof(struct gdx_cts);

		ASSERT(!fake_peer_write(&p.r, at(&p.s, e + offsetof(struct gdx_cts, size)), junk,
					8));
		ASSERT(!fake_peer_write(&p.r, at(&p.s, e + offsetof(struct gdx_cts, addr)), junk,
					8));
	}
	/* neither end's staging lies in what its peer's key covers */
	ASSERT(!fake_peer_write(&p.s, (uintptr_t)p.s.c->stage, junk, 8));
	ASSERT(!fake_peer_write(&p.r, (uintptr_t)p.r.c->stage, junk, 8));
	ASSERT(!fake_peer_write(&p.s, (uintptr_t)&p.s.c->stage->notes_out[0], junk, 8));
	ASSERT(!fake_peer_write(&p.r, (uintptr_t)&p.r.c->stage->sizes[0][0], junk, 8));
	fake_pair_free(&p);
}

static void test_grouped_sizes_checked_against_our_own_copy(void)
{
	struct fake_pair p;
	struct gdx_mr mr;
	static char rbuf[2][BUF], sbuf[2][BUF];
	void *data[2] = {rbuf[0], rbuf[1]};
	uint64_t sizes[2] = {BUF, BUF}, huge = htole64(HUGE);
	int tags[2] = {1, 2}, done = 0, got[GDX_MAX_RECVS] = {0}, ret = 0;
	struct gdx_mr *mrs[2] = {&mr, &mr};
	struct gdx_request *rreq = NULL, *sreq[2];
	uint32_t claim[GDX_MAX_RECVS] = {0};
	bool staged_written = false;

	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 1, .nqps = 1});
	fake_mr(&p, rbuf, sizeof(rbuf), &mr);
	ASSERT_EQ(gdx_irecv(p.r.rc, 2, data, sizes, tags, mrs, NULL, &rreq), 0);
	ASSERT(rreq != NULL);
	fake_run_all(&p); /* the clear-to-sends reach the sender */
	/* the attack's first step: raise the receiver's staged posted sizes */
	for (int i = 0; i < 2; i++)
		staged_written |= fake_peer_write(
			&p.r,
			at(&p.s, offsetof(struct gdx_ctrl, fifo) +
					 GDX_FIFO_INDEX(0, i) * sizeof(struct gdx_cts) +
					 offsetof(struct gdx_cts, size)),
			&huge, sizeof(huge));
	{
		struct gdx_mr smr;

		fake_mr(&p, sbuf, sizeof(sbuf), &smr);
		sreq[0] = fake_isend(&p, sbuf[0], BUF, 1, &smr);
		sreq[1] = fake_isend(&p, sbuf[1], BUF, 2, &smr);
		ASSERT(sreq[0] && sreq[1]);
		fake_run_all(&p);
	}
	/* its second: claim that much per buffer, in the records the sender
	 * may write, before the receiver reads them */
	for (int i = 0; i < 2; i++)
		claim[i] = htole32(HUGE);
	ASSERT(fake_peer_write(&p.r, at(&p.s, offsetof(struct gdx_ctrl, sizes)), claim,
			       sizeof(claim)));
	for (int k = 0; k < 1000 && !done && !ret; k++)
		ret = gdx_test(rreq, &done, got);
	printf("  the staged sizes written by the peer: %s; test: %d, done %d, sizes %d, %d\n",
	       staged_written ? "yes" : "no", ret, done, got[0], got[1]);
	ASSERT(!staged_written);
	for (int i = 0; i < 2; i++)
		ASSERT((uint64_t)(uint32_t)got[i] <= BUF || got[i] == 0);
	ASSERT(ret != 0);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "bytes into buffer 0 of a grouped receive of 4096");
	fake_pair_free(&p);
}

GDX_TESTS_MAIN(TEST(test_the_staging_is_not_peer_writable, 30),
	       TEST(test_grouped_sizes_checked_against_our_own_copy, 30))
