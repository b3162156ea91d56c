/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: what the channel's life cycle (rmsg_lifecycle.c) and its data path
 * (rmsg_data.c) share.
 */
#ifndef _RMSG_CHAN_H
#define _RMSG_CHAN_H

#include <linux/kref.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <rdma/rdma_cm.h>

#include "rmsg.h"
#include "rmsg_vb.h"
#include "rmsg_wire.h"
#include "rmsg_resil.h"
#include "rmsg_lease.h"

/*
 * Control messages. Receives: enough for every send buffer the peer has
 * (at most one message of each kind is in flight), so the peer never
 * meets receiver-not-ready. Sends: one buffer per kind; a kind whose
 * buffer is busy is sent again, with the newest value, when it is free.
 */
/*
 * Rendezvous transfers each way whose FIN has not come: each costs the
 * sending side a receive for the FIN (or the CTS before it), and the
 * receiving side a FIN send buffer. The five kinds of the channel, the
 * HEARTBEAT, the REKEY and the one DONE buffer take the other eight
 * receives (RESET goes in CLOSE's buffer: only one of them is ever sent).
 */
#define RMSG_RNDV_WINDOW	8
#define RMSG_CTRL_RECVS		(8 + RMSG_RNDV_WINDOW)
enum rmsg_ctrl_send_buf {
	RMSG_CTRL_READY_BUF	= RMSG_CTRL_RECVS,
	RMSG_CTRL_CLOSE_BUF,
	RMSG_CTRL_CREDIT_BUF,
	RMSG_CTRL_NOTIFY_BUF,
	RMSG_CTRL_WAKE_BUF,
	RMSG_CTRL_DONE_BUF,	/* RPut: the bytes are written */
	RMSG_CTRL_HEARTBEAT_BUF,
	RMSG_CTRL_REKEY_BUF,	/* after a move: where our new keys are */
	/* The first of RMSG_RNDV_WINDOW, by cookie: an RPut's CTS, then FIN */
	RMSG_CTRL_FIN_BUF,
	RMSG_CTRL_BUFS		= RMSG_CTRL_FIN_BUF + RMSG_RNDV_WINDOW,
};
#define RMSG_CTRL_SENDS		(RMSG_CTRL_BUFS - RMSG_CTRL_RECVS)

/*
 * Data WRs in flight per channel (record writes, and the REG_MR, READ and
 * LOCAL_INV of rendezvous transfers); the block's REG_MR, the 16 control
 * sends and ib_drain_qp()'s WR come on top: 63 in all (RMSG_QP_SEND_WRS).
 * rxe keeps one entry free and rounds to a power of two: 64 entries, where
 * three more data WRs would make it 128 (32 KiB more vmalloc per channel,
 * measured with rmsg-perf mem).
 * The receive queue and the CQ have room for the drain too: without it
 * the drain's post fails on some devices (mlx5), and the drain does not
 * wait.
 */
#define RMSG_SEND_WRS		45
#define RMSG_DRAIN_WRS		1
#define RMSG_QP_SEND_WRS	(RMSG_SEND_WRS + RMSG_CTRL_SENDS + 1 + \
				 RMSG_DRAIN_WRS)
/* Bookkeeping slots of data WRs, by WR index: a power of two above that. */
#define RMSG_TX_SLOTS		64
static_assert(RMSG_TX_SLOTS >= RMSG_SEND_WRS);
/* rxe: 64 entries, not 128 (see above). */
static_assert(RMSG_QP_SEND_WRS < 64);
/* At least one data WR in this many is signalled, to reclaim the SQ. */
#define RMSG_SIGNAL_EVERY	(RMSG_SEND_WRS / 2)
/*
 * A receive block's address in its MR: the endpoint's arrival summary, if
 * it has one, comes first, at 0 (RMSG_HELLO_F_SUMMARY).
 */
static inline u64 rmsg_block_addr(const struct rmsg_endpoint *ep)
{
	return ep->summary ? PAGE_ALIGN(RMSG_SUMMARY_SIZE) : 0;
}
/* More receives for the write-with-immediate fallback: a write's worth. */
#define RMSG_IMM_RECVS		64
/*
 * SGEs of one record: clear zone, payload (at most two send-area chunks),
 * padding and trailer.
 */
#define RMSG_DATA_SGE_MAX	5
/*
 * SGEs of one rendezvous READ or WRITE, and so of the QP when the device
 * has them: a pinned buffer is a page per SGE, and every WR costs the
 * device a request, a response and a completion; with 16 a WR moves 64
 * KiB of scattered pages instead of 20.
 */
#define RMSG_RNDV_SGE_MAX	16
static_assert(RMSG_RNDV_SGE_MAX >= RMSG_DATA_SGE_MAX);
static_assert(RMSG_SEND_AREA_ALIGN + 1 >= RMSG_VB_MAX_PAYLOAD);
/*
 * Bytes of an RDMA WRITE that go inline at most: a record of 96 payload
 * bytes. More would double a send queue entry's size on rxe.
 */
#define RMSG_MAX_INLINE		128

enum rmsg_chan_state {
	RMSG_CHAN_CONNECTING,
	RMSG_CHAN_REQUESTED,
	RMSG_CHAN_ACCEPTING,
	RMSG_CHAN_OPEN,
	RMSG_CHAN_RECOVERING,
	RMSG_CHAN_DYING,
};

/*
 * The send side of a channel (rmsg_data.c), under ep->lock. It moves
 * forward only: IDLE -> OPEN -> CLOSING -> CLOSED, or IDLE -> CLOSED for a
 * channel that ends before it opened. Whether the QP may be posted to is
 * another matter (@tx_live): a repair stops that while sends are still
 * taken.
 */
enum rmsg_tx_state {
	RMSG_TX_IDLE,		/* not open yet: SEND is refused */
	RMSG_TX_OPEN,		/* SEND, CREDIT and ARM are taken */
	RMSG_TX_CLOSING,	/* ending: a SEND completes with the error */
	RMSG_TX_CLOSED,		/* the CQEs owed at its end were posted */
};

/* Where a repair stands (rmsg_lifecycle.c, "Repair"). */
enum rmsg_repair_phase {
	RMSG_REPAIR_NONE,	/* no repair under way */
	RMSG_REPAIR_DOWN,	/* the broken connection is still there */
	RMSG_REPAIR_BACKOFF,	/* connecting side: waiting to dial again */
	RMSG_REPAIR_DIALING,	/* connecting side: an attempt under way */
	RMSG_REPAIR_WAITING,	/* accepting side: waiting for the peer */
	RMSG_REPAIR_ACCEPTING,	/* accepting side: an attempt accepted */
};

