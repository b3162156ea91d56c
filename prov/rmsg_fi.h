/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg-fi.so: the libfabric provider "rmsg" (Documentation/libfabric.rst).
 *
 * Objects: one fabric, one domain, address vectors, completion queues,
 * event queues, reliable-datagram endpoints (FI_EP_RDM), each one librmsg
 * endpoint with a listener, and connected endpoints (FI_EP_MSG), each
 * one channel: of a librmsg endpoint of its own (fi_connect()), or of the
 * passive endpoint's it was accepted from.
 * Files: rmsg_fi.c (the provider, fabric, domain, AV),
 * rmsg_fi_cq.c (completion queues), rmsg_fi_ep.c (endpoints: peers,
 * channels, progress), rmsg_fi_msg.c (sends, receives, matching),
 * rmsg_fi_cm.c (event queues, passive endpoints, connection management)
 * and rmsg_fi_dump.c (an endpoint's state on SIGUSR2, FI_RMSG_DUMP).
 *
 * Locking: every object of a fabric takes the fabric's one mutex, so
 * FI_THREAD_SAFE holds; librmsg's endpoints are used only under it. One
 * mutex for the fabric rather than one a domain: a passive endpoint and
 * an EQ belong to no domain, and the endpoints accepted from one passive
 * endpoint share its librmsg endpoint whatever their domains.
 */
#ifndef RMSG_FI_H
#define RMSG_FI_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <rmsg.h>

#define RFI_NAME		"rmsg"
#define RFI_VERSION		FI_VERSION(0, 1)
/* fi_getinfo() skips providers older than the version asked for. */
#define RFI_FI_VERSION		FI_VERSION(1, 17)

#define RFI_CAPS	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM | FI_DIRECTED_RECV | \
			 FI_SOURCE)
/*
 * And those given only when asked for: FI_SOURCE_ERR turns the
 * completion of a message from a peer not in the AV into an error.
 */
#define RFI_CAPS_ASKED	(RFI_CAPS | FI_SOURCE_ERR)
/*
 * A connected endpoint's (FI_EP_MSG): no addresses to direct a receive
 * to or to name a source by, as its one peer is the channel's.
 */
#define RFI_MSG_CAPS	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM)
/* Sends of at most this many bytes may be injected (copied at once). */
#define RFI_INJECT_SIZE	4096
/*
 * The completion levels no send of rmsg's can honour: an eager send
 * completes once the kernel holds its bytes (copied into the channel's
 * shadow, delivered exactly once across repairs or the channel fails), not
 * once the peer processed them. Hints asking for one as a default match
 * nothing; a call asking for one is refused (-FI_EBADFLAGS).
 * FI_TRANSMIT_COMPLETE is taken, as fi_pingpong's last send asks for it:
 * Documentation/libfabric.rst, "Operation flags", says what it means here.
 */
#define RFI_TX_COMPLETIONS_NOT_GIVEN	(FI_DELIVERY_COMPLETE | \
					 FI_MATCH_COMPLETE | \
					 FI_COMMIT_COMPLETE)
/*
 * Injected payloads up to this size travel in the operation itself, and
 * up to RFI_OP_CACHE freed operations wait on their endpoint for the next
 * post: a small send or receive then costs no allocation at all.
 */
#define RFI_OP_SMALL	64
#define RFI_OP_CACHE	256
#define RFI_QUEUE_SIZE	1024

extern struct fi_provider rfi_prov;

