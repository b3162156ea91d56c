// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: the messages of recover's checked streams, eager with every
 * Nth of them by rendezvous (--rndv-every), each checked in every byte.
 *
 * Calls common.c, event.c, ep.c and data.c; an arrival is told to the
 * test through worker->arrival.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "rmsg-perf.h"

/* Is @msg the client's CTL_STOP (on the first channel)? */
static bool is_stop(struct worker *w, struct chan *c,
		    const struct rmsg_msg *msg)
{
	struct ctl ctl;

	if (c != &w->ch[0] || msg->kind != RMSG_MSG_EAGER || !msg->data ||
	    msg->len != w->ctl_len)
		return false;
	memset(&ctl, 0, sizeof(ctl));
	memcpy(&ctl, msg->data, msg->len);
	return ctl_valid(w, &ctl, msg->len, CTL_BIT(CTL_STOP), false);
}

/*
 * The rendezvous mix (--rndv-every=N): message seq of a channel's
 * direction goes by rendezvous when seq % N == N - 1, with rmsg_msg_send_zc()
 * from a registered slot, RGet and RPut in turn, 1 byte to MIX_MAX long
 * and starting anywhere in the first 4 KiB of its slot; every byte is
 * stamped. The receiver answers it with rmsg_msg_recv_into() into a slot of
 * its own, at an offset of its own, with exactly the message's length as
 * room, and checks every byte when the answer completes: only then has it
 * arrived. The other messages are eager, as without the mix.
 */
static bool mix_rndv(const struct worker *w, uint64_t seq)
{
	return rmsg_check_rndv(w->rndv_every, seq);
}

static uint32_t mix_len(const struct worker *w, uint64_t seq)
{
	return mix_rndv(w, seq) ? rmsg_check_rndv_len(seq, 1) : w->size;
}

static uint32_t mix_slot(const struct worker *w, uint64_t seq)
{
	return rmsg_check_rndv_slot(w->rndv_every, seq);
}

/* Where message @seq goes in its slot: sender's (@tx) or receiver's. */
static uint8_t *mix_buf(const struct worker *w, const struct chan *c,
			uint64_t seq, bool tx)
{
	uint32_t off = tx ? seq * 97 % 4093 : seq * 31 % 4091;

	return (tx ? c->tx_slots : c->rx_slots) +
	       (size_t)mix_slot(w, seq) * MIX_STRIDE + off;
}

static const char *mix_proto(const struct worker *w, uint64_t seq)
{
	return rmsg_check_rndv_put(w->rndv_every, seq) ? "RPut" : "RGet";
}

/* The slots of the mix, in a region; every channel's counters from 0. */
void mix_setup(struct worker *w)
{
	struct rmsg_version ver;
	int i, ret;

	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->mark = c->owed = 0;
		c->mix_pending = 0;
		c->tx_busy = 0;
		c->rndv_sent = c->rndv_arrived = 0;
		memset(c->mix_rx, 0, sizeof(c->mix_rx));
	}
	w->holding = false;
	if (!w->rndv_every)
		return;
	ret = rmsg_node_version(rmsg_ep_fd(w->ep), &ver);
	if (ret && ret != -EPROTO)
		die(w, "rmsg_node_version: %s", strerror(-ret));
	if (!(ver.features & RMSG_FEAT_RNDV))
		die(w, "--rndv-every: this rmsg module has no RMSG_FEAT_RNDV");
	reg_grow(w, (size_t)w->nch * 2 * MIX_SLOTS * MIX_STRIDE);
	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->tx_slots = w->reg + (size_t)i * 2 * MIX_SLOTS * MIX_STRIDE;
		c->rx_slots = c->tx_slots + (size_t)MIX_SLOTS * MIX_STRIDE;
	}
}

