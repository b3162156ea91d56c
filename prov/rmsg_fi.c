// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: the provider, fi_getinfo()'s answer, the fabric, the
 * domain and address vectors.
 *
 * libfabric's core does not check a provider's answer against the hints
 * again (src/fabric.c of 1.17): rfi_getinfo() matches every attribute it
 * was asked for itself, and answers -FI_ENODATA for anything it cannot
 * give. It leaves fabric_attr->prov_name NULL: the core fills it in (a
 * name already there would be taken for a utility provider's layering).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmsg_fi.h"

/* --- no-ops every object needs in its tables -------------------------- */

int rfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int rfi_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int rfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}

int rfi_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int rfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context)
{
	return -FI_ENOSYS;
}

/* Endpoints and passive endpoints have no option of their own. */
int rfi_no_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen)
{
	return -FI_ENOPROTOOPT;
}

int rfi_no_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

/* Nor transmit or receive contexts (scalable endpoints). */
int rfi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		  struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

int rfi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

/*
 * fi_cq_strerror() and fi_eq_strerror(): an error's prov_errno is the
 * errno behind it (either sign).
 */
const char *rfi_strerror(int prov_errno, char *buf, size_t len)
{
	const char *s = strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len)
		snprintf(buf, len, "%s", s);
	return buf && len ? buf : s;
}

/* The end, on CLOCK_MONOTONIC, of a wait of @timeout ms from now. */
void rfi_deadline(struct timespec *end, int timeout)
{
	clock_gettime(CLOCK_MONOTONIC, end);
	end->tv_sec += timeout / 1000;
	end->tv_nsec += (long)(timeout % 1000) * 1000000;
}

/* Milliseconds left until @end: 0 or less once it passed. */
int rfi_ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int)((end->tv_sec - now.tv_sec) * 1000 +
		     (end->tv_nsec - now.tv_nsec) / 1000000);
}

/* --- fi_getinfo() ------------------------------------------------------ */

/* Is the module there, with what the provider needs? */
static bool rfi_module_usable(void)
{
	const uint64_t need = RMSG_FEAT_CHANNELS | RMSG_FEAT_EAGER |
			      RMSG_FEAT_RNDV | RMSG_FEAT_RNDV_PIN;
	struct rmsg_version ver;
	int fd = rmsg_node_open();
	bool ok;

	if (fd < 0)
		return false;
	ok = !rmsg_node_version(fd, &ver) && (ver.features & need) == need;
	close(fd);
	return ok;
}

/*
 * The IPv4 address endpoints listen on: the provider's "addr" parameter
 * (FI_RMSG_ADDR), else that of the network device of the first port rmsg
 * sees active.
 */
int rfi_local_addr(struct sockaddr_in *sin)
{
	struct rmsg_dev_info *devs = NULL;
	struct ifaddrs *ifa, *i;
	char *param = NULL;
	const char *want = NULL;
	int fd, n, d, p, ret = -FI_ENODATA;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (!fi_param_get_str(&rfi_prov, "addr", &param) && param &&
	    inet_pton(AF_INET, param, &sin->sin_addr) == 1)
		return 0;
	fd = rmsg_node_open();
	if (fd < 0)
		return -FI_ENODEV;
	n = rmsg_node_devices(fd, &devs, NULL);
	close(fd);
	for (d = 0; d < n && !want; d++)
		for (p = 0; p < (int)devs[d].num_ports && p < RMSG_MAX_PORTS &&
		     !want; p++)
			if (devs[d].port[p].state == RMSG_PORT_ACTIVE &&
			    devs[d].port[p].netdev[0])
				want = devs[d].port[p].netdev;
	if (want && !getifaddrs(&ifa)) {
		for (i = ifa; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    !strcmp(i->ifa_name, want)) {
				sin->sin_addr =
					((struct sockaddr_in *)i->ifa_addr)->sin_addr;
				ret = 0;
				break;
			}
		freeifaddrs(ifa);
	}
	free(devs);
	return ret;
}

