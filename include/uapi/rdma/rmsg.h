/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * rmsg: reliable, self-repairing message channels over RDMA.
 *
 * This header is the single definition of the ABI between rmsg.ko and the
 * programs (and librmsg) that use /dev/rmsg. Rules that keep it growable:
 *
 *  - Every struct has an explicit size, explicit padding and 64-bit aligned
 *    pointer fields (__u64), so 32- and 64-bit programs share one layout.
 *  - Fields named flags or resv* are input that must be zero today; the
 *    kernel rejects anything else with EINVAL, so a later ABI can give them a
 *    meaning without old kernels silently ignoring it.
 *  - RMSG_ABI_VERSION changes only on an incompatible change; additions are
 *    announced in rmsg_version.features.
 *
 * Until release 1.0 the ABI may still change between versions; programs must
 * check abi_version.
 */
#ifndef _UAPI_RDMA_RMSG_H
#define _UAPI_RDMA_RMSG_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/socket.h>

#define RMSG_ABI_VERSION	1

#define RMSG_DEVICE_PATH	"/dev/rmsg"

/* ioctl magic: not used by any subsystem in ioctl-number.rst (6.1). */
#define RMSG_IOC_MAGIC		0xB9

/*
 * Features announced in rmsg_version.features: every bit the module has
 * ever defined, in one place. A bit is never reused.
 */
#define RMSG_FEAT_DEV_LIST	(1ULL << 0)	/* RMSG_IOC_DEV_LIST */
#define RMSG_FEAT_RINGS		(1ULL << 1)	/* RMSG_IOC_EP_SETUP, _ENTER, mmap */
#define RMSG_FEAT_SQPOLL	(1ULL << 2)	/* RMSG_EP_F_SQPOLL */
#define RMSG_FEAT_CHANNELS	(1ULL << 3)	/* LISTEN, CONNECT, CLOSE */
#define RMSG_FEAT_EAGER		(1ULL << 4)	/* send area, SEND, CREDIT, ARM */
#define RMSG_FEAT_RNDV		(1ULL << 5)	/* REG, DEREG, SEND_RNDV, ... */
#define RMSG_FEAT_CHAN_LIST	(1ULL << 6)	/* RMSG_IOC_CHAN_LIST */
#define RMSG_FEAT_FAULT		(1ULL << 7)	/* RMSG_IOC_FAULT */
#define RMSG_FEAT_REPAIR	(1ULL << 8)	/* channels are repaired */
#define RMSG_FEAT_STALL_EVENTS	(1ULL << 9)	/* RMSG_EP_F_STALL_EVENTS */
/* RMSG_IOC_CHAN_ADDR, RMSG_CHAN_LIST_F_ADDRS, rmsg_connect.src_addr */
#define RMSG_FEAT_CHAN_ADDR	(1ULL << 10)
/* struct rmsg_chan_opts in LISTEN, CONNECT, ACCEPT; RMSG_IOC_CHAN_SET */
#define RMSG_FEAT_CHAN_OPTS	(1ULL << 11)
/* rmsg_ep_stats.enters counts RMSG_IOC_ENTER */
#define RMSG_FEAT_ENTER_COUNT	(1ULL << 12)
/* SEND_RNDV, RECV_RNDV with region 0: memory pinned for the transfer only */
#define RMSG_FEAT_RNDV_PIN	(1ULL << 13)
/* RMSG_EP_F_SQPOLL without CAP_SYS_NICE, bounded per user */
#define RMSG_FEAT_SQPOLL_USER	(1ULL << 14)
/* struct rmsg_chan_opts.connect_timeout_ms */
#define RMSG_FEAT_CONNECT_TIMEOUT (1ULL << 15)
/* RMSG_ENTER_LEND, RMSG_CQ_SOFT_DEVICE */
#define RMSG_FEAT_ENTER_LEND	(1ULL << 16)
/* The arrival summary at RMSG_OFF_SUMMARY */
#define RMSG_FEAT_SUMMARY	(1ULL << 17)
/* RMSG_IOC_LINK_LIST, RMSG_FAULT_LINK_PROBE */
#define RMSG_FEAT_LINKS		(1ULL << 18)
/* rmsg_chan_info.block_held and .lease (block leases, lease_blocks) */
#define RMSG_FEAT_LEASE		(1ULL << 19)
/* The block window (RMSG_OFF_WINDOW), RMSG_CQE_F_WINDOW, RMSG_IOC_CHAN_DROP */
#define RMSG_FEAT_BLOCK_WINDOW	(1ULL << 20)

/**
 * struct rmsg_version - RMSG_IOC_VERSION argument
 * @abi_version: out: RMSG_ABI_VERSION of the running module
 * @flags: in: must be zero
 * @features: out: RMSG_FEAT_* bits the module supports
 * @resv: in: must be zero
 */
struct rmsg_version {
	__u32 abi_version;
	__u32 flags;
	__u64 features;
	__u64 resv[2];
};

#define RMSG_DEV_NAME_MAX	64
#define RMSG_NETDEV_NAME_MAX	16
/* Ports reported per device; rmsg_dev_info.num_ports may be larger. */
#define RMSG_MAX_PORTS		8

/* rmsg_port_info.state: the IBTA port states, as the verbs report them. */
enum rmsg_port_state {
	RMSG_PORT_NOP		= 0,
	RMSG_PORT_DOWN		= 1,
	RMSG_PORT_INIT		= 2,
	RMSG_PORT_ARMED		= 3,
	RMSG_PORT_ACTIVE	= 4,
	RMSG_PORT_ACTIVE_DEFER	= 5,
};

/* rmsg_port_info.protocol */
enum rmsg_port_protocol {
	RMSG_PROTO_UNKNOWN	= 0,
	RMSG_PROTO_IB		= 1,
	RMSG_PROTO_ROCE		= 2,
	RMSG_PROTO_IWARP	= 3,
};

/**
 * struct rmsg_port_info - one port of an RDMA device
 * @port_num: port number, from 1
 * @state: enum rmsg_port_state
 * @phys_state: IBTA physical port state (5 = LinkUp, 3 = Disabled, ...)
 * @protocol: enum rmsg_port_protocol
 * @active_mtu: active path MTU in bytes, 0 when the port has none
 * @gid_tbl_len: entries in the port's GID table
 * @lid: the port's LID (InfiniBand only, else 0)
 * @events: port events (active, error, GID change, ...) rmsg has seen
 *	on this port since it found the device
 * @resv0: zero
 * @netdev: the network device under a RoCE or iWARP port, "" otherwise
 * @resv: zero
 */
struct rmsg_port_info {
	__u8  port_num;
	__u8  state;
	__u8  phys_state;
	__u8  protocol;
	__u32 active_mtu;
	__u32 gid_tbl_len;
	__u32 lid;
	__u32 events;
	__u32 resv0;
	char  netdev[RMSG_NETDEV_NAME_MAX];
	__u64 resv[3];
};

/* rmsg_dev_info.flags */
#define RMSG_DEV_F_FATAL	(1U << 0)	/* saw IB_EVENT_DEVICE_FATAL */
/*
 * The device places the data of an RDMA WRITE in ascending address order,
 * so a receiver may take the last byte's arrival for the whole message's.
 * Receive blocks on devices without it get their arrival flags from the
 * kernel (write-with-immediate fallback, Documentation/channels.rst).
 */
#define RMSG_DEV_F_ORDERED	(1U << 1)

/**
 * struct rmsg_dev_info - one RDMA device as rmsg sees it
 * @name: device name, e.g. "rxe0" or "mlx5_0", NUL-terminated
 * @index: the RDMA core's device index
 * @num_ports: ports on the device; only the first RMSG_MAX_PORTS are in
 *	@port
 * @node_guid: node GUID in host byte order
 * @flags: RMSG_DEV_F_* bits
 * @fatal_events: IB_EVENT_DEVICE_FATAL events seen
 * @resv: zero
 * @port: per-port state, read when the list was taken
 */
struct rmsg_dev_info {
	char  name[RMSG_DEV_NAME_MAX];
	__u32 index;
	__u32 num_ports;
	__u64 node_guid;
	__u32 flags;
	__u32 fatal_events;
	__u64 resv[4];
	struct rmsg_port_info port[RMSG_MAX_PORTS];
};

/**
 * struct rmsg_dev_list - RMSG_IOC_DEV_LIST argument
 * @count: in: entries @devs has room for; out: devices rmsg sees
 * @flags: in: must be zero
 * @devs: in: user pointer to an array of struct rmsg_dev_info, or 0 when
 *	@count is 0
 * @generation: out: bumped on every device added or removed, so that a
 *	caller can tell whether two lists were taken in the same state
 * @filled: out: entries written to @devs, at most the "in" @count. When it
 *	is less than the "out" @count, call again with a larger array. Ignored
 *	on input.
 * @resv: in: must be zero
 *
 * The entries written are one consistent snapshot of the device list.
 */
