/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: what the three files of rendezvous share (Documentation/rendezvous.rst):
 *
 *   rmsg_rndv_repair.c  a channel's transfers across its connections: set-up,
 *                       a repair's suspend, rewind and resume, the end
 *   rmsg_rndv.c         the sender and the receiver of a transfer
 *   rmsg_rndv_move.c    registrations, registered segments and the bytes a
 *                       side moves itself (RDMA READ or WRITE)
 *
 * Each calls only the ones below it in this list. Everything here runs
 * under ep->lock unless its comment says otherwise.
 */
#ifndef _RMSG_RNDV_TYPES_H
#define _RMSG_RNDV_TYPES_H

#include <linux/dma-direction.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

#include "rmsg_chan.h"
#include "rmsg_rts.h"

struct rmsg_region;

extern unsigned int rmsg_rndv_mrs_max;

#define RMSG_RNDV_MASK		(RMSG_RNDV_WINDOW - 1)
static_assert(!(RMSG_RNDV_WINDOW & RMSG_RNDV_MASK));
/* Bytes one READ moves at most, so that a transfer shares the wire. */
#define RMSG_RNDV_READ_MAX	(1U << 20)
/* Registrations hold at most this many pages: 2 MiB with 4 KiB pages. */
#define RMSG_RNDV_MR_PAGES	512

/* An RPut's CTS mailbox: a CTS of 2040 keys, 4 GiB at 2 MiB a segment. */
#define RMSG_RNDV_MBOX_SHIFT	13
#define RMSG_RNDV_MBOX		(1U << RMSG_RNDV_MBOX_SHIFT)
static_assert(RMSG_RNDV_MBOX_SHIFT <= RMSG_RTS_MBOX_MAX_SHIFT);


/**
 * struct rmsg_rndv_segs - memory registered for the peer, in segments
 * @nseg: segments, one registration each
 * @dir: what the device does with the pages
 * @access: what the peer may do with them
 * @sgt: the pages of each segment, mapped for the device
 * @mrs: the registration of each segment
 * @reg_posted: REG_MRs posted
 * @inv_posted: LOCAL_INVs posted
 * @inv_done: the last LOCAL_INV completed (softirq)
 * @rts: the record that names them for the peer (an RTS or a CTS),
 *	rmsg_rts_size(@nseg) bytes, mapped at @rts_dma
 * @rts_dma: its bus address
 */
struct rmsg_rndv_segs {
	u32 nseg;
	enum dma_data_direction dir;
	int access;
	struct sg_table *sgt;
	struct ib_mr **mrs;
	u32 reg_posted;
	u32 inv_posted;
	atomic_t inv_done;
	struct rmsg_rts *rts;
	u64 rts_dma;
};

/**
 * struct rmsg_rndv_move - bytes this side moves itself, by RDMA READ into
 *	them (RGet) or RDMA WRITE from them (RPut)
 * @sgt: the local bytes, addressed with the local DMA key
 * @dir: how they are mapped
 * @mapped: @sgt is mapped
 * @sg: the next scatter entry to move, @sg_off bytes into it
 * @sg_off: see @sg
 * @pos: bytes of the message WRs were posted for
 * @ops: WRs posted
 * @ops_done: WRs completed (softirq)
 */
struct rmsg_rndv_move {
	struct sg_table sgt;
	enum dma_data_direction dir;
	bool mapped;
	struct scatterlist *sg;
	u32 sg_off;
	u64 pos;
	u32 ops;
	atomic_t ops_done;
};

/**
 * struct rmsg_rndv_tx - a SEND_RNDV
 * @user_data: the SQE's
 * @addr: first byte, a program address
 * @len: bytes
 * @region: the region, busy until the transfer is over
 * @cookie: assigned when the RTS is written
 * @put: RPut
 * @segs: RGet: the message, registered for remote reading; RPut: the
 *	mailbox, registered for remote writing. @segs.rts is the RTS.
 * @mbox: RPut: the mailbox, RMSG_RNDV_MBOX bytes the peer may write,
 *	then as many for the CTS copied out of it
 * @mv: RPut: the message, written to the peer
 * @cts: RPut: the decoded CTS; @cts.rkey points into its copy
 * @have_cts: RPut: @cts is valid
 * @done_sent: RPut: every WRITE and the DONE after them are posted
 * @done_ever: RPut: a DONE was posted on some connection, so a FIN may
 *	report success (a repair clears @done_sent, not this)
 * @fin: the FIN came: its errno (0 for success) is in @status
 * @status: what the CQE will say
 * @rts_off: block offset of the RTS record's payload, once written
 * @rts_end: the stream's byte counter just past that record: the peer
 *	has the RTS when its resume point is there or beyond
 */
