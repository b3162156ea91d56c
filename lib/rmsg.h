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
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <rdma/rmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rmsg_node_open() - open /dev/rmsg
 *
 * For the calls that ask the module (rmsg_node_version(),
 * rmsg_node_devices(), rmsg_node_channels(), ...) without an endpoint.
 * Close it with close().
 *
 * Return: a file descriptor (close-on-exec) or a negative errno.
 *
 * Errors:
 * -ENOENT: no /dev/rmsg: the module is not loaded (modprobe rmsg).
 * -EACCES: the module's dev_mode and dev_gid do not let the caller open it.
 * -EMFILE: the process has no descriptor free, or the user holds
 * max_endpoints_per_user open files of /dev/rmsg already.
 *
 * Notes: Each call opens a new descriptor with open(2), which the kernel
 * counts as one of the user's max_endpoints_per_user until it is closed. It
 * has no rings: the calls that take a struct rmsg_ep cannot use it.
 */
int rmsg_node_open(void);

/**
 * rmsg_node_version() - the running module's ABI version and features
 * @fd: a /dev/rmsg file descriptor
 * @ver: filled in
 *
 * Return: 0, or a negative errno.
 *
 * Errors:
 * -EPROTO: the module's ABI is not the one this library was built for
 * (@ver is filled in all the same).
 * -EBADF, -ENOTTY: @fd is not a /dev/rmsg file descriptor.
 *
 * Notes: One ioctl(2) and no library state: safe from any thread.
 * rmsg_ep_open() does not refuse a module of another ABI version (it then
 * asks for no send area, so its sends would fail with -ENOBUFS): a program
 * that wants a clear message calls this first.
 */
int rmsg_node_version(int fd, struct rmsg_version *ver);

/**
 * rmsg_node_devices() - the RDMA devices rmsg sees
 * @fd: a /dev/rmsg file descriptor
 * @devs: set to an array the caller releases with free()
 * @generation: if not NULL, set to the device list's generation
 *
 * The list is one consistent snapshot of the devices rmsg sees.
 *
 * Return: the number of devices (0 or more) or a negative errno.
 *
 * Errors:
 * -ENOMEM: no memory for the array.
 * -EAGAIN: devices came and went through 17 snapshots in a row, none of
 *	which fitted the array the one before had sized; try again.
 * -EBADF, -ENOTTY: @fd is not a /dev/rmsg file descriptor.
 *
 * Notes: The array is the caller's only on success, and NULL when there is
 * no device; on failure @devs is left alone. The call may ask the module
 * more than once, growing the array until one snapshot fits, at most 17
 * times; it takes no lock and is safe from any thread.
 */
int rmsg_node_devices(int fd, struct rmsg_dev_info **devs,
		      unsigned int *generation);

/**
 * rmsg_port_state_name() - a port's state by name
 * @state: rmsg_port_info.state (RMSG_PORT_*)
 *
 * Return: its name ("ACTIVE", ...), "?" for a value this library does not
 * know.
 *
 * Errors: none.
 *
 * Notes: The string is static: do not free or change it. A table lookup: no
 * system call, no lock, safe from any thread.
 */
const char *rmsg_port_state_name(unsigned int state);

/**
 * rmsg_port_phys_state_name() - a port's physical state by name
 * @phys_state: rmsg_port_info.phys_state
 *
 * Return: its name ("LinkUp", "Polling", ...), or "?".
 *
 * Errors: none.
 *
 * Notes: The string is static: do not free or change it. A table lookup: no
 * system call, no lock, safe from any thread; 0 and values above 7 give
 * "?".
 */
const char *rmsg_port_phys_state_name(unsigned int phys_state);

/**
 * rmsg_port_protocol_name() - a port's link protocol by name
 * @protocol: rmsg_port_info.protocol
 *
 * Return: "IB", "RoCE" or "iWARP", or "?".
 *
 * Errors: none.
 *
 * Notes: The string is static: do not free or change it. No system call, no
 * lock, safe from any thread.
 */
const char *rmsg_port_protocol_name(unsigned int protocol);

/*
 * Endpoints: one open /dev/rmsg with its mapped submission ring (SQ) and
 * completion ring (CQ). <rdma/rmsg.h> has the ABI and the barrier pairing
 * (A to D) the helpers below follow. An endpoint is not thread-safe: one
 * thread produces SQEs and one consumes CQEs (the same or two), or the
 * caller locks.
 */

struct rmsg_ep_data;

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
 * struct rmsg_rings - an endpoint's two rings, as the program sees them
 * @sq: submission ring
 * @cq: completion ring
 *
 * struct rmsg_ep is opaque: the library allocates it and may grow it. It
 * begins with its rings, the one part the inline helpers below read, and
 * that stays so for this soname.
 */
struct rmsg_rings {
	struct rmsg_ring_view sq;
	struct rmsg_ring_view cq;
};

struct rmsg_ep;

/**
 * rmsg_ep_rings() - the rings of an endpoint
 * @ep: an open endpoint
 *
 * For programs that drive the rings themselves (the ring API of rmsg(7));
 * a program of the message functions never needs them.
 *
 * Return: its rings, valid until rmsg_ep_close().
 *
 * Errors: none.
 *
 * Notes: No system call and no lock. The helpers that use the rings
 * (rmsg_sq_get_sqe() to rmsg_cq_advance()) never lock, even after
 * rmsg_ep_set_locking(), and the message functions take SQEs from the same
 * SQ and consume the CQ through rmsg_ep_progress(): a program that uses
 * them must not consume CQEs itself.
 */
static inline struct rmsg_rings *rmsg_ep_rings(struct rmsg_ep *ep)
{
	return (struct rmsg_rings *)ep;
}

/**
 * rmsg_ep_fd() - the /dev/rmsg file descriptor of an endpoint
 * @ep: an open endpoint
 *
 * For poll() and epoll: it is readable when the completion ring holds
 * events (after rmsg_ep_arm()). The endpoint owns it: do not close it.
 *
 * Return: the descriptor.
 *
 * Errors: none.
 *
 * Notes: Reads a field: no system call, no lock, safe from any thread.
 * POLLIN means that CQEs wait on the ring, for as long as any is
 * unconsumed, not that a message or an event for the program does: after a
 * wake-up call rmsg_ep_progress() and peek. The descriptor is
 * close-on-exec, and rmsg_ep_close() closes it.
 */
int rmsg_ep_fd(const struct rmsg_ep *ep);

/**
 * rmsg_ep_open() - open an endpoint and map its rings
 * @ep: set to the new endpoint
 * @sq_entries: SQ size, 1 to RMSG_MAX_RING_ENTRIES (rounded up to a power
 *	of two by the kernel); 64 suits most programs
 * @cq_entries: CQ size, 0 for twice the SQ size
 *
 * An endpoint is one open /dev/rmsg with its submission and completion
 * rings and, when the module has the eager data path (RMSG_FEAT_EAGER), a
 * send area of RMSG_LIB_SEND_AREA bytes (1 MiB) for the message
 * functions. Its channels come from rmsg_chan_connect() and
 * rmsg_ep_listen().
 *
 * Return: 0 or a negative errno (@ep is then left alone).
 *
 * Errors:
 * -ENOENT: no /dev/rmsg: the module is not loaded (modprobe rmsg).
 * -EACCES: the caller may not open /dev/rmsg (the module's dev_mode).
 * -EINVAL: @sq_entries is 0 or too large, or @cq_entries is smaller than
 * the SQ or too large.
 * -EMFILE: no descriptor free, or the user's max_endpoints_per_user.
 * -ENOMEM: no memory, or the memory cgroup's limit.
 *
 * Notes: The rings, the send area and the channels' receive blocks are
 * charged to the caller's memory cgroup, not to RLIMIT_MEMLOCK: opening
 * endpoints needs no locked memory (rmsg(7), "Locked memory").
 */
int rmsg_ep_open(struct rmsg_ep **ep, unsigned int sq_entries,
		 unsigned int cq_entries);