#define RFI_WARN(fmt, ...) \
	FI_WARN(&rfi_prov, FI_LOG_CORE, fmt, ##__VA_ARGS__)
#define RFI_DBG(fmt, ...) \
	FI_DBG(&rfi_prov, FI_LOG_CORE, fmt, ##__VA_ARGS__)

/*
 * What goes first in every message of a channel: a message, a tagged
 * message, or the sender's name (the first message of a channel its
 * connecting side opened). With RFI_F_RNDV the payload is the channel's
 * next message, a rendezvous one; else it follows the header in this one.
 */
enum rfi_kind {
	RFI_HELLO	= 1,
	RFI_MSG		= 2,
	RFI_TAGGED	= 3,
	RFI_LAST	= 4,	/* nothing more on this channel: see RFI_MOVED */
	RFI_MOVED	= 5,	/* the LAST was read: send on this channel now */
};

#define RFI_F_DATA	(1U << 0)	/* @data is remote CQ data */
#define RFI_F_RNDV	(1U << 1)	/* the payload comes as the next message */

struct rfi_hdr {
	uint8_t kind;
	uint8_t flags;
	uint16_t resv;
	uint32_t len;
	uint64_t tag;
	uint64_t data;
	uint64_t resv2;
};

struct rfi_domain;
struct rfi_ep;

struct rfi_fabric {
	struct fid_fabric fabric;
	pthread_mutex_t lock;	/* recursive: see the top of this file */
};

/* An event of an EQ, as it keeps it until read. */
struct rfi_eq_event {
	uint32_t event;		/* FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN... */
	bool is_err;		/* @err is the entry (fi_eq_readerr()) */
	union {
		struct fi_eq_cm_entry cm;
		struct fi_eq_err_entry err;
	};
	size_t len;		/* bytes of @cm, or of @written */
	const void *written;	/* fi_eq_write()'s bytes, or NULL */
	struct rfi_eq_event *next;
};

/*
 * An event queue: connection events of the connected endpoints and
 * passive endpoints bound to it, and what fi_eq_write() puts in. Reads
 * progress those (manual progress), and fi_eq_sread() sleeps on @epfd,
 * the epoll set of their librmsg descriptors (FI_GETWAIT).
 */
struct rfi_eq {
	struct fid_eq eq;
	struct rfi_fabric *fab;
	struct rfi_eq_event *head, *tail;
	struct fid **bound;		/* endpoints and passive endpoints */
	unsigned int nbound, bound_cap;
	int epfd;
	enum fi_wait_obj wait_obj;
};

/*
 * A passive endpoint (fi_passive_ep()): from fi_listen() on, a librmsg
 * endpoint that listens with RMSG_LISTEN_F_ACCEPT. Each request becomes
 * an FI_CONNREQ whose info->handle is a struct rfi_connreq; the channel
 * an accept opens stays the listener's (a librmsg channel cannot move to
 * another endpoint), so the endpoint accepted uses @rep and the
 * channel's id, and @owners routes the listener's events and messages to
 * it (rfi_pep_progress()). @refs counts the passive endpoint itself
 * (until fi_close()), its connection requests not answered yet and the
 * endpoints accepted from it: @rep is closed, and the object freed, when
 * the last one goes, so an accepted endpoint outlives its passive one.
 */
struct rfi_pep {
	struct fid_pep pep;
	struct rfi_fabric *fab;
	struct fi_info *info;
	struct rfi_eq *eq;
	struct rmsg_ep *rep;		/* from fi_listen() on */
	struct sockaddr_in name;
	struct rfi_ep **owners;		/* by channel id: accepted endpoints */
	size_t nowners;
	unsigned int refs;
	bool closed;			/* fi_close() was called */
};

/* A connection request, the handle of its FI_CONNREQ's info. */
struct rfi_connreq {
	struct fid fid;			/* FI_CLASS_CONNREQ */
	struct rfi_pep *pep;
	uint32_t chan;
	struct rfi_ep *ep;		/* the endpoint made to answer it */
	/*
	 * fi_accept() answered it. The handle stays valid until its
	 * endpoint closes, so that a program's fi_reject() after it (as
	 * fi_pingpong's error path does) is refused, not a use after free.
	 */
	bool answered;
};

/* Where a connected endpoint is: one way, from the first to the last. */
enum rfi_conn_state {
	RFI_CONN_IDLE,		/* neither fi_connect() nor fi_accept() yet */
	RFI_CONN_OPENING,	/* connecting, or accepting */
	RFI_CONN_OPEN,		/* FI_CONNECTED was reported */
	RFI_CONN_ENDED,		/* shut down, refused or broken */
};

/* A completion, as the CQ keeps it until read. */
struct rfi_comp {
	struct fi_cq_err_entry e;	/* err 0: a success */
	fi_addr_t src;
	/* FI_EADDRNOTAVAIL (FI_SOURCE_ERR): the sender's name, its err_data */
	struct sockaddr_in from;
	bool has_from;
};

struct rfi_cq {
	struct fid_cq cq;
	struct rfi_domain *dom;
	enum fi_cq_format format;
	struct rfi_comp *ring;
	size_t cap, head, count;	/* successes and errors, in order */
	struct rfi_ep **eps;		/* bound endpoints, progressed on read */
	unsigned int neps, eps_cap;
	/*
	 * The CQ's wait object (FI_WAIT_FD, fi_control(FI_GETWAIT)): an
	 * epoll set of its enabled endpoints' librmsg descriptors, readable
	 * once fi_trywait() has armed them and something arrives.
	 */
	int epfd;
	enum fi_wait_obj wait_obj;
	/* The err_data fi_cq_readerr() gives when given no buffer. */
	struct sockaddr_in err_from;
	/*
	 * fi_cq_signal(): @signaled makes the next fi_cq_sread() that finds
	 * nothing return -FI_EAGAIN, and @sigfd, an eventfd in the wait
	 * set, wakes one asleep in it.
	 */
	int sigfd;
	bool signaled;
};

/*
 * An address vector: fi_addr_t i is entry i. An entry names one address
 * for good: a duplicate insert returns the entry already there (one more
 * reference), fi_av_remove() drops a reference, and an entry left with
 * none is removed but keeps its address, so that a later insert of that
 * address gives it back, with its index. Endpoints may then keep what
 * they know of peers and channels by index across a removal. @hash finds
 * an address's entry, live or removed, in O(1).
 */
struct rfi_av {
	struct fid_av av;
	struct rfi_domain *dom;
	enum fi_av_type type;
	struct sockaddr_in *addrs;	/* by fi_addr_t */
	uint32_t *refs;			/* by fi_addr_t; 0: removed */
	size_t n, cap;
	size_t *hash;			/* entry + 1 by address; 0: empty */
	size_t hash_size;		/* a power of two, over 2 * @n */
	uint64_t gen;			/* bumped by every insert and remove */
};

struct rfi_domain {
	struct fid_domain domain;
	struct rfi_fabric *fab;
	/*
	 * The program serializes its calls on the domain and everything in
	 * it (FI_THREAD_DOMAIN, as Open MPI's ofi MTL asks without
	 * MPI_THREAD_MULTIPLE): @lock is not taken. The provider has no
	 * thread of its own.
	 */
	bool serial;
	struct fi_info *info;
};

/* The fabric's lock, for every object of the domain; recursive. */
static inline void rfi_lock(struct rfi_domain *dom)
{
	if (!dom->serial)
		pthread_mutex_lock(&dom->fab->lock);
}

static inline void rfi_unlock(struct rfi_domain *dom)
{
	if (!dom->serial)
		pthread_mutex_unlock(&dom->fab->lock);
}

/* The same for the objects of no domain: EQs and passive endpoints. */
static inline void rfi_fab_lock(struct rfi_fabric *fab)
{
	pthread_mutex_lock(&fab->lock);
}

static inline void rfi_fab_unlock(struct rfi_fabric *fab)
{
	pthread_mutex_unlock(&fab->lock);
}

/*
 * Pieces of a send or receive (tx/rx iov_limit); a send goes to librmsg
 * with one more in front, its header.
 */
#define RFI_IOV_MAX	4

/* An operation posted by the program, until it completes. */
struct rfi_op {
	TAILQ_ENTRY(rfi_op) link;	/* receive: in a posted queue */
	struct rfi_op *next;		/* send: in its peer's queue */
	void *context;
	uint64_t flags;		/* FI_SEND/FI_RECV, FI_MSG/FI_TAGGED, ... */
	struct iovec iov[RFI_IOV_MAX];
	size_t iov_count;
	size_t len;		/* bytes in @iov */
	fi_addr_t addr;		/* send: destination; receive: source or UNSPEC */
	uint64_t tag, ignore, data;
	bool complete;		/* write a completion when done */
	/* send */
	struct rfi_hdr hdr;
	void *copy;		/* an injected or gathered payload */
	unsigned char small[RFI_OP_SMALL];	/* @copy of a small one */
	uint64_t slot;		/* its index in rfi_ep.slots, if slotted */
	bool slotted;
	unsigned int sent;	/* librmsg sends of it made: header, payload */
	unsigned int done;	/* and completed */
	bool queued;		/* in its peer's queue: not all of it sent */
	int err;		/* the first failure, for its completion */
	int prov_err;		/* its errno, when @err does not say it */
	/* receive */
	struct rfi_unexp *claimed;	/* FI_CLAIM: the message it takes */
	struct sockaddr_in from;	/* its sender's name, if @from_named */
	bool from_named;
};

/* A message that came before its receive, or one peeked (FI_PEEK). */
struct rfi_unexp {
	TAILQ_ENTRY(rfi_unexp) link;	/* while @listed */
	struct rfi_hdr hdr;
	fi_addr_t src;
	struct sockaddr_in name;	/* its sender's, if @named */
	bool named;
	void *buf;		/* its payload (a copy), hdr.len bytes */
	bool arrived;		/* rendezvous: its bytes are in @buf */
	bool claimed;
	void *claim_ctx;
	struct rfi_op *waiting;	/* matched before its bytes arrived */
	bool listed;		/* in one of rfi_ep.unexp */
	bool discarded;		/* FI_DISCARD before its bytes arrived */
	/*
	 * Rendezvous, @held: its bytes are still at the sender, the
	 * message unanswered (rfi_chan.held of channel @chan); @retry: a
	 * receive in @waiting found the send queue full, progress tries
	 * again; @lost: the bytes will never come (its channel went, or no
	 * memory for them), the receive that takes it fails, with
	 * @lost_errno (an errno) as its prov_errno.
	 */
	bool held;
	bool retry;
	bool lost;
	int lost_errno;
	uint32_t chan;
};

/*
 * A slot of the endpoint's table of what librmsg is doing for it: the
 * user_data of each provider send and rendezvous receive names one. Free
 * slots form a list, so taking and giving back one costs O(1).
 */
enum rfi_slot_kind {
	RFI_SLOT_FREE,
	RFI_SLOT_OP,		/* a send, or a receive into its own buffer */
	RFI_SLOT_EARLY,		/* a message read before its receive came */
};

struct rfi_slot {
	enum rfi_slot_kind kind;
	union {
		struct rfi_op *op;
		struct rfi_unexp *early;
		size_t next_free;	/* the next free slot, or nslots */
	};
};

/* A peer this endpoint talks with, by address vector entry. */
struct rfi_peer {
	struct sockaddr_in name;
	int chan;		/* the channel sends take; -1: none yet */
	bool open;		/* it is open (CONNECTED, or ACCEPTED + hello) */
	bool ours;		/* this side opened it (a hello is due) */
	size_t max_eager;	/* payload bytes that go with their header */
	struct rfi_op *queue, *queue_tail;	/* sends waiting for it */
	size_t backlog_next;	/* the next peer of rfi_ep.backlog */
	bool in_backlog;
	/*
	 * Our channel opened at once with one the peer opened to us: its
	 * hello is held back until @greet_at (CLOCK_MONOTONIC, ns) for the
	 * peer's, which would let us give ours up (rfi_greet_later()).
	 */
	bool greet_later;
	uint64_t greet_at;
	/*
	 * Both endpoints opened and greeted a channel to the other: the one
	 * of the greater name moves its sends to the peer's channel
	 * @move_to (rfi_move()): a LAST on its own first (@last_sent; sends
	 * queue from then on), then, once the peer has read everything
	 * before it and says so (RFI_MOVED), the peer's channel. -1: none.
	 */
	int move_to;
	bool last_sent;
};

/*
 * What the endpoint knows of each librmsg channel, by id. The kernel
 * frees a channel's id before it reports the channel's end, so a connect
 * may be given the id of a channel whose end is still to come; the
 * user_data of every event tells the two apart (rfi_chan_take(),
 * rfi_event_stale()).
 */
struct rfi_chan {
	bool used;		/* a channel has this id: @ud is its */
	uint64_t ud;		/* the user_data its events carry */
	bool named;		/* its peer's name is known */
	struct sockaddr_in name;
	fi_addr_t src;		/* the AV entry of that name, or FI_ADDR_NOTAVAIL */
	uint64_t src_gen;	/* rfi_av.gen when @src was looked up */
	struct rfi_hdr pending;	/* a header whose payload is the next message */
	bool has_pending;
	/*
	 * A rendezvous message that came before any receive matched it,
	 * not answered yet (rfi_unexp.held): its bytes are read straight
	 * into the receive that takes it, no copy. Answers go in a
	 * channel's order and releasing a later message would discard it,
	 * so the releases of the channel's later messages wait with it
	 * (@release, when @release_due), and it is read into memory of the
	 * provider's once the channel needs it answered: another rendezvous
	 * message came, or RFI_HELD_BYTES of the block are held back.
	 */
	struct rfi_unexp *held;
	struct rmsg_msg held_msg;
	struct rmsg_msg release;
	bool release_due;
};

/* Bytes of a receive block a held rendezvous message may keep back. */
#define RFI_HELD_BYTES	8192

#define RFI_NO_PEER	SIZE_MAX

struct rfi_ep {
	struct fid_ep ep;
	struct rfi_domain *dom;
	struct fi_info *info;
	struct rmsg_ep *rep;		/* from fi_enable() on; NULL before */
	bool enabled;
	/* FI_RMSG_BLOCK_SIZE (0: the module's), _RNDV_THRESHOLD, _SUMMARY */
	uint32_t block_size;
	size_t rndv_threshold;
	bool summary;
	struct sockaddr_in name;
	struct rfi_av *av;
	struct rfi_cq *tx_cq, *rx_cq;
	uint64_t tx_flags, rx_flags;	/* bind flags: FI_SELECTIVE_COMPLETION */
	uint64_t caps;
	struct rfi_peer *peers;		/* by fi_addr_t */
	size_t npeers;
	struct rfi_chan *chans;		/* by librmsg channel id */
	size_t nchans;
	/*
	 * Receives in the order posted and messages in the order they
	 * came, [0] FI_MSG and [1] FI_TAGGED: appended at the tail in O(1),
	 * taken from anywhere when matched.
	 */
	TAILQ_HEAD(rfi_op_queue, rfi_op) posted[2];
	TAILQ_HEAD(rfi_unexp_queue, rfi_unexp) unexp[2];
	struct rfi_slot *slots;		/* by librmsg user_data index */
	struct rfi_op *op_cache;	/* freed operations, by ->next */
	size_t op_cached;
	size_t nslots, free_slot;
	/*
	 * Peers (by index: rfi_peer() may move the array) whose queue
	 * librmsg refused for want of room, for progress to retry; a
	 * list, so that progress does not look at every peer.
	 */
	size_t backlog;			/* RFI_NO_PEER: none */
	/*
	 * Rendezvous messages read straight into a posted receive, and
	 * those read into a buffer of the provider's first (no receive
	 * posted yet, or one it cannot take): for the log at close.
	 */
	uint64_t rndv_direct, rndv_bounced, rndv_bounced_bytes;
	/* Channels this endpoint opened, and those it closed unopened. */
	uint64_t chans_opened, chans_given_up;
	uint16_t connects;		/* in each connect's user_data */
	size_t greets_due;		/* peers with greet_later set */
	size_t held_retry;		/* held messages with ->retry set */
	/*
	 * The last eager message progress took, released by the next
	 * progress (rfi_release_flush()) rather than between its arrival
	 * and the program's completion.
	 */
	struct rmsg_msg release_next;
	bool release_next_due;
	unsigned int dump_gen;		/* rfi_dump_asked() at its last dump */
	/*
	 * FI_EP_MSG (@connected): one peer, peers[0], whose channel is
	 * the connection. An endpoint accepted from passive endpoint @pep
	 * uses its librmsg endpoint (@rep is @pep's, and not closed here)
	 * and holds a reference to it; @connreq is the request it answers
	 * until fi_accept(). @eq takes its connection events.
	 */
	bool connected;
	enum rfi_conn_state conn;
	struct rfi_pep *pep;
	struct rfi_connreq *connreq;
	struct rfi_eq *eq;
};

/* The fi_ops of an object with its close, bind and control. */
#define RFI_FI_OPS_BIND(name, close_fn, bind_fn, control_fn)	\
	static struct fi_ops name = {			\
		.size = sizeof(struct fi_ops),		\
		.close = close_fn,			\
		.bind = bind_fn,			\
		.control = control_fn,			\
		.ops_open = rfi_no_ops_open,		\
		.tostr = rfi_no_tostr,			\
		.ops_set = rfi_no_ops_set,		\
	}

/* The fi_ops of an object with nothing but its close. */
#define RFI_FI_OPS(name, close_fn)			\
	RFI_FI_OPS_BIND(name, close_fn, rfi_no_bind, rfi_no_control)

/*
 * fi_control(FI_GETWAIT) of a CQ or an EQ whose wait set is @epfd: the
 * descriptor, for FI_WAIT_FD (or FI_WAIT_UNSPEC, which is one here).
 */
static inline int rfi_getwait(enum fi_wait_obj wait_obj, int epfd,
			      int command, void *arg)
{
	if (command != FI_GETWAIT || !arg)
		return -FI_ENOSYS;
	if (wait_obj != FI_WAIT_FD && wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENODATA;
	*(int *)arg = epfd;
	return 0;
}

/*
 * An errno of librmsg or the kernel (either sign) as libfabric's error
 * code (positive): the same number where fi_errno.h has it, FI_ENOSPC for
 * a user's channel quota (EDQUOT), else FI_EIO. The errno itself goes in
 * a completion's prov_errno.
 */
static inline int rfi_fi_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case FI_EPERM: case FI_ENOENT: case FI_EINTR: case FI_EIO:
	case FI_E2BIG: case FI_EBADF: case FI_EAGAIN: case FI_ENOMEM:
	case FI_EACCES: case FI_EFAULT: case FI_EBUSY: case FI_ENODEV:
	case FI_EINVAL: case FI_EMFILE: case FI_ENOSPC: case FI_ENOSYS:
	case FI_ENOMSG: case FI_ENODATA: case FI_EOVERFLOW: case FI_EMSGSIZE:
	case FI_ENOPROTOOPT: case FI_EOPNOTSUPP: case FI_EADDRINUSE:
	case FI_EADDRNOTAVAIL: case FI_ENETDOWN: case FI_ENETUNREACH:
	case FI_ECONNABORTED: case FI_ECONNRESET: case FI_ENOBUFS:
	case FI_EISCONN: case FI_ENOTCONN: case FI_ESHUTDOWN:
	case FI_ETIMEDOUT: case FI_ECONNREFUSED: case FI_EHOSTDOWN:
	case FI_EHOSTUNREACH: case FI_EALREADY: case FI_EINPROGRESS:
	case FI_EREMOTEIO: case FI_ECANCELED: case FI_EKEYREJECTED:
		return err < 0 ? -err : err;
	case EDQUOT:
		return FI_ENOSPC;
	default:
		return FI_EIO;
	}
}

/* rmsg_fi_cq.c */
int rfi_cq_bind_ep(struct rfi_cq *cq, struct rfi_ep *ep);
int rfi_cq_watch(struct rfi_cq *cq, struct rfi_ep *ep, bool on);
int rfi_cq_trywait(struct rfi_cq *cq);

/* rmsg_fi.c */
int rfi_local_addr(struct sockaddr_in *sin);
int rfi_params(uint32_t *block_size, size_t *rndv_threshold, bool *summary);
const char *rfi_strerror(int prov_errno, char *buf, size_t len);
void rfi_deadline(struct timespec *end, int timeout);
int rfi_ms_left(const struct timespec *end);
int rfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int rfi_no_control(struct fid *fid, int command, void *arg);
int rfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int rfi_no_tostr(const struct fid *fid, char *buf, size_t len);
int rfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context);
int rfi_no_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen);
int rfi_no_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen);
int rfi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		  struct fid_ep **tx_ep, void *context);
int rfi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context);
int rfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int rfi_av_addr(struct rfi_av *av, fi_addr_t addr, struct sockaddr_in *sin);
fi_addr_t rfi_av_find(struct rfi_av *av, const struct sockaddr_in *sin);

