// SPDX-License-Identifier: BSD-2-Clause
/*
 * kvstore: an in-memory key-value store. The server keeps the pairs in one
 * thread that sleeps in epoll_wait(); the client opens K channels on one
 * endpoint, busy-polls them, and checks every byte it gets back. Values
 * are 1 byte to 8 MiB from plain malloc() memory: the library sends what
 * fits the peer's receive block by copy (eager) and the rest zero copy
 * (rendezvous), and the receiver takes a rendezvous message with
 * rmsg_msg_recv_into().
 *
 *   kvstore server ADDR[:PORT] [C]     exit after C channels have come and
 *                                      gone (0: at SIGINT/SIGTERM)
 *   kvstore client ADDR[:PORT] K N     K channels, N keys each
 *
 * ADDR is an IPv4 address or host name of an RDMA device (rxe0's, for
 * Soft-RoCE). Build: cc kvstore.c $(pkg-config --cflags --libs rmsg)
 *
 * The wire format: every request and every answer is one message, an
 * 8-byte header and then klen bytes of key and vlen bytes of value:
 *
 *   byte 0     op: requests KV_PUT 1, KV_GET 2, KV_DEL 3; answers KV_OK
 *              16, KV_VALUE 17, KV_MISSING 18, KV_BAD 19
 *   byte 1     0
 *   bytes 2-3  klen, network byte order: 1 to KV_KEY_MAX in requests
 *   bytes 4-7  vlen, network byte order: 1 to KV_VAL_MAX in a PUT, else 0
 *
 * PUT key value is answered OK; GET key by VALUE key value or MISSING;
 * DEL key by OK or MISSING; a request the server cannot parse by BAD. The
 * answers of a channel come in the order of its requests. The client here
 * sends a channel's next request only after the answer to the last one;
 * the server would take them pipelined too.
 *
 * The server's loop is epoll_server.c's (Documentation/messages.rst,
 * "Waiting"): take events (rmsg_ep_progress()), arm (rmsg_ep_arm()),
 * serve every request there (rmsg_msg_peek_any()), and sleep in
 * epoll_wait() only when nothing happened.
 *
 * Who owns a buffer: a message larger than the channel's largest eager
 * message goes zero copy, and its buffer belongs to the transfer until the
 * send's completion event; a smaller one is copied at once. The program
 * need not know which: it keeps every buffer it sent from until that
 * send's event. The server stores a PUT as it came, with its op changed to
 * KV_VALUE, and answers a GET with that very record; a reference count
 * keeps a record alive while an answer is sent from it, so a DEL or a
 * newer PUT of its key meanwhile cannot free the bytes under the transfer.
 *
 * Locked memory (rmsg(7), "Locked memory"): each zero-copy send and each
 * rmsg_msg_recv_into() of malloc() memory pins its pages until its
 * completion, counted in RLIMIT_MEMLOCK. The client has at most one such
 * transfer of 8 MiB and a bit per channel at a time: K channels need
 * K * 9 MiB or so (ulimit -l), the server up to twice that (an answer may
 * still be going out when the next PUT comes in), or root (CAP_IPC_LOCK).
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <rmsg.h>

enum kv_op {
	KV_PUT = 1,
	KV_GET,
	KV_DEL,
	KV_OK = 16,
	KV_VALUE,
	KV_MISSING,
	KV_BAD,
};

struct kv_hdr {
	uint8_t op;
	uint8_t zero;
	uint16_t klen;
	uint32_t vlen;
};

#define KV_KEY_MAX	255
#define KV_VAL_MAX	(8U << 20)
#define KV_MSG_MAX	(sizeof(struct kv_hdr) + KV_KEY_MAX + KV_VAL_MAX)
#define KV_BUCKETS	1024	/* the server's hash table */
#define EVENTS		64	/* taken at a time */
#define WAIT_MS		30000	/* give up when nothing happens for this long */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The user_data of sends and receives, handed back by their completion
 * events. A receive's event names its channel, so one value marks them
 * all; a send's is 0 (nothing to free) or the server's record sent from.
 */
#define KV_SENT		0
#define KV_RECV		1