/**
 * struct rmsg_chan_resil - a channel's repairs, under ep->chan_lock
 * @epoch: connections the channel has had, less one
 * @attempts: connection attempts of the repair under way, 0 when none
 * @max_attempts: attempts the give-up timeout allows
 * @repairs: repairs that succeeded
 * @last_error: the failure that started the last repair, or ended the
 *	channel
 * @retx_msgs: records written again (under ep->lock)
 * @retx_bytes: their bytes (under ep->lock)
 * @recover_ns: time spent repairing, before the repair under way
 * @recover_start: when the repair under way began (ktime_get_ns())
 * @stalled: the repair under way was reported (RMSG_CQE_STALLED); its
 *	end is owed a RESUMED. In the channel's work only.
 */
struct rmsg_chan_resil {
	u32 epoch;
	u32 attempts;
	u32 max_attempts;
	u32 repairs;
	int last_error;
	u64 retx_msgs;
	u64 retx_bytes;
	u64 recover_ns;
	u64 recover_start;
	bool stalled;
};

/* Bits of rmsg_channel.flags, set from any context. */
enum {
	RMSG_CHAN_REGISTERED,	/* our REG_MR completed */
	RMSG_CHAN_PEER_READY,	/* the peer's READY arrived */
	RMSG_CHAN_PEER_CLOSED,	/* the peer's CLOSE arrived */
	RMSG_CHAN_CONNECTED,	/* rdma_cm ESTABLISHED was seen */
	RMSG_CHAN_CREDIT_IN,	/* a CREDIT arrived: apply peer_freed */
	RMSG_CHAN_NOTIFY_IN,	/* a NOTIFY arrived: look at peer_consumed */
	RMSG_CHAN_WAKE_IN,	/* a WAKE arrived: post READABLE */
	RMSG_CHAN_CLOSE_OK,	/* our CLOSE, and so every write, went through */
	RMSG_CHAN_ACCEPT_DUE,	/* the program accepted: rdma_accept() it */
	RMSG_CHAN_ATTEMPT_FAILED, /* the repair's connection attempt failed */
	RMSG_CHAN_DISCONNECT_DUE, /* an injected fault: drop the connection */
	RMSG_CHAN_PEER_RESET,	/* the peer aborted: no repair */
	RMSG_CHAN_HEARD,	/* the peer acknowledged an op of ours lately */
	RMSG_CHAN_HEARTBEAT_DUE, /* the heartbeat timer fired */
	RMSG_CHAN_DEV_LOST,	/* the device goes or failed: leave it */
	RMSG_CHAN_DIAL_NOW,	/* a device came: end the back-off */
	RMSG_CHAN_STALL_DUE,	/* the repair's quiet period ended */
	RMSG_CHAN_BEACON_DUE,	/* its node asks it for a HEARTBEAT */
	RMSG_CHAN_SILENT,	/* its node found it (or the node) silent */
	RMSG_CHAN_LINK_ANSWERED, /* on a link: the peer's ACCEPT came (once) */
	RMSG_CHAN_LINK_UP,	/* on a link: connected, as ESTABLISHED says */
	RMSG_CHAN_LEASE_ALLOC,	/* the peer's ASK wants our block made */
	RMSG_CHAN_HELLO_READY,	/* on a link: the hellos were the READYs */
	/* First bit of a send buffer in use: + (index - RMSG_CTRL_RECVS) */
	RMSG_CHAN_CTRL_BUSY,
};
static_assert(RMSG_CHAN_CTRL_BUSY + RMSG_CTRL_SENDS <= BITS_PER_LONG);

/* What an rdma_cm handler finds in cm_id->context. */
enum rmsg_cm_kind {
	RMSG_CM_LISTENER,
	RMSG_CM_CHANNEL,
};

struct rmsg_cm_ctx {
	enum rmsg_cm_kind kind;
};

/* An IPv4 or IPv6 address and port, in the size of the larger. */
union rmsg_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/**
 * struct rmsg_listener - an endpoint's listening rdma_cm id
 * @cm: kind RMSG_CM_LISTENER
 * @ep: the endpoint
 * @cm_id: the listening id; NULL while its device is gone (under
 *	ep->chan_lock)
 * @user_data: for the events of accepted channels
 * @block_size: receive block of accepted channels
 * @manual: RMSG_LISTEN_F_ACCEPT: the program answers each request
 * @peer_block_max: the largest block a connecting peer may announce
 * @opts: the settings of the channels it accepts
 * @addr: the address it is bound to (with the port it got)
 * @backlog: rdma_listen()'s
 * @net: the network namespace it listens in
 * @rebind: listens again once a device has the address, after the one it
 *	was on went away: the peers of accepted channels dial back to it
 * @port_node: in the registry of listeners by port, for channels that open
 *	on a link (rmsg_listen_find()); unhashed while not in it
 * @port: the port it is bound to: its key there
 * @bound: the address it is bound to, as links are keyed (port 0)
 * @any_family: the family of @bound when it is a wildcard address, else 0
 *
 * The last four are set before the listener enters the registry and not
 * changed while it is there (under the registry's lock).
 */
struct rmsg_listener {
	struct rmsg_cm_ctx cm;
	struct rmsg_endpoint *ep;
	struct rdma_cm_id *cm_id;
	u64 user_data;
	u32 block_size;
	u32 peer_block_max;
	bool manual;
	struct rmsg_chan_opts opts;
	struct sockaddr_storage addr;
	int backlog;
	struct net *net;
	struct delayed_work rebind;
	struct hlist_node port_node;
	u16 port;
	union rmsg_sockaddr bound;
	sa_family_t any_family;
};

struct rmsg_ctrl_buf {
	struct ib_cqe cqe;
	struct rmsg_channel *ch;
	struct rmsg_wire_ctrl msg;
	u64 dma;
};

/**
 * struct rmsg_tx_slot - bookkeeping of one data WR, by WR index
 * @cqe: its completion handler
 * @ch: the channel
 * @wr_end: data WRs posted up to and including this one
 * @pend_end: pending sends whose WRs were all posted by then
 * @rndv_done: a rendezvous WR: counted here when it completes
 * @read: an RDMA READ, counted in rndv.rd_done too
 */
