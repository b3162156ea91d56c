/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: messages between two rmsg modules that programs never
 * see. (What programs do see on the wire, the receive-block trailer, is in
 * the UAPI header.)
 *
 * The connection handshake rides in the rdma_cm private data: the connecting
 * side's REQ carries a hello, and so does the accepting side's REP. IB and
 * RoCE leave 56 bytes of REQ private data to the user of RDMA_PS_TCP, so the
 * hello is exactly 56 bytes. All fields are little-endian.
 */
#ifndef _RMSG_WIRE_H
#define _RMSG_WIRE_H

#include "rmsg_core_types.h"
#include <rdma/rmsg.h>

#define RMSG_WIRE_MAGIC		0x47534d52	/* "RMSG" read as LE */
#define RMSG_WIRE_VERSION	1
#define RMSG_WIRE_HELLO_SIZE	56
/* No channel yet: the peer_channel of a first connection attempt. */
#define RMSG_WIRE_NO_CHANNEL	0xffffffffU

/* rmsg_wire_hello.kind */
enum rmsg_hello_kind {
	RMSG_HELLO_CONNECT	= 1,	/* REQ: a new channel */
	RMSG_HELLO_RECONNECT	= 2,	/* REQ: repair an existing channel */
	RMSG_HELLO_ACCEPT	= 3,	/* REP: the answer to either */
};

/*
 * rmsg_wire_hello.flags: the sender's receive block needs each record's
 * arrival flag set by the sender's own kernel, because its device may place
 * an RDMA WRITE out of order: write every record but its last byte with
 * RDMA WRITE WITH IMMEDIATE, the immediate naming the flag (RMSG_IMM_*).
 */
#define RMSG_HELLO_F_IMM_ARRIVAL	(1U << 0)
/*
 * The sender's rendezvous registrations went with a device it left: the
 * keys in every RTS the receiver collected before this hello are dead. A
 * REKEY brings new ones; until then the receiver moves none of those
 * transfers' bytes. Not a property of the block: it may differ from one
 * hello to the next.
 */
#define RMSG_HELLO_F_REKEY		(1U << 1)
/*
 * The sender's block MR maps its endpoint's arrival summary (the layout
 * of RMSG_OFF_SUMMARY) at address 0, the block following at the hello's
 * block_addr: after each burst of records, the peer writes a non-zero
 * byte at RMSG_SUMMARY_CHANNEL(the sender's channel id), then one at
 * RMSG_SUMMARY_GROUP(it), on the same connection. Only from a sender
 * whose endpoint has a summary (RMSG_EP_F_SUMMARY), and never with
 * RMSG_HELLO_F_IMM_ARRIVAL (the sender's kernel then marks its summary
 * itself as each record's immediate arrives).
 */
#define RMSG_HELLO_F_SUMMARY		(1U << 2)
/*
 * The sender's channel carries a link (a carrier, Documentation/design.rst,
 * "How the module carries links"): its QP holds RMSG_LINK_RECVS
 * more receives of RMSG_WIRE_LMSG_MAX bytes for the link's messages,
 * besides a channel's own, and the control messages it receives may name channels
 * on the link. Only between two rmsg kernels, never in a HELLO on a link.
 */
#define RMSG_HELLO_F_LINK		(1U << 3)
/*
 * The sender's receive block is leased (Documentation/protocol.rst,
 * "Block leases"): it holds none until the peer asks (ASK), and the peer
 * writes only under a GRANT it holds; the block is taken back after an
 * idle period (REVOKE, RETURN). Each READY then carries both directions'
 * lease state (RMSG_READY_ARG()). Only with a block size that is a
 * multiple of RMSG_LEASE_UNIT; fixed for the channel's life. The module
 * leases only when both hellos say so (its lease_blocks parameter; a
 * hello with it is refused on a channel that does not lease, as an older
 * module refuses the unknown flag).
 */