static void die(const char *what, int err)
{
	fprintf(stderr, "kvstore: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* "host", "192.168.1.2" or either with ":7474"; IPv4 only. */
static void resolve(char *s, struct sockaddr_in *sin)
{
	struct addrinfo hints = {
		.ai_family = AF_INET,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res;
	char *port = strrchr(s, ':');
	int ret;

	if (port)
		*port++ = '\0';
	/* The socket type only keeps one answer per address. */
	ret = getaddrinfo(s, port ? port : "7474", &hints, &res);
	if (ret) {
		fprintf(stderr, "kvstore: %s: %s\n", s, gai_strerror(ret));
		exit(1);
	}
	memcpy(sin, res->ai_addr, sizeof(*sin));
	freeaddrinfo(res);
}

/* Take up to EVENTS completions and channel events into @ev; how many. */
static int take_events(struct rmsg_ep *ep, struct rmsg_event *ev)
{
	int n = rmsg_ep_progress(ep, ev, EVENTS);

	if (n < 0)
		die("rmsg_ep_progress", n);
	return n;
}

/* A header, from the wire's byte order. */
static struct kv_hdr get_hdr(const void *p)
{
	struct kv_hdr h;

	memcpy(&h, p, sizeof(h));	/* the message may not be aligned */
	h.klen = ntohs(h.klen);
	h.vlen = ntohl(h.vlen);
	return h;
}

/* A header into @p, to the wire's byte order. */
static void put_hdr(void *p, uint8_t op, size_t klen, size_t vlen)
{
	struct kv_hdr h = {
		.op = op,
		.klen = htons(klen),
		.vlen = htonl(vlen),
	};

	memcpy(p, &h, sizeof(h));
}

/* --- the server ---------------------------------------------------------- */

/* A stored pair: the PUT as it came, op changed to KV_VALUE. */
struct rec {
	struct rec *next;	/* in its hash bucket */
	unsigned int refs;	/* the table's, and one per send from it */
	uint32_t len;
	unsigned char msg[];	/* header, key, value */
};

/* A channel of the server's. */
struct conn {
	struct rec *in;		/* a PUT on its way in (rmsg_msg_recv_into()) */
};

struct server {
	struct rec *bucket[KV_BUCKETS];
	struct conn *conn;	/* by channel id */
	unsigned int nconn;
	unsigned long accepted, closed, puts, gets, dels, errs;
};

static void rec_put(struct rec *r)
{
	if (--r->refs == 0)
		free(r);
}

/* 32-bit FNV-1a of the key */
static unsigned int hash(const unsigned char *key, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--) {
		h ^= *key++;
		h *= 16777619u;
	}
	return h % KV_BUCKETS;
}

/* Where the record of @key is linked, or would be. */
static struct rec **lookup(struct server *sv, const unsigned char *key,
			   size_t klen)
{
	struct rec **pp = &sv->bucket[hash(key, klen)];
	struct kv_hdr h;

	for (; *pp; pp = &(*pp)->next) {
		h = get_hdr((*pp)->msg);
		if (h.klen == klen &&
		    !memcmp((*pp)->msg + sizeof(h), key, klen))
			break;
	}
	return pp;
}

static struct conn *conn_of(struct server *sv, uint32_t channel)
{
	struct conn *c;

	if (channel >= sv->nconn) {
		c = realloc(sv->conn, (channel + 1) * sizeof(*c));
		if (!c)
			die("realloc", -ENOMEM);
		memset(c + sv->nconn, 0,
		       (channel + 1 - sv->nconn) * sizeof(*c));
		sv->conn = c;
		sv->nconn = channel + 1;
	}
	return &sv->conn[channel];
}

/*
 * Send an answer. RMSG_MSG_WAIT waits out a full send area or SQ (up to
 * WAIT_MS) instead of -EAGAIN; the events it meets meanwhile are kept for
 * the next rmsg_ep_progress(). A send from a record holds a reference
 * until its completion event.
 */
static void answer(struct rmsg_ep *ep, struct server *sv, uint32_t channel,
		   uint8_t op, struct rec *r)
{
	unsigned char hdr[sizeof(struct kv_hdr)];
	int ret;

	if (r) {
		r->refs++;
		ret = rmsg_msg_send(ep, channel, r->msg, r->len, RMSG_MSG_WAIT,
				    (uintptr_t)r);
		if (ret)
			rec_put(r);	/* not taken: no event will come */
	} else {
		put_hdr(hdr, op, 0, 0);
		ret = rmsg_msg_send(ep, channel, hdr, sizeof(hdr),
				    RMSG_MSG_WAIT, KV_SENT);
	}
	if (ret && ret != -ENOTCONN)	/* a channel gone is no fault */
		sv->errs++;
}

/*
 * Carry out one request of @len bytes at @msg. @r is the record it was
 * received into, or NULL when it is still in the receive block.
 */
static void serve(struct rmsg_ep *ep, struct server *sv, uint32_t channel,
		  const unsigned char *msg, uint32_t len, struct rec *r)
{
	struct kv_hdr h = { 0 };
	struct rec **pp, *old;

	if (len >= sizeof(h))
		h = get_hdr(msg);
	if (h.zero || h.klen < 1 || h.klen > KV_KEY_MAX ||
	    len != sizeof(h) + h.klen + h.vlen ||
	    (h.op == KV_PUT ? h.vlen < 1 || h.vlen > KV_VAL_MAX : h.vlen) ||
	    (h.op != KV_PUT && h.op != KV_GET && h.op != KV_DEL)) {
		sv->errs++;
		if (r)
			free(r);
		answer(ep, sv, channel, KV_BAD, NULL);
		return;
	}
	pp = lookup(sv, msg + sizeof(h), h.klen);
	old = *pp;
	switch (h.op) {
	case KV_PUT:
		sv->puts++;
		if (!r) {
			r = malloc(sizeof(*r) + len);
			if (!r)
				die("malloc", -ENOMEM);
			memcpy(r->msg, msg, len);
		}
		r->len = len;
		r->refs = 1;
		r->msg[0] = KV_VALUE;
		r->next = old ? old->next : NULL;
		*pp = r;
		if (old)
			rec_put(old);	/* freed once no answer reads it */
		answer(ep, sv, channel, KV_OK, NULL);
		return;
	case KV_GET:
		sv->gets++;
		answer(ep, sv, channel, KV_MISSING, old);
		break;
	case KV_DEL:
		sv->dels++;
		if (old) {
			*pp = old->next;
			rec_put(old);
		}
		answer(ep, sv, channel, old ? KV_OK : KV_MISSING, NULL);
		break;
	}
	if (r)
		free(r);	/* a GET or DEL that came by rendezvous */
}

/*
 * A request whose bytes are still in the client's memory (rendezvous):
 * receive it into a record of its size. The record is the channel's until
 * the receive's completion event; serve() then stores it or frees it.
 *
 * Return: 0, or -EAGAIN when the SQ is full: try again later.
 */
static int receive(struct rmsg_ep *ep, struct server *sv, struct conn *c,
		   const struct rmsg_msg *msg)
{
	struct rec *r;
	int ret;

	/*
	 * Refused requests are released unanswered, which declines them:
	 * the sender's transfer completes with -ECANCELED.
	 */
	if (msg->len > KV_MSG_MAX) {
		sv->errs++;
		answer(ep, sv, msg->channel, KV_BAD, NULL);
		return 0;
	}
	r = malloc(sizeof(*r) + msg->len);
	if (!r)
		die("malloc", -ENOMEM);
	ret = rmsg_msg_recv_into(ep, msg, r->msg, msg->len, KV_RECV);
	if (ret) {
		free(r);
		if (ret == -EAGAIN)
			return ret;
		if (ret != -ENOTCONN) {
			sv->errs++;
			answer(ep, sv, msg->channel, KV_BAD, NULL);
		}
		return 0;
	}
	c->in = r;
	return 0;
}

/*
 * A send or receive that failed. A client that went away is no fault of
 * the server's; anything else is counted, and said.
 */
static void transfer_failed(struct server *sv, const struct rmsg_event *ev)
{
	if (ev->res == -ECONNRESET || ev->res == -ENOTCONN)
		return;
	fprintf(stderr, "kvstore: channel %u: a %s failed: %s%s\n",
		ev->channel, ev->user_data == KV_RECV ? "receive" : "send",
		strerror(-ev->res), ev->res == -ENOMEM ?
		" (over RLIMIT_MEMLOCK? rmsg(7), \"Locked memory\")" : "");
	sv->errs++;
}

/* Take completions and channel events; true if there were any. */
static bool server_events(struct rmsg_ep *ep, struct server *sv)
{
	struct rmsg_event ev[EVENTS];
	int n = take_events(ep, ev), i;
	struct conn *c;

	for (i = 0; i < n; i++) {
		switch (ev[i].kind) {
		case RMSG_CQE_ACCEPTED:
			/* One that failed gets no CLOSED: count it here. */
			if (!ev[i].res) {
				sv->accepted++;
			} else {
				sv->closed++;
				sv->errs++;
			}
			break;
		case RMSG_CQE_CLOSED:
			sv->closed++;
			break;
		case RMSG_CQE_OP:
			if (ev[i].res)
				transfer_failed(sv, &ev[i]);
			if (ev[i].user_data == KV_RECV) {
				c = conn_of(sv, ev[i].channel);
				if (c->in && !ev[i].res)
					serve(ep, sv, ev[i].channel, c->in->msg,
					      ev[i].len, c->in);
				else
					free(c->in);
				c->in = NULL;
			} else if (ev[i].user_data != KV_SENT) {
				rec_put((struct rec *)(uintptr_t)
					ev[i].user_data);
			}
			break;
		}
	}
	return n > 0;
}

/* Serve the requests that have come; true if there were any. */
static bool server_requests(struct rmsg_ep *ep, struct server *sv)
{
	struct rmsg_msg msg;
	struct conn *c;
	bool busy = false;
	int ret;

	while ((ret = rmsg_msg_peek_any(ep, &msg)) == 0) {
		busy = true;
		c = conn_of(sv, msg.channel);
		if (c->in) {
			/*
			 * A pipelined request behind a PUT still coming in:
			 * it waits for that one, in its place, and the loop
			 * polls instead of sleeping meanwhile. (So does a
			 * receive that found the SQ full, below.)
			 */
			rmsg_msg_unpeek(ep, &msg);
			return true;
		}
		if (msg.kind == RMSG_MSG_EAGER) {
			serve(ep, sv, msg.channel, msg.data, msg.len, NULL);
		} else if (receive(ep, sv, c, &msg) == -EAGAIN) {
			rmsg_msg_unpeek(ep, &msg);
			return true;
		}
		/* A receive under way goes on after the release. */
		rmsg_msg_release(ep, &msg);
	}
	if (ret == -EPROTO) {
		rmsg_chan_close(ep, msg.channel, RMSG_CLOSE_ABORT);
		sv->errs++;
	} else if (ret != -EAGAIN) {
		die("rmsg_msg_peek_any", ret);
	}
	return busy;
}

/*
 * An epoll instance of the endpoint's descriptor and a signalfd of SIGINT
 * and SIGTERM, which are blocked so that they only make it readable. The
 * signalfd goes into *@sfd.
 */
static int epoll_setup(struct rmsg_ep *ep, int *sfd)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int efd, fds[2], i;
	sigset_t sigs;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL))
		die("sigprocmask", -errno);
	fds[0] = rmsg_ep_fd(ep);
	fds[1] = *sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (*sfd < 0 || efd < 0)
		die("signalfd, epoll_create1", -errno);
	for (i = 0; i < 2; i++) {
		ee.data.fd = fds[i];
		if (epoll_ctl(efd, EPOLL_CTL_ADD, fds[i], &ee))
			die("epoll_ctl", -errno);
	}
	return efd;
}