/**
 * rmsg_ep_open_setup() - rmsg_ep_open() with every setup parameter
 * @ep: set to the new endpoint
 * @p: in: sq_entries, cq_entries, flags (RMSG_EP_F_*), sqpoll_idle_ms,
 *	stall_ms and send_area_size (RMSG_LIB_SEND_AREA for the message
 *	functions, which need one; 0 for none), the rest zero; out: what
 *	RMSG_IOC_EP_SETUP reports (sizes, features)
 *
 * The fields of @p (struct rmsg_ep_setup) a program sets; every other
 * one must be zero:
 *
 * sq_entries, the SQ's size: 1 to RMSG_MAX_RING_ENTRIES, rounded up to a
 * power of two; 0 is refused (-EINVAL).
 *
 * cq_entries, the CQ's size: 0 for twice the SQ's.
 *
 * send_area_size, the send area the message functions copy eager
 * messages into: RMSG_LIB_SEND_AREA (1 MiB) as rmsg_ep_open() takes, at
 * most RMSG_SEND_AREA_MAX. 0 means none: such an endpoint receives but
 * cannot send (rmsg_msg_send() returns -ENOBUFS). A setup zeroed but for
 * the ring sizes gives such an endpoint.
 *
 * flags: RMSG_EP_F_* bits, below.
 *
 * sqpoll_idle_ms: with RMSG_EP_F_SQPOLL, how long the poller waits for
 * work before it sleeps: 0 for RMSG_SQPOLL_IDLE_DEFAULT_MS (10 ms), at
 * most RMSG_SQPOLL_IDLE_MAX_MS; 0 without the flag.
 *
 * stall_ms: with RMSG_EP_F_STALL_EVENTS, how long a repair stays quiet
 * before RMSG_CQE_STALLED: 0 for the module's repair_quiet_ms; 0 without
 * the flag. struct rmsg_chan_opts sets it per channel.
 *
 * RMSG_EP_F_SQPOLL: a kernel thread takes the SQEs: rmsg_sq_submit()
 * returns 0 while it polls and the program need not call rmsg_ep_enter().
 * A program waiting for CQEs should still call rmsg_sq_submit() now and
 * then (cheap), and enter when it returns non-zero: the poller may have
 * gone to sleep, e.g. with SQEs left behind a full CQ. Any user may ask for
 * one (RMSG_FEAT_SQPOLL_USER); without CAP_SYS_NICE a user has at most the
 * module's sqpoll_per_user at once, and each sleeps after at most
 * sqpoll_user_idle_ms without work.
 *
 * RMSG_EP_F_STALL_EVENTS: a repair that lasts longer than stall_ms is
 * reported (RMSG_CQE_STALLED, then RMSG_CQE_RESUMED or RMSG_CQE_CLOSED);
 * without it a repair is only a delay. RMSG_EP_F_SUMMARY: an arrival
 * summary that makes rmsg_msg_peek_any() cost the same with thousands of
 * channels as with a few.
 *
 * On return @p holds what the module chose: the ring sizes, the send
 * area's size and the module's features (RMSG_FEAT_*).
 *
 * Return: 0 or a negative errno (@ep is then left alone).
 *
 * Errors:
 * -EINVAL: sq_entries 0 or too large, cq_entries out of range, unknown
 * flags, non-zero reserved fields, sqpoll_idle_ms or stall_ms without
 * their flag or too large, send_area_size above RMSG_SEND_AREA_MAX.
 * -EBUSY: RMSG_EP_F_SQPOLL beyond the user's sqpoll_per_user pollers.
 * -EPERM: RMSG_EP_F_SQPOLL without CAP_SYS_NICE while sqpoll_per_user is 0.
 * -ENOENT, -EACCES, -EMFILE, -ENOMEM: as for rmsg_ep_open().
 *
 * Notes: Unlike rmsg_ep_open() it asks for no send area by itself, whatever
 * the module's features: only @p decides. Opening costs open(2), an
 * ioctl(2) and an mmap(2) for each ring, and one more each for a send area
 * and a summary: open endpoints once, not per request.
 */
int rmsg_ep_open_setup(struct rmsg_ep **ep, struct rmsg_ep_setup *p);

/**
 * rmsg_ep_close() - close an endpoint and free it
 * @ep: an endpoint rmsg_ep_open() or rmsg_ep_open_setup() opened, or NULL
 *
 * Unmaps its rings, closes its file and frees @ep. Every channel still there
 * ends as
 * after RMSG_CLOSE_ABORT: its peer sees ECONNRESET (close channels with
 * rmsg_chan_close() and wait for their events for an orderly end),
 * a connection request waiting for an answer is rejected, and every
 * region is unregistered.
 *
 * Return: nothing.
 *
 * Errors: none.
 *
 * Notes: It takes no lock, even after rmsg_ep_set_locking(), and frees the
 * lock too: no other thread may be using @ep or call anything on it
 * afterwards. Pointers the library handed out end with it: rmsg_msg.data of
 * held messages, rmsg_msg_reserve()'s room and rmsg_ep_rings(). Memory of
 * the library's that held a copied rendezvous send still in flight is freed
 * at once; the kernel keeps its pages pinned until the transfer ends.
 */
void rmsg_ep_close(struct rmsg_ep *ep);

/**
 * rmsg_ep_enter() - let the kernel take SQEs and/or wait for CQEs
 * @ep: the endpoint
 * @to_submit: take up to this many published SQEs
 * @min_complete: with RMSG_ENTER_GETEVENTS, wait for this many CQEs
 * @flags: RMSG_ENTER_* bits
 *
 * The ring API's one system call (rmsg(7)); a program of the message
 * functions never calls it.
 *
 * Return: the number of SQEs taken, or a negative errno.
 *
 * Errors:
 * -EBUSY: the CQ is full: consume CQEs first.
 * -EINTR: a signal ended the wait.
 * -EINVAL: unknown @flags, or ring indices the kernel cannot take.
 *
 * Notes: It waits only with RMSG_ENTER_GETEVENTS and more @min_complete
 * than CQEs are ready, or with RMSG_ENTER_LEND while a software device has
 * work pending. An SQE that names memory in no region has that memory
 * pinned as it is taken, so the cost of pinning is paid in this call (or by
 * the poller of RMSG_EP_F_SQPOLL). It takes no lock of the library; when
 * SQEs were taken it succeeds even if the wait is then interrupted.
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
 * Each accepted channel is reported by an RMSG_CQE_ACCEPTED event. One
 * listener per endpoint.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EADDRINUSE: another listener has the address and port.
 * -EADDRNOTAVAIL: no RDMA device has @addr.
 * -EBUSY: the endpoint listens already.
 * -EINVAL: a bad @addrlen, or a @block_size that is not a multiple of 16
 * from RMSG_VB_MIN_BLOCK (4 KiB) to RMSG_VB_MAX_BLOCK (64 MiB).
 * -EAFNOSUPPORT: neither IPv4 nor IPv6.
 *
 * Notes: One ioctl(2) and no library state: safe from any thread. The
 * library asks for the module's default backlog (128 requests waiting) and
 * gives no struct rmsg_chan_opts; change an accepted channel's settings
 * with rmsg_chan_set(). There is no call to stop listening but
 * rmsg_ep_close().
 */
int rmsg_ep_listen(struct rmsg_ep *ep, const struct sockaddr *addr,
		   socklen_t addrlen, uint64_t user_data, uint32_t block_size);

/**
 * rmsg_ep_listen_flags() - rmsg_ep_listen() with RMSG_LISTEN_F_* flags
 * @ep: an open endpoint
 * @addr: as for rmsg_ep_listen()
 * @addrlen: its length
 * @user_data: carried by the events of accepted channels
 * @block_size: receive block of accepted channels; 0 for the default
 * @flags: RMSG_LISTEN_F_ACCEPT to answer each request with
 *	rmsg_chan_accept() after its RMSG_CQE_REQUEST event
 *
 * Return: 0 or a negative errno.
 *
 * Errors: as for rmsg_ep_listen(); -EINVAL for unknown @flags too.
 *
 * Notes: With RMSG_LISTEN_F_ACCEPT nothing opens until the program answers:
 * it must take each RMSG_CQE_REQUEST event through rmsg_ep_progress()
 * (rmsg_ep_accept() sets them aside) and call rmsg_chan_accept(); a request
 * nobody answers stays REQUESTED until it fails. Otherwise as
 * rmsg_ep_listen().
 */
int rmsg_ep_listen_flags(struct rmsg_ep *ep, const struct sockaddr *addr,
			 socklen_t addrlen, uint64_t user_data,
			 uint32_t block_size, unsigned int flags);

/**
 * rmsg_chan_accept() - accept or reject a connection request
 * @ep: the endpoint that listens with RMSG_LISTEN_F_ACCEPT
 * @channel: from the RMSG_CQE_REQUEST event
 * @user_data: for the channel's later events
 * @flags: RMSG_ACCEPT_REJECT to refuse it
 *
 * An accepted channel is reported by RMSG_CQE_ACCEPTED once open.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOENT: no such channel.
 * -EINVAL: the channel awaits no answer, or unknown @flags.
 *
 * Notes: One ioctl(2) that leaves the library's state alone: safe from any
 * thread. The channel is readable only after rmsg_ep_progress(), or
 * rmsg_ep_accept(), has taken its RMSG_CQE_ACCEPTED event; its later events
 * carry @user_data.
 */
int rmsg_chan_accept(struct rmsg_ep *ep, uint32_t channel, uint64_t user_data,
		     unsigned int flags);

/**
 * rmsg_chan_connect() - start connecting a channel
 * @ep: an open endpoint
 * @addr: the peer's address
 * @addrlen: its length
 * @user_data: carried by the channel's events
 * @block_size: this side's receive block; 0 for the default
 *
 * The outcome is an RMSG_CQE_CONNECTED event for the returned channel.
 * The id may be that of a channel that ended before the program read all
 * its events: a CLOSED, or a CONNECTED with another @user_data, still to
 * come for the id is that earlier channel's (tell them by @user_data);
 * the library opens nothing for them, and swallows an earlier channel's
 * RMSG_CQE_ACCEPTED.
 *
 * Return: the channel's id (0 or more) or a negative errno.
 *
 * Errors:
 * -EINVAL: a bad @addrlen or @block_size (as for rmsg_ep_listen()).
 * -EAFNOSUPPORT: neither IPv4 nor IPv6.
 * -EDQUOT: the user has max_channels_per_user channels.
 * -ENOSPC: the endpoint has every channel id in use.
 * -ENOMEM: no memory.
 *
 * Notes: Errors of the connection itself (ECONNREFUSED, EHOSTUNREACH,
 * ETIMEDOUT, ENETUNREACH, ...) come as the res of its RMSG_CQE_CONNECTED.
 * rmsg_chan_dial() connects by host name and waits for the event;
 * otherwise loop on rmsg_ep_progress() and rmsg_ep_wait() until it comes
 * (rmsg(7), "A first program").
 */
