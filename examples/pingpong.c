// SPDX-License-Identifier: BSD-2-Clause
/*
 * pingpong: the smallest complete rmsg program. One side listens and
 * accepts, the other dials, and a message goes back and forth N times with
 * blocking calls, as with sockets: rmsg_ep_accept(), rmsg_chan_dial(),
 * rmsg_msg_send() and rmsg_msg_recv() with RMSG_MSG_WAIT, two calls a
 * round, no event loop and no -EAGAIN. The sends ask for no completion
 * event unless they fail (RMSG_SEND_SKIP_SUCCESS): nothing to take.
 *
 *   pingpong server ADDR[:PORT]        echo one client until it closes
 *   pingpong client HOST[:PORT] [N]    N round trips (default 10)
 *
 * ADDR is an IPv4 address of an RDMA device (rxe0's, for Soft-RoCE); HOST
 * that address, or a name for it.
 * Build: cc pingpong.c $(pkg-config --cflags --libs rmsg)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <rmsg.h>

static void die(const char *what, int err)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* "192.168.1.2" or "192.168.1.2:7471" */
static void parse_addr(char *s, struct sockaddr_in *sin)
{
	char *port = strchr(s, ':');

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port ? atoi(port + 1) : 7471);
	if (port)
		*port = '\0';
	if (inet_pton(AF_INET, s, &sin->sin_addr) != 1)
		die(s, -EINVAL);
}

/*
 * The end of a channel is an event: take it from rmsg_ep_progress(),
 * sleeping in rmsg_ep_wait() (up to @ms, -1 for ever) while there is none.
 */
static struct rmsg_event wait_event(struct rmsg_ep *ep, uint32_t kind, int ms)
{
	struct rmsg_event ev;
	int n;

	for (;;) {
		n = rmsg_ep_progress(ep, &ev, 1);
		if (n < 0)
			die("rmsg_ep_progress", n);
		if (n == 1 && ev.kind == kind && ev.res)
			die("channel", ev.res);
		if (n == 1 && ev.kind == kind)
			return ev;
		if (n == 0 && rmsg_ep_wait(ep, ms) == 0)
			die("waiting for the peer", -ETIMEDOUT);
	}
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int i, len, ret, rounds = argc > 3 ? atoi(argv[3]) : 10;
	char ping[64], pong[64], *port;
	struct sockaddr_in sin;
	struct rmsg_ep *ep = NULL;
	double t, sum = 0;
	uint32_t ch;

	if (argc < 3 || (strcmp(argv[1], "server") &&
			 strcmp(argv[1], "client")) || rounds < 1) {
		fprintf(stderr, "usage: pingpong server|client ADDR[:PORT] [N]\n");
		return 2;
	}
	ret = rmsg_ep_open(&ep, 64, 0);
	if (ret)
		die("rmsg_ep_open", ret);

	if (!strcmp(argv[1], "server")) {
		parse_addr(argv[2], &sin);
		ret = rmsg_ep_listen(ep, (struct sockaddr *)&sin, sizeof(sin),
				     0, 0);
		if (ret)
			die("rmsg_ep_listen", ret);
		printf("server: listening on port %d\n", ntohs(sin.sin_port));
		fflush(stdout);
		ret = rmsg_ep_accept(ep, NULL);	/* waits: no time limit yet */
		if (ret < 0)
			die("rmsg_ep_accept", ret);
		ch = ret;
		rmsg_ep_set_timeout(ep, 10000);	/* no call waits longer */
		/* Echo until the client closes: -ENOTCONN once all is read. */
		for (i = 0;; i++) {
			len = rmsg_msg_recv(ep, ch, pong, sizeof(pong),
					    RMSG_MSG_WAIT);
			if (len == -ENOTCONN)
				break;
			if (len < 0)
				die("rmsg_msg_recv", len);
			ret = rmsg_msg_send(ep, ch, pong, len, RMSG_MSG_WAIT |
					    RMSG_SEND_SKIP_SUCCESS, i);
			if (ret)
				die("rmsg_msg_send", ret);
		}
		printf("server: %d round trips\n", i);
	} else {
		rmsg_ep_set_timeout(ep, 10000);	/* no call waits longer */
		port = strrchr(argv[2], ':');
		if (port)
			*port++ = '\0';
		ret = rmsg_chan_dial(ep, argv[2], port ? port : "7471", 0, 0);
		if (ret < 0)
			die("rmsg_chan_dial", ret);
		ch = ret;
		for (i = 0; i < rounds; i++) {
			len = snprintf(ping, sizeof(ping), "ping %d", i) + 1;
			t = now_us();
			ret = rmsg_msg_send(ep, ch, ping, len, RMSG_MSG_WAIT |
					    RMSG_SEND_SKIP_SUCCESS, i);
			if (ret)
				die("rmsg_msg_send", ret);
			ret = rmsg_msg_recv(ep, ch, pong, sizeof(pong),
					    RMSG_MSG_WAIT);
			if (ret < 0)
				die("rmsg_msg_recv", ret);
			if (ret != len || memcmp(ping, pong, len))
				die("the echo differs", -EBADMSG);
			t = now_us() - t;
			sum += t;
			printf("%s: %.1f us\n", ping, t);
		}
		printf("client: %d round trips, %.1f us on average\n", rounds,
		       sum / rounds);
		/* An orderly close: the server reads everything, then ENOTCONN. */
		rmsg_chan_close(ep, ch, 0);
		wait_event(ep, RMSG_CQE_CLOSED, 10000);
	}
	rmsg_ep_close(ep);
	return 0;
}
