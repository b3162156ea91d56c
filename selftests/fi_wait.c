// SPDX-License-Identifier: GPL-2.0
/*
 * fi_wait: the rmsg provider's wait object, through libfabric's own API
 * (libfabric_test.sh runs it in the test guest with FI_PROVIDER_PATH set).
 *
 * Two RDM endpoints of one domain, each with its own CQ opened with
 * FI_WAIT_FD. A thread sends from a to b after a pause; the main thread
 * sleeps in epoll_wait() on b's CQ descriptor (fi_control(FI_GETWAIT))
 * after fi_trywait() said it may, and must be woken by the message, whose
 * bytes are then checked. Then the same through fi_cq_sread() with a
 * limit, and a fi_cq_sread() with nothing coming must return -FI_EAGAIN
 * when its limit passes (not hang, not invent a completion).
 *
 * Prints one line per check and exits 0 when all hold.
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "fi_test.h"

#define MSG_LEN		4000	/* eager, with its header */
#define LIMIT_MS	20000	/* for what must come */

static unsigned char sent[2][MSG_LEN];

/* Send message @i from a to b after a pause, and see its completion. */
static void *sender(void *arg)
{
	int i = (int)(long)arg;
	struct fi_cq_tagged_entry e;
	ssize_t n;

	usleep(300 * 1000);
	while ((n = fi_tsend(a.ep, sent[i], MSG_LEN, NULL, a.peer, 7 + i,
			     &sent[i])) == -FI_EAGAIN)
		fi_cq_read(a.cq, &e, 0);	/* progress makes room */
	if (n)
		die("fi_tsend", (int)n);
	while ((n = fi_cq_read(a.cq, &e, 1)) == -FI_EAGAIN)
		;
	if (n != 1)
		die("the send's completion", (int)n);
	return NULL;
}

static void post_recv(void *buf, uint64_t tag, void *ctx)
{
	ssize_t n = fi_trecv(b.ep, buf, MSG_LEN, NULL, FI_ADDR_UNSPEC, tag, 0,
			     ctx);

	if (n)
		die("fi_trecv", (int)n);
}

int main(void)
{
	static unsigned char got[2][MSG_LEN];
	struct fi_cq_tagged_entry e;
	struct epoll_event ev;
	struct fid *fids[1];
	pthread_t t;
	int fd = -1, ret, wakeups = 0, i;
	ssize_t n = -FI_EAGAIN;

	for (i = 0; i < MSG_LEN; i++) {
		sent[0][i] = (unsigned char)(i * 7 + 1);
		sent[1][i] = (unsigned char)(i * 13 + 5);
	}
	test_open("fi_wait", FI_THREAD_SAFE, FI_WAIT_FD, 64);

	ret = fi_control(&b.cq->fid, FI_GETWAIT, &fd);
	check(!ret && fd >= 0, "FI_GETWAIT gives a descriptor");
	if (ret || fd < 0)
		return 1;

	/* 1: asleep in epoll_wait() until the message comes. */
	post_recv(got[0], 7, got[0]);
	pthread_create(&t, NULL, sender, (void *)0L);
	fids[0] = &b.cq->fid;
	for (i = 0; i < 1000 && n == -FI_EAGAIN; i++) {
		ret = fi_trywait(fabric, fids, 1);
		if (!ret) {
			ret = epoll_wait(fd, &ev, 1, LIMIT_MS);
			if (ret != 1)
				break;		/* nothing woke it */
			wakeups++;
		} else if (ret != -FI_EAGAIN) {
			die("fi_trywait", ret);
		}
		n = fi_cq_read(b.cq, &e, 1);
	}
	pthread_join(t, NULL);
	check(wakeups > 0, "fi_trywait() let it sleep, and the message woke it");
	check(n == 1 && e.op_context == got[0] && e.len == MSG_LEN &&
	      e.tag == 7 && !memcmp(got[0], sent[0], MSG_LEN),
	      "the completion came with every byte");

	/* 2: fi_cq_sread() with a limit. */
	post_recv(got[1], 8, got[1]);
	pthread_create(&t, NULL, sender, (void *)1L);
	n = fi_cq_sread(b.cq, &e, 1, NULL, LIMIT_MS);
	pthread_join(t, NULL);
	check(n == 1 && e.op_context == got[1] && e.len == MSG_LEN &&
	      e.tag == 8 && !memcmp(got[1], sent[1], MSG_LEN),
	      "fi_cq_sread() returned the next message, every byte");

	/* 3: nothing comes: the limit ends it. */
	n = fi_cq_sread(b.cq, &e, 1, NULL, 300);
	check(n == -FI_EAGAIN, "fi_cq_sread() with nothing coming: -FI_EAGAIN");

	test_close();
	return failed;
}