int rmsg_chan_connect(struct rmsg_ep *ep, const struct sockaddr *addr,
		      socklen_t addrlen, uint64_t user_data,
		      uint32_t block_size);

/**
 * rmsg_chan_dial() - connect to a host and port, and wait until open
 * @ep: an endpoint with message state (rmsg_ep_open())
 * @host: a host name, or an IPv4 or IPv6 address in text
 * @service: the listener's port, as a number or a service name
 * @user_data: carried by the channel's later events
 * @block_size: this side's receive block; 0 for the default
 *
 * Resolves @host and @service with getaddrinfo(3) and connects to each
 * address it gives, in its order, until a channel opens; the time limit
 * of rmsg_ep_set_timeout() (none by default) covers the whole call. The
 * channel's RMSG_CQE_CONNECTED event is taken by the call; other events
 * that come meanwhile wait, in their order, for rmsg_ep_progress(). A
 * channel still connecting when the time is up is closed.
 *
 * Return: the open channel's id (0 or more) or a negative errno.
 *
 * Errors:
 * -ENOENT: no such host (or no address of it).
 * -EAGAIN: the name service did not answer; the call may be tried again.
 * -EINVAL: @host or @service NULL, an unknown service name, @ep without
 * message state, or a bad @block_size.
 * -ECONNREFUSED, -EHOSTUNREACH, -ENETUNREACH: the last address's
 * connection failed with it (any res of an RMSG_CQE_CONNECTED event, see
 * rmsg_chan_connect()).
 * -ETIMEDOUT: rmsg_ep_set_timeout()'s limit passed, or the last
 * address's connection timed out.
 * -EINTR: a signal ended the wait.
 * -EAFNOSUPPORT: no IPv4 or IPv6 address.
 * -EDQUOT, -ENOSPC, -ENOMEM: as for rmsg_chan_connect().
 *
 * Notes: Do not call rmsg_ep_progress() on @ep from another thread
 * meanwhile: it could take the event the call waits for.
 */
int rmsg_chan_dial(struct rmsg_ep *ep, const char *host, const char *service,
		   uint64_t user_data, uint32_t block_size);

/**
 * rmsg_ep_accept() - wait for the next channel a listener accepted
 * @ep: an endpoint with message state that listens (rmsg_ep_listen())
 * @peer: NULL, or set to the peer's address (all zero if the channel
 *	ended already)
 *
 * Takes the next RMSG_CQE_ACCEPTED event of a channel that opened, as
 * accept(2) takes a connection; the channel's later events carry the
 * listener's user_data. An ACCEPTED event with an error (a channel that
 * failed to open) is consumed and the call waits on. Other events wait,
 * in their order, for rmsg_ep_progress(). The time limit is that of
 * rmsg_ep_set_timeout() (none by default).
 *
 * Return: the channel's id (0 or more) or a negative errno.
 *
 * Errors:
 * -ETIMEDOUT: rmsg_ep_set_timeout()'s limit passed.
 * -EINTR: a signal ended the wait.
 * -EINVAL: @ep has no message state.
 * -ENOMEM: no memory to set the other events aside.
 *
 * Notes: With RMSG_LISTEN_F_ACCEPT the program answers each request
 * (rmsg_chan_accept()) after its RMSG_CQE_REQUEST event, which this call
 * sets aside: call rmsg_ep_progress() for those. Do not call
 * rmsg_ep_progress() from another thread meanwhile.
 */
int rmsg_ep_accept(struct rmsg_ep *ep, struct sockaddr_storage *peer);

/**
 * rmsg_chan_close() - end a channel
 * @ep: the endpoint
 * @channel: the channel's id
 * @flags: RMSG_CLOSE_ABORT to skip telling the peer
 *
 * The end is reported by the channel's RMSG_CQE_CLOSED event (or its
 * RMSG_CQE_CONNECTED, with an error, if it was not open yet). From the
 * call on, rmsg_msg_send() and the other sends on the channel fail with
 * -ENOTCONN; what arrived before the end can still be read.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EALREADY: the program closed the channel before.
 * -ENOTCONN: the channel ended without this program closing it (the
 * peer closed it, died or restarted, or a repair gave up): its
 * RMSG_CQE_CLOSED says how.
 * -ENOENT: the id names no channel the endpoint knows (one whose end the
 * program has taken in full, event and messages, is forgotten).
 * -EINVAL: bad @flags.
 *
 * Notes: Every send of the channel still owed a completion gets it: res
 * 0 for those that reached the peer, the channel's error for the rest.
 * Closing is the only way to end sends in flight; no call cancels one.
 */
int rmsg_chan_close(struct rmsg_ep *ep, uint32_t channel,
		    unsigned int flags);

/**
 * rmsg_chan_addr() - a channel's addresses, as getsockname() and getpeername()
 * @ep: the endpoint
 * @channel: the channel's id
 * @local: NULL, or set to this side's address and port
 * @peer: NULL, or set to the peer's
 *
 * Those of the channel's connection now: after a repair, possibly another
 * address or device than the first connection's.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOENT: no such channel.
 * -ENOTCONN: not connected yet.
 *
 * Notes: One ioctl(2) that leaves the library's state alone: safe from any
 * thread, and cheap enough to ask again after a repair rather than keep the
 * first answer. On failure @local and @peer are left as they were.
 */
int rmsg_chan_addr(struct rmsg_ep *ep, uint32_t channel,
		   struct sockaddr_storage *local,
		   struct sockaddr_storage *peer);

/**
 * rmsg_chan_set() - change a channel's own settings
 * @ep: the endpoint
 * @channel: the channel's id
 * @opts: the settings; 0 in a field leaves it as it is, RMSG_OPT_OFF
 *	switches off a repair or the heartbeat
 *
 * A real-time program may want a channel to give up after 50 ms of
 * repair, or to stall quietly for only 5 ms, while the module's defaults
 * suit the rest (<rdma/rmsg.h>, struct rmsg_chan_opts).
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOENT: no such channel.
 * -EALREADY: the channel is ending.
 * -EINVAL: a value out of range (struct rmsg_chan_opts), or a reserved
 * field not zero.
 *
 * Notes: One ioctl(2) that leaves the library's state alone: safe from any
 * thread. A new heartbeat period takes effect at once (its timer restarts
 * from now); a quiet period or a repair's deadline already running keeps
 * its length.
 */
int rmsg_chan_set(struct rmsg_ep *ep, uint32_t channel,
		  const struct rmsg_chan_opts *opts);

/*
 * Messages (Documentation/messages.rst). On top of the rings, the library
 * keeps a table of the endpoint's channels and a send area: rmsg_ep_open()
 * maps one of RMSG_LIB_SEND_AREA bytes when the module has the eager data
 * path (RMSG_FEAT_EAGER); rmsg_ep_open_setup() maps the one
 * p->send_area_size asks for (none if 0: such an endpoint receives but
 * cannot send).
 *
 * Thread model: an endpoint belongs to one thread at a time and nothing on
 * the data path takes a lock. A program that shares an endpoint between
 * threads calls rmsg_ep_set_locking() first; every function below then
 * takes the endpoint's mutex (the inline ring helpers further down never
 * lock). Separate endpoints need nothing: one per thread is the fast way.
 *
 * Messages of a channel arrive in order, each exactly once, and are read
 * from the receive block in place. The CQEs the program would see on the
 * rings go through rmsg_ep_progress() instead, which does the library's
 * bookkeeping and hands on events; a program using these functions does
 * not consume CQEs itself. The library tags the user_data of the SQEs it
 * submits (the upper 32 bits are 0x726d7367); the program's own SQEs,
 * e.g. NOPs, should not use that value.
 *
 * A module without RMSG_FEAT_EAGER still reports channel events through
 * rmsg_ep_progress(); the send and receive functions return -EOPNOTSUPP.
 */
#define RMSG_LIB_SEND_AREA	(1U << 20)

/**
 * struct rmsg_event - what rmsg_ep_progress() reports
 * @kind: enum rmsg_cqe_kind: RMSG_CQE_OP for the completion of a send
 *	or of rmsg_msg_recv_into() (@user_data as given to rmsg_msg_send(),
 *	rmsg_msg_commit(), rmsg_msg_send_zc() or rmsg_msg_recv_into()),
 *	RMSG_CQE_CONNECTED, _ACCEPTED, _CLOSED or _REQUEST for a channel;
 *	RMSG_CQE_STALLED and _RESUMED for a long repair, on an endpoint
 *	opened with RMSG_EP_F_STALL_EVENTS (rmsg_ep_open_setup()). A kind
 *	the program does not know is best ignored: a later module may add
 *	some, and they are passed on unchanged.
 * @res: 0 or a negative errno; STALLED: the fault that started the
 *	repair (the channel is still alive)
 * @channel: the channel
 * @len: OP: bytes sent (0 when the send failed before it was taken),
 *	rmsg_msg_recv_into(): the message's bytes;
 *	CONNECTED, ACCEPTED: this side's receive block size; REQUEST: the
 *	peer's; STALLED, RESUMED: milliseconds since the fault
 * @user_data: OP: the send's; channel events: the connect's, listen's or
 *	accept's
 */
