// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: block leases.
 *
 * One direction of a channel whose receiver said RMSG_HELLO_F_LEASE: the
 * receiver R owns the block, the sender S writes into it. Lease n is one
 * life of the block, from R's GRANT(n) to S's RETURN(n). The whole
 * protocol, every legal transition (m: the lease a message names, n: the
 * machine's own @lease):
 *
 *   S NONE(n)   --data, shadow made--> ASKED(n), ASK(n)
 *   R IDLE(n)   --ASK(n)-->            ALLOCATING(n), make a block
 *   R ALLOCATING(n) --block made-->    GRANTED(n+1), GRANT(n+1, key, size)
 *                   --no memory-->     IDLE(n), try again later
 *   S ASKED(n)  --GRANT(n+1)-->        HELD(n+1), write
 *   R GRANTED(n) --idle, all released at counter C--> REVOKING(n, C),
 *                                      REVOKE(n, C)
 *   S HELD(n)   --REVOKE(n, C), nothing waiting, written == C-->
 *                                      NONE(n), RETURN(n, C), free shadow
 *               --REVOKE(n, C), else-->  HELD(n), RETURN(n, written, KEEP)
 *   R REVOKING(n, C) --RETURN(n, C)--> IDLE(n), free the block
 *                    --RETURN(n, KEEP)--> GRANTED(n)
 *
 * Why it is safe. R frees only on RETURN(n, C), which S sends only when
 * it wrote exactly C bytes (all of which R has seen and its program
 * released) and from then on writes nothing until GRANT(n + 1), which R
 * sends only with a new block. S writes only while HELD. So no write
 * lands in a freed block, and at most one block exists per direction:
 * R allocates only from IDLE. A new lease starts where the last one
 * ended, at counter C and the next sequence number, on both sides, and
 * at lap 0, position 0 of a block whose last trailer is zero (R6 of
 * rmsg_vb.c): so placement, flags and credit of a fresh block are those
 * of a new channel, with counters that go on.
 *
 * Ordering. Within one connection control messages arrive in order and
 * once (RC), and every machine has at most one request out: S one ASK,
 * R one GRANT and at most one REVOKE, each answered once. So within a
 * connection, a message naming an ended lease is a crossing that the
 * order already resolved (ignored), and one naming a lease further ahead
 * than the next is a lie (-EPROTO). Ask crossing revoke cannot happen: S
 * asks only without a lease, after its RETURN, which R reads first.
 *
 * Repairs. Messages in flight are lost with the connection. Each side's
 * READY on the new connection carries its resume point for both
 * directions (RMSG_READY_ARG()): R's lease and whether it is granted, S's
 * lease and whether it holds it. Lease messages of a connection follow
 * its READY. Then:
 *
 *   - S re-sends its ASK if ASKED (R ignores a repeat);
 *   - R re-sends GRANT(n) while GRANTED or REVOKING (S takes the key of a
 *     lease it holds, the grant of one it asked for, and ignores the
 *     grant of a lease it gave back);
 *   - a REVOKE is forgotten (R back to GRANTED), unless S's READY says it
 *     gave lease n back: then its RETURN was lost, and R frees now.
 *
 * Every combination a lost message can leave is one of these; any other
 * pair of resume points is -EPROTO. A peer that never answers a REVOKE
 * keeps the block (REVOKING for ever; R sends no second one); one that
 * asks again and again costs nothing (R allocates only from IDLE, and a
 * block lives at least one idle period, R's own timer).
 */
#include "rmsg_lease.h"
#include "rmsg_vb.h"

/* Distance from @b to @a among 16-bit lease numbers. */
static s32 rmsg_lease_diff(u16 a, u16 b)
{
	u16 d = a - b;

	return d < 0x8000 ? (s32)d : (s32)d - 0x10000;
}

static void rmsg_lease_send(struct rmsg_lease_act *act, u8 type, u64 arg)
{
	act->todo |= RMSG_LEASE_SEND;
	act->type = type;
	act->arg = arg;
}

static int rmsg_lease_check_size(u32 size)
{
	if (rmsg_vb_check_block(size) || size % RMSG_LEASE_UNIT)
		return -EINVAL;
	return 0;
}

/**
 * rmsg_lease_rx_init() - a leased receive block, before its first lease
 * @rx: set whole: IDLE, lease 0, no connection
 * @size: the block size the channel's hello announces: valid for
 *	rmsg_vb_check_block() and a multiple of RMSG_LEASE_UNIT
 * @seq: the stream's first sequence number (0 for a new channel)
 * @bytes: its first byte counter (0 for a new channel)
 *
 * Return: 0, or -EINVAL for a size a lease cannot carry.
 */
int rmsg_lease_rx_init(struct rmsg_lease_rx *rx, u32 size, u32 seq,
		       u32 bytes)
{
	if (rmsg_lease_check_size(size))
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->state = RMSG_LEASE_RX_IDLE;
	rx->size = size;
	rx->seq = seq;
	rx->bytes = bytes;
	return 0;
}

/* The GRANT of the current lease, on this connection. */
static void rmsg_lease_rx_grant(struct rmsg_lease_rx *rx,
				struct rmsg_lease_act *act)
{
	if (rx->conn)
		rmsg_lease_send(act, RMSG_CTRL_GRANT,
				RMSG_GRANT_ARG(rx->rkey, rx->lease, rx->size));
}

/**
 * rmsg_lease_rx_connected() - a new connection: this side's READY goes now
 * @rx: the receiving end
 * @rkey: the block's key on this connection's device (a repair onto
 *	another device registers it again); ignored without a block
 * @act: out: a GRANT to send after the READY, while a lease is granted
 *
 * Call before the READY (rmsg_lease_ready_arg()) is built; send what @act
 * says after it. A GRANT is sent again on every connection: one in
 * flight on the last was lost, and the key may have changed.
 */
void rmsg_lease_rx_connected(struct rmsg_lease_rx *rx, u32 rkey,
			     struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	rx->conn = true;
	rx->synced = false;
	if (!rmsg_lease_rx_has_block(rx))
		return;
	rx->rkey = rkey;
	rmsg_lease_rx_grant(rx, act);
}

/**
 * rmsg_lease_rx_down() - the connection is gone
 * @rx: the receiving end
 *
 * What was in flight is lost; nothing is sent until the next connection.
 * The state stays: a REVOKE out stays out until the peer's next READY
 * says what became of it.
 */
void rmsg_lease_rx_down(struct rmsg_lease_rx *rx)
{
	rx->conn = false;
	rx->synced = false;
}

/**
 * rmsg_lease_rx_peer_ready() - the peer's READY: its view of the lease
 * @rx: the receiving end
 * @m: the READY, decoded (rmsg_lease_msg_decode()): @m->peer_lease and
 *	@m->held are the sender's view of this block
 * @arrived: the byte counter at the end of the block's complete records
 *	(the walk of the resume point); ignored without a block
 * @act: out: RMSG_LEASE_FREE when the peer gave the lease back and its
 *	RETURN was lost
 *
 * The resume points must be a pair that lost messages can leave (see the
 * top of this file). On -EPROTO nothing changed.
 *
 * Return: 0, or -EPROTO: a second READY on the connection, or a view of
 * the lease that no loss explains.
 */
int rmsg_lease_rx_peer_ready(struct rmsg_lease_rx *rx,
			     const struct rmsg_lease_msg *m, u32 arrived,
			     struct rmsg_lease_act *act)
{
	s32 d = rmsg_lease_diff(m->peer_lease, rx->lease);

	memset(act, 0, sizeof(*act));
	if (rx->synced || !rx->conn)
		return -EPROTO;
	switch (rx->state) {
	case RMSG_LEASE_RX_IDLE:
	case RMSG_LEASE_RX_ALLOCATING:
		/* Only a RETURN ends a lease: the peer knows the last one. */
		if (m->held || d)
			return -EPROTO;
		break;
	case RMSG_LEASE_RX_GRANTED:
		/* Held, or asked and the GRANT (sent again) not yet seen. */
		if (!(m->held && !d) && !(!m->held && d == -1))
			return -EPROTO;
		break;
	case RMSG_LEASE_RX_REVOKING:
		if ((m->held && !d) || (!m->held && d == -1)) {
			/* The REVOKE or its KEEP was lost: ask again later. */
			rx->state = RMSG_LEASE_RX_GRANTED;
			break;
		}
		/*
		 * The peer said yes and the RETURN was lost: it writes no
		 * more, and wrote nothing after the revoke's counter.
		 */
		if (m->held || d || arrived != rx->bytes)
			return -EPROTO;
		rx->state = RMSG_LEASE_RX_IDLE;
		act->todo |= RMSG_LEASE_FREE;
		break;
	}
	rx->synced = true;
	return 0;
}

/**
 * rmsg_lease_rx_ask() - the peer's ASK
 * @rx: the receiving end
 * @m: the ASK, decoded: @m->lease is the newest lease the peer knows
 * @act: out: RMSG_LEASE_ALLOC when a block is to be made
 *
 * Bounded: a block is made only from IDLE, for the lease after the one
 * the peer gave back; a repeat (the peer's ASK sent again after a repair,
 * or one that crossed the GRANT) is ignored.
 *
 * Return: 0, or -EPROTO (nothing changed): before the peer's READY, a
 * lease never granted, or the claim that the current lease ended.
 */
int rmsg_lease_rx_ask(struct rmsg_lease_rx *rx, const struct rmsg_lease_msg *m,
		      struct rmsg_lease_act *act)
{
	s32 d = rmsg_lease_diff(m->lease, rx->lease);

	memset(act, 0, sizeof(*act));
	if (!rx->synced || d > 0)
		return -EPROTO;
	switch (rx->state) {
	case RMSG_LEASE_RX_IDLE:
		if (d)
			return 0;	/* an ended lease's: stale */
		rx->state = RMSG_LEASE_RX_ALLOCATING;
		rx->ask_waiting = false;
		act->todo |= RMSG_LEASE_ALLOC;
		return 0;
	case RMSG_LEASE_RX_ALLOCATING:
		return 0;
	default:
		/* The current lease ended only if we heard its RETURN. */
		return d ? 0 : -EPROTO;
	}
}

/**
 * rmsg_lease_rx_allocated() - the block asked for is made and registered
 * @rx: the receiving end, ALLOCATING
 * @rkey: its key on the current device
 * @act: out: RMSG_LEASE_START (the walk's and the program's cursor start
 *	at @act->seq, @act->bytes, lap 0, position 0), then the GRANT if a
 *	connection is up (else the next connection sends it)
 *
 * The block must be in place for the program, its last trailer zero (a
 * zeroed allocation), and its registration posted before the GRANT on
 * the same send queue.
 *
 * Return: 0, or -EINVAL when nothing was being allocated.
 */
int rmsg_lease_rx_allocated(struct rmsg_lease_rx *rx, u32 rkey,
			    struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	if (rx->state != RMSG_LEASE_RX_ALLOCATING)
		return -EINVAL;
	rx->state = RMSG_LEASE_RX_GRANTED;
	rx->lease++;
	rx->rkey = rkey;
	act->todo |= RMSG_LEASE_START;
	act->seq = rx->seq;
	act->bytes = rx->bytes;
	act->rkey = rkey;
	rmsg_lease_rx_grant(rx, act);
	return 0;
}

/**
 * rmsg_lease_rx_alloc_failed() - no block could be made
 * @rx: the receiving end, ALLOCATING
 *
 * Back to IDLE, owing the peer a block: rmsg_lease_rx_retry() tries
 * again (the caller's back-off; it may end the channel with ENOMEM
 * instead). The peer's data waits meanwhile.
 *
 * Return: 0, or -EINVAL when nothing was being allocated.
 */
int rmsg_lease_rx_alloc_failed(struct rmsg_lease_rx *rx)
{
	if (rx->state != RMSG_LEASE_RX_ALLOCATING)
		return -EINVAL;
	rx->state = RMSG_LEASE_RX_IDLE;
	rx->ask_waiting = true;
	return 0;
}

/**
 * rmsg_lease_rx_retry() - try again to make a block the peer asked for
 * @rx: the receiving end
 * @act: out: RMSG_LEASE_ALLOC, when an ASK still waits for a block
 */
void rmsg_lease_rx_retry(struct rmsg_lease_rx *rx, struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	if (rx->state != RMSG_LEASE_RX_IDLE || !rx->ask_waiting)
		return;
	rx->state = RMSG_LEASE_RX_ALLOCATING;
	rx->ask_waiting = false;
	act->todo |= RMSG_LEASE_ALLOC;
}

/**
 * rmsg_lease_rx_idle() - an idle period passed: take the block back?
 * @rx: the receiving end
 * @arrived: the byte counter at the end of the block's complete records
 *	(a fresh walk)
 * @freed: what the program released
 * @seq: the sequence number the next record would carry (the walk's)
 * @act: out: the REVOKE to send, if one is due
 *
 * Only a granted block all of whose records the program released, with
 * the peer's view of this connection known, and one REVOKE at a time.
 */
void rmsg_lease_rx_idle(struct rmsg_lease_rx *rx, u32 arrived, u32 freed,
			u32 seq, struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	if (rx->state != RMSG_LEASE_RX_GRANTED || !rx->synced ||
	    arrived != freed)
		return;
	rx->state = RMSG_LEASE_RX_REVOKING;
	rx->bytes = arrived;
	rx->seq = seq;
	rmsg_lease_send(act, RMSG_CTRL_REVOKE,
			RMSG_REVOKE_ARG(rx->lease, arrived));
}

/**
 * rmsg_lease_rx_return() - the peer's RETURN: the answer to a REVOKE
 * @rx: the receiving end
 * @m: the RETURN, decoded: @m->flag is RMSG_RETURN_KEEP
 * @arrived: the byte counter at the end of the block's complete records
 * @act: out: RMSG_LEASE_FREE when the peer gave the block back
 *
 * A yes must name the revoke's counter, and nothing may have arrived
 * since: the peer promised to write no more. A KEEP leaves the lease
 * granted; the next idle period may ask again. Its counter, what the
 * peer had written, cannot be behind what arrived before it, nor more
 * than a block ahead (the credit).
 *
 * Return: 0, or -EPROTO (nothing changed): before the peer's READY, a
 * lease not granted, an answer to no REVOKE, a counter not the REVOKE's
 * (yes) or out of its bounds (KEEP).
 */
int rmsg_lease_rx_return(struct rmsg_lease_rx *rx,
			 const struct rmsg_lease_msg *m, u32 arrived,
			 struct rmsg_lease_act *act)
{
	s32 d = rmsg_lease_diff(m->lease, rx->lease);

	memset(act, 0, sizeof(*act));
	if (!rx->synced || d > 0)
		return -EPROTO;
	if (d < 0 || (!d && (rx->state == RMSG_LEASE_RX_IDLE ||
			     rx->state == RMSG_LEASE_RX_ALLOCATING)))
		return 0;	/* an ended lease's: stale */
	if (rx->state != RMSG_LEASE_RX_REVOKING)
		return -EPROTO;
	if (m->flag) {
		/*
		 * Its writes before the KEEP have arrived, and the credit
		 * bounds what it wrote: between the walk and a block ahead.
		 */
		if (m->counter - arrived > rx->size)
			return -EPROTO;
		rx->state = RMSG_LEASE_RX_GRANTED;
		return 0;
	}
	if (m->counter != rx->bytes || arrived != rx->bytes)
		return -EPROTO;
	rx->state = RMSG_LEASE_RX_IDLE;
	act->todo |= RMSG_LEASE_FREE;
	return 0;
}

/**
 * rmsg_lease_tx_init() - the sending end of a leased direction
 * @tx: set whole: NONE, lease 0, no connection
 * @size: the peer's block size from its hello (RMSG_HELLO_F_LEASE)
 * @seq: the stream's first sequence number (0 for a new channel)
 * @bytes: its first byte counter (0 for a new channel)
 *
 * Return: 0, or -EINVAL for a size a lease cannot carry (the hello that
 * announced it is then -EPROTO).
 */
int rmsg_lease_tx_init(struct rmsg_lease_tx *tx, u32 size, u32 seq,
		       u32 bytes)
{
	if (rmsg_lease_check_size(size))
		return -EINVAL;
	memset(tx, 0, sizeof(*tx));
	tx->state = RMSG_LEASE_TX_NONE;
	tx->size = size;
	tx->seq = seq;
	tx->bytes = bytes;
	return 0;
}

/**
 * rmsg_lease_tx_connected() - a new connection: this side's READY goes now
 * @tx: the sending end
 * @act: out: the ASK to send again after the READY, if one is out
 *
 * A held lease is not usable until this connection's GRANT names its key.
 */
void rmsg_lease_tx_connected(struct rmsg_lease_tx *tx,
			     struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	tx->conn = true;
	tx->synced = false;
	tx->usable = false;
	if (tx->state == RMSG_LEASE_TX_ASKED)
		rmsg_lease_send(act, RMSG_CTRL_ASK, RMSG_ASK_ARG(tx->lease));
}

/**
 * rmsg_lease_tx_down() - the connection is gone
 * @tx: the sending end
 *
 * Nothing is written until the next connection's GRANT.
 */
void rmsg_lease_tx_down(struct rmsg_lease_tx *tx)
{
	tx->conn = false;
	tx->synced = false;
	tx->usable = false;
}

/**
 * rmsg_lease_tx_peer_ready() - the peer's READY: its view of its block
 * @tx: the sending end
 * @m: the READY, decoded: @m->lease and @m->flag (granted) are the
 *	receiver's
 *
 * Nothing to do on any pair lost messages can leave: a GRANT follows
 * for a lease held or asked for, and a lease given back whose RETURN was
 * lost the receiver frees on this side's READY.
 *
 * Return: 0, or -EPROTO (nothing changed): a second READY, or a view no
 * loss explains.
 */
int rmsg_lease_tx_peer_ready(struct rmsg_lease_tx *tx,
			     const struct rmsg_lease_msg *m)
{
	s32 d = rmsg_lease_diff(m->lease, tx->lease);
	bool ok;

	if (tx->synced || !tx->conn)
		return -EPROTO;
	switch (tx->state) {
	case RMSG_LEASE_TX_HELD:
		ok = m->flag && !d;
		break;
	case RMSG_LEASE_TX_ASKED:
		/*
		 * Idle or allocating; granted, the GRANT coming; or ours
		 * given back, the RETURN lost.
		 */
		ok = !d || (m->flag && d == 1);
		break;
	default:
		ok = !d;
		break;
	}
	if (!ok)
		return -EPROTO;
	tx->synced = true;
	return 0;
}

/**
 * rmsg_lease_tx_want() - data waits to be written, and the shadow is made
 * @tx: the sending end
 * @act: out: the ASK, when no lease is held or asked for and a
 *	connection is up (else the next connection sends it)
 *
 * Make the shadow (and the pending ring) before: a GRANT then starts the
 * writing without an allocation that could fail.
 */
void rmsg_lease_tx_want(struct rmsg_lease_tx *tx, struct rmsg_lease_act *act)
{
	memset(act, 0, sizeof(*act));
	if (tx->state != RMSG_LEASE_TX_NONE)
		return;
	tx->state = RMSG_LEASE_TX_ASKED;
	if (tx->conn)
		rmsg_lease_send(act, RMSG_CTRL_ASK, RMSG_ASK_ARG(tx->lease));
}

/**
 * rmsg_lease_tx_grant() - the peer's GRANT
 * @tx: the sending end
 * @m: the GRANT, decoded
 * @act: out: RMSG_LEASE_START for the lease asked for (rmsg_vb_tx_init()
 *	with @act->seq, @act->bytes: lap 0, position 0 of a fresh block),
 *	RMSG_LEASE_KEY for the lease held (its key on this connection)
 *
 * A grant of a lease given back is late and ignored.
 *
 * Return: 0, or -EPROTO (nothing changed): before the peer's READY, a
 * size other than the hello's, a lease not asked for or from the future.
 */
int rmsg_lease_tx_grant(struct rmsg_lease_tx *tx,
			const struct rmsg_lease_msg *m,
			struct rmsg_lease_act *act)
{
	s32 d = rmsg_lease_diff(m->lease, tx->lease);

	memset(act, 0, sizeof(*act));
	if (!tx->synced || m->size != tx->size || d > 1)
		return -EPROTO;
	if (d < 0 || (!d && tx->state != RMSG_LEASE_TX_HELD))
		return 0;	/* an ended lease's: late */
	if (!d) {
		tx->rkey = m->rkey;
		tx->usable = true;
		act->todo |= RMSG_LEASE_KEY;
		act->rkey = m->rkey;
		return 0;
	}
	/* The next lease: only when asked for. */
	if (tx->state != RMSG_LEASE_TX_ASKED)
		return -EPROTO;
	tx->state = RMSG_LEASE_TX_HELD;
	tx->lease = m->lease;
	tx->rkey = m->rkey;
	tx->usable = true;
	act->todo |= RMSG_LEASE_START;
	act->seq = tx->seq;
	act->bytes = tx->bytes;
	act->rkey = m->rkey;
	return 0;
}

/**
 * rmsg_lease_tx_revoke() - the peer's REVOKE: give the block back?
 * @tx: the sending end
 * @m: the REVOKE, decoded: @m->counter is where the receiver stands
 * @busy: sends wait (pending ring, rewrites owed): they need the lease
 * @written: &rmsg_vb_tx.written of the lease
 * @seq: &rmsg_vb_tx.seq of the lease
 * @act: out: RETURN to send; with a yes, RMSG_LEASE_FREE (the shadow)
 *
 * Yes only when nothing waits and everything written has arrived and
 * been released (@written is the revoke's counter): from then on nothing
 * is written until the next GRANT, and the next lease starts at
 * @written, @seq. Otherwise RETURN with RMSG_RETURN_KEEP.
 *
 * Return: 0, or -EPROTO (nothing changed): before the peer's READY, a
 * lease from the future, a counter outside what this lease wrote.
 */
int rmsg_lease_tx_revoke(struct rmsg_lease_tx *tx,
			 const struct rmsg_lease_msg *m, bool busy,
			 u32 written, u32 seq, struct rmsg_lease_act *act)
{
	s32 d = rmsg_lease_diff(m->lease, tx->lease);

	memset(act, 0, sizeof(*act));
	if (!tx->synced || d > 0)
		return -EPROTO;
	if (d < 0 || tx->state != RMSG_LEASE_TX_HELD)
		return 0;	/* an ended lease's: stale */
	/* The receiver cannot have seen more than was written. */
	if (m->counter - tx->bytes > written - tx->bytes)
		return -EPROTO;
	if (busy || written != m->counter) {
		rmsg_lease_send(act, RMSG_CTRL_RETURN,
				RMSG_RETURN_ARG(tx->lease, written, true));
		return 0;
	}
	tx->state = RMSG_LEASE_TX_NONE;
	tx->usable = false;
	tx->seq = seq;
	tx->bytes = written;
	act->todo |= RMSG_LEASE_FREE;
	rmsg_lease_send(act, RMSG_CTRL_RETURN,
			RMSG_RETURN_ARG(tx->lease, written, false));
	return 0;
}

/**
 * rmsg_lease_tx_resume_check() - the peer's resume point, without a lease
 * @tx: the sending end
 * @rx_freed: the hello's rx_freed
 * @rx_arrived: the hello's rx_arrived
 * @rx_seq: the hello's rx_seq
 *
 * Without a lease there is no shadow and nothing to write again: the
 * peer's block (or its absence) must stand exactly where the last lease
 * ended. With one, rmsg_vb_tx_resume() checks the point against the
 * shadow as on any channel.
 *
 * Return: 0, or -EPROTO.
 */
int rmsg_lease_tx_resume_check(const struct rmsg_lease_tx *tx, u32 rx_freed,
			       u32 rx_arrived, u32 rx_seq)
{
	if (tx->state == RMSG_LEASE_TX_HELD)
		return 0;
	if (rx_freed != tx->bytes || rx_arrived != tx->bytes ||
	    rx_seq != tx->seq)
		return -EPROTO;
	return 0;
}

/**
 * rmsg_lease_ready_arg() - the READY of a new connection
 * @rx: this side's block, when leased (else NULL)
 * @tx: this side's view of the peer's block, when leased (else NULL)
 *
 * Call after rmsg_lease_rx_connected() and rmsg_lease_tx_connected().
 *
 * Return: RMSG_READY_ARG() of both; 0 without leases.
 */
u64 rmsg_lease_ready_arg(const struct rmsg_lease_rx *rx,
			 const struct rmsg_lease_tx *tx)
{
	u64 arg = 0;

	if (rx)
		arg |= RMSG_READY_ARG(rx->lease, rmsg_lease_rx_has_block(rx),
				      0, false);
	if (tx)
		arg |= RMSG_READY_ARG(0, false, tx->lease,
				      tx->state == RMSG_LEASE_TX_HELD);
	return arg;
}