struct rmsg_dev_list {
	__u32 count;
	__u32 flags;
	__u64 devs;
	__u32 generation;
	__u32 filled;
	__u64 resv[2];
};

#define RMSG_IOC_VERSION	_IOWR(RMSG_IOC_MAGIC, 0x00, struct rmsg_version)
#define RMSG_IOC_DEV_LIST	_IOWR(RMSG_IOC_MAGIC, 0x01, struct rmsg_dev_list)

/*
 * Receive block layout (Veloblock "variable bottom-fill").
 *
 * Each channel has, on the receiving node, one block of block_size bytes
 * (a multiple of RMSG_VB_ALIGN) that the peer fills by RDMA WRITE and the
 * receiving program polls in its own memory. Records are placed from the end
 * of the block towards its start; within one pass ("lap") over the block:
 *
 *   lower addresses                                          higher addresses
 *   | ... free ... | clear | payload, padded | trailer | older records ... |
 *                  ^start-RMSG_VB_CLEAR      ^end-RMSG_VB_TRAILER_SIZE    ^end
 *
 * One RDMA WRITE carries clear + payload + trailer. Its first bytes ("clear")
 * are zeros over the place where the *next* record's trailer ends, so the
 * flag the receiver polls next is zero until that record lands; the trailer's
 * last byte (flag) is written last, and, on devices that place data in order,
 * a non-zero flag at the expected place means the whole record is there. No
 * memset of the block and no sender-side copy of it are needed.
 *
 * The first record of every lap ends at the end of the block, where the
 * previous lap's first record left its flag; flags therefore carry the lap's
 * parity (RMSG_VB_FLAG_EVEN / RMSG_VB_FLAG_ODD) and a stale flag never looks
 * like an arrival. When a record does not fit in what is left of the lap, the
 * sender writes a WRAP trailer there and continues at the end of the block.
 *
 * Flow control is in bytes: the sender may only write over bytes that the
 * receiver has released. The receiving program reports released bytes to
 * its kernel (RMSG_OP_CREDIT), which passes them to the sender's kernel in
 * a control message; trailers repeat the latest value (freed) for the
 * receiving program's information, but the sending kernel never takes
 * credit from bytes a program could have written.
 *
 * Further rules (Documentation/veloblock.rst has the reasoning):
 *  - The payload starts at the record's first byte (16-byte aligned); the
 *    padding between payload and trailer is undefined.
 *  - A record plus its clear zone takes at most half the block, so the
 *    largest payload depends on the block size: (size / 2 - 32) rounded
 *    down to a multiple of 16, 2016 bytes for a 4 KiB block and 65504 for
 *    128 KiB, and RMSG_VB_MAX_PAYLOAD from 131136 bytes (128 KiB + 64) up.
 *  - A WRAP trailer carries the seq of the DATA record that follows it and
 *    consumes none; its ack and freed are ignored.
 *  - The block's last trailer must be zero when the channel starts (a
 *    zeroed allocation); no other byte needs initialising.
 *  - "Places data in order" also requires that the block is registered
 *    without relaxed ordering, or the flag may be seen before the payload.
 */
#define RMSG_VB_ALIGN		16
#define RMSG_VB_TRAILER_SIZE	16
#define RMSG_VB_CLEAR		16
#define RMSG_VB_MIN_BLOCK	4096
#define RMSG_VB_MAX_BLOCK	(64U << 20)
#define RMSG_VB_MAX_PAYLOAD	65535

/* rmsg_vb_trailer.type */
enum rmsg_vb_type {
	RMSG_VB_DATA	= 1,	/* an eager message of len bytes */
	RMSG_VB_WRAP	= 2,	/* nothing more this lap; continue at the end */
	RMSG_VB_RTS	= 3,	/* a rendezvous message: struct rmsg_rts */
};

#define RMSG_VB_FLAG_EVEN	0x5a
#define RMSG_VB_FLAG_ODD	0xa5

/**
 * struct rmsg_vb_trailer - the last bytes of every record in a receive block
 * @ack: reserved, kept for the layout: kernels write 0 and nothing reads
 *	it
 * @freed: bytes of its own receive block the sender of this record has
 *	released, free-running modulo 2^32, for the receiving program's
 *	information; no kernel takes credit from it (see above)
 * @seq: this record's sequence number, free-running modulo 2^32
 * @len: payload bytes (DATA, RTS), 0 (WRAP)
 * @type: enum rmsg_vb_type
 * @flag: RMSG_VB_FLAG_EVEN or _ODD by lap parity; written last
 *
 * All multi-byte fields are little-endian on the wire.
 */
struct rmsg_vb_trailer {
	__le32 ack;
	__le32 freed;
	__le32 seq;
	__le16 len;
	__u8   type;
	__u8   flag;
};

/*
 * Endpoints: submission and completion rings shared with the kernel.
 *
 * An endpoint is one open file of /dev/rmsg. RMSG_IOC_EP_SETUP (once per
 * file) creates its two rings; the program maps each with mmap(), at the
 * byte offsets RMSG_OFF_SQ_RING and RMSG_OFF_CQ_RING, MAP_SHARED, with the
 * length returned in sq_mmap_size / cq_mmap_size (or less). A read-only
 * mapping is allowed (to watch a ring); MAP_PRIVATE is not.
 *
 * Each region holds a producer word, a consumer word and a flags word (all
 * __u32), each on its own 64-byte cache line, and the descriptor array, at
 * the byte offsets reported in struct rmsg_ring_offsets. Indices are
 * free-running 32-bit counters; entry i lives in descs[i & (entries - 1)].
 * The program produces SQEs and consumes CQEs; the kernel consumes SQEs and
 * produces CQEs. The kernel checks every index and descriptor the program
 * wrote (it never trusts the shared memory) and never overwrites a CQE the
 * program has not consumed: when the CQ is full it stops taking SQEs.
 *
 * Memory ordering (the pairs below must match; "release"/"acquire" are
 * __atomic_store_n(..., __ATOMIC_RELEASE)/__atomic_load_n(...,
 * __ATOMIC_ACQUIRE) in the program and smp_store_release()/
 * smp_load_acquire() in the kernel):
 *
 *   A: program writes SQEs, then release SQ producer;
 *      kernel acquire SQ producer, then reads SQEs.
 *   B: program release SQ producer, FULL barrier
 *      (__atomic_thread_fence(__ATOMIC_SEQ_CST)), then reads SQ flags for
 *      RMSG_SQ_NEED_WAKEUP. A store followed by a load needs the full
 *      barrier: acquire/release alone lets the load pass the store, and a
 *      kernel poller going to sleep would miss the new SQEs (liburing #541).
 *      The kernel poller (RMSG_EP_F_SQPOLL) pairs with it: it sets
 *      NEED_WAKEUP, smp_mb(), then re-reads the SQ producer, and sleeps only
 *      when that did not move. Program: store producer, fence, load flags;
 *      kernel: store flags, smp_mb(), load producer. With a full barrier in
 *      both, at least one of the two loads sees the other side's store: the
 *      poller sees the new SQEs and stays awake, or the program sees
 *      NEED_WAKEUP and calls RMSG_IOC_ENTER, which wakes the poller.
 *   C: kernel writes CQEs, then release CQ producer;
 *      program acquire CQ producer, then reads CQEs.
 *   D: program reads CQEs, then release CQ consumer;
 *      kernel acquire CQ consumer, then reuses those slots. Likewise the
 *      kernel reads SQEs, then release SQ consumer; the program acquire SQ
 *      consumer before writing those SQE slots again.
 */
#define RMSG_MAX_RING_ENTRIES	32768
#define RMSG_MAX_CQ_ENTRIES	(2 * RMSG_MAX_RING_ENTRIES)

/* mmap() offsets (bytes, as for io_uring) of the two ring regions. */
#define RMSG_OFF_SQ_RING	0ULL
#define RMSG_OFF_CQ_RING	0x8000000ULL
/* The send area (rmsg_ep_setup.send_area_size), mapped read-write. */
#define RMSG_OFF_SEND_AREA	0x10000000ULL
#define RMSG_SEND_AREA_MAX	(64U << 20)
#define RMSG_SEND_AREA_ALIGN	(64U << 10)	/* sizes are multiples */

/*
 * The arrival summary (RMSG_FEAT_SUMMARY, an endpoint set up with
 * RMSG_EP_F_SUMMARY): RMSG_SUMMARY_SIZE bytes mapped read-write at
 * RMSG_OFF_SUMMARY, that tell a program which of its channels may have
 * news in their receive blocks without looking at every block. Two levels: a byte per channel at RMSG_SUMMARY_CHANNEL(channel),
 * and a byte per group of 64 channels at RMSG_SUMMARY_GROUP(channel).
 * After records arrive in a channel's block, its channel byte and then
 * its group byte are set non-zero: by the peer's kernel with RDMA WRITEs
 * that follow the records on the same connection, or by this kernel when
 * the records came with immediates.
 *
 * A program clears a group byte, issues a full barrier, then reads the
 * group's 64 channel bytes; for each one set, it clears it, a full
 * barrier, then looks at that channel's block. A byte set before its
 * clear is for records the look sees; one set after stays set for the
 * next look. The bytes are hints only: set spuriously they cost a look,
 * and a peer can set or clear any byte of this endpoint's summary (it
 * writes it through its channel's key), so a program that must not wait
 * on a hostile peer also looks at its channels' blocks now and then
 * (librmsg looks at one every 16 empty polls).
 */