/* rmsg_fi_cq.c */
int rfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int rfi_cq_push(struct rfi_cq *cq, const struct fi_cq_err_entry *e,
		fi_addr_t src, const struct sockaddr_in *from);

/* rmsg_fi_msg.c: the endpoints' operation tables */
extern struct fi_ops_msg rfi_msg_ops;
extern struct fi_ops_tagged rfi_tagged_ops;
extern struct fi_ops_rma rfi_rma_ops;
extern struct fi_ops_atomic rfi_atomic_ops;
extern struct fi_ops_collective rfi_collective_ops;

/* rmsg_fi_ep.c */
int rfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep, void *context);
void rfi_ep_progress(struct rfi_ep *ep);
void rfi_release_flush(struct rfi_ep *ep);
ssize_t rfi_send(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		 fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags,
		 void *context);
ssize_t rfi_inject(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		   fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags);
ssize_t rfi_recv(struct rfi_ep *ep, const struct iovec *iov, size_t count,
		 fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
		 void *context);

/* rmsg_fi_cm.c */
int rfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int rfi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **pep, void *context);
int rfi_eq_report(struct rfi_eq *eq, uint32_t event, struct fid *fid,
		  int err, int prov_errno);
int rfi_eq_bind(struct rfi_eq *eq, struct fid *fid);
void rfi_eq_unbind(struct rfi_eq *eq, struct fid *fid);
int rfi_eq_trywait(struct rfi_eq *eq);
void rfi_pep_request(struct rfi_pep *pep, const struct rmsg_event *ev);
void rfi_pep_put(struct rfi_pep *pep);
void rfi_connreq_free(struct rfi_connreq *cr);
extern struct fi_ops_cm rfi_msg_cm_ops;

/* rmsg_fi_ep.c: connected endpoints */
int rfi_msg_connect(struct rfi_ep *ep, const struct sockaddr_in *dest);
int rfi_msg_accept(struct rfi_ep *ep);
int rfi_msg_shutdown(struct rfi_ep *ep);
void rfi_pep_progress(struct rfi_pep *pep);
void rfi_pep_detach(struct rfi_pep *pep, uint32_t chan);
int rfi_getname(fid_t fid, void *addr, size_t *addrlen);

/* rmsg_fi_dump.c */
extern unsigned int rfi_dump_gen;	/* SIGUSR2s taken */
void rfi_dump_init(void);
void rfi_ep_dump(struct rfi_ep *ep);

/* How many dumps were asked for so far; a new one is due when it moves. */
static inline unsigned int rfi_dump_asked(void)
{
	return __atomic_load_n(&rfi_dump_gen, __ATOMIC_RELAXED);
}

#endif /* RMSG_FI_H */