/* Domain capabilities: no shared AV, no FI_AV_USER_ID, no peer domains. */
#define RFI_DOMAIN_CAPS	(FI_LOCAL_COMM | FI_REMOTE_COMM)

/* The capabilities an endpoint of @type can have, asked for or not. */
static uint64_t rfi_type_caps(enum fi_ep_type type)
{
	return type == FI_EP_MSG ? RFI_MSG_CAPS : RFI_CAPS_ASKED;
}

/*
 * Whether the provider can give everything hints @h ask for, with an
 * endpoint of @type. Sizes and limits asked above the provider's fail
 * the match rather than being lowered in silence: a program that asked
 * for an inject size of 16 KiB would find its injects refused only when
 * it makes them.
 */
static bool rfi_hints_fit(const struct fi_info *h, enum fi_ep_type type)
{
	uint64_t caps = rfi_type_caps(type);

	if (!h)
		return true;
	if ((h->caps & ~caps) ||
	    ((h->caps & FI_SOURCE_ERR) && !(h->caps & FI_SOURCE)))
		return false;
	if (h->addr_format && h->addr_format != FI_SOCKADDR_IN &&
	    h->addr_format != FI_SOCKADDR)
		return false;
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC &&
	    h->ep_attr->type != type)
		return false;
	if (h->ep_attr && h->ep_attr->protocol != FI_PROTO_UNSPEC)
		return false;
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, RFI_NAME))
		return false;
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name && strcmp(d->name, RFI_NAME))
			return false;
		if (d->control_progress == FI_PROGRESS_AUTO ||
		    d->data_progress == FI_PROGRESS_AUTO)
			return false;
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP &&
		    d->av_type != FI_AV_TABLE)
			return false;
		/* Registrations the program would have to make: none here. */
		if (d->mr_mode & (FI_MR_BASIC | FI_MR_SCALABLE))
			return false;
		if (d->caps & ~RFI_DOMAIN_CAPS)
			return false;
	}
	if (h->ep_attr && h->ep_attr->max_msg_size > RMSG_RNDV_MAX_LEN)
		return false;
	if (h->tx_attr && ((h->tx_attr->caps & ~caps) ||
			   (h->tx_attr->op_flags &
			    RFI_TX_COMPLETIONS_NOT_GIVEN) ||
			   (h->tx_attr->msg_order & ~FI_ORDER_SAS) ||
			   h->tx_attr->inject_size > RFI_INJECT_SIZE ||
			   h->tx_attr->iov_limit > RFI_IOV_MAX))
		return false;
	if (h->rx_attr && ((h->rx_attr->caps & ~caps) ||
			   (h->rx_attr->op_flags & FI_MULTI_RECV) ||
			   (h->rx_attr->msg_order & ~FI_ORDER_SAS) ||
			   h->rx_attr->iov_limit > RFI_IOV_MAX))
		return false;
	return true;
}

static struct fi_info *rfi_info_new(const struct fi_info *h,
				    enum fi_ep_type type)
{
	struct fi_info *fi = fi_allocinfo();
	uint64_t caps = h && h->caps ? h->caps :
			type == FI_EP_MSG ? RFI_MSG_CAPS : RFI_CAPS;

