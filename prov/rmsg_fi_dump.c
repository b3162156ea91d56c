// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: the state of a program's endpoints, on demand.
 *
 * With FI_RMSG_DUMP=1 the provider takes SIGUSR2 (when the program left
 * it at its default): the signal only counts, and the next progress of
 * each endpoint (rfi_ep_progress(), which a polling program calls all
 * the time) prints what the endpoint knows of its peers, channels,
 * receives and unexpected messages to stderr, each line starting with
 * "rmsg dump". A job that hangs shows so which send waits for what.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rmsg_fi.h"

unsigned int rfi_dump_gen;

/* Lock-free atomics, so safe in a signal handler. */
static void rfi_dump_signal(int sig)
{
	__atomic_fetch_add(&rfi_dump_gen, 1, __ATOMIC_RELAXED);
}

/* FI_RMSG_DUMP: SIGUSR2 asks for a dump, unless the program has it. */
void rfi_dump_init(void)
{
	static bool done;
	struct sigaction sa, old;
	int on = 0;

	if (done)
		return;
	done = true;
	if (fi_param_get_bool(&rfi_prov, "dump", &on) || !on)
		return;
	if (sigaction(SIGUSR2, NULL, &old) || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO)) {
		RFI_WARN("FI_RMSG_DUMP: SIGUSR2 is the program's: no dumps\n");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rfi_dump_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}

/* An AV index as the dump prints it: -1 for none (FI_ADDR_NOTAVAIL). */
static long long rfi_dump_addr(fi_addr_t addr)
{
	return addr == FI_ADDR_NOTAVAIL ? -1LL : (long long)addr;
}

static const char *rfi_dump_name(const struct sockaddr_in *sin, char *buf,
				 size_t len)
{
	char a[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s:%u", a, ntohs(sin->sin_port));
	return buf;
}

static size_t rfi_dump_qlen(const struct rfi_op *op)
{
	size_t n = 0;

	for (; op; op = op->next)
		n++;
	return n;
}

/* At most this many receives and unexpected messages are listed. */
#define RFI_DUMP_LIST	8

void rfi_ep_dump(struct rfi_ep *ep)
{
	char me[32], nm[32];
	struct rmsg_ep_stats st;
	struct rfi_unexp *u;
	struct rfi_op *op;
	size_t i, n, used = 0;
	int pid = (int)getpid(), q;

	ep->dump_gen = rfi_dump_asked();
	rfi_dump_name(&ep->name, me, sizeof(me));
	for (i = 0; i < ep->nslots; i++)
		used += ep->slots[i].kind != RFI_SLOT_FREE;
	fprintf(stderr,
		"rmsg dump %d %s: backlog %s greets_due %zu held_retry %zu release_next_due %d slots %zu/%zu chans opened %llu given up %llu\n",
		pid, me, ep->backlog == RFI_NO_PEER ? "none" : "some",
		ep->greets_due, ep->held_retry, ep->release_next_due, used,
		ep->nslots, (unsigned long long)ep->chans_opened,
		(unsigned long long)ep->chans_given_up);
	if (!ioctl(rmsg_ep_fd(ep->rep), RMSG_IOC_EP_STATS, &st))
		fprintf(stderr,
			"rmsg dump %d %s: kernel sends %llu waited %llu credits out %llu in %llu wakes out %llu in %llu\n",
			pid, me, (unsigned long long)st.sends,
			(unsigned long long)st.send_waits,
			(unsigned long long)st.credits_out,
			(unsigned long long)st.credits_in,
			(unsigned long long)st.wakes_out,
			(unsigned long long)st.wakes_in);
	for (i = 0; i < ep->npeers; i++) {
		struct rfi_peer *p = &ep->peers[i];
		struct sockaddr_in sin;

		if (p->chan < 0 && !p->queue && p->move_to < 0)
			continue;
		if (!ep->av || rfi_av_addr(ep->av, i, &sin))
			snprintf(nm, sizeof(nm), "(removed)");
		else
			rfi_dump_name(&sin, nm, sizeof(nm));
		op = p->queue;
		fprintf(stderr,
			"rmsg dump %d %s: peer %zu %s chan %d ours %d open %d move_to %d last_sent %d greet_later %d backlog %d queue %zu",
			pid, me, i, nm, p->chan, p->ours, p->open, p->move_to,
			p->last_sent, p->greet_later, p->in_backlog,
			rfi_dump_qlen(op));
		if (op)
			fprintf(stderr, " (first: %zu bytes tag %#llx sent %u done %u)",
				op->len, (unsigned long long)op->tag, op->sent,
				op->done);
		fputc('\n', stderr);
	}
	for (i = 0; i < ep->nchans; i++) {
		struct rfi_chan *c = &ep->chans[i];

		if (!c->used && !c->named)
			continue;
		fprintf(stderr,
			"rmsg dump %d %s: chan %zu used %d user_data %#llx named %d %s src %lld pending %d held %d release_due %d\n",
			pid, me, i, c->used, (unsigned long long)c->ud,
			c->named,
			c->named ? rfi_dump_name(&c->name, nm, sizeof(nm)) : "-",
			rfi_dump_addr(c->src),
			c->has_pending, c->held != NULL, c->release_due);
	}
	for (q = 0; q < 2; q++) {
		n = 0;
		TAILQ_FOREACH(op, &ep->posted[q], link) {
			if (n++ >= RFI_DUMP_LIST)
				continue;
			fprintf(stderr,
				"rmsg dump %d %s: posted %s from %lld tag %#llx ignore %#llx len %zu\n",
				pid, me, q ? "tagged" : "msg",
				rfi_dump_addr(op->addr),
				(unsigned long long)op->tag,
				(unsigned long long)op->ignore, op->len);
		}
		if (n)
			fprintf(stderr, "rmsg dump %d %s: posted %s: %zu\n",
				pid, me, q ? "tagged" : "msg", n);
		n = 0;
		TAILQ_FOREACH(u, &ep->unexp[q], link) {
			if (n++ >= RFI_DUMP_LIST)
				continue;
			fprintf(stderr,
				"rmsg dump %d %s: unexpected %s from %lld tag %#llx len %u held %d arrived %d claimed %d waiting %d\n",
				pid, me, q ? "tagged" : "msg",
				rfi_dump_addr(u->src),
				(unsigned long long)u->hdr.tag, u->hdr.len,
				u->held, u->arrived, u->claimed,
				u->waiting != NULL);
		}
		if (n)
			fprintf(stderr, "rmsg dump %d %s: unexpected %s: %zu\n",
				pid, me, q ? "tagged" : "msg", n);
	}
	fflush(stderr);
}
