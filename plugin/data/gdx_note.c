/* SPDX-License-Identifier: MIT */
/* The rail notes (gdx_note.h). */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "sys/gdx_log.h"
#include "data/gdx_note.h"
#include "rail/gdx_post.h"

void gdx_note_set(struct gdx_comm *c, int r, enum gdx_note_says says, uint32_t answers,
		  const char *why)
{
	struct gdx_note *n = &c->ch.run[r].note_next;
	struct gdx_rail *rail = &c->ch.rails[r];
	uint32_t epoch = ++c->ch.run[r].my_epoch;

	memset(n, 0, sizeof(*n));
	n->epoch = htole32(epoch);
	n->says = htole32(says);
	/* DOWN: the life its counts are of */
	n->answers = htole32(says == GDX_NOTE_DOWN ? c->ch.run[r].life : answers);
	n->psn = htole32(rail->psn);
	memcpy(n->gid, rail->gid.raw, sizeof(n->gid));
	snprintf(n->why, sizeof(n->why), "%s", why ? why : "");
	for (int q = 0; q < rail->nqps && q < GDX_NOTE_COUNTS; q++)
		n->counts[q] = htole32(rail->qps[q].imms);
	n->stamp = n->epoch;
	c->ch.run[r].note_due = true;
}

/* Whether the last write of our note about rail r may still be read by the
 * NIC: the rail it went by carries on, the same QPs, and no completion has
 * covered it. A rail taken out since has its QPs in error: they read
 * nothing more. */
static bool gdx_note_unread(struct gdx_comm *c, int r)
{
	struct gdx_rail_run *run = &c->ch.run[r];
	int lane = run->note_lane - 1;

	if (lane < 0)
		return false;
	if (c->ch.run[lane].state == GDX_RAIL_UP &&
	    gdx_rail_gen(&c->ch.rails[lane]) == run->note_gen &&
	    (int32_t)(c->ch.rails[lane].qps[0].wr_done - run->note_wr) < 0)
		return true;
	run->note_lane = 0;
	return false;
}

void gdx_note_flush(struct gdx_comm *c, int lane)
{
	if (lane < 0)
		return;
	for (int r = 0; r < c->ch.nrails; r++) {
		struct gdx_rail_run *run = &c->ch.run[r];

		if (!run->note_due)
			continue;
		if (gdx_note_unread(c, r)) {
			GDX_TRACE(NCCL_NET,
				  "%s: note of rail %d waits for its last write to complete",
				  c->dev_name, r);
			continue;
		}
		if (!gdx_qp_room(&c->ch.rails[lane], &c->ch.rails[lane].qps[0], 1)) {
			GDX_TRACE(NCCL_NET, "%s: note of rail %d waits for room on rail %d",
				  c->dev_name, r, lane);
			return; /* the next poll, once completions give room back */
		}
		c->stage->notes_out[r] = run->note_next;
		if (gdx_post_ctrl_write(&c->ch, lane, 0, &c->stage->notes_out[r],
					sizeof(struct gdx_note),
					c->remote_ctrl + offsetof(struct gdx_ctrl, notes_in) +
						(uint64_t)r * sizeof(struct gdx_note),
					true))
			return;
		run->note_due = false;
		run->note_lane = (uint8_t)(lane + 1);
		run->note_gen = gdx_rail_gen(&c->ch.rails[lane]);
		run->note_wr = c->ch.rails[lane].qps[0].wr_posted;
		GDX_TRACE(NCCL_NET, "%s: note of rail %d (epoch %u) written on rail %d",
			  c->dev_name, r, run->my_epoch, lane);
	}
}

bool gdx_note_read(const struct gdx_comm *c, int r, struct gdx_note *out)
{
	const struct gdx_note *n = &c->ctrl->notes_in[r];
	char why[sizeof(out->why)];
	uint32_t s1 = le32toh(__atomic_load_n(&n->stamp, __ATOMIC_ACQUIRE));

	if (!s1 || s1 == c->ch.run[r].peer_epoch)
		return false;
	memcpy(out, n, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (le32toh(out->epoch) != s1 ||
	    le32toh(__atomic_load_n(&n->stamp, __ATOMIC_ACQUIRE)) != s1)
		return false;
	out->epoch = s1;
	out->says = le32toh(out->says);
	out->answers = le32toh(out->answers);
	out->psn = le32toh(out->psn);
	/* the peer's words: printable before they reach a log line */
	memcpy(why, out->why, sizeof(why));
	gdx_log_sanitize(out->why, sizeof(out->why), why, sizeof(why));
	for (int q = 0; q < GDX_NOTE_COUNTS; q++)
		out->counts[q] = le32toh(out->counts[q]);
	return true;
}