	if (!fi)
		return NULL;
	/* Asked for only one side's: both are there all the same. */
	if (!(caps & (FI_MSG | FI_TAGGED)))
		caps |= FI_MSG | FI_TAGGED;
	caps |= FI_SEND | FI_RECV;
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_SOCKADDR_IN;
	fi->fabric_attr->name = strdup(RFI_NAME);
	fi->domain_attr->name = strdup(RFI_NAME);
	/* A program that serializes its calls saves the lock (rfi_lock()). */
	fi->domain_attr->threading = h && h->domain_attr &&
				     h->domain_attr->threading ==
				     FI_THREAD_DOMAIN ?
				     FI_THREAD_DOMAIN : FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = h && h->domain_attr &&
				   h->domain_attr->av_type != FI_AV_UNSPEC ?
				   h->domain_attr->av_type : FI_AV_MAP;
	fi->domain_attr->mr_mode = 0;
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	/* An FI_SOURCE_ERR completion's err_data: the sender's address. */
	fi->domain_attr->max_err_data = sizeof(struct sockaddr_in);
	fi->domain_attr->cq_cnt = 256;
	fi->domain_attr->ep_cnt = 256;
	fi->domain_attr->tx_ctx_cnt = 256;
	fi->domain_attr->rx_ctx_cnt = 256;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->caps = RFI_DOMAIN_CAPS;
	fi->ep_attr->type = type;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->max_msg_size = RMSG_RNDV_MAX_LEN;
	fi->ep_attr->mem_tag_format = ~0ULL;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->tx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_SEND);
	fi->tx_attr->msg_order = FI_ORDER_SAS;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = RFI_INJECT_SIZE;
	fi->tx_attr->size = RFI_QUEUE_SIZE;
	fi->tx_attr->iov_limit = RFI_IOV_MAX;
	fi->rx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_RECV |
				    FI_DIRECTED_RECV | FI_SOURCE |
				    FI_SOURCE_ERR);
	fi->rx_attr->msg_order = FI_ORDER_SAS;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->size = RFI_QUEUE_SIZE;
	fi->rx_attr->iov_limit = RFI_IOV_MAX;
	if (h && h->tx_attr)
		fi->tx_attr->op_flags = h->tx_attr->op_flags;
	if (h && h->rx_attr)
		fi->rx_attr->op_flags = h->rx_attr->op_flags;
	if (!fi->fabric_attr->name || !fi->domain_attr->name) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}

/*
 * @node (an IPv4 address, or a name with FI_NUMERICHOST unset) and
 * @service (a port number) into @sin; NULL ones leave it as it is.
 */
static int rfi_node_service(const char *node, const char *service,
			    uint64_t flags, struct sockaddr_in *sin)
{
	struct addrinfo want = { .ai_family = AF_INET }, *res;
	unsigned long port;
	char *end;

	if (node && inet_pton(AF_INET, node, &sin->sin_addr) != 1) {
		if (flags & FI_NUMERICHOST)
			return -FI_ENODATA;
		if (getaddrinfo(node, NULL, &want, &res))
			return -FI_ENODATA;
		sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
		freeaddrinfo(res);
	}
	if (service) {
		port = strtoul(service, &end, 10);
		if (!*service || *end || port > 65535)
			return -FI_ENODATA;
		sin->sin_port = htons((uint16_t)port);
	}
	return 0;
}

/* An AF_INET address of @len bytes at @addr, or NULL. */
static const struct sockaddr_in *rfi_sin(const void *addr, size_t len)
{
	const struct sockaddr_in *sin = addr;

	return sin && len >= sizeof(*sin) && sin->sin_family == AF_INET ?
	       sin : NULL;
}

/*
 * The addresses of fi_getinfo()'s answer, as fi_getinfo(3) has them:
 * with FI_SOURCE, @node and @service are the source, which the endpoint
 * listens on (the node's RDMA address and any free port where they leave
 * it open); without, they are the destination, and the hints' src_addr
 * is the source. The hints' dest_addr is the destination unless @node
 * or @service say one.
 */
static int rfi_info_addrs(struct fi_info *fi, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints)
{
	const struct sockaddr_in *hs = NULL, *hd = NULL;
	struct sockaddr_in *src, *dest = NULL;
	bool given = node || service;
	int ret;

	if (hints) {
		hs = rfi_sin(hints->src_addr, hints->src_addrlen);
		hd = rfi_sin(hints->dest_addr, hints->dest_addrlen);
	}
	src = calloc(1, sizeof(*src));
	if (!src)
		return -FI_ENOMEM;
	fi->src_addr = src;
	fi->src_addrlen = sizeof(*src);
	if (rfi_local_addr(src))
		return -FI_ENODATA;
	if (given && (flags & FI_SOURCE)) {
		ret = rfi_node_service(node, service, flags, src);
		if (ret)
			return ret;
	} else if (hs) {
		src->sin_port = hs->sin_port;
		if (hs->sin_addr.s_addr != htonl(INADDR_ANY))
			src->sin_addr = hs->sin_addr;
	}
	if ((given && !(flags & FI_SOURCE)) || hd) {
		dest = calloc(1, sizeof(*dest));
		if (!dest)
			return -FI_ENOMEM;
		fi->dest_addr = dest;
		fi->dest_addrlen = sizeof(*dest);
	}
	if (given && !(flags & FI_SOURCE)) {
		dest->sin_family = AF_INET;
		dest->sin_addr = src->sin_addr;
		return rfi_node_service(node, service, flags, dest);
	}
	if (hd)
		*dest = *hd;
	return 0;
}