struct rmsg_tx_slot {
	struct ib_cqe cqe;
	struct rmsg_channel *ch;
	u32 wr_end;
	u32 pend_end;
	atomic_t *rndv_done;
	bool read;
};

/**
 * struct rmsg_pending - a SEND whose CQE is not posted yet
 * @user_data: the SQE's
 * @off: its send-area offset
 * @len: its bytes
 * @rndv: a SEND_RNDV: its transfer, which writes an RTS record
 */
struct rmsg_pending {
	u64 user_data;
	u32 off;
	u32 len;
	struct rmsg_rndv_tx *rndv;
};

struct rmsg_rndv_tx;
struct rmsg_rndv_rx;
struct rmsg_rndv_segs;
struct rmsg_rndv_move;
struct rmsg_carrier;
struct rmsg_lchan;
struct rmsg_node;

/**
 * struct rmsg_shadow - the sender's copy of the peer's receive block
 * @pages: as many bytes as the peer's block, in physically contiguous
 *	chunks of 1 << @chunk_shift bytes
 * @va: all of them mapped contiguously, for the CPU
 * @size: the peer's block size
 * @chunk_shift: log2 of a chunk's bytes
 * @nchunks: chunks in @pages
 * @ibdev: the device @dma is for, NULL while unmapped
 * @dma: bus address of each chunk on @ibdev
 *
 * Every record goes into the shadow at the offset it takes in the peer's
 * block, and the device reads it from there: so the program's bytes are
 * free at once, and whatever the peer's block lacks after a broken
 * connection can be written again (Documentation/resilience.rst). The
 * peer's release counter says which bytes may be overwritten, so the
 * copy never needs more than the block's size.
 */
struct rmsg_shadow {
	struct rmsg_pages *pages;
	void *va;
	u32 size;
	u32 chunk_shift;
	u32 nchunks;
	struct ib_device *ibdev;
	u64 dma[];
};

/**
 * struct rmsg_rndv - a channel's rendezvous transfers, under ep->lock
 *	unless said otherwise
 * @tx: transfers whose RTS was written, by cookie % RMSG_RNDV_WINDOW
 * @tx_next: cookie of the next RTS to write
 * @tx_oldest: cookie of the oldest transfer in @tx, or @tx_next
 * @fin: FIN arrivals by cookie % RMSG_RNDV_WINDOW, 0 or RMSG_FIN_ARG() + 1
 *	(set in softirq)
 * @cts: RPut: CTS arrivals for @tx, 0 or the cookie + 1 (softirq)
 * @done: RPut: DONE arrivals for @rx, 0 or RMSG_FIN_ARG() + 1 (softirq)
 * @rx: the peer's transfers, by cookie % RMSG_RNDV_WINDOW
 * @rx_next: cookie the next RTS record must carry
 * @rx_answer: cookie the program must answer next
 * @rx_oldest: cookie of the oldest transfer in @rx
 * @krx: the kernel's own walk of the receive block, for RTS records
 * @block_va: the receive block, mapped for that walk
 * @mr_free: registrations no transfer uses, invalid
 * @mr_nfree: how many
 * @mr_total: registrations the channel has
 * @seg_shift: log2 of what one registration covers on this device
 * @rd_posted: READs posted
 * @rd_done: READs completed (softirq)
 * @rd_depth: READs the connection allows in flight
 * @fin_sent: by cookie % RMSG_RNDV_WINDOW, RMSG_FIN_ARG() + 1 of a FIN
 *	whose send has not completed, else 0 (cleared in softirq)
 * @fin_resend: those FINs, as a repair found them: they may be lost and
 *	go again on the next connection
 *
 * Moving to another device (Documentation/resilience.rst, "Rendezvous
 * transfers"); the sending side's:
 * @moved: the channel left a device since the last resume: every
 *	registration went with it
 * @released: what transfers held on ch->dev.rdev is dropped
 *	(rmsg_rndv_release()): nothing maps there any more, though ch->dev.rdev
 *	stays set until the channel has left the device
 * @rekey_hello: our hellos say so (RMSG_HELLO_F_REKEY), until a
 *	connection opens
 * @rereg_due: after a resume, REG_MRs (and maybe a REKEY) to post before
 *	anything else
 * @rekey: the rekey area's registration, for the peer to read
 * @rekey_buf: the area: the RTS records again, with the new keys
 * @rekey_bytes: what it holds (0: there is none)
 * @rekey_end: transfers before this cookie may be in it: until they are
 *	over, every connection sends REKEY again
 * @rekey_due: a REKEY is owed on this connection
 * @rekey_sure: the keys in the area are registered: a REKEY naming them
 *	left (its send completed, so the REG_MRs posted before it ran).
 *	Set in softirq, read once the connection is drained
 * @rekey_again: the connection broke before that: the keys in the area
 *	may name REG_MRs that never ran, so the next resume registers those
 *	transfers afresh, as after a move
 * The receiving side's:
 * @rekey_in: the newest REKEY's argument + 1, or 0 (set in softirq)
 * @rekey_mv: the READ of the peer's area into @rekey_page
 * @rekey_page: where it lands
 * @rekey_key: the area's key, little-endian, as the READ takes it
 * @stale: transfers whose keys are dead until a REKEY names new ones
 */
struct rmsg_rndv {
	struct rmsg_rndv_tx *tx[RMSG_RNDV_WINDOW];
	u32 tx_next;
	u32 tx_oldest;
	atomic64_t fin[RMSG_RNDV_WINDOW];
	atomic64_t cts[RMSG_RNDV_WINDOW];
	atomic64_t done[RMSG_RNDV_WINDOW];
	struct rmsg_rndv_rx *rx[RMSG_RNDV_WINDOW];
	u32 rx_next;
	u32 rx_answer;
	u32 rx_oldest;
	struct rmsg_vb_rx krx;
	void *block_va;
	struct ib_mr **mr_free;
	u32 mr_nfree;
	u32 mr_total;
	u32 seg_shift;
	u32 rd_posted;
	u32 rd_done;
	u32 rd_depth;
	atomic64_t fin_sent[RMSG_RNDV_WINDOW];
	u64 fin_resend[RMSG_RNDV_WINDOW];
	bool moved;
	bool released;
	bool rekey_hello;
	bool rereg_due;
	struct rmsg_rndv_segs *rekey;
	void *rekey_buf;
	u32 rekey_bytes;
	u32 rekey_end;
	bool rekey_due;
	bool rekey_sure;
	bool rekey_again;
	atomic64_t rekey_in;
	struct rmsg_rndv_move *rekey_mv;
	void *rekey_page;
	__le32 rekey_key;
	u32 stale;
};