#define RMSG_OFF_SUMMARY	0x18000000ULL
#define RMSG_SUMMARY_SHIFT	6	/* channels per group: 64 */
#define RMSG_SUMMARY_GROUP(channel)	((channel) >> RMSG_SUMMARY_SHIFT)
#define RMSG_SUMMARY_CHANNELS	4096	/* where the channel bytes start */
#define RMSG_SUMMARY_CHANNEL(channel)	(RMSG_SUMMARY_CHANNELS + (channel))
#define RMSG_SUMMARY_SIZE	(RMSG_SUMMARY_CHANNELS + 65536)

/*
 * SQ ring flags word. RMSG_SQ_NEED_WAKEUP: the kernel will only take new SQEs
 * in RMSG_IOC_ENTER. Without a kernel poller the kernel keeps it set all the
 * time. With one (RMSG_EP_F_SQPOLL), the poller clears it while it is awake
 * and polling the SQ, and sets it (then re-checks the producer, see B above)
 * before it sleeps; ENTER wakes it and clears the flag at once, so one
 * ENTER per sleep suffices even while the woken poller waits for a CPU.
 */
#define RMSG_SQ_NEED_WAKEUP	(1U << 0)

/*
 * CQ ring flags word. RMSG_CQ_SOFT_DEVICE: a channel of the endpoint was on
 * a device that moves bytes with the host's CPUs (Soft-RoCE, siw), in
 * bottom halves; see RMSG_ENTER_LEND. Set by the kernel, never cleared.
 */
#define RMSG_CQ_SOFT_DEVICE	(1U << 0)

/**
 * struct rmsg_ring_offsets - where a ring's parts are in its mmap region
 * @producer: byte offset of the __u32 producer index
 * @consumer: byte offset of the __u32 consumer index (another cache line)
 * @flags: byte offset of the __u32 flags word (RMSG_SQ_* for the SQ,
 *	RMSG_CQ_* for the CQ)
 * @descs: byte offset of the descriptor array (64-byte aligned)
 * @resv: zero
 */
struct rmsg_ring_offsets {
	__u64 producer;
	__u64 consumer;
	__u64 flags;
	__u64 descs;
	__u64 resv[4];
};

/*
 * rmsg_ep_setup.flags. RMSG_EP_F_SQPOLL: a kernel thread of the endpoint
 * takes SQEs as the program publishes them, without RMSG_IOC_ENTER, while
 * RMSG_SQ_NEED_WAKEUP is clear (RMSG_FEAT_SQPOLL announces it). It runs in
 * the caller's cgroups at the caller's nice level. A caller without
 * CAP_SYS_NICE may have it too (RMSG_FEAT_SQPOLL_USER): up to the module's
 * sqpoll_per_user pollers per user at once (EBUSY beyond), each going to
 * sleep after at most sqpoll_user_idle_ms without work.
 */
#define RMSG_EP_F_SQPOLL		(1U << 0)
/*
 * rmsg_ep_setup.flags. RMSG_EP_F_STALL_EVENTS: tell the program about
 * repairs that take long (RMSG_CQE_STALLED, RMSG_CQE_RESUMED; announced
 * by RMSG_FEAT_STALL_EVENTS). Without it a repair is never reported, only
 * its end if it gives up.
 */
#define RMSG_EP_F_STALL_EVENTS		(1U << 1)
/*
 * rmsg_ep_setup.flags. RMSG_EP_F_SUMMARY: the endpoint has an arrival
 * summary (RMSG_OFF_SUMMARY; announced by RMSG_FEAT_SUMMARY), which its
 * channels' peers keep up to date at the cost of two small RDMA WRITEs
 * after each burst of records they send: for programs with many channels
 * that look for the next message among them all.
 */
#define RMSG_EP_F_SUMMARY		(1U << 2)
#define RMSG_SQPOLL_IDLE_DEFAULT_MS	10
#define RMSG_SQPOLL_IDLE_MAX_MS		10000

/**
 * struct rmsg_ep_setup - RMSG_IOC_EP_SETUP argument
 * @sq_entries: in: SQ size, 1 to RMSG_MAX_RING_ENTRIES, rounded up to a
 *	power of two; out: the size used
 * @cq_entries: in: CQ size, 0 for twice the SQ size, else at least the SQ
 *	size and at most RMSG_MAX_CQ_ENTRIES, rounded up to a power of two;
 *	out: the size used
 * @flags: in: RMSG_EP_F_* bits; others must be zero
 * @sqpoll_idle_ms: in: with RMSG_EP_F_SQPOLL, milliseconds without new SQEs
 *	after which the poller sleeps (and sets RMSG_SQ_NEED_WAKEUP); 0 for
 *	RMSG_SQPOLL_IDLE_DEFAULT_MS, at most RMSG_SQPOLL_IDLE_MAX_MS. Must be
 *	zero without RMSG_EP_F_SQPOLL.
 * @features: out: RMSG_FEAT_* bits of the module
 * @sq_off: out: layout of the SQ region
 * @cq_off: out: layout of the CQ region
 * @sq_mmap_size: out: bytes to map at RMSG_OFF_SQ_RING
 * @cq_mmap_size: out: bytes to map at RMSG_OFF_CQ_RING
 * @send_area_size: in: bytes of send area (RMSG_OFF_SEND_AREA), 0 for
 *	none, at most RMSG_SEND_AREA_MAX, rounded up to a multiple of
 *	RMSG_SEND_AREA_ALIGN; out: the size used. RMSG_OP_SEND takes its payload from it.
 * @stall_ms: in: with RMSG_EP_F_STALL_EVENTS, how long a repair of one of
 *	the endpoint's channels stays quiet before RMSG_CQE_STALLED is
 *	posted, in milliseconds; 0 for the module's default (its
 *	repair_quiet_ms parameter, when the repair starts). Must be zero
 *	without RMSG_EP_F_STALL_EVENTS.
 * @resv: in: must be zero
 *
 * Once per file: a second call fails with EBUSY. librmsg's
 * rmsg_ep_open_setup() takes it, and says which fields a program sets.
 */
struct rmsg_ep_setup {
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 flags;
	__u32 sqpoll_idle_ms;
	__u64 features;
	struct rmsg_ring_offsets sq_off;
	struct rmsg_ring_offsets cq_off;
	__u64 sq_mmap_size;
	__u64 cq_mmap_size;
	__u32 send_area_size;
	__u32 stall_ms;
	__u64 resv[3];
};

/*
 * rmsg_sqe.opcode.
 *
 * RMSG_OP_SEND sends one eager message on @channel: @len bytes at offset
 * @addr of the endpoint's send area (RMSG_OFF_SEND_AREA). The kernel reads
 * the payload until the SEND's CQE is posted, so the program must leave
 * those bytes alone until then. Its CQE carries @len in cqe.len and @addr
 * in cqe.aux. res: 0; -EMSGSIZE above the channel's largest message (the
 * aux of its CONNECTED or ACCEPTED event); -EFAULT for bytes outside the
 * send area; -ENOTCONN when the channel is not open; -ENOBUFS when
 * RMSG_CHAN_MAX_PENDING sends of the channel are waiting already;
 * -ECONNRESET (or the channel's error) when it ended before the message
 * was written. SENDs of one channel complete in order, and a message is
 * delivered before any later one of the same channel.
 *
 * RMSG_OP_CREDIT returns receive-block bytes to the peer: @addr is the
 * channel's released-byte counter (free-running, the low 32 bits count).
 * It posts no CQE unless it fails.
 *
 * RMSG_OP_ARM asks for an RMSG_CQE_READABLE event when a message lies in
 * the channel's receive block beyond @addr, the bytes consumed so far
 * (free-running, as rmsg_vb_rx counts them). If one already does, the
 * event comes at once; otherwise with the next message. One event per ARM.
 * It posts no CQE unless it fails.
 */
enum rmsg_op {
	RMSG_OP_NOP	= 0,	/* completes with res 0 */
	RMSG_OP_SEND	= 1,	/* channel, addr = send-area offset, len */
	RMSG_OP_CREDIT	= 2,	/* channel, addr = bytes released */
	RMSG_OP_ARM	= 3,	/* channel, addr = bytes consumed */
	RMSG_OP_SEND_RNDV = 4,	/* channel, region, addr, len */
	RMSG_OP_RECV_RNDV = 5,	/* channel, region, addr, len, aux = cookie */
	RMSG_OP_LAST,		/* first unused value; not an operation */
};