/*
 * One answer for each endpoint type the hints leave open: FI_EP_RDM
 * first, as before FI_EP_MSG came, for programs that take the first.
 */
static int rfi_getinfo(uint32_t version, const char *node,
		       const char *service, uint64_t flags,
		       const struct fi_info *hints, struct fi_info **info)
{
	static const enum fi_ep_type types[] = { FI_EP_RDM, FI_EP_MSG,
						 FI_EP_UNSPEC };
	struct fi_info *fi, **tail = info;
	unsigned int i;
	int ret = -FI_ENODATA;

	*info = NULL;
	if (!rfi_module_usable())
		return -FI_ENODATA;
	for (i = 0; types[i]; i++) {
		if (!rfi_hints_fit(hints, types[i]))
			continue;
		fi = rfi_info_new(hints, types[i]);
		if (!fi) {
			ret = -FI_ENOMEM;
			break;
		}
		ret = rfi_info_addrs(fi, node, service, flags, hints);
		if (ret) {
			fi_freeinfo(fi);
			break;
		}
		*tail = fi;
		tail = &fi->next;
	}
	if (ret && *info) {
		fi_freeinfo(*info);
		*info = NULL;
	}
	return ret;
}

/* --- address vectors ---------------------------------------------------- */

int rfi_av_addr(struct rfi_av *av, fi_addr_t addr, struct sockaddr_in *sin)
{
	if (addr >= av->n || !av->refs[addr])
		return -FI_EINVAL;
	*sin = av->addrs[addr];
	return 0;
}

static bool rfi_av_same(const struct sockaddr_in *a,
			const struct sockaddr_in *b)
{
	return a->sin_port == b->sin_port &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr;
}

/* Where @sin's entry is in @av->hash, or the empty place it would take. */
static size_t rfi_av_slot(const struct rfi_av *av,
			  const struct sockaddr_in *sin)
{
	uint64_t key = (uint64_t)sin->sin_addr.s_addr << 16 | sin->sin_port;
	size_t mask = av->hash_size - 1;
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & mask;

	while (av->hash[i] && !rfi_av_same(&av->addrs[av->hash[i] - 1], sin))
		i = (i + 1) & mask;
	return i;
}

/* @sin's entry, live or removed, or FI_ADDR_NOTAVAIL. */
static fi_addr_t rfi_av_entry(const struct rfi_av *av,
			      const struct sockaddr_in *sin)
{
	size_t i;

	if (!av->hash_size)
		return FI_ADDR_NOTAVAIL;
	i = rfi_av_slot(av, sin);
	return av->hash[i] ? av->hash[i] - 1 : FI_ADDR_NOTAVAIL;
}

fi_addr_t rfi_av_find(struct rfi_av *av, const struct sockaddr_in *sin)
{
	fi_addr_t i;

	if (!av)
		return FI_ADDR_NOTAVAIL;
	i = rfi_av_entry(av, sin);
	return i != FI_ADDR_NOTAVAIL && av->refs[i] ? i : FI_ADDR_NOTAVAIL;
}