/*
 * @addr's host, its port 0 and the rest of @host zero, as nodes and links
 * are keyed: false (and @host all zero) for a family other than IPv4 and
 * IPv6.
 */
static inline bool rmsg_sockaddr_host(union rmsg_sockaddr *host,
				      const struct sockaddr *addr)
{
	memset(host, 0, sizeof(*host));
	if (addr->sa_family == AF_INET) {
		host->in.sin_family = AF_INET;
		host->in.sin_addr = ((const struct sockaddr_in *)addr)->sin_addr;
		return true;
	}
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)addr;

		host->in6.sin6_family = AF_INET6;
		host->in6.sin6_addr = in6->sin6_addr;
		host->in6.sin6_scope_id = in6->sin6_scope_id;
		return true;
	}
	return false;
}

/**
 * struct rmsg_chan_dev - what a channel has on the device it runs on
 * @rdev: the device, once known; NULL while a repair has none (written
 *	under ep->lock, and in the channel's work or its cm_id's handler)
 * @dev_node: entry in @rdev->channels
 * @dev_id: @rdev's RDMA core index plus one, 0 while on none: for the
 *	channel list only (read without a lock)
 * @pd: the channel's own protection domain on @rdev (set with @rdev): its
 *	QP, block MR and rendezvous MRs, so that no other channel's QP, of
 *	this program or any other, can use their keys
 * @fence_mr: on rxe only, in @pd, a registration that is never valid,
 *	whose LOCAL_INV fences the REG_MRs that follow (rmsg_rndv_move.c);
 *	on a link the carrier's, borrowed with @pd
 * @borrowed: on a link: @pd is the carrier's (struct rmsg_carrier_conn),
 *	not the channel's, and there is no @cq (completions come through the
 *	carrier's) nor control buffers (its control messages go through the
 *	carrier's)
 * @post_lock: held by posters that run outside ep->lock (control sends)
 *	and by a fence with its REG_MRs, which nothing may come between
 * @cq: completion queue from the device's pool
 * @cq_size: entries taken from the pool
 * @block_sgt: the pages of the channel's receive block, for DMA
 * @block_mapped: @block_sgt is DMA-mapped
 * @mr: fast registration of the receive block for remote write
 * @reg_cqe: completion of the REG_MR
 * @ctrl: control message buffers: RMSG_CTRL_RECVS receives, then one send
 *	buffer per kind (enum rmsg_ctrl_send_buf), RMSG_CTRL_BUFS in all;
 *	made with the channel's first device (rmsg_chan_dev_create()), kept
 *	across devices, freed with the channel. A channel on a link never
 *	has them: its control messages go through the carrier
 * @imm_bufs: RMSG_IMM_RECVS more receive buffers when the channel's
 *	@rx_imm is set
 * @area_map: the endpoint's send area as this channel's device sees it
 * @trailers_dma: bus address of the channel's trailers
 *
 * All of it belongs to @rdev and serves every connection the channel makes
 * on it: rmsg_chan_dev_create() and rmsg_chan_dev_release() make and drop
 * it (with the rendezvous registrations kept in struct rmsg_rndv) when the
 * channel opens, when it ends, and when a repair takes it to another
 * device, never for a repair on the same device. @post_lock outlives
 * devices: it is set up once, with the channel.
 */
struct rmsg_chan_dev {
	struct rmsg_device *rdev;
	struct list_head dev_node;
	u32 dev_id;
	struct ib_pd *pd;
	bool borrowed;
	struct ib_mr *fence_mr;
	spinlock_t post_lock;
	struct ib_cq *cq;
	u32 cq_size;
	struct sg_table block_sgt;
	bool block_mapped;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;
	struct rmsg_ctrl_buf *ctrl;
	struct rmsg_ctrl_buf *imm_bufs;
	struct rmsg_area_map *area_map;
	u64 trailers_dma;
};

/**
 * struct rmsg_conn - one connection of a channel: one rdma_cm id, one QP
 * @cm_id: its rdma_cm id; NULL once the rdma_cm took it back (a device
 *	removed while its route was resolved) or a drop let go of it
 *	(chan_lock)
 * @qp: the RC queue pair (owned by @cm_id), once made
 * @max_inline: bytes @qp takes inline
 * @max_sge: SGEs per send WR of @qp
 *
 * Each connection the channel makes, the first and every repair's attempt,
 * is a new one (rmsg_conn_new()), installed as the channel's @conn when
 * the attempt starts and freed by rmsg_conn_free() once its QP is
 * destroyed and its id let go of: at a repair's DOWN step, or at the
 * channel's end. A channel between two attempts has none. @conn is written
 * under both ep->lock and chan_lock, so holding either keeps the one seen
 * alive; the channel's work, the only writer, needs neither to read it.
 * The data path and completions use it only while the channel is
 * connected, which a connection outlives (its QP is drained before it is
 * freed).
 */
struct rmsg_conn {
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	u32 max_inline;
	u32 max_sge;
};

/**
 * struct rmsg_repair_state - how a channel finds its peer again, and when
 *	it gives up
 * @peer_addr: where the connecting side dials again
 * @alt_addrs: connecting side: the peer's other addresses, from its
 *	newest ACCEPT (those equal to @peer_addr's left out; chan_lock)
 * @dial_idx: connecting side: the address of the next attempt: 0 for
 *	@peer_addr, N for @alt_addrs.addr[N - 1] (chan_lock)
 * @adv_family: accepting side: its listener's address family when that
 *	listener is bound to a wildcard address (it hears every local
 *	address), else 0; the ACCEPT lists local addresses of that family
 *	(and IPv4 for AF_INET6) for the peer's repairs to dial
 * @resolve_ms: its address and route resolution timeout
 * @phase: enum rmsg_repair_phase
 * @id: accepting side: the newest attempt to adopt (chan_lock)
 * @stale_id: accepting side: an older one, to reject (chan_lock)
 * @hello: @id's hello (chan_lock)
 * @timer: back-off, attempt and give-up deadlines: runs the
 *	channel's work
 * @deadline: when the repair gives up (jiffies)
 * @attempt_end: when the back-off ends, or the attempt under way is
 *	abandoned (jiffies)
 * @backoff_from: attempts when the back-off last started from its first
 *	step (a device came)
 * @resume_arrived: our block holds complete records up to here (bytes)
 * @resume_seq: the sequence number the next record must carry
 * @hb_timer: the heartbeat of an open channel: runs the channel's work
 * @hb_misses: heartbeat periods in a row in which nothing arrived
 * @stall_timer: the end of a repair's quiet period: runs the channel's
 *	work
 * @open_by: a channel not open yet gives up then (jiffies, its connect
 *	timeout; @timer runs the work then); 0: never
 *
 * All of it is rmsg_repair.c's and rmsg_lifecycle.c's (the timers), in the
 * channel's work unless a member says otherwise.
 */
