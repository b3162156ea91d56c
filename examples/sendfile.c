// SPDX-License-Identifier: BSD-2-Clause
/*
 * sendfile: a file over one channel by rendezvous. The receiver listens and
 * writes what comes to OUT; the sender connects and sends FILE, or SIZE
 * bytes of generated data, in chunks of up to 1 MiB. Each chunk is one
 * rendezvous message: the receiving kernel reads it with RDMA READ straight
 * from the sender's memory into the receiver's (zero copy, see
 * Documentation/rendezvous.rst). Both sides print the length and a 64-bit
 * FNV-1a checksum of the data; the sender's come last, in an ordinary
 * (eager) message, and the receiver checks its own against them.
 *
 *   sendfile recv ADDR[:PORT] OUT
 *   sendfile send ADDR[:PORT] FILE|SIZE    SIZE: digits, optional K, M, G
 *
 * Rendezvous moves bytes between registered memory: each side registers
 * one chunk buffer with rmsg_reg() and copies between it and the file.
 * rmsg_msg_send_zc() sends from it, rmsg_msg_recv_into() receives into it. (A
 * receiver may also take a rendezvous message into plain memory with
 * rmsg_msg_recv(), through a bounce region of the library's.) rmsg_msg_send()
 * of a plain malloc() buffer would go zero copy as well, its pages pinned
 * for each send; the region here is pinned once for all the chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rmsg.h>

#define CHUNK		(1U << 20)
#define WAIT_MS		30000	/* give up when nothing happens for this long */

/* The last message: what the sender sent. */
struct trailer {
	uint64_t len;
	uint64_t fnv;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "sendfile: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* 64-bit FNV-1a, continued from @h (start with 0xcbf29ce484222325). */
static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t len)
{
	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* "192.168.1.2" or "192.168.1.2:7472" */
static void parse_addr(char *s, struct sockaddr_in *sin)
{
	char *port = strchr(s, ':');

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port ? atoi(port + 1) : 7472);
	if (port)
		*port = '\0';
	if (inet_pton(AF_INET, s, &sin->sin_addr) != 1)
		die(s, -EINVAL);
}

/* "4096", "3M": bytes; -1 when @s is not a size (then it is a file). */
static long long parse_size(const char *s)
{
	char *end;
	long long n = strtoll(s, &end, 10);

	if (end == s || n < 0)
		return -1;
	switch (*end) {
	case 'G':
		n <<= 10;
		/* fall through */
	case 'M':
		n <<= 10;
		/* fall through */
	case 'K':
		n <<= 10;
		end++;
	}
	return *end ? -1 : n;
}

/*
 * The next event of @kind (and, for a send's or receive's completion, of
 * @user_data), sleeping in rmsg_ep_wait() (up to @ms, -1 for ever) while
 * there is none. Other events are not needed here: a channel that fails
 * completes each transfer with its error.
 */
static struct rmsg_event wait_event(struct rmsg_ep *ep, uint32_t kind,
				    uint64_t user_data, int ms)
{
	struct rmsg_event ev;
	int n;

	for (;;) {
		n = rmsg_ep_progress(ep, &ev, 1);
		if (n < 0)
			die("rmsg_ep_progress", n);
		if (n == 1 && ev.kind == kind &&
		    (kind != RMSG_CQE_OP || ev.user_data == user_data))
			return ev;
		if (n == 0 && rmsg_ep_wait(ep, ms) == 0)
			die("waiting for the peer", -ETIMEDOUT);
	}
}

/* Up to CHUNK bytes of the file, or of the generated data. */
static size_t fill(int fd, long long *left, uint64_t *gen, unsigned char *buf)
{
	size_t n = 0, i;
	ssize_t r;

	if (fd < 0) {
		n = *left < CHUNK ? *left : CHUNK;
		*left -= n;
		for (i = 0; i < n; i++) {
			/* xorshift64: the same bytes on every run */
			*gen ^= *gen << 13;
			*gen ^= *gen >> 7;
			*gen ^= *gen << 17;
			buf[i] = *gen >> 56;
		}
		return n;
	}
	while (n < CHUNK) {
		r = read(fd, buf + n, CHUNK - n);
		if (r < 0)
			die("read", -errno);
		if (r == 0)
			break;
		n += r;
	}
	return n;
}