#define RMSG_HELLO_F_LEASE		(1U << 4)
/*
 * This hello stands for the sender's READY of the connection it opens,
 * with RMSG_READY_ARG() 0 (no lease granted or held yet), and no READY
 * follows it (Documentation/protocol.rst, "Channels on a link"). Only
 * in a CONNECT or an ACCEPT on a link, with RMSG_HELLO_F_LEASE: a leased
 * channel registers no block at open, so its READY would say nothing
 * but that the hello's sender is connected, which its hello says
 * already. An ACCEPT has it only when its CONNECT had it; a CONNECT's
 * sender that gets an ACCEPT without it sends its READY as before.
 */
#define RMSG_HELLO_F_READY		(1U << 5)
#define RMSG_HELLO_F_ALL		(RMSG_HELLO_F_IMM_ARRIVAL | \
					 RMSG_HELLO_F_REKEY | \
					 RMSG_HELLO_F_SUMMARY | \
					 RMSG_HELLO_F_LINK | \
					 RMSG_HELLO_F_LEASE | \
					 RMSG_HELLO_F_READY)

/*
 * The private data of the REJ that refuses a RECONNECT for good: the channel
 * is gone or the peer endpoint restarted. A REJ without it (a busy peer, an
 * attempt id the rdma_cm destroyed: it sends a consumer-defined REJ then
 * too) only fails that attempt. Little-endian, "RMGN".
 */
#define RMSG_WIRE_REJ_GONE	0x4e474d52U
#define RMSG_WIRE_REJ_SIZE	4

/* The immediate of a record written with RMSG_HELLO_F_IMM_ARRIVAL. */
#define RMSG_IMM_ODD			1U	/* flag RMSG_VB_FLAG_ODD */
#define RMSG_IMM_OFF_SHIFT		1	/* block offset of the flag */

/**
 * struct rmsg_wire_hello - handshake in the rdma_cm private data
 * @magic: RMSG_WIRE_MAGIC
 * @version: RMSG_WIRE_VERSION
 * @kind: enum rmsg_hello_kind
 * @flags: RMSG_HELLO_F_* bits; others must be zero
 * @incarnation: the sender's endpoint, random and never 0; a peer that
 *	comes back with another one restarted and is not the same peer
 * @block_addr: address of the sender's receive block for RDMA WRITE
 * @channel: the sender's id of the channel
 * @peer_channel: the receiver's id of the channel, or RMSG_WIRE_NO_CHANNEL
 *	on a first connection attempt
 * @epoch: connection attempt of the channel: 0 first, then one more per
 *	repair, so that a stale attempt is told from the current one
 * @block_rkey: rkey of the sender's receive block
 * @block_size: bytes of the sender's receive block
 * @rx_seq: the next sequence number the sender expects to receive
 * @rx_freed: bytes of its receive block the sender has released
 *	(free-running), where the peer's credit resumes after a repair
 * @rx_arrived: bytes of the sender's receive block that hold complete
 *	records (free-running, like @rx_freed), where the peer resumes
 *	writing after a repair; never behind @rx_freed, at most a block
 *	ahead of it, and equal to it in a CONNECT
 *
 * In a CONNECT, @rx_seq, @rx_freed and @rx_arrived are the receive block's
 * initial state: nothing has arrived, so @rx_arrived equals @rx_freed (the
 * initial value of the byte counters). In a RECONNECT, and in the ACCEPT
 * that answers either kind, they say where the sender's receive stream
 * stands (see rmsg_vb_tx_resume()).
 */
struct rmsg_wire_hello {
	__le32 magic;
	__u8   version;
	__u8   kind;
	__le16 flags;
	__le64 incarnation;
	__le64 block_addr;
	__le32 channel;
	__le32 peer_channel;
	__le32 epoch;
	__le32 block_rkey;
	__le32 block_size;
	__le32 rx_seq;
	__le32 rx_freed;
	__le32 rx_arrived;
};

/**
 * struct rmsg_hello - a hello in host byte order
 *
 * The fields are those of struct rmsg_wire_hello.
 */