struct rmsg_repair_state {
	struct sockaddr_storage peer_addr;
	struct rmsg_addrs alt_addrs;
	u32 dial_idx;
	sa_family_t adv_family;
	u32 resolve_ms;
	enum rmsg_repair_phase phase;
	struct rdma_cm_id *id;
	struct rdma_cm_id *stale_id;
	struct rmsg_hello hello;
	struct timer_list timer;
	unsigned long deadline;
	unsigned long attempt_end;
	u32 backoff_from;
	u32 resume_arrived;
	u32 resume_seq;
	struct timer_list hb_timer;
	u32 hb_misses;
	struct timer_list stall_timer;
	unsigned long open_by;
};

/**
 * struct rmsg_chan_flow - credit and wake-ups, both ways
 * @peer_freed: the newest CREDIT value (written in softirq)
 * @peer_consumed: the newest NOTIFY value (written in softirq)
 * @peer_armed: the peer wants a WAKE with the next record
 * @credit: the newest release counter the program gave
 * @notify: the consumed counter of the newest ARM
 * @credit_due: @credit has not been sent yet
 * @notify_due: @notify has not been sent yet
 * @wake_due: a WAKE is owed to the peer
 * @arm_user_data: for the READABLE event of the newest ARM
 * @armed: that ARM's READABLE event is not posted yet
 *
 * CREDIT, NOTIFY and WAKE carry them (rmsg_data.c, "Credit and
 * wake-ups"); under ep->lock unless a member says otherwise.
 */
struct rmsg_chan_flow {
	u32 peer_freed;
	u32 peer_consumed;
	bool peer_armed;
	u32 credit;
	u32 notify;
	bool credit_due;
	bool notify_due;
	bool wake_due;
	u64 arm_user_data;
	bool armed;
};

/**
 * struct rmsg_wr_share - the send queue room the channels on a link share
 *	(one per carrier, in struct rmsg_carrier)
 * @free: work requests the channels may still post on the carrier's QP,
 *	neither reserved by one (rmsg_wr_room()) nor in flight: taken by a
 *	reservation (or, for a post that reserved none, at the post), given
 *	back at each completion and with what a channel reserved and did
 *	not post; never below -@slack
 * @slack: entries of the carrier's QP beyond the share, for the posts
 *	that take their room only as they post (a channel's block
 *	registration as it connects, which has no work to wait in)
 * @lock: guards @waiting
 * @waiting: channels that found no room (struct rmsg_chan_wrs.share_node),
 *	whose data work a completion runs once room came back
 * @wq: woken when a channel's last work request in flight completes, when
 *	the carrier's connection ends, and when a channel's peer closes
 *	(rmsg_carrier.c's waits)
 * @post_lock: held around every post on the carrier's QP, the carrier's
 *	own and its channels' (rmsg_wr_post()), and by a channel across an
 *	rxe fence and the REG_MRs behind it (rmsg_wr_fence_lock()), which no
 *	other WR may come between (rmsg_rndv_move.c): on a shared QP,
 *	another channel's WR would (a spinlock, bottom halves off;
 *	innermost)
 *
 * rmsg_wr_room() takes the room from @free as it looks (a compare and
 * exchange that never takes @free below 0), so channels that look at once
 * cannot take more than the share between them; the post uses what its
 * channel reserved. Work requests on the carrier's QP from channels are
 * at most the share plus @slack, which the QP has room for: it is never
 * overrun.
 */
struct rmsg_wr_share {
	atomic_t free;
	int slack;
	spinlock_t lock;
	struct list_head waiting;
	wait_queue_head_t wq;
	spinlock_t post_lock;
};

/**
 * struct rmsg_chan_wrs - a channel's data work requests on its send queue
 * @slots: RMSG_TX_SLOTS of them, by data WR index
 * @trailers: one per slot, DMA-mapped at the conn's trailers_dma, then
 *	RMSG_VB_TRAILER_SIZE zeros
 * @posted: data WRs posted
 * @done: data WRs completed (written by completions, in softirq)
 * @signalled: @posted at the last signalled data WR
 * @sig_owed: a write a CQE waits for went unsignalled, since another
 *	was to follow
 * @room_wanted: something found the queue full and waits for a
 *	completion to run the work item (rmsg_wr_room(); cleared by the
 *	work, under ep->lock)
 * @sig_node: entry in ep->sig_owed
 * @share: on a link: the carrier's send queue room (NULL for a direct
 *	channel); set before the channel posts anything, cleared after its
 *	last completion
 * @in_flight: on a link: its work requests posted on the carrier's QP
 *	and not completed (every one is signalled there); the channel's end
 *	waits for 0 before its memory leaves the carrier's PD
 * @share_node: in @share->waiting while it waits for room
 * @share_held: on a link: room of @share reserved by rmsg_wr_room() and not
 *	posted yet; under ep->lock, as the channel's posts are
 * @held_node: in ep->room_held while @share_held is not 0, so that what
 *	was reserved and not posted goes back at the end of the batch of
 *	SQEs or of the data work (rmsg_wr_room_return())
 * @link_cqe: the completion of a work request that would have gone
 *	unsignalled on a QP of the channel's own
 * @qp_lock: the carrier's QP is shared: its posts take this lock
 *	(&@share->post_lock; the carrier's own too), NULL on a QP of the
 *	channel's own. Set and cleared with @share (the carrier: with its
 *	link's state).
 * @fencing: the channel holds @qp_lock across a fence and its REG_MRs:
 *	its posts meanwhile do not take it again (only the holder posts for
 *	the channel then: its posts run under ep->lock)
 *
 * Record writes, rendezvous READs, WRITEs, registrations and
 * invalidations alike: rmsg_wr.c's slots and signalling.
 */