/* Sends of one channel waiting for credit or for their write, at most. */
#define RMSG_CHAN_MAX_PENDING	256

/**
 * struct rmsg_sqe - submission queue entry (64 bytes)
 * @opcode: enum rmsg_op
 * @flags: must be zero
 * @resv0: must be zero
 * @channel: channel the operation is for (unused by NOP, must be zero)
 * @user_data: copied into the operation's CQE
 * @addr: user pointer to the operation's buffer (unused by NOP, zero)
 * @len: bytes at @addr (unused by NOP, zero)
 * @region: SEND_RNDV, RECV_RNDV: handle of the region @addr lies in, or
 *	0 for memory in no region, which the kernel pins for the transfer's
 *	life only (RMSG_FEAT_RNDV_PIN); zero for the others
 * @aux: RECV_RNDV: the cookie of the rendezvous message answered; zero for
 *	the others
 * @resv: must be zero
 *
 * @flags is zero but for SEND_RNDV and RECV_RNDV (RMSG_RNDV_F_*). An SQE
 * the kernel rejects completes with res -EINVAL.
 */
struct rmsg_sqe {
	__u8  opcode;
	__u8  flags;
	__u16 resv0;
	__u32 channel;
	__u64 user_data;
	__u64 addr;
	__u32 len;
	__u32 region;
	__u64 aux;
	__u64 resv[3];
};

/**
 * struct rmsg_cqe - completion queue entry (32 bytes)
 * @user_data: the SQE's user_data
 * @res: 0 or a positive result on success, a negative errno on failure
 * @flags: the kind of entry in the low 8 bits (RMSG_CQE_KIND()): the
 *	completion of an SQE, or an event of a channel (enum rmsg_cqe_kind)
 * @channel: the SQE's channel, or the channel the event is about
 * @len: SEND: its len. CONNECTED, ACCEPTED: bytes of this side's receive
 *	block. STALLED, RESUMED: milliseconds since the fault. Otherwise
 *	zero.
 * @aux: SEND: its addr (the send-area offset). CONNECTED, ACCEPTED: the
 *	largest message the channel can send. Otherwise zero.
 */
struct rmsg_cqe {
	__u64 user_data;
	__s32 res;
	__u32 flags;
	__u32 channel;
	__u32 len;
	__u64 aux;
};

/* rmsg_enter.flags */
#define RMSG_ENTER_GETEVENTS	(1U << 0)
#define RMSG_ENTER_LEND		(1U << 1)	/* RMSG_FEAT_ENTER_LEND */

/**
 * struct rmsg_enter - RMSG_IOC_ENTER argument
 * @to_submit: in: take at most this many SQEs (fewer when the SQ holds fewer
 *	or the CQ fills up)
 * @min_complete: in: with RMSG_ENTER_GETEVENTS, wait until at least this many
 *	CQEs are ready to be consumed (at most the CQ size); the wait is
 *	interruptible and fails with EINTR on a signal
 * @flags: in: RMSG_ENTER_* bits; others must be zero
 * @resv0: in: must be zero
 * @submitted: out: SQEs taken
 * @resv1: in: must be zero
 * @resv: in: must be zero
 *
 * Fails with EINVAL, taking nothing, when the SQ producer or the CQ consumer
 * the program wrote is impossible (moved backwards or past the other index);
 * with EBUSY when SQEs were waiting but none could be taken because the CQ
 * is full. When some SQEs were taken, the call succeeds even if the wait is
 * then interrupted (as io_uring_enter() does).
 *
 * RMSG_ENTER_LEND lends the caller's CPU to the devices first: the bottom
 * halves pending on it run in the call, as they do at the end of a user
 * QP's post. On a software device (RMSG_CQ_SOFT_DEVICE) that is where the
 * bytes of a transfer move, and a program that busy-polls for a transfer
 * otherwise takes half of that CPU from ksoftirqd, which does the moving.
 * The call may then last as long as the device's work takes (milliseconds
 * per megabyte under emulation). On a hardware device nothing is pending
 * and the flag costs the system call alone.
 *
 * On an RMSG_EP_F_SQPOLL endpoint ENTER takes the SQEs the poller has not
 * taken yet itself, with the results above, and then wakes the poller for
 * those to come (io_uring_enter() leaves them to its thread; here the
 * program is in the kernel already, and a woken poller may wait for a CPU).
 * When ENTER returns, the SQEs published before it have been taken, by
 * the call or by the poller; @submitted counts those the call took.
 */
struct rmsg_enter {
	__u32 to_submit;
	__u32 min_complete;
	__u32 flags;
	__u32 resv0;
	__u32 submitted;
	__u32 resv1;
	__u64 resv[2];
};

/*
 * Sizes, for reviewers and for the static assertions in the kernel:
 * rmsg_ring_offsets 64, rmsg_ep_setup 200, rmsg_sqe 64, rmsg_cqe 32,
 * rmsg_enter 40 bytes.
 */

#define RMSG_IOC_EP_SETUP	_IOWR(RMSG_IOC_MAGIC, 0x02, struct rmsg_ep_setup)
#define RMSG_IOC_ENTER		_IOWR(RMSG_IOC_MAGIC, 0x03, struct rmsg_enter)

/*
 * Channels.
 *
 * A channel is a reliable, ordered, bidirectional message stream between two
 * endpoints, over one RDMA connection that rmsg makes with the kernel's
 * rdma_cm. An endpoint with rings (RMSG_IOC_EP_SETUP) may listen on one
 * address and connect any number of channels. What happens to a channel is
 * reported on the completion ring as events:
 *
 *  - RMSG_IOC_CONNECT gives the channel's id at once; exactly one
 *    RMSG_CQE_CONNECTED follows, res 0 when the channel is open, or a
 *    negative errno (ECONNREFUSED, EHOSTUNREACH, ETIMEDOUT, ECONNABORTED,
 *    ENODEV, ...) after which the id is held back (below).
 *  - A connection accepted by the endpoint's listener is reported once, by
 *    RMSG_CQE_ACCEPTED with the new channel's id, when it is open.
 *  - Every channel that was reported open ends with exactly one
 *    RMSG_CQE_CLOSED: res 0 when either side closed it (RMSG_IOC_CLOSE),
 *    a negative errno when it failed (ECONNRESET, ENODEV, ...).
 *  - The id of a channel whose end (CLOSED, or a failed CONNECTED) was
 *    posted, or whose REQUEST was, goes to no new channel until 64 more
 *    such ends have been posted, unless the endpoint has no other id free
 *    under max_channels: until then an ioctl or SQE that names it fails
 *    with ENOENT (or its completion does) rather than reach another
 *    channel. A program that reads its events in order cannot mistake
 *    one channel for another unless it lags 64 ends behind.
 *
 * Event entries carry the user_data given to RMSG_IOC_CONNECT or
 * RMSG_IOC_LISTEN. The kernel never drops an event: when the completion
 * ring is full it keeps them and posts them as the program frees entries.
 */

/**
 * enum rmsg_cqe_kind - the kinds of completion entries and events
 * @RMSG_CQE_OP: the completion of an SQE; through librmsg, of a send
 *	(rmsg_msg_send(), rmsg_msg_sendv(), rmsg_msg_commit(),
 *	rmsg_msg_send_zc()) or of rmsg_msg_recv_into(): res 0 or a negative
 *	errno, user_data the call's
 * @RMSG_CQE_CONNECTED: the outcome of a connect, exactly one per
 *	channel: res 0 when the channel is open (len: this side's receive
 *	block, aux: the largest message it may send), or a negative errno
 *	(ECONNREFUSED, EHOSTUNREACH, ETIMEDOUT, ...): the channel never opened
 * @RMSG_CQE_ACCEPTED: a channel the listener accepted is open (channel:
 *	its id; user_data the listen's or the accept's)
 * @RMSG_CQE_CLOSED: an open channel ended, exactly once: res 0 when
 *	either side closed it, else why it failed (ECONNRESET: the peer
 *	closed without an orderly end, died or restarted; ETIMEDOUT: a
 *	repair gave up). Messages that arrived before stay readable.
 * @RMSG_CQE_READABLE: what RMSG_OP_ARM asked for; librmsg consumes it and
 *	never reports it
 * @RMSG_CQE_REQUEST: a connection awaits an answer (listeners with
 *	RMSG_LISTEN_F_ACCEPT; rmsg_chan_accept()); len: the peer's block
 * @RMSG_CQE_STALLED: a repair of the channel outlasted the endpoint's
 *	quiet period (endpoints with RMSG_EP_F_STALL_EVENTS): res the fault
 *	that started it; the channel is alive and its sends wait
 * @RMSG_CQE_RESUMED: a STALLED channel is open again (len: milliseconds
 *	the repair took)
 *
 * The kind is in the low 8 bits of rmsg_cqe.flags (RMSG_CQE_KIND()) and
 * in rmsg_event.kind. A kind a program does not know is best ignored: a
 * later module may add some.
 */