/* Sleep until the endpoint or a signal wakes us; true for a signal. */
static bool sleep_in_epoll(int efd, int sfd)
{
	struct epoll_event out[2];
	int n = epoll_wait(efd, out, 2, -1);

	if (n < 0 && errno != EINTR)
		die("epoll_wait", -errno);
	while (n-- > 0)
		if (out[n].data.fd == sfd)
			return true;
	return false;
}

static int run_server(struct rmsg_ep *ep, struct sockaddr_in *sin,
		      unsigned long want, struct server *sv)
{
	bool busy, stop = false;
	int efd, sfd, ret;

	ret = rmsg_ep_listen(ep, (struct sockaddr *)sin, sizeof(*sin), 0, 0);
	if (ret)
		die("rmsg_ep_listen", ret);
	printf("server: listening on port %d\n", ntohs(sin->sin_port));
	fflush(stdout);
	efd = epoll_setup(ep, &sfd);
	while (!stop && (!want || sv->closed < want)) {
		busy = server_events(ep, sv);
		/*
		 * Arm first, then read: a request that came before the arm
		 * is read now, one that comes after it wakes epoll_wait().
		 * -EAGAIN: the SQ had no room to arm every channel, so no
		 * sleep this time.
		 */
		ret = rmsg_ep_arm(ep);
		if (ret && ret != -EAGAIN)
			die("rmsg_ep_arm", ret);
		busy |= ret == -EAGAIN;
		busy |= server_requests(ep, sv);
		/*
		 * Sleep only when nothing happened: the answers' waiting
		 * sends may have put events aside, where epoll cannot see
		 * them. A receive's completion is an event on the ring, so
		 * it wakes epoll_wait().
		 */
		if (!busy)
			stop = sleep_in_epoll(efd, sfd);
	}
	printf("server: %lu channels, %lu closed, %lu puts, %lu gets, %lu dels, %lu errors\n",
	       sv->accepted, sv->closed, sv->puts, sv->gets, sv->dels,
	       sv->errs);
	close(efd);
	close(sfd);
	return sv->errs ? 1 : 0;
}