struct rmsg_chan_wrs {
	struct rmsg_tx_slot *slots;
	struct rmsg_vb_trailer *trailers;
	u32 posted;
	u32 done;
	u32 signalled;
	bool sig_owed;
	bool room_wanted;
	struct list_head sig_node;
	struct rmsg_wr_share *share;
	atomic_t in_flight;
	struct list_head share_node;
	u32 share_held;
	struct list_head held_node;
	struct ib_cqe link_cqe;
	spinlock_t *qp_lock;
	bool fencing;
};

/**
 * struct rmsg_chan_pending - a channel's sends whose CQE is owed, in order
 * @ring: RMSG_CHAN_MAX_PENDING sends whose CQE is owed
 * @head: the oldest of them
 * @posted: the first not yet written
 * @tail: one past the newest
 * @done: the first whose write has not completed (written by
 *	completions, in softirq)
 * @close: @tail when the channel began to end: later sends
 *	are never written, only completed with the channel's error
 *
 * The states of a send by its index are in rmsg_data.c's first comment.
 */
struct rmsg_chan_pending {
	struct rmsg_pending *ring;
	u32 head;
	u32 posted;
	u32 tail;
	u32 done;
	u32 close;
};

/* Lease messages a channel keeps in order, each way (struct rmsg_chan_lease). */
#define RMSG_LEASE_RING		8

/**
 * struct rmsg_lease_wire - a lease message, as it goes or came
 * @arg: its argument
 * @type: RMSG_CTRL_READY (with its lease resume point), or
 *	RMSG_CTRL_ASK to RMSG_CTRL_RETURN
 */
struct rmsg_lease_wire {
	u64 arg;
	u8 type;
};

/**
 * struct rmsg_chan_lease - block leases of a channel (rmsg_leases.c;
 *	Documentation/protocol.rst, "Block leases")
 * @on: both hellos said RMSG_HELLO_F_LEASE: our block is leased, and so
 *	is the peer's. Fixed before the hello goes out (rmsg_lease_setup())
 *	and never changed; read anywhere.
 * @view: what the program's mappings of our block show (struct
 *	rmsg_block_view), from rmsg_lease_setup() until the channel's end
 *	drops it (set and cleared under the channel table's lock, which
 *	rmsg_chan_mmap() takes)
 * @rx: our block's machine (ep->lock)
 * @tx: the peer's block's machine (ep->lock)
 * @in_lock: guards @in, @in_head and @in_len: the control receive
 *	(softirq) pushes, the data work takes (bottom halves off)
 * @in_head: the oldest message in @in
 * @in_len: messages in @in
 * @in: what arrived and the machines have not seen yet, in order: the
 *	peer's READY first on each connection, then its lease messages
 * @out_head: the oldest message in @out (ep->lock)
 * @out_len: messages in @out (ep->lock)
 * @out: what the machines asked to send and is not posted yet, in the
 *	order asked (ep->lock). They go from the READY's send buffer once
 *	the READY completed, one at a time (rmsg_lease_send_owed()).
 */
struct rmsg_chan_lease {
	bool on;
	struct rmsg_block_view *view;
	struct rmsg_lease_rx rx;
	struct rmsg_lease_tx tx;
	spinlock_t in_lock;
	u8 in_head;
	u8 in_len;
	struct rmsg_lease_wire in[RMSG_LEASE_RING];
	u8 out_head;
	u8 out_len;
	struct rmsg_lease_wire out[RMSG_LEASE_RING];
};

/**
 * struct rmsg_chan_retain - what a channel keeps to write again after a repair
 * @on: the module's retain parameter was on when the channel opened: it
 *	keeps a shadow, and a broken connection is repaired. Fixed at open
 *	(rmsg_data_shadow_create()), before the channel can fault
 * @shadow: what was written into the peer's block, kept for repairs;
 *	NULL without @on, and on a leased channel until its first send
 *	that found no lease (rmsg_data_push())
 * @retx: after a repair: the records the peer's block lacks
 * @retx_due: some of them are still to be written, before any new send
 */
struct rmsg_chan_retain {
	bool on;
	struct rmsg_shadow *shadow;
	struct rmsg_vb_retx retx;
	bool retx_due;
};