enum rmsg_cqe_kind {
	RMSG_CQE_OP		= 0,	/* completion of an SQE */
	RMSG_CQE_CONNECTED	= 1,	/* outcome of RMSG_IOC_CONNECT */
	RMSG_CQE_ACCEPTED	= 2,	/* a new channel on the listener */
	RMSG_CQE_CLOSED		= 3,	/* an open channel ended */
	RMSG_CQE_READABLE	= 4,	/* what RMSG_OP_ARM asked for */
	RMSG_CQE_REQUEST	= 5,	/* a connection awaits RMSG_IOC_ACCEPT */
	RMSG_CQE_STALLED	= 6,	/* a repair outlasted the quiet period */
	RMSG_CQE_RESUMED	= 7,	/* a STALLED channel is open again */
};
#define RMSG_CQE_KIND(flags)	((flags) & 0xff)
/*
 * Above the kind, rmsg_cqe.flags carries these bits. RMSG_CQE_F_WINDOW: on
 * a CONNECTED or ACCEPTED with res 0, the channel's receive block is in
 * the endpoint's block window and its id is held after the channel's end
 * until RMSG_IOC_CHAN_DROP lets it go (see RMSG_OFF_WINDOW_BASE).
 */
#define RMSG_CQE_F_WINDOW	(1U << 8)

/* Channels per endpoint at most; a module parameter may lower it. */
#define RMSG_MAX_CHANNELS	65536

/* struct rmsg_chan_opts: a setting switched off (no repair, no heartbeat) */
#define RMSG_OPT_OFF		0xffffffffU
/* struct rmsg_chan_opts: the largest time a setting takes (a day) */
#define RMSG_OPT_MS_MAX		86400000U
/* struct rmsg_chan_opts: the most heartbeat periods that may be missed */
#define RMSG_OPT_MISSES_MAX	1000U
/*
 * struct rmsg_chan_opts: the shortest heartbeat period. Each period costs a
 * send on an idle channel; a user with a thousand channels at 1 ms would
 * have the kernel send a million messages a second for nothing.
 */
#define RMSG_OPT_HEARTBEAT_MIN_MS	10U

/**
 * struct rmsg_chan_opts - a channel's own settings
 * @repair_timeout_ms: a repair that has not succeeded after this long ends
 *	the channel (ETIMEDOUT); RMSG_OPT_OFF: no repair, a broken
 *	connection ends the channel at once
 * @stall_ms: the quiet period before RMSG_CQE_STALLED (endpoints with
 *	RMSG_EP_F_STALL_EVENTS)
 * @heartbeat_ms: the heartbeat period, at least RMSG_OPT_HEARTBEAT_MIN_MS;
 *	RMSG_OPT_OFF: none (a silent peer is then found only by a failed
 *	send). A channel with either heartbeat setting of its own sends a
 *	HEARTBEAT every period; one without shares the heartbeat of the
 *	other channels to its peer node (one a period in all)
 * @heartbeat_misses: periods in a row without an acknowledged send that
 *	break the connection (1 to RMSG_OPT_MISSES_MAX)
 * @connect_timeout_ms: a channel that is not open this long after its
 *	CONNECT, or after its accept began, ends: its RMSG_CQE_CONNECTED or
 *	RMSG_CQE_ACCEPTED has res -ETIMEDOUT (RMSG_FEAT_CONNECT_TIMEOUT);
 *	RMSG_OPT_OFF: no bound but the rdma_cm's own. Changing it on an
 *	open channel changes nothing.
 * @resv0: zero
 * @resv: zero
 *
 * 0 in a field keeps what the channel would have without it: for a new
 * channel the listener's setting (accepted channels) or the module's
 * parameter (repair_timeout_ms, repair_quiet_ms or the endpoint's
 * stall_ms, heartbeat_ms, heartbeat_misses, connect_timeout_ms); for
 * RMSG_IOC_CHAN_SET the
 * channel's current one. Times are in ms, at most RMSG_OPT_MS_MAX.
 */
struct rmsg_chan_opts {
	__u32 repair_timeout_ms;
	__u32 stall_ms;
	__u32 heartbeat_ms;
	__u32 heartbeat_misses;
	__u32 connect_timeout_ms;
	__u32 resv0;
	__u64 resv;
};

/**
 * struct rmsg_listen - RMSG_IOC_LISTEN argument
 * @addr: user pointer to a struct sockaddr_in or sockaddr_in6 to listen on
 *	(port 0: any free port, written back into *@addr)
 * @addr_len: bytes at @addr
 * @backlog: connection requests that may wait; 0 for the default (128),
 *	more than RMSG_LISTEN_BACKLOG_MAX counts as that
 * @block_size: receive block of accepted channels in bytes; 0 for the
 *	module's default (32 KiB); a multiple of 16 from 4 KiB to 64 MiB
 * @flags: RMSG_LISTEN_F_* bits; others must be zero
 * @user_data: carried by the RMSG_CQE_REQUEST, RMSG_CQE_ACCEPTED and
 *	RMSG_CQE_CLOSED events of accepted channels (unless RMSG_IOC_ACCEPT
 *	gives a channel its own)
 * @peer_block_max: the largest receive block a connecting peer may announce
 *	(the accepting side mirrors it in memory it allocates); 0 for the
 *	module's default (peer_block_max, 1 MiB); a larger announcement is
 *	rejected
 * @resv32: zero
 * @opts: 0, or a user pointer to struct rmsg_chan_opts for every channel
 *	the listener accepts (RMSG_FEAT_CHAN_OPTS)
 */
struct rmsg_listen {
	__u64 addr;
	__u32 addr_len;
	__u32 backlog;
	__u32 block_size;
	__u32 flags;
	__u64 user_data;
	__u32 peer_block_max;
	__u32 resv32;
	__u64 opts;
};

/* The most connection requests a listener lets wait (as ucma's). */
#define RMSG_LISTEN_BACKLOG_MAX	1024

/**
 * struct rmsg_connect - RMSG_IOC_CONNECT argument
 * @addr: user pointer to the peer's struct sockaddr_in or sockaddr_in6
 * @addr_len: bytes at @addr
 * @flags: zero
 * @user_data: carried by this channel's events
 * @block_size: this side's receive block in bytes, as for rmsg_listen
 * @channel: out: the new channel's id
 * @timeout_ms: for address and route resolution each; 0 for the default
 * @src_addr_len: bytes at @src_addr; 0: the node picks the source
 * @src_addr: user pointer to a local address of the same family as the
 *	peer's (port 0), which also picks the device, for the first
 *	connection; repairs dial from wherever the node routes, so that a
 *	channel can leave a failed device (Documentation/channels.rst)
 * @opts: 0, or a user pointer to struct rmsg_chan_opts for this channel
 *	(RMSG_FEAT_CHAN_OPTS)
 */
struct rmsg_connect {
	__u64 addr;
	__u32 addr_len;
	__u32 flags;
	__u64 user_data;
	__u32 block_size;
	__u32 channel;
	__u32 timeout_ms;
	__u32 src_addr_len;
	__u64 src_addr;
	__u64 opts;
};

/* rmsg_close.flags */
#define RMSG_CLOSE_ABORT	(1U << 0)	/* do not wait for the peer */

/**
 * struct rmsg_close - RMSG_IOC_CLOSE argument
 * @channel: the channel
 * @flags: RMSG_CLOSE_* bits
 * @resv: zero
 */
struct rmsg_close {
	__u32 channel;
	__u32 flags;
	__u64 resv[2];
};

/*
 * A channel's receive block is mapped read-only (PROT_READ, MAP_SHARED) at
 * RMSG_OFF_BLOCK(channel), at most its block size rounded up to pages. The
 * mapping stays valid after the channel ends (the pages live until munmap),
 * but a new mapping needs an open channel.
 */
#define RMSG_OFF_BLOCK_BASE	(1ULL << 40)
#define RMSG_OFF_BLOCK_SHIFT	26	/* room for RMSG_VB_MAX_BLOCK */
#define RMSG_OFF_BLOCK(channel)	\
	(RMSG_OFF_BLOCK_BASE + ((__u64)(channel) << RMSG_OFF_BLOCK_SHIFT))