/* Room for @more entries, and their places in the hash. */
static int rfi_av_grow(struct rfi_av *av, size_t more)
{
	struct sockaddr_in *addrs;
	size_t cap, size, i, *hash;
	uint32_t *refs;

	if (av->n + more > av->cap) {
		cap = av->cap ? av->cap : 64;
		while (cap < av->n + more)
			cap *= 2;
		addrs = realloc(av->addrs, cap * sizeof(*addrs));
		if (!addrs)
			return -FI_ENOMEM;
		av->addrs = addrs;
		refs = realloc(av->refs, cap * sizeof(*refs));
		if (!refs)
			return -FI_ENOMEM;
		av->refs = refs;
		av->cap = cap;
	}
	if (2 * (av->n + more) < av->hash_size)
		return 0;
	size = av->hash_size ? av->hash_size : 128;
	while (size <= 2 * (av->n + more))
		size *= 2;
	hash = calloc(size, sizeof(*hash));
	if (!hash)
		return -FI_ENOMEM;
	free(av->hash);
	av->hash = hash;
	av->hash_size = size;
	for (i = 0; i < av->n; i++)
		av->hash[rfi_av_slot(av, &av->addrs[i])] = i + 1;
	return 0;
}

/*
 * Insert @sin: its entry, new, given back (removed before) or one more
 * reference to the live one (a duplicate, as Open MPI makes for a peer it
 * knows already when it builds an intercommunicator). Room was made.
 */
static fi_addr_t rfi_av_add(struct rfi_av *av, const struct sockaddr_in *sin)
{
	size_t slot = rfi_av_slot(av, sin);
	fi_addr_t i;

	if (av->hash[slot]) {
		i = av->hash[slot] - 1;
		av->refs[i]++;
		return i;
	}
	i = av->n++;
	memset(&av->addrs[i], 0, sizeof(av->addrs[i]));
	av->addrs[i].sin_family = AF_INET;
	av->addrs[i].sin_port = sin->sin_port;
	av->addrs[i].sin_addr = sin->sin_addr;
	av->refs[i] = 1;
	av->hash[slot] = i + 1;
	return i;
}

/* What fi_av_insert() takes: FI_MORE is a hint, FI_SYNC_ERR is done. */
#define RFI_AV_INSERT_FLAGS	(FI_MORE | FI_SYNC_ERR)

static int rfi_av_insert(struct fid_av *fav, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct rfi_av *av = container_of(fav, struct rfi_av, av);
	const struct sockaddr_in *in = addr;
	int *sync_err = flags & FI_SYNC_ERR ? context : NULL;
	size_t i;
	int done = 0, ret;

	if ((flags & ~RFI_AV_INSERT_FLAGS) || (count && !addr) ||
	    (sync_err && count && !context))
		return -FI_EINVAL;
	rfi_lock(av->dom);
	ret = rfi_av_grow(av, count);
	if (ret) {
		rfi_unlock(av->dom);
		return ret;
	}
	for (i = 0; i < count; i++) {
		if (sync_err)
			sync_err[i] = in[i].sin_family == AF_INET ? 0 :
								 FI_EINVAL;
		if (in[i].sin_family != AF_INET) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		if (fi_addr)
			fi_addr[i] = rfi_av_add(av, &in[i]);
		else
			rfi_av_add(av, &in[i]);
		done++;
	}
	/* Channels named by an address not in the AV look again. */
	av->gen++;
	rfi_unlock(av->dom);
	return done;
}

static int rfi_av_insertsvc(struct fid_av *fav, const char *node,
			    const char *service, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned long port;
	char *end;

	if (!node || !service || inet_pton(AF_INET, node, &sin.sin_addr) != 1)
		return -FI_EINVAL;
	/* A port number: a service name or "80x" is not one. */
	errno = 0;
	port = strtoul(service, &end, 10);
	if (!*service || *end || errno || port > 65535)
		return -FI_EINVAL;
	sin.sin_port = htons((uint16_t)port);
	return rfi_av_insert(fav, &sin, 1, fi_addr, flags, context);
}

/*
 * @nodecnt IPv4 addresses from @node on, each with @svccnt ports from
 * @service on: fi_addr[node * svccnt + service].
 */