/**
 * struct rmsg_channel - one channel of an endpoint
 * @cm: what the rdma_cm handler sees first (kind RMSG_CM_CHANNEL)
 * @retain: what it keeps to write again after a repair
 *	(struct rmsg_chan_retain)
 * @pending: its sends whose CQE is owed, in order (struct rmsg_chan_pending)
 * @wrs: its data work requests on the send queue (struct rmsg_chan_wrs)
 * @flow: credit and wake-ups, both ways (struct rmsg_chan_flow)
 * @repair: how it finds its peer again (struct rmsg_repair_state)
 * @conn: its connection, if it has one now (struct rmsg_conn; lifetime
 *	there)
 * @dev: what it has on its device (struct rmsg_chan_dev)
 * @ep: the endpoint; outlives the channel
 * @id: the channel's id in @ep->channels
 * @user_data: carried by the channel's events
 * @state: enum rmsg_chan_state, under @ep->chan_lock
 * @error: why the channel dies, under @ep->chan_lock
 * @flags: RMSG_CHAN_* bits
 *
 * @block: the receive block's pages, shared with the program's mappings
 * @block_size: its size in bytes
 * @soft_error: why a completion (softirq) wants the channel to end, 0 for
 *	orderly; 1 while none does. Acted on by @work.
 * @active: this side connected (else it accepted)
 * @abort: closed without telling the peer
 * @reject: it died awaiting the program's answer: reject the request
 * @setting_up: the call that made it (RMSG_IOC_CONNECT, or the handler of
 *	a connection request) still uses it, under chan_lock: an end asked
 *	for meanwhile waits in @kill_error until that call is done
 * @kill_pending: such an end was asked for, with @kill_error
 * @kill_error: its errno (0: orderly)
 * @dev_gone: its device was being removed when the channel left it
 * @reported: the program was told the channel is open, under
 *	@ep->chan_lock
 * @close_sent: the CLOSE message left (or failed to)
 * @work: progress towards OPEN, in process context
 * @teardown: the end of the channel, in process context
 * @link_leaving: the teardown sent its end on the link and waits for the
 *	link to let it go (rmsg_carrier_leave()); its next run goes on from
 *	there. The teardown's alone.
 * @peer: the peer's hello
 * @rx_imm: the peer writes our block with immediates (our device may place
 *	out of order); fixed before the hello goes out
 *
 * The data path (rmsg_data.c); everything below is under @ep->lock unless
 * said otherwise:
 * @tx_state: enum rmsg_tx_state
 * @tx_live: the QP may be posted to
 * @tx_imm: the peer asked for immediates (@peer.flags)
 * @tx_hint: the peer's block MR maps its arrival summary at 0: each burst
 *	of records is followed by a write of the channel's byte there
 *	(@peer.flags)
 * @tx: the sender's view of the peer's block
 * @max_msg: the largest payload a SEND may carry
 * @tx_wq: woken when the backlog of pending sends drains
 * @data_work: completions, credits and wake-ups, in process context
 * @rndv: rendezvous state (rmsg_rndv*.c)
 * @resil: repairs (Documentation/resilience.rst)
 * @lease: block leases (struct rmsg_chan_lease); @block is NULL on a
 *	leased channel while it has no lease out
 *
 * Settings, addresses and the rdma_cm ids (rmsg_channel.c, rmsg_cm.c), in
 * the channel's work unless said otherwise:
 * @opts: the channel's own settings, 0 where it has none (written under
 *	chan_lock, read anywhere)
 * @conn_local: this side's address of the newest connection (chan_lock)
 * @conn_peer: the peer's (chan_lock); both AF_UNSPEC before the first
 * @net: the network namespace the channel was made in
 * @cm_busy: handlers running for @conn->cm_id while it was the channel's
 *	(chan_lock); rmsg_cm_settle() waits for none
 * @route_id: the id whose route query is outstanding, if any (chan_lock)
 * @given_id: an id the channel had let go of (dropped, or dying with the
 *	channel), with its route query outstanding, that the rdma_cm took
 *	back at its device's removal and destroys itself (chan_lock)
 * @cm_wq: rmsg_cm_settle() waits here
 * @node: the peer node whose heartbeat the channel shares while it is open
 *	(rmsg_node.c), NULL when it is not a member (chan_lock)
 * @node_entry: in @node's members (the node's lock)
 * @carrier: a carrier's link (rmsg_carrier.c), from its first device on;
 *	NULL for every other channel (rmsg_chan_is_carrier())
 * @lchan: the channel's place on a link (rmsg_carrier.c: its link id, its
 *	control messages waiting for the link, the carrier it holds), from
 *	rmsg_carrier_attach() to rmsg_carrier_detach(); NULL for a direct
 *	channel. Written by the channel's work only, before the channel uses
 *	the link and after it is done with it.
 */
struct rmsg_channel {
	struct rmsg_cm_ctx cm;
	struct rmsg_endpoint *ep;
	u32 id;
	u64 user_data;
	enum rmsg_chan_state state;
	int error;
	unsigned long flags;
	struct rmsg_conn *conn;
	struct rmsg_chan_dev dev;
	struct rmsg_pages *block;
	u32 block_size;
	int soft_error;
	bool active;
	bool abort;
	bool reject;
	bool setting_up;
	bool kill_pending;
	int kill_error;
	bool dev_gone;
	bool reported;
	/* Its REQUEST event was posted: the program knows its id. */
	bool requested;
	/*
	 * Its block is in the endpoint's block window (rmsg_window.c) and
	 * its open event said so (RMSG_CQE_F_WINDOW): set once, under
	 * chan_lock and block_map_lock, before that event. @drop_at_end:
	 * the program let go of it already (RMSG_IOC_CHAN_DROP), its end
	 * holds nothing (chan_lock).
	 */
	bool in_window;
	bool drop_at_end;
	struct completion close_sent;
	struct work_struct work;
	struct work_struct teardown;
	bool link_leaving;
	struct rmsg_hello peer;
	bool rx_imm;

	enum rmsg_tx_state tx_state;
	bool tx_live;
	bool tx_imm;
	bool tx_hint;
	struct rmsg_vb_tx tx;
	u32 max_msg;
	struct rmsg_chan_wrs wrs;
	struct rmsg_chan_pending pending;
	struct rmsg_chan_flow flow;
	struct rmsg_chan_retain retain;
	wait_queue_head_t tx_wq;
	struct work_struct data_work;
	struct rmsg_rndv rndv;
	struct rmsg_chan_resil resil;
	struct rmsg_chan_lease lease;

	struct rmsg_repair_state repair;
	struct rmsg_chan_opts opts;
	union rmsg_sockaddr conn_local;
	union rmsg_sockaddr conn_peer;
	struct net *net;
	unsigned int cm_busy;
	struct rdma_cm_id *route_id;
	struct rdma_cm_id *given_id;
	wait_queue_head_t cm_wq;
	struct rmsg_node *node;
	struct list_head node_entry;
	struct rmsg_carrier *carrier;
	struct rmsg_lchan *lchan;
};

extern struct workqueue_struct *rmsg_wq;
extern struct workqueue_struct *rmsg_teardown_wq;
extern struct workqueue_struct *rmsg_link_wq;

/* rmsg_channel.c, for rmsg_listen.c: a channel's birth, and its end. */
struct rmsg_channel *rmsg_chan_zalloc(void);
struct rmsg_channel *rmsg_chan_alloc(void);
void rmsg_chan_alloc_undo(struct rmsg_channel *ch);
int rmsg_chan_init_module(void);
void rmsg_chan_exit_module(void);
void rmsg_chan_init(struct rmsg_channel *ch, struct rmsg_endpoint *ep,
		    enum rmsg_chan_state state, u64 user_data, u32 size);
int rmsg_chan_publish(struct rmsg_channel *ch);
void rmsg_chan_free_work(struct work_struct *work);
int rmsg_opts_copy(struct rmsg_chan_opts *o, u64 uptr);
int rmsg_chan_args(struct rmsg_endpoint *ep, u32 *size,
		   struct sockaddr_storage *ss, u64 uaddr, u32 len);

