// SPDX-License-Identifier: BSD-2-Clause
/*
 * epoll_server: an echo server for many clients in one thread, sleeping in
 * epoll_wait() beside other file descriptors (here a signalfd), and a
 * client that opens K channels on one endpoint and checks every echo byte
 * for byte.
 *
 *   epoll_server server ADDR[:PORT] [C]     exit after C channels have come
 *                                            and gone (0: at SIGINT/SIGTERM)
 *   epoll_server client ADDR[:PORT] K [M]   K channels, M messages each
 *
 * An endpoint is waited on through its file descriptor, rmsg_ep_fd(ep), which
 * is
 * readable while an event waits on its completion ring. A message that
 * arrives is such an event only on a channel that was armed, so the loop
 * is: take the events (rmsg_ep_progress()), arm every channel
 * (rmsg_ep_arm()), read every message there (rmsg_msg_peek_any()), and sleep
 * only when there was none: a message that came before the arm is read
 * then, one that comes after it wakes epoll_wait(). See
 * Documentation/messages.rst, "Waiting".
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <rmsg.h>

#define MAX_LEN		2000	/* the longest message the client sends */
#define WINDOW		4	/* its messages out per channel, unanswered */
#define WAIT_MS		30000	/* give up when nothing happens for this long */

static void die(const char *what, int err)
{
	fprintf(stderr, "epoll_server: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* "192.168.1.2" or "192.168.1.2:7473" */
static void parse_addr(char *s, struct sockaddr_in *sin)
{
	char *port = strchr(s, ':');

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port ? atoi(port + 1) : 7473);
	if (port)
		*port = '\0';
	if (inet_pton(AF_INET, s, &sin->sin_addr) != 1)
		die(s, -EINVAL);
}

static int run_server(struct rmsg_ep *ep, struct sockaddr_in *sin,
		      unsigned long want)
{
	unsigned long accepted = 0, closed = 0, msgs = 0, bytes = 0, errs = 0;
	struct epoll_event ee = { .events = EPOLLIN }, out[2];
	struct rmsg_event ev[64];
	struct rmsg_msg msg;
	bool busy, stop = false;
	int efd, sfd, n, i, ret;
	sigset_t sigs;

	ret = rmsg_ep_listen(ep, (struct sockaddr *)sin, sizeof(*sin), 0, 0);
	if (ret)
		die("rmsg_ep_listen", ret);
	printf("server: listening on port %d\n", ntohs(sin->sin_port));
	fflush(stdout);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || efd < 0)
		die("signalfd, epoll_create1", -errno);
	ee.data.fd = rmsg_ep_fd(ep);
	if (epoll_ctl(efd, EPOLL_CTL_ADD, rmsg_ep_fd(ep), &ee))
		die("epoll_ctl", -errno);
	ee.data.fd = sfd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, sfd, &ee))
		die("epoll_ctl", -errno);

	while (!stop && (!want || closed < want)) {
		/* Channels opening and closing, sends completing. */
		busy = false;
		n = rmsg_ep_progress(ep, ev, 64);
		if (n < 0)
			die("rmsg_ep_progress", n);
		for (i = 0; i < n; i++) {
			busy = true;
			if (ev[i].kind == RMSG_CQE_ACCEPTED && !ev[i].res)
				accepted++;
			else if (ev[i].kind == RMSG_CQE_CLOSED)
				closed++;
			else if (ev[i].kind == RMSG_CQE_OP && ev[i].res)
				errs++;
		}

		/* Arm first, then read: nothing slips in between. */
		ret = rmsg_ep_arm(ep);
		if (ret == -EAGAIN)
			busy = true;	/* the SQ was full: no sleep */
		else if (ret)
			die("rmsg_ep_arm", ret);
		while ((ret = rmsg_msg_peek_any(ep, &msg)) == 0) {
			/*
			 * Echo, then give the message back. A client whose
			 * block is full holds everyone up for a moment here;
			 * a server that must never wait would keep the
			 * message and try again after rmsg_ep_progress().
			 */
			if (msg.kind != RMSG_MSG_EAGER)
				errs++;	/* rendezvous: declined by release */
			else if (rmsg_msg_send(ep, msg.channel, msg.data,
					       msg.len, RMSG_MSG_WAIT, 0))
				errs++;
			rmsg_msg_release(ep, &msg);
			msgs++;
			bytes += msg.len;
			busy = true;
		}
		if (ret == -EPROTO) {
			rmsg_chan_close(ep, msg.channel,
					RMSG_CLOSE_ABORT);
			errs++;
		} else if (ret != -EAGAIN) {
			die("rmsg_msg_peek_any", ret);
		}
		/*
		 * Sleep only when nothing happened. (A send that waited put
		 * the events it met aside, where epoll cannot see them: the
		 * next rmsg_ep_progress() returns them.)
		 */
		if (busy)
			continue;
		n = epoll_wait(efd, out, 2, -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait", -errno);
		for (i = 0; i < n; i++)
			if (out[i].data.fd == sfd)
				stop = true;
	}
	printf("server: %lu channels, %lu closed, %lu messages echoed (%lu bytes), %lu errors\n",
	       accepted, closed, msgs, bytes, errs);
	close(efd);
	close(sfd);
	return errs ? 1 : 0;
}