static int sender(struct rmsg_ep *ep, struct sockaddr_in *sin,
		  const char *what, unsigned char *buf)
{
	struct trailer t = { 0, 0xcbf29ce484222325ULL };
	long long left = parse_size(what);
	uint64_t gen = 1, seq;
	struct rmsg_event ev;
	int fd = -1, ret;
	uint32_t ch;
	size_t n;

	if (left < 0) {
		fd = open(what, O_RDONLY);
		if (fd < 0)
			die(what, -errno);
	}
	ret = rmsg_chan_connect(ep, (struct sockaddr *)sin, sizeof(*sin), 0, 0);
	if (ret < 0)
		die("rmsg_chan_connect", ret);
	ev = wait_event(ep, RMSG_CQE_CONNECTED, 0, WAIT_MS);
	if (ev.res)
		die("connecting", ev.res);
	ch = ev.channel;

	/*
	 * One chunk at a time: the buffer belongs to the transfer until its
	 * completion. (Two buffers would let the next chunk be read from the
	 * file while one is on the wire.)
	 */
	for (seq = 1; (n = fill(fd, &left, &gen, buf)) > 0; seq++) {
		t.fnv = fnv1a(t.fnv, buf, n);
		t.len += n;
		ret = rmsg_msg_send_zc(ep, ch, buf, n, 0, seq);
		if (ret)
			die("rmsg_msg_send_zc", ret);
		ev = wait_event(ep, RMSG_CQE_OP, seq, WAIT_MS);
		if (ev.res)
			die("sending a chunk", ev.res);
	}
	ret = rmsg_msg_send(ep, ch, &t, sizeof(t), RMSG_MSG_WAIT, 0);
	if (ret)
		die("rmsg_msg_send", ret);
	/* An orderly close: the receiver reads everything, then ENOTCONN. */
	rmsg_chan_close(ep, ch, 0);
	ev = wait_event(ep, RMSG_CQE_CLOSED, 0, WAIT_MS);
	if (ev.res)
		die("closing", ev.res);
	printf("sent %llu bytes in %llu messages, fnv1a64 %016llx\n",
	       (unsigned long long)t.len, (unsigned long long)seq - 1,
	       (unsigned long long)t.fnv);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int receiver(struct rmsg_ep *ep, struct sockaddr_in *sin,
		    const char *out, unsigned char *buf)
{
	struct trailer got = { 0, 0xcbf29ce484222325ULL }, sent = { 0, 0 };
	struct rmsg_event ev;
	struct rmsg_msg msg;
	bool done = false;
	int fd, ret;
	uint32_t ch;
	ssize_t w;
	size_t n;

	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(out, -errno);
	ret = rmsg_ep_listen(ep, (struct sockaddr *)sin, sizeof(*sin), 0, 0);
	if (ret)
		die("rmsg_ep_listen", ret);
	printf("listening on port %d\n", ntohs(sin->sin_port));
	fflush(stdout);
	ch = wait_event(ep, RMSG_CQE_ACCEPTED, 0, -1).channel;

	/* Read the channel to its end: -ENOTCONN after the sender's close. */
	for (;;) {
		ret = rmsg_msg_peek(ep, ch, &msg);
		if (ret == -EAGAIN) {
			if (rmsg_ep_progress(ep, &ev, 1) == 0 &&
			    rmsg_ep_wait(ep, WAIT_MS) == 0)
				die("waiting for the sender", -ETIMEDOUT);
			continue;
		}
		if (ret == -ENOTCONN && done)
			break;
		if (ret)
			die("rmsg_msg_peek", ret);
		if (msg.kind == RMSG_MSG_EAGER) {
			/* The trailer. */
			if (msg.len != sizeof(sent) || done)
				die("an unexpected message", -EPROTO);
			memcpy(&sent, msg.data, sizeof(sent));
			rmsg_msg_release(ep, &msg);
			done = true;
			continue;
		}
		/* A chunk: its bytes come into buf, then the event. */
		ret = rmsg_msg_recv_into(ep, &msg, buf, CHUNK, 1);
		if (ret)
			die("rmsg_msg_recv_into", ret);
		rmsg_msg_release(ep, &msg);
		ev = wait_event(ep, RMSG_CQE_OP, 1, WAIT_MS);
		if (ev.res)
			die("receiving a chunk", ev.res);
		for (n = 0; n < ev.len; n += w) {
			w = write(fd, buf + n, ev.len - n);
			if (w < 0)
				die(out, -errno);
		}
		got.fnv = fnv1a(got.fnv, buf, ev.len);
		got.len += ev.len;
	}
	if (close(fd))
		die(out, -errno);
	printf("received %llu bytes, fnv1a64 %016llx\n",
	       (unsigned long long)got.len, (unsigned long long)got.fnv);
	if (got.len != sent.len || got.fnv != sent.fnv) {
		fprintf(stderr, "sendfile: the sender sent %llu bytes, fnv1a64 %016llx\n",
			(unsigned long long)sent.len,
			(unsigned long long)sent.fnv);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin;
	unsigned char *buf;
	struct rmsg_ep *ep = NULL;
	uint32_t handle;
	int ret;

	if (argc != 4 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv"))) {
		fprintf(stderr, "usage: sendfile recv ADDR[:PORT] OUT\n"
			"       sendfile send ADDR[:PORT] FILE|SIZE\n");
		return 2;
	}
	parse_addr(argv[2], &sin);
	ret = rmsg_ep_open(&ep, 64, 0);
	if (ret)
		die("rmsg_ep_open", ret);
	rmsg_ep_set_timeout(ep, WAIT_MS);
	/* Pinned until the endpoint closes; counts in RLIMIT_MEMLOCK. */
	buf = malloc(CHUNK);
	if (!buf)
		die("malloc", -ENOMEM);
	ret = rmsg_reg(ep, buf, CHUNK, &handle);
	if (ret)
		die("rmsg_reg", ret);
	if (!strcmp(argv[1], "send"))
		ret = sender(ep, &sin, argv[3], buf);
	else
		ret = receiver(ep, &sin, argv[3], buf);
	rmsg_ep_close(ep);
	free(buf);
	return ret;
}