struct rmsg_hello {
	u8  kind;
	u16 flags;
	u64 incarnation;
	u64 block_addr;
	u32 channel;
	u32 peer_channel;
	u32 epoch;
	u32 block_rkey;
	u32 block_size;
	u32 rx_seq;
	u32 rx_freed;
	u32 rx_arrived;
};

/*
 * The accepting side's addresses. An ACCEPT travels in the REP, whose
 * private data has room for RMSG_WIRE_REP_SIZE bytes: after the hello
 * (RMSG_WIRE_HELLO_SIZE bytes) comes a struct rmsg_wire_addrs listing the
 * addresses a repair may dial to reach the accepting side again (it is the
 * side that is dialled). The connecting side keeps the newest list and
 * moves to the next address when an attempt fails (failover,
 * Documentation/resilience.rst). A REP without a list (a peer that sends
 * none) is padded with zeros by the transport: a list whose magic is zero
 * is empty.
 */
#define RMSG_WIRE_REP_SIZE	196	/* IB_CM_REP_PRIVATE_DATA_SIZE */
#define RMSG_WIRE_ADDRS_MAGIC	0x44414d52	/* "RMAD" read as LE */
#define RMSG_WIRE_ADDRS_MAX	6
#define RMSG_WIRE_ADDRS_HDR	8
#define RMSG_WIRE_ADDR_SIZE	20

/* rmsg_wire_addr.family */
enum rmsg_addr_family {
	RMSG_ADDR_IPV4		= 4,
	RMSG_ADDR_IPV6		= 6,
};

/**
 * struct rmsg_wire_addr - one address of the accepting side
 * @family: enum rmsg_addr_family
 * @resv0: zero
 * @addr: the address in network byte order: IPv4 in the first 4 bytes
 *	(the rest zero), IPv6 in all 16
 *
 * Only addresses another node can dial: not unspecified, loopback,
 * multicast or broadcast, and no IPv6 link-local address (it would need
 * the dialling side's scope).
 */
struct rmsg_wire_addr {
	__u8   family;
	__u8   resv0[3];
	__u8   addr[16];
};

/**
 * struct rmsg_wire_addrs - the address list after an ACCEPT hello
 * @magic: RMSG_WIRE_ADDRS_MAGIC, or zero for no list
 * @count: entries of @addr that follow, at most RMSG_WIRE_ADDRS_MAX
 * @resv0: zero
 * @addr: the addresses, in the order the accepting side prefers; only
 *	@count of them are sent
 */
struct rmsg_wire_addrs {
	__le32 magic;
	__u8   count;
	__u8   resv0[3];
	struct rmsg_wire_addr addr[RMSG_WIRE_ADDRS_MAX];
};

/**
 * struct rmsg_addr - an address of struct rmsg_wire_addr, decoded
 * @family: enum rmsg_addr_family
 * @addr: as on the wire: network byte order, IPv4 in the first 4 bytes
 *	and the rest zero
 */
struct rmsg_addr {
	u8 family;
	u8 addr[16];
};

/**
 * struct rmsg_addrs - an address list in host order
 * @count: entries of @addr in use
 * @addr: the addresses
 */
struct rmsg_addrs {
	u32 count;
	struct rmsg_addr addr[RMSG_WIRE_ADDRS_MAX];
};

/*
 * Control messages travel by SEND into a few receive buffers per channel,
 * beside the eager data that goes by RDMA WRITE into the receive block.
 */
#define RMSG_WIRE_CTRL_SIZE	16

/*
 * Links (Documentation/protocol.rst, "Links"): one RC connection between
 * two rmsg kernels that many channels share, that of a channel whose
 * hellos have RMSG_HELLO_F_LINK (the carrier). Channels then open, repair
 * and close with messages on the link that name the receiver's channel by
 * its link id: 24 bits, 1 to RMSG_LINK_CHAN_MAX; RMSG_LINK_SELF (0) is the
 * link itself (the carrier's own messages), RMSG_LINK_NO_CHAN a channel
 * the receiver has not made yet. Each side of a link starts with
 * RMSG_LINK_RECVS receives for them, and so with that many send credits.
 */
