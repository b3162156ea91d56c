/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg: the user library of rmsg.
 *
 * Functions return 0 or a non-negative value on success and a negative errno
 * on failure; they never set errno as their way of reporting.
 */
#ifndef _RMSG_LIB_H
#define _RMSG_LIB_H

#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <sys/socket.h>
#include <rdma/rmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rmsg_open_device() - open /dev/rmsg
 *
 * Return: a file descriptor (close-on-exec) or a negative errno.
 */
int rmsg_open_device(void);

/**
 * rmsg_query_version() - the running module's ABI version and features
 * @fd: a /dev/rmsg file descriptor
 * @ver: filled in
 *
 * Return: 0, -EPROTO when the module's ABI is not the one this library was
 * built for (@ver is filled in all the same), or another negative errno.
 */
int rmsg_query_version(int fd, struct rmsg_version *ver);

/**
 * rmsg_query_devices() - the RDMA devices rmsg sees
 * @fd: a /dev/rmsg file descriptor
 * @devs: set to an array the caller releases with free()
 * @generation: if not NULL, set to the device list's generation
 *
 * The list is one consistent snapshot of the devices rmsg sees.
 *
 * Return: the number of devices (0 or more) or a negative errno.
 */
int rmsg_query_devices(int fd, struct rmsg_dev_info **devs,
		       unsigned int *generation);

/* Names for the enum values of <rdma/rmsg.h>, "?" for unknown ones. */
const char *rmsg_port_state_name(unsigned int state);
const char *rmsg_port_phys_state_name(unsigned int phys_state);
const char *rmsg_port_protocol_name(unsigned int protocol);

/*
 * Endpoints: one open /dev/rmsg with its mapped submission ring (SQ) and
 * completion ring (CQ). <rdma/rmsg.h> has the ABI and the barrier pairing
 * (A to D) the helpers below follow. An endpoint is not thread-safe: one
 * thread produces SQEs and one consumes CQEs (the same or two), or the
 * caller locks.
 */

/**
 * struct rmsg_ring_view - the program's view of one mapped ring
 * @producer: producer index in the mapping
 * @consumer: consumer index in the mapping
 * @flags: flags word in the mapping
 * @descs: descriptor array in the mapping
 * @mask: entries - 1
 * @entries: ring size, a power of two
 * @cached_prod: SQ: the next SQE to hand out (published by
 *	rmsg_sq_submit()); CQ: the last producer index read from the kernel
 * @cached_cons: SQ: the last consumer index read from the kernel; CQ: the
 *	next CQE to consume (published by rmsg_cq_advance())
 * @map: the mapping
 * @map_size: its length
 */
struct rmsg_ring_view {
	__u32 *producer;
	__u32 *consumer;
	__u32 *flags;
	void *descs;
	__u32 mask;
	__u32 entries;
	__u32 cached_prod;
	__u32 cached_cons;
	void *map;
	size_t map_size;
};

/**
 * struct rmsg_ep - an endpoint
 * @fd: its /dev/rmsg file descriptor
 * @sq: submission ring
 * @cq: completion ring
 */
struct rmsg_ep {
	int fd;
	struct rmsg_ring_view sq;
	struct rmsg_ring_view cq;
};

/**
 * rmsg_ep_open() - open an endpoint and map its rings
 * @ep: filled in
 * @sq_entries: SQ size (rounded up to a power of two by the kernel)
 * @cq_entries: CQ size, 0 for twice the SQ size
 *
 * Return: 0 or a negative errno (@ep is then unusable).
 */
int rmsg_ep_open(struct rmsg_ep *ep, unsigned int sq_entries,
		 unsigned int cq_entries);

/**
 * rmsg_ep_open_setup() - rmsg_ep_open() with every setup parameter
 * @ep: filled in
 * @p: in: sq_entries, cq_entries, flags (RMSG_EP_F_*) and sqpoll_idle_ms,
 *	the rest zero; out: what RMSG_IOC_EP_SETUP reports (sizes, features)
 *
 * With RMSG_EP_F_SQPOLL a kernel thread takes the SQEs: rmsg_sq_submit()
 * returns 0 while it polls and the program need not call rmsg_ep_enter().
 * A program waiting for CQEs should still call rmsg_sq_submit() now and
 * then (cheap), and enter when it returns non-zero: the poller may have
 * gone to sleep, e.g. with SQEs left behind a full CQ.
 *
 * Return: 0 or a negative errno (@ep is then unusable).
 */
int rmsg_ep_open_setup(struct rmsg_ep *ep, struct rmsg_ep_setup *p);

/* Unmap the rings and close the endpoint. */
void rmsg_ep_close(struct rmsg_ep *ep);

/**
 * rmsg_ep_enter() - let the kernel take SQEs and/or wait for CQEs
 * @ep: the endpoint
 * @to_submit: take up to this many published SQEs
 * @min_complete: with RMSG_ENTER_GETEVENTS, wait for this many CQEs
 * @flags: RMSG_ENTER_* bits
 *
 * Return: the number of SQEs taken, or a negative errno: -EBUSY (the CQ is
 * full: consume CQEs first), -EINTR (a signal ended the wait), -EINVAL.
 */