/* After the endpoint's close: no transfer reads or writes them any more. */
static void server_free(struct server *sv)
{
	struct rec *r;
	unsigned int i;

	for (i = 0; i < KV_BUCKETS; i++) {
		while ((r = sv->bucket[i])) {
			sv->bucket[i] = r->next;
			free(r);
		}
	}
	for (i = 0; i < sv->nconn; i++)
		free(sv->conn[i].in);
	free(sv->conn);
}

/* --- the client ---------------------------------------------------------- */

/* What a client's channel is doing, with key number key. */
enum step { STEP_PUT, STEP_GET, STEP_DEL, STEP_GET_MISSING, STEP_DONE };

struct chan {
	uint32_t id;
	bool open;
	unsigned int key;	/* 0 to N - 1 */
	enum step step;
	bool asked;		/* a request is out, its answer not in */
	bool sending;		/* its send has not completed: sbuf is busy */
	bool receiving;		/* an answer is coming into rbuf */
	unsigned char *sbuf;	/* requests are sent from here */
	unsigned char *rbuf;	/* rendezvous answers come in here */
	unsigned long bytes;	/* value bytes checked */
};

/* Value sizes, 1 B to 8 MiB: key i of channel k has size (k + i) % 6. */
static const uint32_t sizes[] = { 1, 100, 4000, 70000, 1U << 20, 8U << 20 };