struct rmsg_event {
	uint32_t kind;
	int32_t res;
	uint32_t channel;
	uint32_t len;
	uint64_t user_data;
};

/**
 * enum rmsg_msg_kind - how a received message's bytes come (rmsg_msg.kind)
 * @RMSG_MSG_EAGER: the bytes are in the receive block, at rmsg_msg.data
 * @RMSG_MSG_RNDV: announced only: the bytes are still in the sender's
 *	memory; take them with rmsg_msg_recv_into() or rmsg_msg_recv(), or
 *	decline them with rmsg_msg_discard()
 *
 * rmsg_msg_recv() takes either kind alike.
 */
enum rmsg_msg_kind {
	RMSG_MSG_EAGER	= 0,	/* the bytes are in the receive block */
	RMSG_MSG_RNDV	= 1,	/* announced only: rmsg_msg_recv_into() them */
};

/**
 * struct rmsg_msg - a received message, in place in the receive block
 * @data: EAGER: its first byte; valid until rmsg_msg_release() of it or of a
 *	later message of the channel, even after the channel closed.
 *	RNDV: NULL
 * @len: its bytes (RNDV: at most RMSG_RNDV_MAX_LEN)
 * @channel: the channel it came on
 * @end: the library's position after it (for rmsg_msg_release())
 * @kind: enum rmsg_msg_kind
 * @cookie: RNDV: the transfer's cookie (the library's business)
 *
 * A rendezvous message (RMSG_MSG_RNDV) is only announced in the receive
 * block: its bytes are still in the sender's memory and come with
 * rmsg_msg_recv_into() (zero copy, into a region), rmsg_msg_recv() (a copy), or
 * not at all with rmsg_msg_discard(). It takes its place in the channel's
 * order like any message.
 */
struct rmsg_msg {
	const void *data;
	uint32_t len;
	uint32_t channel;
	uint32_t end;
	uint32_t kind;
	uint32_t cookie;
};

/**
 * rmsg_ep_set_locking() - make the message functions of @ep thread-safe
 * @ep: the endpoint
 *
 * Call before a second thread uses @ep. From then on every message
 * function (rmsg_ep_progress() to rmsg_msg_recv()) takes a mutex of the
 * endpoint; calling it again does nothing.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOMEM: no memory for the mutex.
 * -EINVAL: @ep has no message state (an endpoint the library could not
 * set up for messages).
 *
 * Notes: Without it an endpoint belongs to one thread at a time, and no
 * call takes a lock. The inline ring helpers (rmsg_sq_get_sqe(),
 * rmsg_cq_peek(), ...) never lock. One endpoint per thread is the fast
 * way; locking is for threads that share one.
 */
int rmsg_ep_set_locking(struct rmsg_ep *ep);

/**
 * rmsg_ep_progress() - take completions and events
 * @ep: the endpoint
 * @ev: room for @max events (may be NULL when @max is 0)
 * @max: events to report at most; 0 to only do the bookkeeping
 *
 * Consumes CQEs in order: a channel that opens gets its receive block
 * mapped, a completed send frees its part of the send area, a closed
 * channel stays readable until its last message is released. What the
 * library itself asked for (READABLE events, failed CREDIT or ARM) is
 * consumed silently. The first CQE that would be an event beyond @max
 * stays on the completion ring, with everything after it, for the next
 * call. Also submits what the library has queued (credit updates that
 * found the SQ full, SQEs a full CQ held back).
 *
 * A call that finds nothing while a rendezvous transfer of @ep is in
 * flight on a software device (Soft-RoCE: RMSG_CQ_SOFT_DEVICE) lends the
 * CPU to the device (RMSG_ENTER_LEND): the call then moves the transfer's
 * bytes itself for as long as the device has work pending on that CPU,
 * instead of busy-polling beside the kernel thread that would. With
 * RMSG_LEND=0 in the environment when the endpoint was opened, it never
 * lends: the call busy-polls, and the device's work runs in its kernel
 * thread (for counting a transfer's instructions apart from the wait).
 *
 * If the library cannot take an open channel on (no memory for its
 * mapping), the CONNECTED or ACCEPTED event carries that error, the
 * library ends the channel and its CLOSED event is not reported.
 *
 * Return: the number of events stored in @ev, or a negative errno.
 *
 * Errors:
 * -EINVAL: @ev is NULL while @max is not 0, or @ep has no message state.
 * -ENOMEM: no memory to take an event on.
 *
 * Notes: Every send completes with one event (kind RMSG_CQE_OP), which
 * the program must take: until it does, the send's room in the send area
 * and its place among the channel's RMSG_CHAN_MAX_PENDING are not free
 * again. A send made with RMSG_SEND_SKIP_SUCCESS has an event only when
 * it fails; any call that takes completions (this one, rmsg_ep_wait(), a
 * waiting send or receive) frees what it held when it succeeds.
 */
int rmsg_ep_progress(struct rmsg_ep *ep, struct rmsg_event *ev,
		     unsigned int max);

/**
 * rmsg_ep_wait() - sleep until a message or an event may be there
 * @ep: the endpoint
 * @timeout_ms: -1 for no limit
 *
 * Returns at once if a message (on any channel) or a CQE for the program
 * is waiting. Otherwise asks the kernel for a wake-up on each open channel
 * (RMSG_OP_ARM, once until it fires), looks again, and sleeps in poll() on
 * rmsg_ep_fd(). Busy-polling programs never arm and take no interrupt. The lock
 * of rmsg_ep_set_locking() is not held while sleeping.
 *
 * A CQE the program leaves unconsumed makes every call return at once:
 * call rmsg_ep_progress() after waking.
 *
 * Return: 1 when something may be ready, 0 on timeout, or a negative errno.
 *
 * Errors:
 * -EINTR: a signal ended the wait.
 * -EINVAL: @ep has no message state.
 *
 * Notes: It reports nothing itself: take events with rmsg_ep_progress() and
 * messages with a peek after it returns, and expect a return of 1 that
 * finds nothing. Even when it returns at once it may enter the kernel:
 * queued RMSG_SEND_MORE sends go first, and arming submits SQEs.
 */
int rmsg_ep_wait(struct rmsg_ep *ep, int timeout_ms);

/**
 * rmsg_ep_arm() - ask for POLLIN on rmsg_ep_fd() when a message arrives
 * @ep: the endpoint
 *
 * For programs that wait in their own poll() or epoll loop: arm, check
 * for messages once more (rmsg_msg_peek_any()), then wait. Each open channel
 * is armed once until its wake-up has been seen by rmsg_ep_progress(). The
 * call costs what changed since the last one (channels opened, wake-ups
 * seen), not the number of channels.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EAGAIN: the SQ had no room for every channel: do not sleep; call
 * rmsg_ep_progress() and try again.
 * -EINVAL: @ep has no message state.
 *
 * Notes: rmsg_ep_fd() becomes readable for messages only after this
 * call, and for events a waiting call (RMSG_MSG_WAIT) set aside never:
 * call rmsg_ep_progress() after any such call before sleeping.
 */
int rmsg_ep_arm(struct rmsg_ep *ep);

/**
 * rmsg_chan_max_msg() - the largest message a channel can send
 * @ep: the endpoint
 * @channel: an open channel
 *
 * What the peer's receive block can take (the aux of the channel's open
 * event), or less if the send area is smaller: the largest eager message.
 * With the default 32 KiB receive block that is 16352 bytes; a block of
 * 128 KiB + 64 or more takes RMSG_VB_MAX_PAYLOAD (65535). rmsg_msg_send()
 * sends larger messages too, by rendezvous.
 *
 * Return: bytes, or a negative errno.
 *
 * Errors:
 * -ENOTCONN: no such channel open.
 *
 * Notes: No system call; takes the endpoint's lock if there is one. The
 * value is fixed while the channel is open (the peer's block at open, and
 * the send area), so asking once per channel is enough. On an endpoint
 * without a send area it still gives the peer's limit, though every send
 * fails with -ENOBUFS.
 */
int rmsg_chan_max_msg(struct rmsg_ep *ep, uint32_t channel);

/* rmsg_msg_send() flags: more sends follow, enter the kernel once for all */
#define RMSG_SEND_MORE	(1u << 0)
/*
 * rmsg_msg_send() and rmsg_msg_recv() flags: instead of -EAGAIN, wait (up
 * to rmsg_ep_set_timeout()'s limit) until the call can be done
 */
#define RMSG_MSG_WAIT	(1u << 1)
/*
 * rmsg_msg_send() and rmsg_msg_sendv() flag: the program's buffer is free
 * when the call returns, whatever the size (a message too large for eager
 * is copied into memory of the library's first)
 */
#define RMSG_SEND_COPY	(1u << 2)
/*
 * Send flag (rmsg_msg_send(), rmsg_msg_sendv(), rmsg_msg_commit(),
 * rmsg_msg_send_zc()): no completion event when the send succeeds; one,
 * with its error, when it fails
 */
