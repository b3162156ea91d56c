/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libfabric programs of the selftests (fi_wait.c, fi_unexp.c,
 * fi_cross.c) share: two RDM endpoints of the rmsg provider in one domain,
 * a and b, each with a CQ of its own, a's address vector naming b; a check
 * that prints a line; an error that ends the program with exit status 2;
 * the bytes of a message and their check.
 */
#ifndef RMSG_FI_TEST_H
#define RMSG_FI_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t peer;		/* a's address of b */
};

static const char *test_name;
static struct fi_info *test_hints, *test_info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct side a, b;
static int failed;
/* Capabilities asked for besides FI_MSG | FI_TAGGED, set before test_open(). */
static uint64_t test_caps;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAILED", what);
	if (!ok)
		failed = 1;
}

/* A message's bytes, from @seed; same() says whether they came whole. */
static inline void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * (seed * 2 + 1) + seed);
}

static inline int same(const unsigned char *p, size_t len,
		       unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * (seed * 2 + 1) + seed))
			return 0;
	return 1;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s\n", test_name, what, fi_strerror(-ret));
	exit(2);
}

static void open_side(struct side *s, enum fi_wait_obj wait_obj,
		      size_t cq_size)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = wait_obj,
		.size = cq_size,
	};
	int ret;

	ret = fi_cq_open(domain, &cq_attr, &s->cq, NULL);
	if (ret)
		die("fi_cq_open", ret);
	ret = fi_endpoint(domain, test_info, &s->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(s->ep, &av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(s->ep);
	if (ret)
		die("endpoint", ret);
}

/* The provider's fabric, domain (@threading, or its default for 0) and AV. */
static void test_fabric(const char *name, enum fi_threading threading)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	test_name = name;
	test_hints = fi_allocinfo();
	if (!test_hints)
		die("fi_allocinfo", -FI_ENOMEM);
	test_hints->caps = FI_MSG | FI_TAGGED | test_caps;
	test_hints->ep_attr->type = FI_EP_RDM;
	test_hints->fabric_attr->prov_name = strdup("rmsg");
	if (threading)
		test_hints->domain_attr->threading = threading;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, test_hints,
			 &test_info);
	if (ret)
		die("fi_getinfo -p rmsg", ret);
	ret = fi_fabric(test_info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_domain(fabric, test_info, &domain, NULL);
	if (!ret)
		ret = fi_av_open(domain, &av_attr, &av, NULL);
	if (ret)
		die("fabric, domain, AV", ret);
}

/*
 * test_fabric(), then endpoints a and b with CQs of @cq_size and
 * @wait_obj, and b's name in a's AV. Inline, as test_close(): a program
 * of connected endpoints (fi_msg_ep.c) uses neither.
 */
static inline void test_open(const char *name, enum fi_threading threading,
			     enum fi_wait_obj wait_obj, size_t cq_size)
{
	char addr[64];
	size_t len;
	int ret;

	test_fabric(name, threading);
	open_side(&a, wait_obj, cq_size);
	open_side(&b, wait_obj, cq_size);
	len = sizeof(addr);
	ret = fi_getname(&b.ep->fid, addr, &len);
	if (!ret && fi_av_insert(av, addr, 1, &a.peer, 0, NULL) != 1)
		ret = -FI_EINVAL;
	if (ret)
		die("b's name", ret);
}

/* Close what test_fabric() opened. */
static void test_close_fabric(void)
{
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(test_info);
	fi_freeinfo(test_hints);
}

/* Close what test_open() opened, a's endpoint first (unless closed). */
static inline void test_close(void)
{
	if (a.ep)
		fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	test_close_fabric();
}

#endif /* RMSG_FI_TEST_H */