/*
 * The block window (RMSG_FEAT_BLOCK_WINDOW): every channel's receive block
 * in one read-only mapping of the endpoint, so that a program with
 * thousands of channels needs no mapping per channel. It is mapped
 * PROT_READ and MAP_SHARED (EPERM for a writable mapping, EINVAL for a
 * private one) at RMSG_OFF_WINDOW(shift), for at most RMSG_MAX_CHANNELS
 * slots of 1 << shift bytes (EINVAL for more, for a shift out of
 * RMSG_WINDOW_SHIFT_MIN..RMSG_WINDOW_SHIFT_MAX or below the page size's,
 * for an offset that is not a window's start, before RMSG_IOC_EP_SETUP).
 * An endpoint has one shift: the first window mapping fixes it, a
 * mapping with another fails with EINVAL.
 *
 * Channel id's block is at the window's start + (id << shift). A slot
 * with no block, and the bytes of a slot past its block, read as zero. A
 * channel whose block is in the window is told so by RMSG_CQE_F_WINDOW
 * in its CONNECTED or ACCEPTED: a channel opens into the window only
 * once the window is mapped, and only when its block, rounded up to
 * pages, fits in a slot. Its slot then keeps its block after its end, and
 * its id is held: no new channel takes it (RMSG_IOC_CONNECT and accepts
 * fail with ENOSPC when held ids are all that is left under
 * max_channels) until the program lets it go with RMSG_IOC_CHAN_DROP,
 * after which it is held back as any ended channel's is (above). A
 * program that never maps the window (one on the rings alone) never has
 * an id held. RMSG_OFF_BLOCK(id) mappings work as before, in the window
 * or not.
 */
#define RMSG_OFF_WINDOW_BASE	(1ULL << 43)
#define RMSG_WINDOW_SHIFT_MIN	12
#define RMSG_WINDOW_SHIFT_MAX	20
#define RMSG_OFF_WINDOW(shift)	\
	(RMSG_OFF_WINDOW_BASE + ((__u64)(shift) << 37))

#define RMSG_IOC_LISTEN		_IOWR(RMSG_IOC_MAGIC, 0x04, struct rmsg_listen)
#define RMSG_IOC_CONNECT	_IOWR(RMSG_IOC_MAGIC, 0x05, struct rmsg_connect)
#define RMSG_IOC_CLOSE		_IOW(RMSG_IOC_MAGIC, 0x06, struct rmsg_close)

/**
 * struct rmsg_ep_stats - RMSG_IOC_EP_STATS: what one endpoint has done
 * @bad_index: impossible ring indices the program wrote
 * @bad_desc: SQEs rejected with -EINVAL
 * @sends: SENDs taken
 * @send_waits: SENDs that waited for credit or send-queue room
 * @writes_inline: records written inline
 * @writes_signalled: record writes that asked for a completion
 * @wraps: WRAP trailers written
 * @credits_out: CREDIT messages sent to peers
 * @credits_in: CREDIT messages received
 * @wakes_out: WAKE messages sent to peers
 * @wakes_in: WAKE messages received (each a READABLE event)
 * @imm_arrivals: arrival flags this kernel set in receive blocks (the
 *	write-with-immediate fallback); 0 when devices place in order
 * @rekeys_out: REKEY messages sent: after its channel moved to another
 *	device, the new keys of rendezvous transfers the peer knew
 * @rekeyed_in: the peer's rendezvous transfers that got new keys from a
 *	REKEY, the peer having moved
 * @events_dropped: completion entries the kernel could not keep: the
 *	completion ring was full and the entries waiting for room reached
 *	8 per channel plus the ring's size (a program that reads no
 *	completions while its peers make events, repairs for instance)
 * @enters: RMSG_IOC_ENTER calls that got past their argument checks: the
 *	system calls the data path cost (RMSG_FEAT_ENTER_COUNT; 0 before)
 *
 * Counters since the endpoint was opened, of all its channels.
 */
struct rmsg_ep_stats {
	__u64 bad_index;
	__u64 bad_desc;
	__u64 sends;
	__u64 send_waits;
	__u64 writes_inline;
	__u64 writes_signalled;
	__u64 wraps;
	__u64 credits_out;
	__u64 credits_in;
	__u64 wakes_out;
	__u64 wakes_in;
	__u64 imm_arrivals;
	__u64 rekeys_out;
	__u64 rekeyed_in;
	__u64 events_dropped;
	__u64 enters;
};

#define RMSG_IOC_EP_STATS	_IOR(RMSG_IOC_MAGIC, 0x07, struct rmsg_ep_stats)

/*
 * rmsg_listen.flags: the program decides on each connection. It hears of
 * it in an RMSG_CQE_REQUEST event (channel: the id the channel will keep;
 * len: the peer's receive block size) and answers with RMSG_IOC_ACCEPT.
 * Without this flag every valid request is accepted.
 */
#define RMSG_LISTEN_F_ACCEPT	(1U << 0)

/* rmsg_accept.flags */
#define RMSG_ACCEPT_REJECT	(1U << 0)	/* refuse: ECONNREFUSED there */

/**
 * struct rmsg_accept - RMSG_IOC_ACCEPT argument
 * @channel: from an RMSG_CQE_REQUEST event
 * @flags: RMSG_ACCEPT_* bits; others must be zero
 * @user_data: for the channel's later events (RMSG_CQE_ACCEPTED when it
 *	is open, RMSG_CQE_CLOSED); unused by a reject
 * @opts: 0, or a user pointer to struct rmsg_chan_opts: its non-zero
 *	fields replace the listener's for this channel (RMSG_FEAT_CHAN_OPTS)
 * @resv: zero
 *
 * An accepted channel is reported open by RMSG_CQE_ACCEPTED, or not at
 * all if it fails first. A rejected one is gone at once. RMSG_IOC_CLOSE of
 * a channel still awaiting the answer rejects it too. Errors: ENOENT for
 * no such channel, EINVAL for one that was not awaiting an answer (also
 * before its RMSG_CQE_REQUEST was posted).
 */
struct rmsg_accept {
	__u32 channel;
	__u32 flags;
	__u64 user_data;
	__u64 opts;
	__u64 resv[1];
};

#define RMSG_IOC_ACCEPT		_IOW(RMSG_IOC_MAGIC, 0x08, struct rmsg_accept)

/*
 * Rendezvous transfers (Documentation/rendezvous.rst). A message in a
 * region goes zero copy: RMSG_OP_SEND_RNDV (addr, len in the region named
 * by @region) makes the kernel register the bytes for remote reading and
 * put a record of type RMSG_VB_RTS in the peer's receive block, in order
 * with the channel's eager messages. Its payload is a struct rmsg_rts. The
 * receiving program answers with RMSG_OP_RECV_RNDV: @aux the cookie, and
 * addr, len (the room there) in its own region, after which it may
 * release the record. Its kernel reads the bytes in (RDMA READ) and tells
 * the sender's. The answers of a channel's RTS records must come in their
 * order (cookies are consecutive), and each record is answered once.
 *
 * CQEs: SEND_RNDV when the peer has the bytes (possibly after CQEs of
 * later eager SENDs), res 0; -EMSGSIZE when the peer's room was too small
 * and it took nothing; -ECANCELED when it discarded the message; the
 * channel's error when it failed first. len, aux: the SQE's len and addr.
 * RECV_RNDV when the bytes are in place (res 0) or not (-EMSGSIZE: the
 * room is smaller than the message, nothing was written; ...); len: the
 * message's length; aux: the cookie.
 *
 * Neither program need call in meanwhile: the kernels move the bytes.
 *
 * By default the receiver's kernel reads the bytes (RGet). A SEND_RNDV with
 * RMSG_RNDV_F_PUT asks for RPut instead: the receiver's kernel registers
 * the destination when the program answers, and the sender's kernel
 * RDMA-WRITEs the bytes. The programs do the same either way; the RTS
 * record says which (RMSG_RTS_F_PUT).
 */
#define RMSG_RNDV_F_DISCARD	(1U << 0)	/* RECV_RNDV: drop the message */
#define RMSG_RNDV_F_PUT		(1U << 1)	/* SEND_RNDV: RPut, not RGet */

/* The longest rendezvous message (a channel may allow less: EMSGSIZE). */
#define RMSG_RNDV_MAX_LEN	(1U << 30)

/**
 * struct rmsg_rts - the payload of an RMSG_VB_RTS record
 * @len: bytes of the message
 * @addr: the address the sending kernel names its first byte by: the
 *	offset of the program's address in its page, nothing more (the peer
 *	learns nothing of the sender's address space)
 * @cookie: names the transfer in RMSG_OP_RECV_RNDV
 * @seg_shift: the sender registered the message in segments: segment i
 *	covers the message's bytes in [base + i * 2^seg_shift,
 *	base + (i + 1) * 2^seg_shift), base = @addr rounded down to a
 *	multiple of 2^seg_shift
 * @nseg: the number of segments
 * @flags: RMSG_RTS_F_*
 * @rkey: one per segment, for the kernels
 *
 * Little-endian. The program needs only @len and @cookie; the kernel reads
 * the record from the block itself and never trusts a copy.
 *
 * With RMSG_RTS_F_PUT (the sender asked for RPut), @addr, @seg_shift and
 * the one key name the sender's CTS mailbox instead: 2^@seg_shift bytes
 * at @addr, which the receiving kernel writes a clear-to-send into. A CTS
 * has the same layout, with a flag of its own (bit 1, used between kernels
 * only, kernel/core/rmsg_rts.h): it names the destination's
 * segments, which the sending kernel RDMA-WRITEs. Programs never see one.
 */