#define RMSG_SEND_SKIP_SUCCESS	(1u << 3)


/**
 * rmsg_msg_send() - send a message, by copy or zero copy as fits
 * @ep: the endpoint
 * @channel: an open channel
 * @buf: the message
 * @len: its bytes, at most rmsg_chan_max_msg() (or RMSG_RNDV_MAX_LEN,
 *	see below); 0 is a message too
 * @flags: 0, or any of RMSG_SEND_MORE, RMSG_MSG_WAIT, RMSG_SEND_COPY,
 *	RMSG_SEND_SKIP_SUCCESS
 * @user_data: for the send's completion event
 *
 * A copy (eager): @buf may be reused at once. The completion comes
 * through rmsg_ep_progress(), exactly once, in order with the channel's
 * other sends; res 0 means the message was written into the peer's
 * receive block, or (retention, the default) copied where the kernel
 * writes it again from after a repair: it arrives unless the channel
 * ends with an error (RMSG_CQE_CLOSED). An uncommitted
 * rmsg_msg_reserve() is dropped.
 *
 * When @len is at least rmsg_ep_rndv_threshold(), or above the channel's
 * largest eager message (unless the threshold is SIZE_MAX), and
 * @buf..@buf+@len lies in a region registered with rmsg_reg() on @ep, the
 * message goes as rmsg_msg_send_zc() with flags 0 instead: @buf belongs to
 * the transfer until its completion event, which may come after those of
 * later sends.
 *
 * A message too large for eager from memory in no region goes zero copy
 * too (unless the threshold is SIZE_MAX), up to RMSG_RNDV_MAX_LEN: the
 * kernel pins its pages for this send
 * only (RMSG_FEAT_RNDV_PIN; charged to RLIMIT_MEMLOCK while in flight),
 * and @buf again belongs to the transfer until its completion event.
 * Freeing it meanwhile is safe (the pinned pages outlive the mapping) but
 * sends what they held.
 *
 * With RMSG_SEND_MORE the send is queued and published, but the kernel is
 * not entered for it: a kernel poller (RMSG_EP_F_SQPOLL) takes it at once,
 * otherwise it goes with the next send without the flag, rmsg_ep_flush(),
 * rmsg_ep_progress() or rmsg_ep_wait(), one system call for the whole
 * batch. A batch larger than the SQ is entered in SQ-sized parts. Until
 * one of those calls the peer may not see the message, so a program that
 * waits for an answer must not end its batch with the flag set.
 *
 * With RMSG_MSG_WAIT a send that would return -EAGAIN sleeps until
 * completions make room, as rmsg_msg_recv() does (see there).
 *
 * With RMSG_SEND_COPY the message is copied whatever its size and memory:
 * into the send area up to the largest eager message, else into memory
 * of the library's (malloc()) that goes by rendezvous and is freed at the
 * send's completion. @buf is the program's again when the call returns.
 * It costs a copy of a large message and its memory until the peer took
 * it; the pinned pages of a rendezvous are then the library's, not
 * @buf's.
 *
 * With RMSG_SEND_SKIP_SUCCESS the send's completion event is reported
 * only when it fails (res below 0); a success is consumed by the library
 * (its room freed, its place among RMSG_CHAN_MAX_PENDING given back).
 * For a completion every Nth send, set it on all but the Nth: a
 * channel's eager sends complete in order, so the Nth's event says that
 * the eager sends before it arrived or failed with an event of their own.
 *
 * Return: 0 when the message is taken, or a negative errno. Its outcome
 * comes with its completion event.
 *
 * Errors:
 * -EAGAIN: the send area or the SQ is full, or RMSG_CHAN_MAX_PENDING
 * sends of the channel wait for completion: call rmsg_ep_progress() or
 * rmsg_ep_wait() and send again.
 * -EMSGSIZE: @len above RMSG_RNDV_MAX_LEN (1 GiB), or above the largest
 * eager message when the message cannot go by rendezvous (threshold
 * SIZE_MAX, or a module without RMSG_FEAT_RNDV_PIN).
 * -ENOTCONN: the channel is not open, or closed.
 * -ENOBUFS: the endpoint has no send area (rmsg_ep_open_setup()).
 * -EOPNOTSUPP: a module without the data path (RMSG_FEAT_EAGER).
 * -ETIMEDOUT, -EINTR: with RMSG_MSG_WAIT, instead of -EAGAIN.
 * -EINVAL: unknown @flags.
 *
 * The completion's res: 0 (the message is in the peer's receive block),
 * the channel's error (ECONNRESET, ETIMEDOUT, ...) when it ended first;
 * for a zero-copy send of memory in no region -ENOMEM over
 * RLIMIT_MEMLOCK and -EFAULT for memory not mapped readable.
 *
 * Notes: Which way a message goes decides who owns @buf. A message of at
 * most the largest eager message (rmsg_chan_max_msg(), 16352 bytes with
 * the default block) is copied, unless it lies in a registered region and
 * is at least the rendezvous threshold: @buf is free when the call
 * returns. A larger message, and one of a region at or above the
 * threshold, goes zero copy: @buf belongs to the transfer until its
 * completion event, whatever memory it is in. Both return 0; a program
 * that must not track which happened sends with RMSG_SEND_COPY, and owns
 * @buf again at the return in every case.
 * rmsg_chan_protocol_info() prints the sizes of a channel.
 */
int rmsg_msg_send(struct rmsg_ep *ep, uint32_t channel, const void *buf,
		  size_t len, unsigned int flags, uint64_t user_data);

/* rmsg_msg_sendv(): pieces of one message at most */
#define RMSG_IOV_MAX	64

/**
 * rmsg_msg_sendv() - send one message gathered from pieces
 * @ep: the endpoint
 * @channel: an open channel
 * @iov: the pieces, in order; a piece may be empty
 * @iovcnt: how many, 1 to RMSG_IOV_MAX
 * @flags: as for rmsg_msg_send()
 * @user_data: for the send's completion event
 *
 * The peer gets one message of all the pieces' bytes. The rules of
 * rmsg_msg_send() pick eager or rendezvous by the total length; several pieces
 * are copied either way (into the send area, or for a rendezvous into
 * memory of the library's that the send's completion frees), so they may
 * be reused at once. A single piece is rmsg_msg_send() of it.
 *
 * Return: 0 or a negative errno, as rmsg_msg_send().
 *
 * Errors: those of rmsg_msg_send(), and:
 * -EINVAL: @iovcnt out of range.
 * -EMSGSIZE: more than RMSG_RNDV_MAX_LEN bytes in all.
 * -ENOMEM: no memory to gather a rendezvous message of several pieces.
 *
 * Notes: Several pieces cost a copy of every byte, a large message's
 * too: a header and a large value go zero copy only when they lie in one
 * buffer given to rmsg_msg_send(), and that buffer then belongs to the
 * transfer until the send's completion event (rmsg(7), "Who owns a
 * buffer").
 */
int rmsg_msg_sendv(struct rmsg_ep *ep, uint32_t channel,
		   const struct iovec *iov,
		   int iovcnt, unsigned int flags, uint64_t user_data);

/**
 * rmsg_ep_flush() - enter the kernel for sends queued with RMSG_SEND_MORE
 * @ep: the endpoint
 *
 * Return: 0 (nothing queued is 0 too, without a system call), or a
 * negative errno.
 *
 * Errors:
 * -EINVAL: @ep has no message state.
 *
 * Notes: Takes the endpoint's lock if there is one. Only sends published
 * but not yet taken cost a system call, and none while an RMSG_EP_F_SQPOLL
 * poller is awake. rmsg_ep_progress() and rmsg_ep_wait() flush too, so a
 * program that calls either next need not.
 */
int rmsg_ep_flush(struct rmsg_ep *ep);

/**
 * rmsg_msg_reserve() - room in the send area to build a message in place
 * @ep: the endpoint
 * @channel: an open channel
 * @len: bytes at most, at most rmsg_chan_max_msg()
 * @buf: set to the room, 16-byte aligned
 *
 * The room is given to rmsg_msg_commit() before any other send on @ep: a later
 * rmsg_msg_send() or rmsg_msg_reserve() drops it.
 *
 * Return: 0 or a negative errno.
 *
 * Errors: those of rmsg_msg_send() for an eager message: -EAGAIN,
 * -EMSGSIZE (@len above rmsg_chan_max_msg(): no rendezvous here),
 * -ENOTCONN, -ENOBUFS, -EOPNOTSUPP.
 *
 * Notes: One reservation per endpoint, not per channel: rmsg_msg_send(),
 * rmsg_msg_sendv() and rmsg_msg_reserve() on any channel of @ep, from any
 * thread, drop it, and so does the channel's end; the room may then go to
 * another message, so stop writing it. The room is in the send area, shared
 * with the kernel: building there saves rmsg_msg_send()'s copy. No system
 * call.
 */
int rmsg_msg_reserve(struct rmsg_ep *ep, uint32_t channel, size_t len,
		     void **buf);