static int rfi_av_insertsym(struct fid_av *fav, const char *node,
			    size_t nodecnt, const char *service, size_t svccnt,
			    fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct sockaddr_in *sins;
	struct in_addr first;
	unsigned long port;
	char *end;
	size_t i, j;
	int ret;

	if (!node || !service || inet_pton(AF_INET, node, &first) != 1)
		return -FI_EINVAL;
	port = strtoul(service, &end, 10);
	if (*end || port + svccnt > 65536 || nodecnt > UINT32_MAX)
		return -FI_EINVAL;
	if (!nodecnt || !svccnt)
		return 0;
	sins = calloc(nodecnt * svccnt, sizeof(*sins));
	if (!sins)
		return -FI_ENOMEM;
	for (i = 0; i < nodecnt; i++)
		for (j = 0; j < svccnt; j++) {
			sins[i * svccnt + j].sin_family = AF_INET;
			sins[i * svccnt + j].sin_addr.s_addr =
				htonl(ntohl(first.s_addr) + (uint32_t)i);
			sins[i * svccnt + j].sin_port =
				htons((uint16_t)(port + j));
		}
	ret = rfi_av_insert(fav, sins, nodecnt * svccnt, fi_addr, flags,
			    context);
	free(sins);
	return ret;
}

/*
 * Each entry loses a reference; one left with none is removed, its
 * index kept for its address (struct rfi_av).
 */
static int rfi_av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count,
			 uint64_t flags)
{
	struct rfi_av *av = container_of(fav, struct rfi_av, av);
	size_t i;
	int ret = 0;

	rfi_lock(av->dom);
	for (i = 0; i < count; i++) {
		if (fi_addr[i] >= av->n || !av->refs[fi_addr[i]])
			ret = -FI_EINVAL;
		else
			av->refs[fi_addr[i]]--;
	}
	av->gen++;
	rfi_unlock(av->dom);
	return ret;
}

static int rfi_av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct rfi_av *av = container_of(fav, struct rfi_av, av);
	struct sockaddr_in sin;
	int ret;

	rfi_lock(av->dom);
	ret = rfi_av_addr(av, fi_addr, &sin);
	rfi_unlock(av->dom);
	if (ret)
		return ret;
	memcpy(addr, &sin, *addrlen < sizeof(sin) ? *addrlen : sizeof(sin));
	*addrlen = sizeof(sin);
	return 0;
}

static const char *rfi_av_straddr(struct fid_av *av, const void *addr,
				  char *buf, size_t *len)
{
	const struct sockaddr_in *sin = addr;
	char ip[INET_ADDRSTRLEN], s[64];
	int n;

	if (!inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip)))
		return NULL;
	n = snprintf(s, sizeof(s), "fi_sockaddr_in://%s:%u", ip,
		     ntohs(sin->sin_port));
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = n + 1;
	return buf;
}

static int rfi_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		      struct fid_av_set **av_set, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops_av rfi_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = rfi_av_insert,
	.insertsvc = rfi_av_insertsvc,
	.insertsym = rfi_av_insertsym,
	.remove = rfi_av_remove,
	.lookup = rfi_av_lookup,
	.straddr = rfi_av_straddr,
	.av_set = rfi_av_set,
};

static int rfi_av_close(struct fid *fid)
{
	struct rfi_av *av = container_of(fid, struct rfi_av, av.fid);

	free(av->addrs);
	free(av->refs);
	free(av->hash);
	free(av);
	return 0;
}

RFI_FI_OPS(rfi_av_fi_ops, rfi_av_close);

int rfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **fav, void *context)
{
	struct rfi_domain *dom = container_of(domain, struct rfi_domain,
					      domain);
	struct rfi_av *av;

	/* Asynchronous inserts (deprecated in fi_av(3)): not offered. */
	if (attr && (attr->flags & FI_EVENT))
		return -FI_ENOSYS;
	if (!attr || (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
		      attr->type != FI_AV_TABLE) || attr->rx_ctx_bits ||
	    (attr->flags & ~FI_SYMMETRIC) || attr->name)
		return -FI_EINVAL;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->dom = dom;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_MAP : attr->type;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &rfi_av_fi_ops;
	av->av.ops = &rfi_av_ops;
	*fav = &av->av;
	return 0;
}