#define RMSG_LINK_SELF		0U
#define RMSG_LINK_CHAN_MAX	0xfffffeU
#define RMSG_LINK_NO_CHAN	0xffffffU
#define RMSG_LINK_RECVS		256U

/* rmsg_wire_ctrl.type */
enum rmsg_ctrl_type {
	RMSG_CTRL_READY		= 1,	/* my receive block is registered */
	RMSG_CTRL_CLOSE		= 2,	/* I close the channel; nothing follows */
	RMSG_CTRL_CREDIT	= 3,	/* arg: bytes of my block released */
	RMSG_CTRL_NOTIFY	= 4,	/* arg: bytes consumed; WAKE me after */
	RMSG_CTRL_WAKE		= 5,	/* you asked: there is a message */
	RMSG_CTRL_FIN		= 6,	/* arg: a rendezvous transfer is over */
	RMSG_CTRL_CTS		= 7,	/* arg: cookie; RPut: the CTS is written */
	RMSG_CTRL_DONE		= 8,	/* arg: as FIN; RPut: the bytes are */
	RMSG_CTRL_RESET		= 9,	/* I abort: do not repair; nothing follows */
	RMSG_CTRL_HEARTBEAT	= 10,	/* I am here (every heartbeat_ms) */
	RMSG_CTRL_REKEY		= 11,	/* arg: RMSG_REKEY_ARG(), read it */
	/* On a link only: */
	RMSG_CTRL_HELLO		= 12,	/* a channel's hello follows */
	RMSG_CTRL_REFUSE	= 13,	/* arg: errno; no such channel (now) */
	RMSG_CTRL_LCREDIT	= 14,	/* arg: receives posted, in all */
	/* Block leases (RMSG_HELLO_F_LEASE), direct or on a link: */
	RMSG_CTRL_ASK		= 15,	/* arg: lease n ended; grant n + 1 */
	RMSG_CTRL_GRANT		= 16,	/* arg: RMSG_GRANT_ARG(): write */
	RMSG_CTRL_REVOKE	= 17,	/* arg: RMSG_REVOKE_ARG(): give back? */
	RMSG_CTRL_RETURN	= 18,	/* arg: RMSG_RETURN_ARG(): yes or keep */
};

/*
 * Block leases. A lease number is 16 bits, free-running; the two ends of
 * a direction are never more than one lease apart, so numbers compare by
 * distance modulo 2^16 (rmsg_lease.c). Counters are the free-running
 * byte counters of struct rmsg_vb_tx and struct rmsg_vb_rx. The block of
 * a lease is addressed as the hello's block_addr says, under the GRANT's
 * key; its size travels in units of RMSG_LEASE_UNIT and must be the
 * hello's block_size.
 *
 * ASK:    bits 0-15 the newest lease the sender knows (ended), rest zero.
 * GRANT:  bits 0-31 rkey, 32-47 lease, 48-63 size / RMSG_LEASE_UNIT
 *         (1 to RMSG_VB_MAX_BLOCK / RMSG_LEASE_UNIT).
 * REVOKE: bits 0-31 the receiver's byte counter (all of it released),
 *         32-47 lease, rest zero.
 * RETURN: bits 0-31 the sender's written counter, 32-47 lease, bit 48
 *         RMSG_RETURN_KEEP (declined: the sender keeps the lease), rest
 *         zero.
 * READY:  with RMSG_HELLO_F_LEASE, the lease resume point of the new
 *         connection: bits 0-15 the lease of the sender's own block, bit
 *         16 granted; bits 32-47 the lease of the peer's block as the
 *         sender knows it, bit 48 held; rest zero. Zero without leases.
 */