struct rmsg_rts {
	__le64 len;
	__le64 addr;
	__le32 cookie;
	__le32 seg_shift;
	__le32 nseg;
	__le32 flags;
	__le32 rkey[];
};

#define RMSG_RTS_F_PUT		(1U << 0)	/* RPut: @rkey[0] is a mailbox */

/*
 * Memory regions (RMSG_FEAT_RNDV): the program's own memory, pinned and
 * charged to its RLIMIT_MEMLOCK, that rendezvous transfers read and write
 * in place. A region belongs to the endpoint that registered it and goes
 * with it. Nothing is mapped for a device until a transfer needs it, so a
 * region outlives any one device.
 */

/* The largest region, in bytes. */
#define RMSG_REG_MAX_LEN	(1ULL << 32)

/**
 * struct rmsg_reg - RMSG_IOC_REG argument
 * @addr: in: start of the memory, any alignment
 * @len: in: bytes, 1 to RMSG_REG_MAX_LEN
 * @flags: in: must be zero
 * @handle: out: the region's handle, never 0; names it in SQEs and in
 *	RMSG_IOC_DEREG
 * @resv: must be zero
 *
 * The memory must be the program's, mapped writable (a transfer may write
 * it), and stays pinned until RMSG_IOC_DEREG or the endpoint's release.
 * Errors: EINVAL for bad fields, EFAULT for memory the program does not
 * have mapped writable, ENOMEM when it exceeds RLIMIT_MEMLOCK (without
 * CAP_IPC_LOCK), counted with all memory the process has pinned.
 */
struct rmsg_reg {
	__u64 addr;
	__u64 len;
	__u32 flags;
	__u32 handle;
	__u64 resv[2];
};

/**
 * struct rmsg_dereg - RMSG_IOC_DEREG argument
 * @handle: from RMSG_IOC_REG
 * @flags: must be zero
 * @resv: must be zero
 *
 * Errors: ENOENT for no such region, EBUSY while a transfer submitted on
 * it has not completed (its CQE not yet posted); the region stays then.
 */
struct rmsg_dereg {
	__u32 handle;
	__u32 flags;
	__u64 resv;
};

#define RMSG_IOC_REG		_IOWR(RMSG_IOC_MAGIC, 0x09, struct rmsg_reg)
#define RMSG_IOC_DEREG		_IOW(RMSG_IOC_MAGIC, 0x0a, struct rmsg_dereg)

/*
 * Resilience (Documentation/resilience.rst). A channel whose connection
 * fails (a QP error, a lost link, the peer's disconnect without CLOSE) is
 * repaired underneath the program: the connecting side dials again, the
 * kernels exchange where each stream stands, and every record the peer's
 * block lacks is written again from the sender's copy. The program sees a
 * delay, not an error, unless the repair gives up.
 */

/*
 * Long repairs (RMSG_FEAT_STALL_EVENTS). A repair is quiet at first: the
 * program sees a delay and nothing else. On an endpoint set up with
 * RMSG_EP_F_STALL_EVENTS, a repair that lasts longer than the endpoint's
 * quiet period (rmsg_ep_setup.stall_ms, by default the repair_quiet_ms
 * module parameter) is reported, once per repair, on the completion ring:
 *
 *  - RMSG_CQE_STALLED: res is the negative errno of the fault that
 *    started the repair (ETIMEDOUT for a silent peer, ECONNRESET, ...;
 *    rmsg_chan_info.last_error); len the milliseconds since the fault.
 *    The channel is still alive: SENDs are still taken and wait in the
 *    channel (RMSG_CHAN_MAX_PENDING at most, then ENOBUFS), the receive
 *    block stays mapped, and the repair goes on until it succeeds or
 *    gives up (repair_timeout_ms).
 *  - RMSG_CQE_RESUMED, after a STALLED only: the channel is open again.
 *    res 0; len the milliseconds the repair took in all. Waiting SENDs
 *    are written first, in order.
 *  - A repair that gives up ends the channel with RMSG_CQE_CLOSED
 *    (ETIMEDOUT, ECONNRESET, ...), with or without a STALLED before it;
 *    no RESUMED follows. A quiet period at least as long as the give-up
 *    timeout means STALLED never comes.
 *
 * Both carry the channel's user_data; aux is zero. A channel's events
 * come in order: STALLED, then RESUMED or CLOSED, for each repair.
 */

/* rmsg_chan_info.state */
enum rmsg_chan_info_state {
	RMSG_CHAN_INFO_CONNECTING	= 1,
	RMSG_CHAN_INFO_REQUESTED	= 2,
	RMSG_CHAN_INFO_ACCEPTING	= 3,
	RMSG_CHAN_INFO_OPEN		= 4,
	RMSG_CHAN_INFO_RECOVERING	= 5,	/* being repaired */
	RMSG_CHAN_INFO_DYING		= 6,
};

/**
 * struct rmsg_chan_info - one channel, as RMSG_IOC_CHAN_LIST shows it
 * @ep_id: the endpoint's id (from 1; rmsg_chan_list.ep_id, rmsg_fault.ep_id)
 * @channel: the channel's id in its endpoint
 * @pid: the process (thread group) that opened the endpoint
 * @uid: the endpoint's owner
 * @state: enum rmsg_chan_info_state
 * @epoch: the connection attempt the channel is on: 0 for the first,
 *	then one more per attempt of a repair
 * @attempts: connection attempts of the repair under way (0 when none)
 * @max_attempts: attempts the give-up timeout allows, at the longest
 *	back-off
 * @repairs: repairs that succeeded
 * @last_error: negative errno of the last failure that started a repair
 *	(or ended the channel); 0 if none
 * @retx_msgs: records written again after repairs
 * @retx_bytes: their bytes
 * @recover_ns: time spent repairing, in total, nanoseconds
 * @block_size: the channel's receive block
 * @dev: the device the channel's connection is on: its RDMA core index
 *	(rmsg_dev_info.index) plus one; 0 while it is on none (a repair
 *	between devices) or on one the module does not know
 * @block_held: bytes of receive block the channel holds now: @block_size
 *	(rounded up to pages), or 0 when its block is leased
 *	(Documentation/protocol.rst, "Block leases") and no lease is out
 *	(RMSG_FEAT_LEASE; zero before)
 * @lease: a leased block's lease number, 0 before the first; 0 for a
 *	block that is not leased (RMSG_FEAT_LEASE; zero before)
 */
struct rmsg_chan_info {
	__u32 ep_id;
	__u32 channel;
	__u32 pid;
	__u32 uid;
	__u32 state;
	__u32 epoch;
	__u32 attempts;
	__u32 max_attempts;
	__u32 repairs;
	__s32 last_error;
	__u64 retx_msgs;
	__u64 retx_bytes;
	__u64 recover_ns;
	__u32 block_size;
	__u32 dev;
	__u32 block_held;
	__u32 lease;
};

/* rmsg_chan_list.flags: every endpoint the caller may see, not just its own */
#define RMSG_CHAN_LIST_F_ALL	(1U << 0)
/* rmsg_chan_list.flags: @chans holds struct rmsg_chan_info_addrs entries */
#define RMSG_CHAN_LIST_F_ADDRS	(1U << 1)

/**
 * struct rmsg_chan_info_addrs - a channel with its addresses
 * @info: as without RMSG_CHAN_LIST_F_ADDRS
 * @local: as RMSG_IOC_CHAN_ADDR's; all zero before the first connection
 * @peer: likewise
 */
struct rmsg_chan_info_addrs {
	struct rmsg_chan_info info;
	struct __kernel_sockaddr_storage local;
	struct __kernel_sockaddr_storage peer;
};

/**
 * struct rmsg_chan_list - RMSG_IOC_CHAN_LIST argument
 * @chans: in: user pointer to @capacity struct rmsg_chan_info (with
 *	RMSG_CHAN_LIST_F_ADDRS: struct rmsg_chan_info_addrs)
 * @capacity: in: entries @chans has room for
 * @flags: in: RMSG_CHAN_LIST_F_* bits
 * @filled: out: entries written
 * @total: out: channels there were to show (more than @filled when
 *	@capacity was too small)
 * @ep_id: out: the caller's endpoint id
 * @resv: zero
 *
 * Without RMSG_CHAN_LIST_F_ALL the caller's own endpoint's channels are
 * listed. With it, every endpoint's when the caller has CAP_NET_ADMIN,
 * else those of endpoints its user owns.
 *
 * The list is not an atomic snapshot. Each entry is consistent in itself
 * (read at once, under its endpoint's channel lock), but the kernel reads
 * one endpoint after another, and copies out in batches, dropping its
 * locks in between: a channel that comes, goes or changes state during
 * the call may or may not be listed, and entries of two channels may show
 * them at different moments (recover_ns is counted to the start of the
 * call for all). What holds: entries come in ascending order of (@ep_id,
 * @channel), none twice, and each was true at some moment during the
 * call. @total counts what the call walked past, so a second call may
 * find more or fewer.
 */