/* May the next message of @c go now (a rendezvous one needs its slot)? */
bool mix_can_send(const struct worker *w, const struct chan *c)
{
	return !mix_rndv(w, c->tx_seq) ||
	       !(c->tx_busy & (1U << mix_slot(w, c->tx_seq)));
}

/* Send the next message of @c, which mix_can_send() allowed. */
void mix_send(struct worker *w, struct chan *c)
{
	uint64_t seq = c->tx_seq;
	uint32_t len = mix_len(w, seq);
	uint8_t *buf = mix_buf(w, c, seq, true);
	struct waiter wt;
	int ret;

	if (!mix_rndv(w, seq)) {
		send_data(w, c);
		return;
	}
	stamp(buf, len, seq, true);
	wait_init(&wt, "room to send a rendezvous message");
	while ((ret = rmsg_msg_send_zc(w->ep, c->id, buf, len,
				       rmsg_check_rndv_put(w->rndv_every, seq) ?
				   RMSG_ZC_PUT : 0,
				   TAG_TX | TAG_MIX | seq)) == -EAGAIN) {
		pump(w);
		tick(w, &wt);
	}
	if (ret)
		die(w,
		    "rmsg_msg_send_zc (%s) of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    mix_proto(w, seq), seq, len, c->id, strerror(-ret));
	c->tx_busy |= 1U << mix_slot(w, seq);
	c->tx_seq++;
	c->inflight++;
	c->rndv_sent++;
}

/*
 * Answer @msg, the rendezvous message @c expects next, and release it:
 * 0, or -EAGAIN when it cannot be answered yet (its slot is busy, the SQ
 * full). The slot is spoilt first (every byte differs from the message's),
 * so that a transfer that wrote nothing, or only part, cannot pass.
 */
static int mix_answer(struct worker *w, struct chan *c,
		      const struct rmsg_msg *msg)
{
	uint64_t seq = c->rx_seq;
	uint32_t len = mix_len(w, seq), slot = mix_slot(w, seq);
	uint8_t *buf = mix_buf(w, c, seq, false);
	int ret;

	if (msg->len != len)
		die(w, "rendezvous message %" PRIu64 " on channel %u: %u bytes announced, expected %u (lost, repeated or reordered?)",
		    seq, c->id, msg->len, len);
	if (c->mix_rx[slot])
		return -EAGAIN;
	stamp(buf, len, ~seq, true);
	ret = rmsg_msg_recv_into(w->ep, msg, buf, len, TAG_RX | TAG_MIX | seq);
	if (ret == -EAGAIN)
		return ret;
	if (ret)
		die(w,
		    "rmsg_msg_recv_into of message %" PRIu64 " (%u bytes) on channel %u: %s",
		    seq, len, c->id, strerror(-ret));
	c->mix_rx[slot] = seq + 1;
	c->mix_pending++;
	c->rx_seq++;
	if (w->server)
		c->owed++;
	ret = rmsg_msg_release(w->ep, msg);
	if (ret)
		die(w, "rmsg_msg_release: %s", strerror(-ret));
	return 0;
}

/*
 * Take @msg, the next message of its channel: an eager one is checked and
 * released, a rendezvous one answered (or -EAGAIN: hold it).
 */
int mix_take(struct worker *w, const struct rmsg_msg *msg)
{
	struct chan *c = chan_of(w, msg->channel);

	if (!c)
		die(w, "a message on unknown channel %u", msg->channel);
	if (mix_rndv(w, c->rx_seq)) {
		if (msg->kind != RMSG_MSG_RNDV) {
			check_abort(w, msg->data, msg->len);
			die(w, "message %" PRIu64 " on channel %u came eager (%u bytes), expected rendezvous: lost, repeated or reordered",
			    c->rx_seq, c->id, msg->len);
		}
		return mix_answer(w, c, msg);
	}
	if (msg->kind != RMSG_MSG_EAGER)
		die(w, "message %" PRIu64 " on channel %u came by rendezvous (%u bytes), expected eager: lost, repeated or reordered",
		    c->rx_seq, c->id, msg->len);
	take_data(w, c, msg);
	if (w->server)
		c->owed++;
	if (w->arrival)
		w->arrival(w, c, c->rx_seq - 1);
	return 0;
}

/* The held message, if any, answered at last? */
bool mix_unheld(struct worker *w)
{
	if (w->holding &&
	    mix_take(w, &w->held) == -EAGAIN)
		return false;
	w->holding = false;
	return true;
}

/*
 * Take the next message of any channel, if there is one: 1 when one was
 * taken (or held), 0 when none (or the held one still waits). The server
 * (@stop not NULL) is told of the client's CTL_STOP, which it releases.
 */
int mix_rx(struct worker *w, bool *stop)
{
	struct rmsg_msg msg;
	int ret;

	if (w->holding) {
		if (!mix_unheld(w)) {
			pump(w);
			return 0;
		}
		return 1;
	}
	ret = rmsg_msg_peek_any(w->ep, &msg);
	if (ret == -EAGAIN)
		return 0;
	if (ret)
		die(w, "rmsg_msg_peek_any: %s (channel %u)", strerror(-ret),
		    msg.channel);
	if (stop && is_stop(w, chan_of(w, msg.channel), &msg)) {
		ret = rmsg_msg_release(w->ep, &msg);
		if (ret)
			die(w, "rmsg_msg_release: %s", strerror(-ret));
		*stop = true;
		return 1;
	}
	if (mix_take(w, &msg) == -EAGAIN) {
		w->held = msg;
		w->holding = true;
	}
	return 1;
}

/* The completion of a send or an answer of the mix. */
void mix_op(struct worker *w, struct chan *c,
	    const struct rmsg_event *ev)
{
	uint64_t seq = ev->user_data & TAG_SEQ, got = 0;
	uint32_t len, slot;
	const uint8_t *buf;

	if (!w->rndv_every || !mix_rndv(w, seq))
		die(w, "completion of a rendezvous operation not made, channel %u, message %" PRIu64,
		    c->id, seq);
	len = mix_len(w, seq);
	slot = mix_slot(w, seq);
	if (ev->user_data & TAG_TX) {
		if (ev->res)
			die(w, "rendezvous send (%s) of message %" PRIu64 " (%u bytes) on channel %u failed: %s",
			    mix_proto(w, seq), seq, len, c->id,
			    strerror(-ev->res));
		if (!(c->tx_busy & (1U << slot)) || !c->inflight)
			die(w, "completion of a rendezvous send not made, channel %u, message %" PRIu64,
			    c->id, seq);
		c->tx_busy &= ~(1U << slot);
		c->inflight--;
		return;
	}
	if (c->mix_rx[slot] != seq + 1)
		die(w, "completion of a rendezvous answer not made, channel %u, message %" PRIu64,
		    c->id, seq);
	if (ev->res)
		die(w, "rendezvous message %" PRIu64 " (%s, %u bytes) on channel %u: its answer failed: %s",
		    seq, mix_proto(w, seq), len, c->id, strerror(-ev->res));
	buf = mix_buf(w, c, seq, false);
	if (ev->len != len || !stamp_ok(buf, len, seq, true)) {
		if (len >= 8)
			memcpy(&got, buf, 8);
		die(w, "bad rendezvous message %" PRIu64 " (%s) on channel %u: %u bytes, expected %u; first 8 bytes %#" PRIx64,
		    seq, mix_proto(w, seq), c->id, ev->len, len, got);
	}
	c->mix_rx[slot] = 0;
	c->mix_pending--;
	c->rndv_arrived++;
	arrived(w, true);
	if (w->arrival)
		w->arrival(w, c, seq);
}

/* Answers of the mix not completed yet, on every channel. */
uint32_t mix_pending(const struct worker *w)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < w->nch; i++)
		n += w->ch[i].mix_pending;
	return n;
}