#define RMSG_LEASE_UNIT			4096U
#define RMSG_LEASE_UNITS_MAX		(RMSG_VB_MAX_BLOCK / RMSG_LEASE_UNIT)
#define RMSG_RETURN_KEEP		(1ULL << 48)
#define RMSG_ASK_ARG(lease)		((u64)(u16)(lease))
#define RMSG_GRANT_ARG(rkey, lease, size) \
	((u64)(u32)(rkey) | (u64)(u16)(lease) << 32 | \
	 (u64)(u16)((size) / RMSG_LEASE_UNIT) << 48)
#define RMSG_REVOKE_ARG(lease, counter) \
	((u64)(u32)(counter) | (u64)(u16)(lease) << 32)
#define RMSG_RETURN_ARG(lease, counter, keep) \
	(RMSG_REVOKE_ARG(lease, counter) | ((keep) ? RMSG_RETURN_KEEP : 0))
#define RMSG_READY_GRANTED		(1ULL << 16)
#define RMSG_READY_HELD			(1ULL << 48)
#define RMSG_READY_ARG(rx_lease, granted, tx_lease, held) \
	((u64)(u16)(rx_lease) | ((granted) ? RMSG_READY_GRANTED : 0) | \
	 (u64)(u16)(tx_lease) << 32 | ((held) ? RMSG_READY_HELD : 0))

/**
 * struct rmsg_lease_msg - a lease message's argument, decoded
 * @lease: the lease it names (ASK: the newest the sender knows; READY:
 *	the lease of the sender's own block)
 * @counter: REVOKE, RETURN: the byte counter
 * @rkey: GRANT: the block's key
 * @size: GRANT: the block's size in bytes
 * @flag: RETURN: declined (RMSG_RETURN_KEEP); READY: the sender's block
 *	is granted
 * @peer_lease: READY: the lease of the receiver's block as the sender
 *	knows it
 * @held: READY: the sender holds @peer_lease
 */
struct rmsg_lease_msg {
	u16 lease;
	u32 counter;
	u32 rkey;
	u32 size;
	bool flag;
	u16 peer_lease;
	bool held;
};

int rmsg_lease_msg_decode(u8 type, u64 arg, struct rmsg_lease_msg *m);

/*
 * REKEY: after RMSG_HELLO_F_REKEY, the sender's RTS records again, with
 * the keys of its new device, packed (each at a multiple of 8 bytes) in a
 * "rekey area" of @bytes at address 0 under @rkey, for the receiver to
 * RDMA READ. @epoch: the low 16 bits of the connection's epoch, so that a
 * REKEY of an earlier connection, whose key may be dead too, is ignored.
 */
#define RMSG_REKEY_AREA			4096
#define RMSG_REKEY_ALIGN		8
#define RMSG_REKEY_ARG(rkey, epoch, bytes) \
	((u64)(u32)(rkey) << 32 | (u64)(u16)(epoch) << 16 | (u16)(bytes))
#define RMSG_REKEY_RKEY(arg)		((u32)((arg) >> 32))
#define RMSG_REKEY_EPOCH(arg)		((u16)((arg) >> 16))
#define RMSG_REKEY_BYTES(arg)		((u32)(u16)(arg))

/*
 * The argument of FIN: the transfer's cookie in the low 32 bits, and the
 * errno that ended it (0 when the bytes arrived) in the next 8.
 */
#define RMSG_FIN_ARG(cookie, err)	((u64)(u32)(cookie) | \
					 (u64)(u8)(err) << 32)
#define RMSG_FIN_COOKIE(arg)		((u32)(arg))
#define RMSG_FIN_ERR(arg)		((int)((arg) >> 32))