/**
 * rmsg_msg_commit() - send what was built in rmsg_msg_reserve()'s room
 * @ep: the endpoint
 * @channel: the channel given to rmsg_msg_reserve()
 * @len: bytes to send, at most what was reserved; the rest of the room
 *	goes back to the send area
 * @flags: 0, or RMSG_SEND_MORE and RMSG_SEND_SKIP_SUCCESS (see
 *	rmsg_msg_send())
 * @user_data: for the send's completion event
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: no reservation for @channel of at least @len bytes, or unknown
 * @flags.
 * -EAGAIN: the SQ is full; the reservation stays: commit again later.
 * -ENOTCONN: the channel closed; the reservation is dropped.
 *
 * Notes: After a success the room belongs to the send until its completion
 * event: do not write it again. -EAGAIN also comes when
 * RMSG_CHAN_MAX_PENDING sends of the channel await completion; the
 * reservation stays either way. Without RMSG_SEND_MORE the commit makes one
 * system call unless a poller runs.
 */
int rmsg_msg_commit(struct rmsg_ep *ep, uint32_t channel, size_t len,
		    unsigned int flags, uint64_t user_data);


/**
 * rmsg_msg_peek() - the next message of a channel, in place (zero copy)
 * @ep: the endpoint
 * @channel: the channel
 * @msg: filled in
 *
 * Peeking again returns the next message, so several may be held at once;
 * they are given back in order with rmsg_msg_release(). Held messages keep
 * their bytes in the receive block: the sender stalls once the block is
 * full of them. A channel's messages stay readable after its CLOSED event
 * until the last one is released.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EAGAIN: no message has arrived.
 * -ENOTCONN: the channel is closed and every message has been read, or
 * there is no such channel.
 * -EPROTO: the block holds something the protocol forbids; the channel is
 * then closed, and later calls return -EPROTO too.
 *
 * Notes: No copy, and no system call while the channel is well: it reads
 * the receive block, mapped read-only (writing to msg->data faults). A
 * channel is readable only once rmsg_ep_progress() or a waiting call
 * (RMSG_MSG_WAIT, rmsg_chan_dial(), rmsg_ep_accept()) has taken its
 * CONNECTED or ACCEPTED event; before, peeking it gives -ENOTCONN.
 */
int rmsg_msg_peek(struct rmsg_ep *ep, uint32_t channel, struct rmsg_msg *msg);

/**
 * rmsg_msg_peek_any() - rmsg_msg_peek() on whichever channel has a message
 * @ep: the endpoint
 * @msg: filled in; msg->channel says which
 *
 * Channels take turns, so a busy one cannot starve the others. Closed
 * channels with messages left are included.
 *
 * Without RMSG_EP_F_SUMMARY (rmsg_ep_open_setup()) the call looks at
 * every open channel, which costs little with a few. With it, the cost
 * does not grow with the number of open channels: the call looks only at
 * channels the arrival summary (RMSG_OFF_SUMMARY) or the library's own
 * events mark, and a call that finds nothing reads a word of summary per
 * 512 channels. One empty call in 16 also looks at one channel in turn
 * whatever the summary says: a message whose summary bytes a peer
 * cleared is found within 16 empty calls per open channel. The peers pay
 * for the summary with two small RDMA WRITEs after each burst of
 * messages they send: worth it from some tens of channels on.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EAGAIN: no channel has a message.
 * -EPROTO: msg->channel broke (as for rmsg_msg_peek()).
 *
 * Notes: As rmsg_msg_peek(): no copy, no system call while the channels are
 * well, and only channels whose open event the library has taken are looked
 * at. With threads sharing @ep (rmsg_ep_set_locking()) each call hands out
 * a different message, but a release by one thread releases the earlier
 * messages of that channel another thread may still hold.
 */
int rmsg_msg_peek_any(struct rmsg_ep *ep, struct rmsg_msg *msg);

/**
 * rmsg_msg_unpeek() - put back the message peeked last on its channel
 * @ep: the endpoint
 * @msg: from rmsg_msg_peek() or rmsg_msg_peek_any(), the last message
 *	peeked on msg->channel
 *
 * The next peek of that channel (rmsg_msg_peek(), rmsg_msg_peek_any(),
 * rmsg_msg_recv()) returns the same message again: for a program that
 * found it cannot take a message yet, and must not let the channel's
 * later messages overtake it. Other channels go on meanwhile.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: @msg is not the channel's last peek, was released or put back
 * already, or is a rendezvous message answered or discarded.
 * -ENOTCONN: the channel is gone.
 *
 * Notes: Only the reading position goes back: releases, credit and the held
 * message's bytes stay as they were, and nothing is sent, so it makes no
 * system call. A rendezvous message put back is answered after it is peeked
 * again.
 */
int rmsg_msg_unpeek(struct rmsg_ep *ep, const struct rmsg_msg *msg);

/**
 * rmsg_msg_release() - give back a peeked message and every earlier one
 * @ep: the endpoint
 * @msg: from rmsg_msg_peek() or rmsg_msg_peek_any()
 *
 * The bytes go back to the sender as credit when enough have gathered
 * (RMSG_OP_CREDIT). Releasing a message again, or one before a message
 * already released, does nothing. After it the message's bytes may be
 * overwritten at any time.
 *
 * Rendezvous messages among those released that were not answered yet
 * (rmsg_msg_recv_into(), rmsg_msg_discard()) are discarded first: their senders
 * complete with -ECANCELED. A message answered with rmsg_msg_recv_into() may
 * be released at once; its transfer goes on.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: a message not peeked.
 * -ENOTCONN: the channel is gone.
 *
 * Notes: A release may enter the kernel: when enough bytes have gathered a
 * credit update is submitted at once (unless a poller runs), and each
 * unanswered rendezvous message released is declined with an SQE. With the
 * SQ full those wait for the next rmsg_ep_progress() or waiting call: a
 * program that releases but never progresses can leave its sender stalled.
 * With threads, a release also frees earlier messages of the channel that
 * another thread holds.
 */
int rmsg_msg_release(struct rmsg_ep *ep, const struct rmsg_msg *msg);

/**
 * rmsg_msg_recv() - copy the next message of a channel out and release it
 * @ep: the endpoint
 * @channel: the channel
 * @buf: where to copy it
 * @len: room at @buf
 * @flags: 0 or RMSG_MSG_WAIT
 *
 * Releases any message of the channel still held from rmsg_msg_peek() too.
 *
 * A rendezvous message is read into a region the library keeps for it
 * (registered on @ep, grown to the largest message, one transfer at a
 * time per endpoint) and copied to @buf once there: until then rmsg_msg_recv()
 * returns -EAGAIN and is called again (rmsg_ep_wait() sleeps meanwhile).
 * rmsg_msg_recv_into() is the zero-copy way.
 *
 * With RMSG_MSG_WAIT, while rmsg_msg_recv() would return -EAGAIN the call
 * sleeps in poll() on the endpoint (after an ARM of @channel) and tries
 * again, until a message is copied, the channel ends (-ENOTCONN once its
 * last message is read), or the limit of rmsg_ep_set_timeout() passes
 * (-ETIMEDOUT). A ping-pong is then one rmsg_msg_send() and one
 * rmsg_msg_recv() a round.
 *
 * Waiting takes the program's events (completions, channel events) off
 * the completion ring, or poll() would not sleep: they are kept, in their
 * order, and rmsg_ep_progress() returns them before anything newer. A
 * program that waits this way reads events only through
 * rmsg_ep_progress(), never from the ring itself.
 *
 * Return: the message's bytes (0 or more), or a negative errno.
 *
 * Errors:
 * -EMSGSIZE: the message is longer than @len; it stays, unread.
 * -EAGAIN: no message yet, or a rendezvous message still on its way.
 * -ENOTCONN: the channel ended and every message has been read, or there
 * is no such channel.
 * -EPROTO: as for rmsg_msg_peek().
 * -ENOMEM: no bounce region for a rendezvous message (over
 * RLIMIT_MEMLOCK: the message stays), or no memory for the kept events.
 * -ETIMEDOUT, -EINTR: with RMSG_MSG_WAIT, instead of -EAGAIN.
 * -EINVAL: unknown @flags.
 * Any other: the rendezvous transfer's error; the message is released.
 *
 * Notes: The bounce region counts against RLIMIT_MEMLOCK: at least 64 KiB,
 * and as large as the largest rendezvous message received this way
 * (rmsg(7), "Locked memory").
 */
int rmsg_msg_recv(struct rmsg_ep *ep, uint32_t channel, void *buf,
		  size_t len, unsigned int flags);


/**
 * rmsg_ep_set_timeout() - the limit of an endpoint's RMSG_MSG_WAIT calls
 * @ep: the endpoint
 * @timeout_ms: milliseconds a call may wait, 0 for not at all (-ETIMEDOUT
 *	at once instead of -EAGAIN), -1 for no limit (the default)
 *
 * Like SO_RCVTIMEO and SO_SNDTIMEO, for sends and receives alike.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: @timeout_ms below -1, or @ep has no message state.
 *
 * Notes: The library's setting only: no system call. A waiting call reads
 * it when it starts, so a change applies from the next call. It limits
 * rmsg_chan_dial() and rmsg_ep_accept(), each call as a whole, but not
 * rmsg_ep_wait(), which has its own @timeout_ms.
 */
int rmsg_ep_set_timeout(struct rmsg_ep *ep, int timeout_ms);