static size_t key_of(unsigned int k, unsigned int i, char *key)
{
	return sprintf(key, "key-%u-%u", k, i);
}

/* Byte @j of the value of key @i of channel @k: differs between pages. */
static uint8_t val_byte(unsigned int k, unsigned int i, uint32_t j)
{
	return j * 131 + (j >> 9) + (j >> 17) + k * 17 + i * 29;
}

/* The next request of channel @k into its sbuf; its length. */
static size_t request(unsigned int k, struct chan *ch)
{
	static const uint8_t op[] = { KV_PUT, KV_GET, KV_DEL, KV_GET };
	unsigned char *p = ch->sbuf + sizeof(struct kv_hdr);
	size_t klen = key_of(k, ch->key, (char *)p);
	uint32_t vlen = 0, j;

	if (ch->step == STEP_PUT) {
		vlen = sizes[(k + ch->key) % ARRAY_SIZE(sizes)];
		for (j = 0; j < vlen; j++)
			p[klen + j] = val_byte(k, ch->key, j);
	}
	put_hdr(ch->sbuf, op[ch->step], klen, vlen);
	return sizeof(struct kv_hdr) + klen + vlen;
}

/* Check the answer to channel @k's request, byte for byte. */
static void check(unsigned int k, struct chan *ch, const unsigned char *msg,
		  uint32_t len)
{
	static const uint8_t want[] = { KV_OK, KV_VALUE, KV_OK, KV_MISSING };
	struct kv_hdr h = { 0 };
	char key[32];
	size_t klen = key_of(k, ch->key, key);
	uint32_t vlen = sizes[(k + ch->key) % ARRAY_SIZE(sizes)], j;
	const unsigned char *v = msg + sizeof(h) + klen;

	if (len >= sizeof(h))
		h = get_hdr(msg);
	if (h.op != want[ch->step])
		goto bad;
	if (h.op != KV_VALUE) {
		if (len != sizeof(h) || h.klen || h.vlen)
			goto bad;
	} else {
		if (len != sizeof(h) + klen + vlen || h.klen != klen ||
		    h.vlen != vlen || memcmp(msg + sizeof(h), key, klen))
			goto bad;
		for (j = 0; j < vlen; j++)
			if (v[j] != val_byte(k, ch->key, j)) {
				fprintf(stderr, "kvstore: %s: byte %u of %u is %u, not %u\n",
					key, j, vlen, v[j],
					val_byte(k, ch->key, j));
				exit(1);
			}
		ch->bytes += vlen;
	}
	ch->asked = false;
	if (++ch->step == STEP_DONE) {
		ch->step = STEP_PUT;
		ch->key++;
	}
	return;
bad:
	fprintf(stderr, "kvstore: %s, step %d: a wrong answer (op %u, %u bytes)\n",
		key, ch->step, h.op, len);
	exit(1);
}