int rmsg_ep_enter(struct rmsg_ep *ep, unsigned int to_submit,
		  unsigned int min_complete, unsigned int flags);

/**
 * rmsg_ep_listen() - accept channels on an address
 * @ep: an open endpoint
 * @addr: a struct sockaddr_in or sockaddr_in6; port 0 picks a free port,
 *	which is written back into @addr
 * @addrlen: its length
 * @user_data: carried by the events of accepted channels
 * @block_size: receive block of accepted channels; 0 for the default
 *
 * Each accepted channel is reported by an RMSG_CQE_ACCEPTED event.
 *
 * Return: 0 or a negative errno.
 */
int rmsg_ep_listen(struct rmsg_ep *ep, struct sockaddr *addr,
		   socklen_t addrlen, uint64_t user_data, uint32_t block_size);

/**
 * rmsg_ep_connect() - start connecting a channel
 * @ep: an open endpoint
 * @addr: the peer's address
 * @addrlen: its length
 * @user_data: carried by the channel's events
 * @block_size: this side's receive block; 0 for the default
 *
 * The outcome is an RMSG_CQE_CONNECTED event for the returned channel.
 *
 * Return: the channel's id (0 or more) or a negative errno.
 */
int rmsg_ep_connect(struct rmsg_ep *ep, const struct sockaddr *addr,
		    socklen_t addrlen, uint64_t user_data,
		    uint32_t block_size);

/**
 * rmsg_ep_close_channel() - end a channel
 * @ep: the endpoint
 * @channel: the channel's id
 * @flags: RMSG_CLOSE_ABORT to skip telling the peer
 *
 * The end is reported by the channel's RMSG_CQE_CLOSED event (or its
 * RMSG_CQE_CONNECTED, with an error, if it was not open yet).
 *
 * Return: 0 or a negative errno.
 */
int rmsg_ep_close_channel(struct rmsg_ep *ep, uint32_t channel,
			  unsigned int flags);

/**
 * rmsg_sq_get_sqe() - the next free SQE, zeroed
 * @ep: the endpoint
 *
 * Return: an SQE to fill in, or NULL when the SQ is full. It goes to the
 * kernel with the next rmsg_sq_submit().
 */
static inline struct rmsg_sqe *rmsg_sq_get_sqe(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *sq = &ep->sq;
	struct rmsg_sqe *sqe;

	if (sq->cached_prod - sq->cached_cons >= sq->entries) {
		/* D: the kernel has read the SQEs before its consumer. */
		sq->cached_cons = __atomic_load_n(sq->consumer,
						  __ATOMIC_ACQUIRE);
		if (sq->cached_prod - sq->cached_cons >= sq->entries)
			return NULL;
	}
	sqe = (struct rmsg_sqe *)sq->descs + (sq->cached_prod++ & sq->mask);
	memset(sqe, 0, sizeof(*sqe));
	return sqe;
}

/**
 * rmsg_sq_submit() - publish the SQEs handed out so far
 * @ep: the endpoint
 *
 * Return: 0 when the kernel will take them by itself, else the number of
 * SQEs it has not taken yet: pass it as to_submit to rmsg_ep_enter().
 */
static inline unsigned int rmsg_sq_submit(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *sq = &ep->sq;

	/* A: the SQEs are written before the producer publishes them. */
	__atomic_store_n(sq->producer, sq->cached_prod, __ATOMIC_RELEASE);
	/*
	 * B: a store followed by a load needs a full barrier, or the flags
	 * load may pass the producer store and a poller falling asleep
	 * would miss these SQEs (liburing #541).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(sq->flags, __ATOMIC_RELAXED) &
	      RMSG_SQ_NEED_WAKEUP))
		return 0;
	return sq->cached_prod - __atomic_load_n(sq->consumer,
						 __ATOMIC_ACQUIRE);
}

/* CQEs ready to be consumed. */
static inline unsigned int rmsg_cq_ready(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *cq = &ep->cq;

	/* C: the CQEs are written before the producer that publishes them. */
	cq->cached_prod = __atomic_load_n(cq->producer, __ATOMIC_ACQUIRE);
	return cq->cached_prod - cq->cached_cons;
}

/**
 * rmsg_cq_peek() - the next CQE, not yet consumed
 * @ep: the endpoint
 *
 * Return: the CQE, or NULL when none is ready. It stays valid until
 * rmsg_cq_advance() passes it.
 */
static inline struct rmsg_cqe *rmsg_cq_peek(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *cq = &ep->cq;

	if (cq->cached_prod == cq->cached_cons && !rmsg_cq_ready(ep))
		return NULL;
	return (struct rmsg_cqe *)cq->descs + (cq->cached_cons & cq->mask);
}

/**
 * rmsg_cq_advance() - consume @n CQEs (at most rmsg_cq_ready() of them)
 * @ep: the endpoint
 * @n: how many
 */
static inline void rmsg_cq_advance(struct rmsg_ep *ep, unsigned int n)
{
	struct rmsg_ring_view *cq = &ep->cq;

	cq->cached_cons += n;
	/* D: the CQEs are read before their slots go back to the kernel. */
	__atomic_store_n(cq->consumer, cq->cached_cons, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif

#endif /* _RMSG_LIB_H */