/*
 * Rendezvous (RMSG_FEAT_RNDV, Documentation/rendezvous.rst): a message in
 * a registered region goes zero copy. The receiver peeks an RMSG_MSG_RNDV
 * message and answers it with rmsg_msg_recv_into(), rmsg_msg_discard() or
 * rmsg_msg_recv(); the kernels move the bytes. rmsg_msg_send() goes this way by
 * itself for messages of the threshold's size or more that lie in a
 * region; rmsg_msg_send_zc() always does.
 */

/* The built-in rendezvous threshold (bytes), unless RMSG_RNDV_THRESH. */
#define RMSG_RNDV_THRESH_DEFAULT	16384

/* rmsg_msg_send_zc() flags */
#define RMSG_ZC_PUT	(1U << 0)	/* RPut (RMSG_RNDV_F_PUT) */

/**
 * rmsg_msg_recv_into() - receive a rendezvous message into a region
 * @ep: the endpoint
 * @msg: an RMSG_MSG_RNDV message from rmsg_msg_peek() or rmsg_msg_peek_any(),
 *	not released yet
 * @buf: where its bytes go: inside one region registered with rmsg_reg()
 *	on @ep, or any writable memory, whose pages the kernel then pins
 *	for this receive only (RMSG_FEAT_RNDV_PIN)
 * @room: bytes at @buf
 * @user_data: for the completion event
 *
 * The answers of a channel's rendezvous messages go in their order. The
 * completion comes through rmsg_ep_progress(): kind RMSG_CQE_OP,
 * @user_data, res 0 (the bytes are in @buf) or a negative errno, len the
 * message's bytes. The message is not released: do that with
 * rmsg_msg_release(), at once if wanted.
 *
 * Return: 0 when the receive is under way, or a negative errno.
 *
 * Errors:
 * -EMSGSIZE: @room < msg->len; nothing answered: receive again or
 * discard.
 * -EFAULT: @buf..@buf+@room is not inside one region (a module without
 * RMSG_FEAT_RNDV_PIN).
 * -EINVAL: an eager message, one answered already, or one whose channel
 * has an earlier rendezvous message unanswered.
 * -EAGAIN: the SQ is full.
 * -ENOTCONN: the channel is gone.
 *
 * The completion's res for memory in no region: -ENOMEM over
 * RLIMIT_MEMLOCK, -EFAULT for memory not mapped writable.
 *
 * Notes: @buf belongs to the transfer until the completion event.
 */
int rmsg_msg_recv_into(struct rmsg_ep *ep, const struct rmsg_msg *msg,
		       void *buf,
		       size_t room, uint64_t user_data);

/**
 * rmsg_msg_discard() - decline a rendezvous message
 * @ep: the endpoint
 * @msg: an RMSG_MSG_RNDV message, peeked and not answered
 *
 * The sender's transfer completes with -ECANCELED; no event comes here.
 * The message is not released.
 *
 * Return: 0 or a negative errno.
 *
 * Errors: those of rmsg_msg_recv_into() but -EMSGSIZE and -EFAULT.
 *
 * Notes: Submits an SQE (a system call unless a poller runs), under the
 * endpoint's lock if there is one; with the SQ full it returns -EAGAIN and
 * the message is the program's again, to discard later. rmsg_msg_release()
 * declines unanswered rendezvous messages the same way, so this call is for
 * a program that keeps holding the message.
 */
int rmsg_msg_discard(struct rmsg_ep *ep, const struct rmsg_msg *msg);

/**
 * rmsg_msg_send_zc() - send a message zero copy (rendezvous)
 * @ep: the endpoint
 * @channel: an open channel
 * @buf: the message, inside one region registered with rmsg_reg() on @ep,
 *	or in any readable memory, whose pages the kernel then pins for this
 *	send only (RMSG_FEAT_RNDV_PIN)
 * @len: its bytes, 1 to RMSG_RNDV_MAX_LEN
 * @flags: 0, or RMSG_ZC_PUT and RMSG_SEND_SKIP_SUCCESS (rmsg_msg_send())
 * @user_data: for the completion event
 *
 * The peer reads the bytes from @buf: leave them unchanged, and the region
 * registered, until the completion event (kind RMSG_CQE_OP, @user_data,
 * res 0; -EMSGSIZE when the peer's room was too small; -ECANCELED when it
 * discarded the message; or the channel's error). The message keeps its
 * place in the channel's order.
 *
 * Return: 0 when the message is taken, or a negative errno.
 *
 * Errors:
 * -EFAULT: @buf..@buf+@len is not inside one region (a module without
 * RMSG_FEAT_RNDV_PIN).
 * -EMSGSIZE: @len is 0 or above RMSG_RNDV_MAX_LEN.
 * -EINVAL: unknown @flags.
 * -EOPNOTSUPP: a module without RMSG_FEAT_RNDV.
 * -EAGAIN, -ENOTCONN: as for rmsg_msg_send().
 *
 * Notes: There is no RMSG_MSG_WAIT here: on -EAGAIN take events with
 * rmsg_ep_progress() or rmsg_ep_wait() and send again.
 */
int rmsg_msg_send_zc(struct rmsg_ep *ep, uint32_t channel, const void *buf,
		     size_t len, unsigned int flags, uint64_t user_data);

/**
 * rmsg_ep_set_rndv_threshold() - when rmsg_msg_send() goes rendezvous
 * @ep: the endpoint
 * @bytes: messages of this many bytes or more that lie in a region go
 *	rendezvous (and those too large for eager); SIZE_MAX: never
 *
 * The default is the environment's RMSG_RNDV_THRESH (bytes, optional K,
 * M or G suffix) when set at rmsg_ep_open(), else RMSG_RNDV_THRESH_DEFAULT.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: @ep has no message state.
 *
 * Notes: The library's setting only: no system call, and the peer is not
 * told; it applies from the next rmsg_msg_send(). Memory in no region goes
 * zero copy only when too large for eager, whatever the threshold (SIZE_MAX
 * stops that too): a lower threshold matters only for memory registered
 * with rmsg_reg().
 */
int rmsg_ep_set_rndv_threshold(struct rmsg_ep *ep, size_t bytes);

/**
 * rmsg_chan_set_rndv_threshold() - a channel's own rendezvous threshold
 * @ep: the endpoint
 * @channel: an open channel
 * @bytes: as for rmsg_ep_set_rndv_threshold(), for this channel's
 *	rmsg_msg_send()s only; the endpoint's threshold no longer applies to it
 *
 * E.g. a channel carrying bulk data goes zero copy from 4 KiB while a
 * control channel of the same endpoint stays eager up to its maximum. It
 * lasts as long as the channel.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOTCONN: no such channel open.
 * -EINVAL: @ep has no message state.
 *
 * Notes: The library's setting only: no system call, and the peer is not
 * told. It is forgotten with the channel: a new channel that gets the same
 * id starts with the endpoint's threshold.
 */
int rmsg_chan_set_rndv_threshold(struct rmsg_ep *ep, uint32_t channel,
				 size_t bytes);

/**
 * rmsg_ep_rndv_threshold() - the threshold of rmsg_ep_set_rndv_threshold()
 * @ep: the endpoint
 *
 * Return: bytes, or SIZE_MAX for never.
 *
 * Errors: none.
 *
 * Notes: Reads the library's value: no system call. A channel given its own
 * threshold with rmsg_chan_set_rndv_threshold() may differ;
 * rmsg_chan_protocol_info() shows a channel's.
 */
size_t rmsg_ep_rndv_threshold(struct rmsg_ep *ep);

/**
 * rmsg_chan_protocol_info() - print which protocol rmsg_msg_send() takes by
 * size
 * @ep: the endpoint
 * @channel: an open channel
 * @out: where to print the table
 *
 * One line per size range, from the channel's largest eager message, the
 * threshold and the module's features.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOTCONN: no such channel open.
 * -EIO: writing to @out failed.
 *
 * Notes: It only prints: nothing is sent, and the only system calls are
 * @out's writes; @out is not flushed. The table holds for the thresholds at
 * the call: print again after changing them.
 */
int rmsg_chan_protocol_info(struct rmsg_ep *ep, uint32_t channel, FILE *out);

/*
 * Memory regions (RMSG_FEAT_RNDV): memory the kernel pins for rendezvous
 * transfers to read and write in place. Documentation/rendezvous.rst. The
 * library keeps a table of the regions of @ep, to find the region of a
 * buffer (rmsg_msg_send(), rmsg_msg_send_zc(), rmsg_msg_recv_into()).
 */

/**
 * rmsg_reg() - register memory for rendezvous transfers
 * @ep: an open endpoint
 * @addr: first byte, any alignment
 * @len: bytes, 1 to RMSG_REG_MAX_LEN
 * @handle: set to the region's handle (never 0)
 *
 * The memory must be mapped writable; it stays pinned, and counted in the
 * process's RLIMIT_MEMLOCK (VmPin in /proc/self/status), until
 * rmsg_dereg() or the endpoint's close. Registering memory twice pins it
 * twice.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: a bad @len, or a span that wraps.
 * -EFAULT: memory not mapped writable.
 * -ENOMEM: over RLIMIT_MEMLOCK (without CAP_IPC_LOCK), or no memory.
 *
 * Notes: Registering is optional: rmsg_msg_send() and
 * rmsg_msg_recv_into() take any memory, pinned for one transfer. A region
 * saves pinning the same buffer for every transfer.
 */