struct rmsg_rndv_tx {
	u64 user_data;
	u64 addr;
	u32 len;
	struct rmsg_region *region;
	u32 cookie;
	bool put;
	struct rmsg_rndv_segs segs;
	void *mbox;
	struct rmsg_rndv_move mv;
	struct rmsg_rts_info cts;
	bool have_cts;
	bool done_sent;
	bool done_ever;
	bool fin;
	int status;
	u32 rts_off;
	u32 rts_end;
};

/**
 * struct rmsg_rndv_rx - a transfer from the peer
 * @cookie: its cookie
 * @have_rts: the RTS was collected: @info and @rts hold it
 * @answered: the program answered: the fields below hold the answer
 * @info: the decoded RTS; @info.rkey points into @rts
 * @rts: the copy of the record's payload
 * @user_data: the RECV_RNDV's
 * @region: the destination's region, busy until the transfer is over
 * @addr: the destination
 * @room: bytes there
 * @discard: the program does not want the message
 * @started: the destination is mapped (@mv or @segs)
 * @mv: RGet: the destination, read into
 * @segs: RPut: the destination, registered for remote writing; @segs.rts
 *	is the CTS
 * @cts_written: RPut: the CTS's WRITE into the mailbox is posted
 * @cts_sent: RPut: and the CTS message after it
 * @put_done: RPut: the peer's DONE came
 * @status: the outcome, once known
 * @done: the CQE was posted; a FIN is owed
 * @stale: the peer left its device: @info's keys are dead until its REKEY
 *	names new ones
 */
struct rmsg_rndv_rx {
	u32 cookie;
	bool have_rts;
	bool answered;
	struct rmsg_rts_info info;
	void *rts;
	u64 user_data;
	struct rmsg_region *region;
	u64 addr;
	u32 room;
	bool discard;
	bool started;
	struct rmsg_rndv_move mv;
	struct rmsg_rndv_segs segs;
	bool cts_written;
	bool cts_sent;
	bool put_done;
	int status;
	bool done;
	bool stale;
};


/* rmsg_rndv_move.c */
u32 rmsg_rndv_seg_shift(struct ib_device *ibdev);
int rmsg_move(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
	      const struct rmsg_rts_info *remote, bool read);
bool rmsg_move_done(struct rmsg_rndv_move *mv, u64 len);
int rmsg_move_map(struct rmsg_channel *ch, struct rmsg_rndv_move *mv,
		  struct rmsg_region *region, u64 addr, u64 len,
		  enum dma_data_direction dir);
int rmsg_move_map_kbuf(struct rmsg_channel *ch,
		       struct rmsg_rndv_move *mv, void *buf, u32 len);
void rmsg_move_unmap(struct rmsg_channel *ch, struct rmsg_rndv_move *mv);
void rmsg_mr_destroy(struct rmsg_channel *ch, struct ib_mr *mr);
int rmsg_rndv_ctrl(struct rmsg_channel *ch, unsigned int buf, u8 type,
		   u64 arg);
bool rmsg_rndv_on_device(const struct rmsg_channel *ch);
void rmsg_segs_free(struct rmsg_rndv_segs *s);
int rmsg_segs_map(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		  struct rmsg_region *region, void *kbuf, u64 addr, u64 iova,
		  u64 len, u32 shift);

/*
 * The address a transfer's bytes go by on the wire (RTS, CTS, the MRs'
 * iova): of the program's address only its offset in the page, which a
 * registration keeps, so that the peer learns nothing of the process's
 * layout. A function of the address alone: a repair's new keys name the
 * same bytes by the same addresses.
 */
static inline u64 rmsg_rndv_wire_addr(u64 addr)
{
	return addr & ~PAGE_MASK;
}
int rmsg_segs_post(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		   bool inv);
void rmsg_segs_unmap(struct rmsg_channel *ch, struct rmsg_rndv_segs *s,
		     bool valid);
bool rmsg_segs_valid(struct rmsg_rndv_segs *s);

/* rmsg_rndv.c, for rmsg_rndv_repair.c */
int rmsg_rndv_tx_map(struct rmsg_channel *ch, struct rmsg_rndv_tx *t);
void rmsg_rndv_tx_unmap(struct rmsg_channel *ch,
			struct rmsg_rndv_tx *t, bool valid);
void rmsg_rndv_rx_end(struct rmsg_channel *ch, struct rmsg_rndv_rx *x);
void rmsg_rndv_rx_free(struct rmsg_rndv_rx *x);

#endif /* _RMSG_RNDV_TYPES_H */
