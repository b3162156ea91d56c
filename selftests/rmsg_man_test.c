// SPDX-License-Identifier: GPL-2.0
/*
 * The examples of the man pages do what their text says. rmsg(7)'s server
 * loop, taken from the page as it is printed (tools/man-example.sh, into
 * build/man/rmsg7_server.inc), runs in a child, and clients send it small
 * messages and large ones (rendezvous, from malloc() memory) on several
 * channels: each must come back on its channel, byte for byte, in order.
 * The loop never returns: the child is killed at the end.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define MAN_PORT	7471	/* the page's */
#define MAN_QUOTE(x)	#x
#define MAN_STR(x)	MAN_QUOTE(x)
#define MAN_CHANNELS	3
#define MAN_WAIT_MS	60000

/* rmsg(7), "A server's loop", verbatim. */
static void man_server(void)
{
#include "rmsg7_server.inc"
}

static void man_fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 12));
}

FIXTURE(man) {
	pid_t server;
	struct rmsg_ep *ep;
};

FIXTURE_SETUP(man)
{
	self->server = fork();
	ASSERT_LE(0, self->server);
	if (!self->server) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Its "channel N open" lines are not KTAP. */
		if (!freopen("/dev/null", "w", stdout))
			_exit(1);
		man_server();	/* never returns */
		_exit(1);
	}
	ASSERT_EQ(0, rmsg_ep_open(&self->ep, 64, 0));
	rmsg_ep_set_timeout(self->ep, MAN_WAIT_MS);
}

FIXTURE_TEARDOWN(man)
{
	rmsg_ep_drop(&self->ep);
	if (self->server > 0) {
		kill(self->server, SIGKILL);
		waitpid(self->server, NULL, 0);
	}
}

/*
 * Each of MAN_CHANNELS channels sends, in turn, messages of every size
 * below (eager, at the eager limit's edge, rendezvous up to 4 MiB) and
 * reads each echo before the next.
 */
TEST_F_TIMEOUT(man, rmsg7_server_echoes_every_size, 300)
{
	static const size_t sizes[] = { 1, 100, 4000, 70000, 1 << 20,
					4 << 20 };
	const size_t max = 4 << 20;
	unsigned char *out = malloc(max), *in = malloc(max);
	char addr[INET_ADDRSTRLEN];
	struct sockaddr_in sin;
	int ch[MAN_CHANNELS], c, i, ret;
	long stop;

	ASSERT_TRUE(out && in);
	ASSERT_TRUE(rmsg_local_addr(&sin, MAN_PORT))
		TH_LOG("RMSG_LOCAL_ADDR not set");
	inet_ntop(AF_INET, &sin.sin_addr, addr, sizeof(addr));
	for (c = 0; c < MAN_CHANNELS; c++) {
		/* The server may not listen yet: dial until it does. */
		stop = rmsg_now_ms() + MAN_WAIT_MS;
		do {
			ret = rmsg_chan_dial(self->ep, addr, MAN_STR(MAN_PORT), c,
					     0);
			if (ret == -ECONNREFUSED)
				usleep(100000);
		} while (ret == -ECONNREFUSED && rmsg_now_ms() < stop);
		ASSERT_LE(0, ret) TH_LOG("dial %d: %s", c, strerror(-ret));
		ch[c] = ret;
	}
	for (i = 0; i < (int)ARRAY_SIZE(sizes); i++) {
		for (c = 0; c < MAN_CHANNELS; c++) {
			man_fill(out, sizes[i], i * MAN_CHANNELS + c);
			memset(in, 0, sizes[i]);
			ret = rmsg_msg_send(self->ep, ch[c], out, sizes[i],
					    RMSG_MSG_WAIT |
					    RMSG_SEND_SKIP_SUCCESS, 0);
			ASSERT_EQ(0, ret) TH_LOG("send %zu on %d: %s",
						 sizes[i], c, strerror(-ret));
			ret = rmsg_msg_recv(self->ep, ch[c], in, max,
					    RMSG_MSG_WAIT);
			ASSERT_EQ((int)sizes[i], ret)
				TH_LOG("echo of %zu on %d: %d", sizes[i], c,
				       ret);
			ASSERT_EQ(0, memcmp(out, in, sizes[i]))
				TH_LOG("echo of %zu on %d differs", sizes[i],
				       c);
		}
	}
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