int rmsg_reg(struct rmsg_ep *ep, void *addr, size_t len, uint32_t *handle);

/**
 * rmsg_dereg() - unpin a region
 * @ep: the endpoint it was registered on
 * @handle: from rmsg_reg()
 *
 * The handle may be given to a later region. The library forgets the
 * region only when the kernel has.
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -ENOENT: no such region.
 * -EBUSY: a transfer on it has not completed; the region stays
 * registered.
 *
 * Notes: One ioctl(2), under the endpoint's lock if there is one. Until it
 * returns 0 the pages stay pinned and counted in RLIMIT_MEMLOCK: on -EBUSY
 * wait for the transfer's completion event and try again before freeing the
 * memory. rmsg_ep_close() unregisters every region without this call.
 */
int rmsg_dereg(struct rmsg_ep *ep, uint32_t handle);

/*
 * Resilience (Documentation/resilience.rst): looking at channels, of this
 * endpoint or of others, and injecting faults into them. Both take any
 * /dev/rmsg file descriptor: an endpoint's (rmsg_ep_fd()), or one opened with
 * rmsg_node_open() only to ask.
 */

/**
 * rmsg_node_channels() - the channels of endpoints, with their repair counters
 * @fd: a /dev/rmsg file descriptor
 * @flags: 0 for @fd's own endpoint; RMSG_CHAN_LIST_F_ALL for every
 *	endpoint the caller may see (all with CAP_NET_ADMIN, else its own
 *	user's)
 * @chans: set to an array the caller releases with free(), or NULL when
 *	there is no channel
 * @ep_id: if not NULL, set to the id of @fd's own endpoint
 *
 * Return: the number of channels (0 or more) or a negative errno.
 *
 * Errors:
 * -EINVAL: unknown @flags.
 * -ENOMEM: no memory for the array.
 * -EBADF, -ENOTTY: @fd is not a /dev/rmsg file descriptor.
 *
 * Notes: The array is a snapshot, the caller's only on success; on failure
 * @chans and @ep_id are left alone. While channels come and go the call
 * asks the module again, at most 17 times, then returns the last list as it
 * is. It takes no lock of an endpoint: safe from any thread.
 */
int rmsg_node_channels(int fd, unsigned int flags,
		       struct rmsg_chan_info **chans,
		       uint32_t *ep_id);

/**
 * rmsg_node_channel_addrs() - rmsg_node_channels() with each channel's
 * addresses
 * @fd: a /dev/rmsg file descriptor
 * @flags: as for rmsg_node_channels()
 * @chans: set to an array the caller releases with free(), or NULL
 * @ep_id: if not NULL, set to the id of @fd's own endpoint
 *
 * Return: the number of channels (0 or more) or a negative errno.
 *
 * Errors: as for rmsg_node_channels().
 *
 * Notes: As rmsg_node_channels(): a snapshot, the caller's only on success,
 * at most 17 asks; each entry is larger, with two addresses.
 */
int rmsg_node_channel_addrs(int fd, unsigned int flags,
			    struct rmsg_chan_info_addrs **chans, uint32_t *ep_id);

/**
 * rmsg_node_fault() - inject a fault into a channel
 * @fd: a /dev/rmsg file descriptor
 * @ep_id: the channel's endpoint (from rmsg_node_channels()), 0 for @fd's own
 * @channel: the channel's id in that endpoint
 * @kind: enum rmsg_fault_kind
 *
 * Return: 0 or a negative errno.
 *
 * Errors:
 * -EINVAL: an unknown @kind.
 * -ENOENT: no such endpoint or channel.
 * -ENOTCONN: the channel is not open.
 * -EPERM: another user's endpoint, without CAP_NET_ADMIN.
 * -EOPNOTSUPP: a kind the module cannot inject.
 *
 * Notes: The fault is real: the device-fatal kind acts on the channel's
 * whole device, every channel on it of every user, and needs CAP_NET_ADMIN;
 * a qp-error on a channel carried by a link hits every channel on that
 * link. A qp-error or a disconnect has taken effect when the call returns;
 * the repair, or the channel's end, follows and shows in the channel's
 * events. RMSG_FAULT_LINK_PROBE needs an argument this call does not pass
 * (-EINVAL).
 */
int rmsg_node_fault(int fd, uint32_t ep_id, uint32_t channel,
		    uint32_t kind);

/**
 * rmsg_node_links() - the module's links to other rmsg kernels
 * @fd: a /dev/rmsg file descriptor
 * @links: set to an array the caller releases with free(), or NULL when
 *	there is no link (links off: the link_port module parameter is 0)
 *
 * RMSG_IOC_LINK_LIST, an administrator's: it needs CAP_NET_ADMIN.
 *
 * Return: the number of links (0 or more) or a negative errno.
 *
 * Errors:
 * -EPERM: without CAP_NET_ADMIN.
 * -ENOTTY: a module without links (RMSG_FEAT_LINKS).
 * -ENOMEM: no memory for the array.
 *
 * Notes: As rmsg_node_channels(): a snapshot, the caller's only on success,
 * at most 17 asks while links come and go; safe from any thread.
 */
int rmsg_node_links(int fd, struct rmsg_link_info **links);

/**
 * rmsg_chan_state_name() - a listed channel's state by name
 * @state: rmsg_chan_info.state (enum rmsg_chan_info_state)
 *
 * Return: its name ("OPEN", "RECOVERING", ...), or "?".
 *
 * Errors: none.
 *
 * Notes: The string is static: do not free or change it. A table lookup: no
 * system call, no lock, safe from any thread.
 */
const char *rmsg_chan_state_name(unsigned int state);

/**
 * rmsg_fault_kind_name() - a fault kind by name, as rmsgctl fault takes it
 * @kind: enum rmsg_fault_kind
 *
 * Return: its name ("qp-error", "disconnect", "device-fatal"), or "?".
 *
 * Errors: none.
 *
 * Notes: The string is static: do not free or change it. A table lookup: no
 * system call, no lock, safe from any thread.
 */
const char *rmsg_fault_kind_name(unsigned int kind);

/**
 * rmsg_sq_get_sqe() - the next free SQE, zeroed
 * @ep: the endpoint
 *
 * Return: an SQE to fill in, or NULL when the SQ is full. It goes to the
 * kernel with the next rmsg_sq_submit().
 *
 * Errors: none; NULL when the SQ is full.
 *
 * Notes: No system call, and no lock even after rmsg_ep_set_locking(): one
 * thread at a time takes SQEs, and the message functions take theirs from
 * the same SQ. An SQE handed out cannot be given back: it goes to the
 * kernel with the next rmsg_sq_submit(), so fill it in before that.
 */
static inline struct rmsg_sqe *rmsg_sq_get_sqe(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *sq = &rmsg_ep_rings(ep)->sq;
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
 *
 * Errors: none.
 *
 * Notes: No system call and no lock: a release store and a full memory
 * barrier. Without a poller (RMSG_EP_F_SQPOLL) the kernel takes nothing
 * until rmsg_ep_enter(), so a non-zero return must be passed on.
 */
static inline unsigned int rmsg_sq_submit(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *sq = &rmsg_ep_rings(ep)->sq;

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

/**
 * rmsg_cq_ready() - how many CQEs are ready to be consumed
 * @ep: the endpoint
 *
 * Return: the number of CQEs the kernel has posted and the program has
 * not consumed.
 *
 * Errors: none.
 *
 * Notes: One load of the kernel's index: no system call, no lock, one
 * consumer at a time. It is for programs that consume the CQ themselves;
 * with the message functions the CQ is rmsg_ep_progress()'s.
 */
static inline unsigned int rmsg_cq_ready(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *cq = &rmsg_ep_rings(ep)->cq;

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
 *
 * Errors: none; NULL when no CQE is ready.
 *
 * Notes: The CQE stays in the ring: read it before rmsg_cq_advance(), after
 * which the kernel may overwrite its slot. Peeking again without advancing
 * gives the same CQE. No system call, no lock.
 */
static inline struct rmsg_cqe *rmsg_cq_peek(struct rmsg_ep *ep)
{
	struct rmsg_ring_view *cq = &rmsg_ep_rings(ep)->cq;

	if (cq->cached_prod == cq->cached_cons && !rmsg_cq_ready(ep))
		return NULL;
	return (struct rmsg_cqe *)cq->descs + (cq->cached_cons & cq->mask);
}

/**
 * rmsg_cq_advance() - consume @n CQEs (at most rmsg_cq_ready() of them)
 * @ep: the endpoint
 * @n: how many
 *
 * Return: nothing.
 *
 * Errors: none.
 *
 * Notes: A release store of the consumer index: no system call, no lock.
 * Nothing checks @n: advancing past the CQEs ready corrupts the ring's
 * indices, and the next rmsg_ep_enter() fails with -EINVAL.
 */
static inline void rmsg_cq_advance(struct rmsg_ep *ep, unsigned int n)
{
	struct rmsg_ring_view *cq = &rmsg_ep_rings(ep)->cq;

	cq->cached_cons += n;
	/* D: the CQEs are read before their slots go back to the kernel. */
	__atomic_store_n(cq->consumer, cq->cached_cons, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif

#endif /* _RMSG_LIB_H */