struct rmsg_chan_list {
	__u64 chans;
	__u32 capacity;
	__u32 flags;
	__u32 filled;
	__u32 total;
	__u32 ep_id;
	__u32 resv;
};

/* rmsg_fault.kind */
enum rmsg_fault_kind {
	RMSG_FAULT_QP_ERROR	= 1,	/* move the channel's QP to ERROR */
	RMSG_FAULT_DISCONNECT	= 2,	/* drop its connection, no CLOSE */
	RMSG_FAULT_DEVICE_FATAL	= 3,	/* as if its device reported FATAL */
	RMSG_FAULT_LINK_PROBE	= 4,	/* a carrier: @arg refused HELLOs */
};

/* RMSG_FAULT_LINK_PROBE's @arg at most */
#define RMSG_LINK_PROBE_MAX	65536

/**
 * struct rmsg_fault - RMSG_IOC_FAULT argument: inject a fault
 * @ep_id: the endpoint, 0 for the caller's own
 * @channel: the channel's id in that endpoint
 * @kind: enum rmsg_fault_kind
 * @flags: zero
 * @arg: RMSG_FAULT_LINK_PROBE: how many, 1 to RMSG_LINK_PROBE_MAX; zero for
 *	the others
 *	(named @resv before, which still compiles)
 *
 * RMSG_FAULT_DEVICE_FATAL acts on every channel of the channel's device,
 * of every endpoint: each leaves the device and is repaired.
 *
 * RMSG_FAULT_LINK_PROBE is for a carrier, a channel of the module's own
 * endpoint (the one RMSG_IOC_LINK_LIST names): it sends @arg HELLOs on
 * the link that the peer module refuses (a CONNECT to a port nothing
 * listens on), as fast as the link's credits allow; the link list counts
 * them and their answers. Load for the link's receives and credits, not a
 * fault: the carrier stays open.
 *
 * Errors: ENOENT for no such endpoint or channel, ENOTCONN when the
 * channel is not open, EPERM for another user's endpoint or the module's
 * without CAP_NET_ADMIN, EOPNOTSUPP for a kind the module cannot inject
 * (RMSG_FAULT_LINK_PROBE on a channel that is no carrier), EBUSY with
 * 2^20 probes not sent yet.
 */
struct rmsg_fault {
	__u32 ep_id;
	__u32 channel;
	__u32 kind;
	__u32 flags;
	union {
		__u64 arg;
		__u64 resv;	/* its name before RMSG_FEAT_LINKS */
	};
};

/**
 * struct rmsg_chan_addr - RMSG_IOC_CHAN_ADDR argument: a channel's addresses
 * @channel: in: the channel's id in the caller's endpoint
 * @flags: zero
 * @resv: zero
 * @local: out: this side's address and port of the channel's connection
 * @peer: out: the peer's
 *
 * Those of the connection the channel has now: a repair may move it to
 * another address or device, and the next call shows where it went.
 * A sockaddr_in or sockaddr_in6 each, the rest of the storage zero.
 *
 * Errors: ENOENT for no such channel, ENOTCONN before its first
 * connection, EINVAL for nonzero @flags or @resv.
 */
struct rmsg_chan_addr {
	__u32 channel;
	__u32 flags;
	__u64 resv;
	struct __kernel_sockaddr_storage local;
	struct __kernel_sockaddr_storage peer;
};

#define RMSG_IOC_CHAN_LIST	_IOWR(RMSG_IOC_MAGIC, 0x0b, struct rmsg_chan_list)
#define RMSG_IOC_FAULT		_IOW(RMSG_IOC_MAGIC, 0x0c, struct rmsg_fault)
#define RMSG_IOC_CHAN_ADDR	_IOWR(RMSG_IOC_MAGIC, 0x0d, struct rmsg_chan_addr)

/**
 * struct rmsg_chan_set - RMSG_IOC_CHAN_SET argument: change a channel's
 *	settings
 * @channel: the channel's id in the caller's endpoint
 * @flags: zero
 * @opts: the settings; 0 in a field leaves it as it is
 *
 * A channel in any state but ending takes them. A heartbeat period given
 * to an open channel takes effect at once: the period under way is dropped
 * and the next heartbeat comes a new period from now (RMSG_OPT_OFF stops
 * them). A quiet period under way keeps its old length, the next one has
 * the new. A repair under way keeps its deadline. Errors: ENOENT for no
 * such channel, EALREADY for one that is ending, EINVAL for a value out of
 * range or nonzero @flags or @opts.resv.
 */
struct rmsg_chan_set {
	__u32 channel;
	__u32 flags;
	struct rmsg_chan_opts opts;
};

#define RMSG_IOC_CHAN_SET	_IOW(RMSG_IOC_MAGIC, 0x0e, struct rmsg_chan_set)

/* rmsg_link_info.flags: this side dialled the carrier (else the peer did) */
#define RMSG_LINK_INFO_F_DIALLED	(1U << 0)

/**
 * struct rmsg_link_info - one of the module's links to another rmsg kernel
 * @peer: the peer node's address, its port 0
 * @ep_id: the module's endpoint, whose channel @channel carries the link
 * @channel: the carrier's id in that endpoint
 * @state: enum rmsg_chan_info_state of the carrier; 0 while the link has
 *	none (a dial that failed waits before the next), and then @channel
 *	and the counters are 0 too
 * @flags: RMSG_LINK_INFO_F_* bits
 * @sent: link messages this side sent, over the carrier's life (its
 *	own control messages not included)
 * @received: link messages that arrived
 * @lcredit_sent: LCREDITs among @sent (receives announced)
 * @lcredit_received: LCREDITs among @received
 * @refused_sent: REFUSEs among @sent (answers to the peer's HELLOs)
 * @refused_received: REFUSEs among @received
 * @probes_left: RMSG_FAULT_LINK_PROBE HELLOs not sent yet
 * @dropped: messages for a channel this side does not have
 * @channels: channels on the link now, this side's ends: those opened on
 *	this side's carrier of the link (the one @channel names)
 * @channels_total: channels that were ever on it, over the carrier's life
 * @accepts_refused: the peer's channel openings refused because the
 *	carrier was already setting up as many as it takes at once
 * @resv: zero
 */
struct rmsg_link_info {
	struct __kernel_sockaddr_storage peer;
	__u32 ep_id;
	__u32 channel;
	__u32 state;
	__u32 flags;
	__u64 sent;
	__u64 received;
	__u64 lcredit_sent;
	__u64 lcredit_received;
	__u64 refused_sent;
	__u64 refused_received;
	__u64 probes_left;
	__u64 dropped;
	__u32 channels;
	__u32 channels_total;
	__u64 accepts_refused;
	__u64 resv[2];
};

/**
 * struct rmsg_link_list - RMSG_IOC_LINK_LIST argument
 * @links: in: user pointer to @capacity struct rmsg_link_info
 * @capacity: in: entries @links has room for (0: just count)
 * @flags: in: zero
 * @filled: out: entries written
 * @total: out: links there were (more than @filled when @capacity was
 *	too small)
 * @resv: zero
 *
 * The module's links (the link_port module parameter), for an
 * administrator: EPERM without CAP_NET_ADMIN. None while links are off.
 * One snapshot of the links; each entry's counters are read at once.
 * Errors: EINVAL for nonzero @flags or @resv, EFAULT for a bad pointer.
 */
struct rmsg_link_list {
	__u64 links;
	__u32 capacity;
	__u32 flags;
	__u32 filled;
	__u32 total;
	__u64 resv;
};

#define RMSG_IOC_LINK_LIST	_IOWR(RMSG_IOC_MAGIC, 0x0f, struct rmsg_link_list)

/* Ids one RMSG_IOC_CHAN_DROP takes at most */
#define RMSG_CHAN_DROP_MAX	1024

/**
 * struct rmsg_chan_drop - RMSG_IOC_CHAN_DROP argument: let go of channels
 *	in the block window (RMSG_FEAT_BLOCK_WINDOW)
 * @ids: in: user pointer to @count __u32 channel ids
 * @count: in: ids at @ids, at most RMSG_CHAN_DROP_MAX
 * @flags: in: zero
 * @done: out: ids the call acted on
 * @resv: in: zero
 *
 * For each id: one held after its channel's end (RMSG_CQE_F_WINDOW) is
 * let go of, its slot reads as zero from now on, and the id is held back
 * as any ended channel's is; a channel that is still alive, with its
 * block in the window, holds nothing at its end (its slot is cleared
 * then). Other ids are skipped. Errors: EINVAL for nonzero @flags or
 * @resv or @count too large, EFAULT for a bad pointer (nothing done).
 */
struct rmsg_chan_drop {
	__u64 ids;
	__u32 count;
	__u32 flags;
	__u32 done;
	__u32 resv;
};

#define RMSG_IOC_CHAN_DROP	_IOWR(RMSG_IOC_MAGIC, 0x10, struct rmsg_chan_drop)

#endif /* _UAPI_RDMA_RMSG_H */