/*
 * rmsg_chan_kill() for completion handlers: they run in softirq and may not
 * take chan_lock (a mutex), so they record the first reason and leave the
 * rest to the channel's work (rmsg_lifecycle.c).
 */
/*
 * Is @ch a carrier of links? The channels of the module's own endpoint
 * (rmsg_links.c) are, and no others: their hellos say so
 * (RMSG_HELLO_F_LINK), their connections carry the link's messages too.
 */
static inline bool rmsg_chan_is_carrier(const struct rmsg_channel *ch)
{
	return rmsg_ep_is_module(ch->ep);
}

/* The channel's rdma_cm id, or NULL while it has none (struct rmsg_conn). */
static inline struct rdma_cm_id *rmsg_chan_cm_id(const struct rmsg_channel *ch)
{
	return ch->conn ? ch->conn->cm_id : NULL;
}

/* Its QP, or NULL while it has none (struct rmsg_conn). */
static inline struct ib_qp *rmsg_chan_qp(const struct rmsg_channel *ch)
{
	return ch->conn ? ch->conn->qp : NULL;
}

/*
 * The link lets a channel's end go on (rmsg_carrier_leave()): its
 * teardown runs again. Any context.
 */
static inline void rmsg_chan_teardown_resume(struct rmsg_channel *ch)
{
	queue_work(rmsg_teardown_wq, &ch->teardown);
}

static inline void rmsg_chan_kill_soft(struct rmsg_channel *ch, int error)
{
	cmpxchg(&ch->soft_error, 1, error);
	queue_work(rmsg_wq, &ch->work);
}

/*
 * May records go into the peer's block now? Always without leases; with
 * them, under a lease held whose key this connection's GRANT gave.
 * Under ep->lock.
 */
static inline bool rmsg_lease_may_write(const struct rmsg_channel *ch)
{
	return !ch->lease.on || rmsg_lease_tx_may_write(&ch->lease.tx);
}

/* rmsg_leases.c */
int rmsg_lease_setup(struct rmsg_channel *ch);
int rmsg_lease_peer(struct rmsg_channel *ch);
u64 rmsg_lease_connected(struct rmsg_channel *ch, bool ready);
void rmsg_lease_down(struct rmsg_channel *ch);
int rmsg_lease_resume(struct rmsg_channel *ch, const struct rmsg_hello *peer);
void rmsg_lease_in(struct rmsg_channel *ch, u8 type, u64 arg);
void rmsg_lease_progress(struct rmsg_channel *ch);
void rmsg_lease_want(struct rmsg_channel *ch);
int rmsg_lease_made(struct rmsg_channel *ch, u32 rkey);
void rmsg_leases_init_module(void);

/* rmsg_lifecycle.c, for the data path and rendezvous too */
void rmsg_chan_event(struct rmsg_channel *ch, u32 kind, int res);

/* rmsg_channel.c, for rmsg_ctl.c */
int rmsg_chan_inject(struct rmsg_channel *ch, u32 kind, u64 arg);
/* rmsg_ctl.c: a state as RMSG_IOC_CHAN_LIST and RMSG_IOC_LINK_LIST show it */
u32 rmsg_ctl_chan_state(enum rmsg_chan_state state);

/* rmsg_data.c */
int rmsg_data_create(struct rmsg_channel *ch, struct ib_device *ibdev);
int rmsg_data_dev_create(struct rmsg_channel *ch);
void rmsg_data_dev_release(struct rmsg_channel *ch);
int rmsg_data_shadow_create(struct rmsg_channel *ch);
int rmsg_data_suspend(struct rmsg_channel *ch);
int rmsg_data_resume(struct rmsg_channel *ch, const struct rmsg_hello *peer);
void rmsg_data_reopen(struct rmsg_channel *ch);
int rmsg_data_post_recvs(struct rmsg_channel *ch);
void rmsg_data_open(struct rmsg_channel *ch);
void rmsg_data_close(struct rmsg_channel *ch, bool drain);
void rmsg_data_close_sent(struct rmsg_channel *ch);
void rmsg_data_finish(struct rmsg_channel *ch, int error, bool all_written);
void rmsg_data_free(struct rmsg_channel *ch);
void rmsg_data_work(struct work_struct *work);
int rmsg_data_init_module(void);
void rmsg_data_exit_module(void);

/* rmsg_rndv.c and rmsg_rndv_repair.c */
int rmsg_rndv_send(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
		   const struct rmsg_sqe *sqe, struct rmsg_pending *e);
int rmsg_rndv_recv(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
		   const struct rmsg_sqe *sqe);
int rmsg_rndv_ready(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
		    void **buf, u64 *dma, u32 *len);
void rmsg_rndv_written(struct rmsg_channel *ch, struct rmsg_rndv_tx *t,
		       u32 payload_off);
void rmsg_rndv_suspend(struct rmsg_channel *ch);
int rmsg_rndv_tx_rewind(struct rmsg_channel *ch, struct rmsg_rndv_tx *t);
int rmsg_rndv_resume(struct rmsg_channel *ch, u32 arrived, void *shadow);
int rmsg_rndv_rereg(struct rmsg_channel *ch);
bool rmsg_rndv_rereg_due(struct rmsg_channel *ch);
int rmsg_rndv_moved_send(struct rmsg_channel *ch, struct rmsg_rndv_tx *t);
u32 rmsg_rndv_tx_len(const struct rmsg_rndv_tx *t);
void rmsg_rndv_peer_moved(struct rmsg_channel *ch);
void rmsg_rndv_init_module(void);
void rmsg_rndv_collect(struct rmsg_channel *ch);
void rmsg_rndv_progress(struct rmsg_channel *ch);
int rmsg_rndv_walk(struct rmsg_channel *ch);
bool rmsg_rndv_idle(struct rmsg_channel *ch);
void rmsg_rndv_init(struct rmsg_channel *ch, u32 rd_depth);
void rmsg_rndv_release(struct rmsg_channel *ch);
void rmsg_rndv_tx_release(struct rmsg_channel *ch, struct rmsg_rndv_tx *t);
void rmsg_rndv_finish(struct rmsg_channel *ch, int error);
void rmsg_rndv_tx_free(struct rmsg_channel *ch, struct rmsg_rndv_tx *t);
void rmsg_rndv_tx_cqe(const struct rmsg_rndv_tx *t, struct rmsg_cqe *cqe);

#endif /* _RMSG_CHAN_H */