static unsigned int chan_index(struct chan *ch, unsigned int nch, uint32_t id)
{
	unsigned int k;

	for (k = 0; k < nch && ch[k].id != id; k++)
		;
	if (k == nch)
		die("a message of no channel of ours", -EPROTO);
	return k;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Take events; the number of channels still open is in *@open. */
static bool client_events(struct rmsg_ep *ep, struct chan *ch,
			  unsigned int nch, unsigned int *open)
{
	struct rmsg_event ev[EVENTS];
	int n = take_events(ep, ev), i;
	unsigned int k;

	for (i = 0; i < n; i++) {
		if (ev[i].kind == RMSG_CQE_OP && ev[i].res == -ENOMEM)
			die("a transfer (over RLIMIT_MEMLOCK? rmsg(7), \"Locked memory\")",
			    ev[i].res);
		if (ev[i].res)
			die(ev[i].kind == RMSG_CQE_OP ? "a transfer" :
			    "a channel", ev[i].res);
		if (ev[i].kind == RMSG_CQE_CONNECTED) {
			ch[ev[i].user_data].open = true;
			(*open)++;
		} else if (ev[i].kind == RMSG_CQE_CLOSED) {
			(*open)--;
		} else if (ev[i].kind == RMSG_CQE_OP) {
			k = chan_index(ch, nch, ev[i].channel);
			if (ev[i].user_data == KV_RECV) {
				ch[k].receiving = false;
				check(k, &ch[k], ch[k].rbuf, ev[i].len);
			} else {
				ch[k].sending = false;
			}
		}
	}
	return n > 0;
}

static int run_client(struct rmsg_ep *ep, struct sockaddr_in *sin,
		      unsigned int nch, unsigned int nkeys)
{
	struct chan *ch = calloc(nch, sizeof(*ch));
	unsigned int k, open = 0, done = 0;
	unsigned long bytes = 0;
	struct rmsg_msg msg;
	long idle = now_ms();
	size_t len;
	int ret;

	if (!nch || !nkeys || !ch)
		die("client", -EINVAL);
	for (k = 0; k < nch; k++) {
		ch[k].sbuf = malloc(KV_MSG_MAX);
		ch[k].rbuf = malloc(KV_MSG_MAX);
		if (!ch[k].sbuf || !ch[k].rbuf)
			die("malloc", -ENOMEM);
		ret = rmsg_chan_connect(ep, (struct sockaddr *)sin,
					sizeof(*sin), k, 0);
		if (ret < 0)
			die("rmsg_chan_connect", ret);
		ch[k].id = ret;
	}
	/* Busy-polling: no call here sleeps. */
	while (done < nch) {
		if (client_events(ep, ch, nch, &open))
			idle = now_ms();
		for (k = 0; k < nch; k++) {
			/* sbuf is free again only at its send's event */
			if (!ch[k].open || ch[k].asked || ch[k].sending ||
			    ch[k].receiving || ch[k].key == nkeys)
				continue;
			len = request(k, &ch[k]);
			ret = rmsg_msg_send(ep, ch[k].id, ch[k].sbuf, len, 0,
					    KV_SENT);
			if (ret == -EAGAIN)
				continue;	/* after rmsg_ep_progress() */
			if (ret)
				die("rmsg_msg_send", ret);
			ch[k].asked = ch[k].sending = true;
		}
		while (!(ret = rmsg_msg_peek_any(ep, &msg))) {
			idle = now_ms();
			k = chan_index(ch, nch, msg.channel);
			if (!ch[k].asked || ch[k].receiving)
				die("an answer to no request", -EPROTO);
			if (msg.kind == RMSG_MSG_EAGER) {
				check(k, &ch[k], msg.data, msg.len);
			} else {
				/* Pinned while it comes: only what it takes */
				if (msg.len > KV_MSG_MAX)
					die("an answer too large", -EMSGSIZE);
				ret = rmsg_msg_recv_into(ep, &msg, ch[k].rbuf,
							 msg.len, KV_RECV);
				if (ret == -EAGAIN) {
					rmsg_msg_unpeek(ep, &msg);
					break;	/* the SQ is full */
				}
				if (ret)
					die("rmsg_msg_recv_into", ret);
				ch[k].receiving = true;
			}
			rmsg_msg_release(ep, &msg);
		}
		if (ret && ret != -EAGAIN)
			die("rmsg_msg_peek_any", ret);
		for (done = 0, k = 0; k < nch; k++)
			done += ch[k].key == nkeys;
		if (now_ms() - idle > WAIT_MS)
			die("waiting for the server", -ETIMEDOUT);
	}
	/* An orderly close of each, and wait for every CLOSED. */
	for (k = 0; k < nch; k++)
		rmsg_chan_close(ep, ch[k].id, 0);
	while (open > 0) {
		if (client_events(ep, ch, nch, &open))
			idle = now_ms();
		else if (now_ms() - idle > WAIT_MS)
			die("closing", -ETIMEDOUT);
	}
	for (k = 0; k < nch; k++) {
		bytes += ch[k].bytes;
		free(ch[k].sbuf);
		free(ch[k].rbuf);
	}
	printf("client: %u channels, %u keys each, %lu value bytes checked, all correct\n",
	       nch, nkeys, bytes);
	free(ch);
	return 0;
}

int main(int argc, char **argv)
{
	bool srv = argc >= 3 && !strcmp(argv[1], "server");
	static struct server sv;	/* zeroed: an empty table */
	struct sockaddr_in sin;
	struct rmsg_ep *ep = NULL;
	int ret;

	if (argc < 3 || (!srv && (argc != 5 || strcmp(argv[1], "client")))) {
		fprintf(stderr, "usage: kvstore server ADDR[:PORT] [C]\n"
			"       kvstore client ADDR[:PORT] K N\n");
		return 2;
	}
	resolve(argv[2], &sin);
	/* The SQ takes one ARM per channel: room for many channels. */
	ret = rmsg_ep_open(&ep, 256, 0);
	if (ret)
		die("rmsg_ep_open", ret);
	rmsg_ep_set_timeout(ep, WAIT_MS);
	if (srv)
		ret = run_server(ep, &sin,
				 argc > 3 ? strtoul(argv[3], NULL, 0) : 0, &sv);
	else
		ret = run_client(ep, &sin, atoi(argv[3]), atoi(argv[4]));
	rmsg_ep_close(ep);
	if (srv)
		server_free(&sv);
	return ret;
}