/* --- domain ------------------------------------------------------------ */

static int rfi_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_no_cntr_open(struct fid_domain *domain,
			    struct fi_cntr_attr *attr, struct fid_cntr **cntr,
			    void *context)
{
	return -FI_ENOSYS;
}

static int rfi_no_poll_open(struct fid_domain *domain,
			    struct fi_poll_attr *attr, struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

static int rfi_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			  struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_no_query_atomic(struct fid_domain *domain,
			       enum fi_datatype datatype, enum fi_op op,
			       struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int rfi_no_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags)
{
	return -FI_ENOSYS;
}

static int rfi_endpoint2(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **ep, uint64_t flags, void *context)
{
	return flags ? -FI_EINVAL : rfi_endpoint(domain, info, ep, context);
}

static struct fi_ops_domain rfi_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = rfi_av_open,
	.cq_open = rfi_cq_open,
	.endpoint = rfi_endpoint,
	.scalable_ep = rfi_no_scalable_ep,
	.cntr_open = rfi_no_cntr_open,
	.poll_open = rfi_no_poll_open,
	.stx_ctx = rfi_no_stx_ctx,
	.srx_ctx = rfi_no_srx_ctx,
	.query_atomic = rfi_no_query_atomic,
	.query_collective = rfi_no_query_collective,
	.endpoint2 = rfi_endpoint2,
};

/* Nothing needs registering: sends and receives take any memory. */
static int rfi_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags,
		       struct fid_mr **mr, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr)
{
	return -FI_ENOSYS;
}

static struct fi_ops_mr rfi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = rfi_mr_reg,
	.regv = rfi_mr_regv,
	.regattr = rfi_mr_regattr,
};

static int rfi_domain_close(struct fid *fid)
{
	struct rfi_domain *dom = container_of(fid, struct rfi_domain,
					      domain.fid);

	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

RFI_FI_OPS(rfi_domain_fi_ops, rfi_domain_close);

static int rfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
			   struct fid_domain **domain, void *context)
{
	struct rfi_domain *dom;

	if (!info || (info->domain_attr && info->domain_attr->name &&
		      strcmp(info->domain_attr->name, RFI_NAME)))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->info = fi_dupinfo(info);
	if (!dom->info) {
		free(dom);
		return -FI_ENOMEM;
	}
	dom->serial = info->domain_attr &&
		      info->domain_attr->threading == FI_THREAD_DOMAIN;
	dom->fab = container_of(fabric, struct rfi_fabric, fabric);
	dom->domain.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain.fid.context = context;
	dom->domain.fid.ops = &rfi_domain_fi_ops;
	dom->domain.ops = &rfi_domain_ops;
	dom->domain.mr = &rfi_mr_ops;
	*domain = &dom->domain;
	return 0;
}

/* --- fabric ------------------------------------------------------------ */

static int rfi_no_wait_open(struct fid_fabric *fabric,
			    struct fi_wait_attr *attr,
			    struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

/*
 * fi_trywait(): each CQ progresses and arms its endpoints; -FI_EAGAIN as
 * soon as one has a completion, when the program must read, not sleep.
 */
static int rfi_trywait(struct fid_fabric *fabric, struct fid **fids,
		       int count)
{
	int i, ret;

	for (i = 0; i < count; i++) {
		if (fids[i]->fclass == FI_CLASS_EQ)
			ret = rfi_eq_trywait(container_of(fids[i],
							  struct rfi_eq,
							  eq.fid));
		else if (fids[i]->fclass == FI_CLASS_CQ)
			ret = rfi_cq_trywait(container_of(fids[i],
							  struct rfi_cq,
							  cq.fid));
		else
			return -FI_EINVAL;
		if (ret)
			return ret;
	}
	return 0;
}

static int rfi_domain2(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_domain **dom, uint64_t flags, void *context)
{
	return flags ? -FI_EINVAL : rfi_domain_open(fabric, info, dom,
						    context);
}

static struct fi_ops_fabric rfi_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = rfi_domain_open,
	.passive_ep = rfi_passive_ep,
	.eq_open = rfi_eq_open,
	.wait_open = rfi_no_wait_open,
	.trywait = rfi_trywait,
	.domain2 = rfi_domain2,
};

