/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: block leases (Documentation/protocol.rst, "Block
 * leases"). A receiver with RMSG_HELLO_F_LEASE holds no receive block
 * until its peer asks for one, and takes it back after an idle period;
 * the sender writes only under a lease it holds, and keeps a shadow only
 * then. Two state machines, one per end of a direction: struct
 * rmsg_lease_rx at the receiver (it owns the block), struct rmsg_lease_tx
 * at the sender. Each event is a function that checks what the peer sent
 * and says what to do (struct rmsg_lease_act); the caller does it.
 *
 * Nothing here allocates, sleeps or locks; the caller serialises each
 * machine (the channel's lock) and owns the block, its registration and
 * the shadow. It sends a machine's messages in the order the machine
 * asked for them, after the connection's READY: a send buffer that is
 * busy must not let a later message of a machine overtake an earlier
 * one (the sender's RETURN, then its ASK). A message asked for while no
 * connection is up is dropped: the next connection makes it good.
 */
#ifndef _RMSG_LEASE_H
#define _RMSG_LEASE_H

#include "rmsg_core_types.h"
#include "rmsg_wire.h"

/**
 * enum rmsg_lease_rx_state - the receiver's block
 * @RMSG_LEASE_RX_IDLE: no block; lease &rmsg_lease_rx.lease ended (or is
 *	0, none yet)
 * @RMSG_LEASE_RX_ALLOCATING: the peer asked; the caller is making the
 *	block of lease &rmsg_lease_rx.lease + 1
 * @RMSG_LEASE_RX_GRANTED: lease &rmsg_lease_rx.lease is the peer's: it
 *	may write into the block
 * @RMSG_LEASE_RX_REVOKING: as GRANTED, and REVOKE(lease, bytes) asked
 *	for it back; the block stays until the peer's RETURN says yes
 */
enum rmsg_lease_rx_state {
	RMSG_LEASE_RX_IDLE,
	RMSG_LEASE_RX_ALLOCATING,
	RMSG_LEASE_RX_GRANTED,
	RMSG_LEASE_RX_REVOKING,
};

/**
 * enum rmsg_lease_tx_state - the sender's view of the peer's block
 * @RMSG_LEASE_TX_NONE: no lease; lease &rmsg_lease_tx.lease ended (or is
 *	0, none yet); no shadow
 * @RMSG_LEASE_TX_ASKED: data waits: ASK(lease) is out, or owed to the
 *	next connection; the shadow is made, nothing is written
 * @RMSG_LEASE_TX_HELD: lease &rmsg_lease_tx.lease is held: records go
 *	into the peer's block once the connection's GRANT gave its key
 */
enum rmsg_lease_tx_state {
	RMSG_LEASE_TX_NONE,
	RMSG_LEASE_TX_ASKED,
	RMSG_LEASE_TX_HELD,
};

/*
 * struct rmsg_lease_act.todo: what the caller must do, in the order of
 * the bits.
 *
 * RMSG_LEASE_ALLOC (rx): make a block: pages (zeroed, or
 *	rmsg_vb_block_init()), the DMA mapping, a registration; then call
 *	rmsg_lease_rx_allocated() or rmsg_lease_rx_alloc_failed().
 * RMSG_LEASE_START: a lease starts at @seq and @bytes, lap 0, position 0.
 *	rx: rmsg_vb_rx_init() of the walk and of the program's cursor,
 *	before the GRANT goes; tx: rmsg_vb_tx_init() with the peer's block
 *	size, then write under @rkey.
 * RMSG_LEASE_KEY (tx): the held lease's key on this connection is @rkey:
 *	rewrites and new records may go (after a repair).
 * RMSG_LEASE_FREE: rx: the peer will never write into the block again:
 *	deregister, unmap, free it; tx: the shadow is no longer needed: free
 *	it once the data work requests that read it have completed.
 * RMSG_LEASE_SEND: send control message @type with @arg on the current
 *	connection.
 */
#define RMSG_LEASE_ALLOC	(1U << 0)
#define RMSG_LEASE_START	(1U << 1)
#define RMSG_LEASE_KEY		(1U << 2)
#define RMSG_LEASE_FREE		(1U << 3)
#define RMSG_LEASE_SEND		(1U << 4)

/**
 * struct rmsg_lease_act - what an event asks of the caller
 * @todo: RMSG_LEASE_* bits
 * @type: RMSG_LEASE_SEND: the control message's type
 * @arg: RMSG_LEASE_SEND: its argument
 * @seq: RMSG_LEASE_START: the lease's first sequence number
 * @bytes: RMSG_LEASE_START: the lease's first byte counter
 * @rkey: RMSG_LEASE_START, RMSG_LEASE_KEY (tx): the block's key
 */
struct rmsg_lease_act {
	u32 todo;
	u8 type;
	u64 arg;
	u32 seq;
	u32 bytes;
	u32 rkey;
};

/**
 * struct rmsg_lease_rx - the receiving end of a leased direction
 * @state: enum rmsg_lease_rx_state
 * @conn: a connection is up and this side's READY went on it: lease
 *	messages may be sent
 * @synced: the peer's READY of this connection arrived (its lease resume
 *	point, rmsg_lease_rx_peer_ready())
 * @ask_waiting: IDLE: the peer's ASK found no memory; rmsg_lease_rx_retry()
 *	tries again
 * @lease: the current lease (GRANTED, REVOKING), else the last one
 * @size: the block size of the channel's hello: every lease's
 * @rkey: GRANTED, REVOKING: the key of the block on this connection
 * @seq: IDLE, ALLOCATING: the sequence number the next lease starts at;
 *	REVOKING: the one at the revoke
 * @bytes: likewise, the byte counter; REVOKING: the REVOKE's
 */
struct rmsg_lease_rx {
	u8 state;
	bool conn;
	bool synced;
	bool ask_waiting;
	u16 lease;
	u32 size;
	u32 rkey;
	u32 seq;
	u32 bytes;
};

/**
 * struct rmsg_lease_tx - the sending end of a leased direction
 * @state: enum rmsg_lease_tx_state
 * @conn: as in struct rmsg_lease_rx
 * @synced: the peer's READY of this connection arrived
 * @usable: HELD: the GRANT of this connection arrived: @rkey is good
 * @lease: the held lease, else the last one
 * @size: the peer's block size from its hello; a GRANT must say the same
 * @rkey: HELD: the block's key
 * @seq: NONE, ASKED: the sequence number the next lease starts at
 * @bytes: NONE, ASKED: the byte counter the next lease starts at
 */
struct rmsg_lease_tx {
	u8 state;
	bool conn;
	bool synced;
	bool usable;
	u16 lease;
	u32 size;
	u32 rkey;
	u32 seq;
	u32 bytes;
};

int rmsg_lease_rx_init(struct rmsg_lease_rx *rx, u32 size, u32 seq,
		       u32 bytes);
void rmsg_lease_rx_connected(struct rmsg_lease_rx *rx, u32 rkey,
			     struct rmsg_lease_act *act);
void rmsg_lease_rx_down(struct rmsg_lease_rx *rx);
int rmsg_lease_rx_peer_ready(struct rmsg_lease_rx *rx,
			     const struct rmsg_lease_msg *m, u32 arrived,
			     struct rmsg_lease_act *act);
int rmsg_lease_rx_ask(struct rmsg_lease_rx *rx, const struct rmsg_lease_msg *m,
		      struct rmsg_lease_act *act);
int rmsg_lease_rx_allocated(struct rmsg_lease_rx *rx, u32 rkey,
			    struct rmsg_lease_act *act);
int rmsg_lease_rx_alloc_failed(struct rmsg_lease_rx *rx);
void rmsg_lease_rx_retry(struct rmsg_lease_rx *rx,
			 struct rmsg_lease_act *act);
void rmsg_lease_rx_idle(struct rmsg_lease_rx *rx, u32 arrived, u32 freed,
			u32 seq, struct rmsg_lease_act *act);
int rmsg_lease_rx_return(struct rmsg_lease_rx *rx,
			 const struct rmsg_lease_msg *m, u32 arrived,
			 struct rmsg_lease_act *act);

/**
 * rmsg_lease_rx_has_block() - does the receiver hold a block?
 * @rx: the receiving end
 *
 * Return: true from the allocation's end to the FREE: the block is
 * mapped for the program, and its walk gives the resume point.
 */
static inline bool rmsg_lease_rx_has_block(const struct rmsg_lease_rx *rx)
{
	return rx->state == RMSG_LEASE_RX_GRANTED ||
	       rx->state == RMSG_LEASE_RX_REVOKING;
}

int rmsg_lease_tx_init(struct rmsg_lease_tx *tx, u32 size, u32 seq,
		       u32 bytes);
void rmsg_lease_tx_connected(struct rmsg_lease_tx *tx,
			     struct rmsg_lease_act *act);
void rmsg_lease_tx_down(struct rmsg_lease_tx *tx);
int rmsg_lease_tx_peer_ready(struct rmsg_lease_tx *tx,
			     const struct rmsg_lease_msg *m);
void rmsg_lease_tx_want(struct rmsg_lease_tx *tx, struct rmsg_lease_act *act);
int rmsg_lease_tx_grant(struct rmsg_lease_tx *tx,
			const struct rmsg_lease_msg *m,
			struct rmsg_lease_act *act);
int rmsg_lease_tx_revoke(struct rmsg_lease_tx *tx,
			 const struct rmsg_lease_msg *m, bool busy,
			 u32 written, u32 seq, struct rmsg_lease_act *act);
int rmsg_lease_tx_resume_check(const struct rmsg_lease_tx *tx, u32 rx_freed,
			       u32 rx_arrived, u32 rx_seq);

/**
 * rmsg_lease_tx_may_write() - may records go into the peer's block now?
 * @tx: the sending end
 *
 * Return: true while a lease is held and this connection's GRANT gave
 * its key (rewrites after a repair included).
 */
static inline bool rmsg_lease_tx_may_write(const struct rmsg_lease_tx *tx)
{
	return tx->state == RMSG_LEASE_TX_HELD && tx->usable;
}

u64 rmsg_lease_ready_arg(const struct rmsg_lease_rx *rx,
			 const struct rmsg_lease_tx *tx);

#endif /* _RMSG_LEASE_H */