/**
 * struct rmsg_wire_ctrl - a control message
 * @magic: RMSG_WIRE_MAGIC
 * @type: enum rmsg_ctrl_type
 * @chan: on a link, the receiver's id of the channel (24 bits,
 *	little-endian; RMSG_LINK_SELF for the link's own messages); zero on
 *	a direct channel's connection
 * @arg: meaning depends on @type: a free-running 32-bit byte counter for
 *	CREDIT and NOTIFY, RMSG_FIN_ARG() for FIN, RMSG_REKEY_ARG() for
 *	REKEY, RMSG_LINK_HELLO_ARG() for a HELLO, the errno for
 *	REFUSE, a free-running 32-bit count for LCREDIT, RMSG_ASK_ARG() and
 *	its siblings for the lease messages and for READY on a leased
 *	channel, zero for the others
 */
struct rmsg_wire_ctrl {
	__le32 magic;
	__u8   type;
	__u8   chan[3];
	__le64 arg;
};

void rmsg_ctrl_encode(struct rmsg_wire_ctrl *wire, u8 type, u64 arg);
int rmsg_ctrl_decode(const void *data, u32 len, u8 *type, u64 *arg);

/*
 * A link's message: a control message, and after a HELLO the channel's
 * hello (RMSG_WIRE_LMSG_MAX bytes in all; every other type is
 * RMSG_WIRE_CTRL_SIZE). A link's receive buffers take the longer.
 */
#define RMSG_WIRE_LMSG_MAX	(RMSG_WIRE_CTRL_SIZE + RMSG_WIRE_HELLO_SIZE)

/*
 * The argument of a HELLO on a link: the service port of a CONNECT in the
 * low 16 bits (0 in the other kinds), zero in the next 16, and the
 * sender's endpoint's id of the channel in the upper 32 (below
 * RMSG_MAX_CHANNELS: an id past the arrival summary would send the
 * peer's hint writes outside the sender's MR and break the link's QP).
 */
#define RMSG_LINK_HELLO_ARG(port, ep_chan)	((u64)(u16)(port) | \
						 (u64)(u32)(ep_chan) << 32)
#define RMSG_LINK_HELLO_PORT(arg)		((u32)(arg))
#define RMSG_LINK_HELLO_EP_CHAN(arg)		((u32)((arg) >> 32))

/**
 * struct rmsg_lmsg - a link's message in host byte order
 * @type: enum rmsg_ctrl_type
 * @chan: the receiver's id of the channel, RMSG_LINK_SELF or
 *	RMSG_LINK_NO_CHAN
 * @arg: as in struct rmsg_wire_ctrl; for a HELLO only its low 32 bits
 *	(RMSG_LINK_HELLO_PORT()), the service port of a CONNECT, 0 otherwise
 * @hello: a HELLO's hello; unused by other types
 * @ep_chan: a HELLO's: the sender's endpoint's id of the channel, below
 *	RMSG_MAX_CHANNELS (RMSG_LINK_HELLO_EP_CHAN()); unused by other types
 *
 * On a link a hello's @hello.channel and @hello.peer_channel are link ids,
 * which name the channel to the carriers. The endpoint's id, which a
 * hello in a REQ or REP carries as its channel, is what the peer writes
 * its arrival summary hints by (RMSG_HELLO_F_SUMMARY,
 * RMSG_SUMMARY_CHANNEL()), so it travels beside them, in the upper half
 * of the HELLO's argument.
 */
struct rmsg_lmsg {
	u8 type;
	u32 chan;
	u64 arg;
	struct rmsg_hello hello;
	u32 ep_chan;
};

u32 rmsg_lmsg_encode(void *buf, const struct rmsg_lmsg *msg);
int rmsg_lmsg_decode(struct rmsg_lmsg *msg, const void *data, u32 len);

void rmsg_hello_encode(struct rmsg_wire_hello *wire,
		       const struct rmsg_hello *hello);
int rmsg_hello_decode(struct rmsg_hello *hello, const void *data, u32 len);

bool rmsg_addr_usable(const struct rmsg_addr *a);
u32 rmsg_addrs_encode(struct rmsg_wire_addrs *wire,
		      const struct rmsg_addrs *addrs);
int rmsg_addrs_decode(struct rmsg_addrs *addrs, const void *data, u32 len);

#endif /* _RMSG_WIRE_H */