struct chan {
	uint32_t id;
	unsigned int sent, got;
};

/* Message @s of channel @k: its length, and its bytes into @buf. */
static unsigned int pattern(unsigned int k, unsigned int s, unsigned char *buf)
{
	unsigned int j, len = 1 + (k * 131 + s * 977) % MAX_LEN;

	for (j = 0; j < len; j++)
		buf[j] = k * 7 + s * 13 + j * 3 + (j >> 8);
	return len;
}

static int run_client(struct rmsg_ep *ep, struct sockaddr_in *sin,
		      unsigned int nch, unsigned int nmsg)
{
	unsigned char want[MAX_LEN];
	unsigned int k, len, open = 0, done = 0;
	unsigned long bytes = 0;
	struct rmsg_event ev[64];
	struct chan *ch = calloc(nch, sizeof(*ch));
	struct rmsg_msg msg;
	bool busy;
	int n, i, ret;

	if (!nch || !nmsg || !ch)
		die("client", -EINVAL);
	for (k = 0; k < nch; k++) {
		ret = rmsg_chan_connect(ep, (struct sockaddr *)sin,
					sizeof(*sin),
					k, 0);
		if (ret < 0)
			die("rmsg_chan_connect", ret);
		ch[k].id = ret;
	}
	while (done < nch) {
		busy = false;
		n = rmsg_ep_progress(ep, ev, 64);
		if (n < 0)
			die("rmsg_ep_progress", n);
		for (i = 0; i < n; i++) {
			busy = true;
			if (ev[i].kind == RMSG_CQE_CONNECTED && !ev[i].res)
				open++;
			else if (ev[i].kind != RMSG_CQE_OP || ev[i].res)
				die("a channel failed",
				    ev[i].res ? ev[i].res : -EPIPE);
		}
		/* Keep WINDOW messages out on every channel. */
		for (k = 0; open == nch && k < nch; k++) {
			while (ch[k].sent < nmsg &&
			       ch[k].sent - ch[k].got < WINDOW) {
				len = pattern(k, ch[k].sent, want);
				ret = rmsg_msg_send(ep, ch[k].id, want, len, 0,
						    0);
				if (ret == -EAGAIN)
					break;	/* after rmsg_ep_progress() */
				if (ret)
					die("rmsg_msg_send", ret);
				ch[k].sent++;
				busy = true;
			}
		}
		/* Each echo must be the message sent, byte for byte. */
		while (!(ret = rmsg_msg_peek_any(ep, &msg))) {
			for (k = 0; k < nch && ch[k].id != msg.channel; k++)
				;
			if (k == nch || ch[k].got >= ch[k].sent)
				die("a message nobody asked for", -EPROTO);
			len = pattern(k, ch[k].got, want);
			if (msg.len != len || memcmp(msg.data, want, len)) {
				fprintf(stderr, "channel %u, echo %u: %u bytes, not the %u sent\n",
					k, ch[k].got, msg.len, len);
				exit(1);
			}
			rmsg_msg_release(ep, &msg);
			bytes += len;
			if (++ch[k].got == nmsg)
				done++;
			busy = true;
		}
		if (ret != -EAGAIN)
			die("rmsg_msg_peek_any", ret);
		/* rmsg_ep_wait() is the short way: arm, look, poll(). */
		if (!busy && rmsg_ep_wait(ep, WAIT_MS) == 0)
			die("waiting for echoes", -ETIMEDOUT);
	}
	/* An orderly close of each, and wait for every CLOSED. */
	for (k = 0; k < nch; k++)
		rmsg_chan_close(ep, ch[k].id, 0);
	while (open > 0) {
		n = rmsg_ep_progress(ep, ev, 64);
		if (n < 0)
			die("rmsg_ep_progress", n);
		for (i = 0; i < n; i++)
			if (ev[i].kind == RMSG_CQE_CLOSED)
				open--;
		if (!n && rmsg_ep_wait(ep, WAIT_MS) == 0)
			die("closing", -ETIMEDOUT);
	}
	printf("client: %u channels, %u echoes each (%lu bytes), all correct\n",
	       nch, nmsg, bytes);
	free(ch);
	return 0;
}

int main(int argc, char **argv)
{
	bool srv = argc >= 3 && !strcmp(argv[1], "server");
	struct sockaddr_in sin;
	struct rmsg_ep *ep = NULL;
	int ret;

	if (argc < 3 || (!srv && (argc < 4 || strcmp(argv[1], "client")))) {
		fprintf(stderr, "usage: epoll_server server ADDR[:PORT] [C]\n"
			"       epoll_server client ADDR[:PORT] K [M]\n");
		return 2;
	}
	parse_addr(argv[2], &sin);
	/* The SQ takes one ARM per channel: room for many channels. */
	ret = rmsg_ep_open(&ep, 256, 0);
	if (ret)
		die("rmsg_ep_open", ret);
	rmsg_ep_set_timeout(ep, WAIT_MS);
	if (srv)
		ret = run_server(ep, &sin,
				 argc > 3 ? strtoul(argv[3], NULL, 0) : 0);
	else
		ret = run_client(ep, &sin, atoi(argv[3]),
				 argc > 4 ? atoi(argv[4]) : 1000);
	rmsg_ep_close(ep);
	return ret;
}