static int rfi_fabric_close(struct fid *fid)
{
	struct rfi_fabric *fab = container_of(fid, struct rfi_fabric,
					      fabric.fid);

	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

RFI_FI_OPS(rfi_fabric_fi_ops, rfi_fabric_close);

static int rfi_fabric_open(struct fi_fabric_attr *attr,
			   struct fid_fabric **fabric, void *context)
{
	struct rfi_fabric *fab;
	pthread_mutexattr_t ma;

	if (attr && attr->name && strcmp(attr->name, RFI_NAME))
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	/*
	 * Recursive: a CQ read progresses endpoints that take it again,
	 * an EQ read passive endpoints whose progress reaches endpoints.
	 */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&fab->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &rfi_fabric_fi_ops;
	fab->fabric.ops = &rfi_fabric_ops;
	*fabric = &fab->fabric;
	return 0;
}

static void rfi_cleanup(void)
{
}

/* The core writes into ->context: not const. */
struct fi_provider rfi_prov = {
	.name = RFI_NAME,
	.version = RFI_VERSION,
	.fi_version = RFI_FI_VERSION,
	.getinfo = rfi_getinfo,
	.fabric = rfi_fabric_open,
	.cleanup = rfi_cleanup,
};

/*
 * The endpoint's settings from FI_RMSG_BLOCK_SIZE, FI_RMSG_RNDV_THRESHOLD
 * and FI_RMSG_SUMMARY: -FI_EINVAL for a block size the module would
 * refuse, so that a mistyped setting fails fi_enable() where it is made
 * rather than every connection later.
 */
int rfi_params(uint32_t *block_size, size_t *rndv_threshold, bool *summary)
{
	int on = 0;
	size_t v;

	*block_size = 0;
	*rndv_threshold = SIZE_MAX;
	*summary = !fi_param_get_bool(&rfi_prov, "summary", &on) && on;
	if (!fi_param_get_size_t(&rfi_prov, "block_size", &v)) {
		if (v < RMSG_VB_MIN_BLOCK || v > RMSG_VB_MAX_BLOCK || v % 16) {
			RFI_WARN("FI_RMSG_BLOCK_SIZE=%zu: a multiple of 16 from %u to %u is needed\n",
				 v, RMSG_VB_MIN_BLOCK, RMSG_VB_MAX_BLOCK);
			return -FI_EINVAL;
		}
		*block_size = (uint32_t)v;
	}
	if (!fi_param_get_size_t(&rfi_prov, "rndv_threshold", &v))
		*rndv_threshold = v;
	return 0;
}

FI_EXT_INI
{
	fi_param_define(&rfi_prov, "addr", FI_PARAM_STRING,
			"IPv4 address endpoints listen on (default: that of the first active RDMA port rmsg sees)");
	fi_param_define(&rfi_prov, "block_size", FI_PARAM_SIZE_T,
			"bytes of each channel's receive block, which the peer writes eager messages into: a multiple of 16 from 4096 to 67108864 (default: the module's block_size parameter, 32768)");
	fi_param_define(&rfi_prov, "rndv_threshold", FI_PARAM_SIZE_T,
			"payloads larger than this go by rendezvous, zero copy (default: every payload the peer's receive block takes goes eager)");
	fi_param_define(&rfi_prov, "summary", FI_PARAM_BOOL,
			"give each endpoint an arrival summary, so that finding a message costs the same with thousands of peers as with one, for two small RDMA WRITEs per burst of messages (default: no)");
	fi_param_define(&rfi_prov, "dump", FI_PARAM_BOOL,
			"SIGUSR2 makes each endpoint print its peers, channels and queues to stderr at its next progress, for a program that hangs (default: no)");
	return &rfi_prov;
}
