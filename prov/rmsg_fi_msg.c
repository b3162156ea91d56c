// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: the data transfer calls of an endpoint. Messages and
 * tagged messages all go to rfi_send() and rfi_recv() (rmsg_fi_ep.c);
 * RMA, atomics and collectives are not offered (Documentation/
 * libfabric.rst) and answer -FI_ENOSYS.
 */
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>

#include "rmsg_fi.h"

static struct rfi_ep *rfi_ep_of(struct fid_ep *ep)
{
	return container_of(ep, struct rfi_ep, ep);
}

/* The endpoint's own operation flags for the calls that take none. */
static uint64_t rfi_tx_op_flags(struct rfi_ep *ep)
{
	return ep->info->tx_attr ? ep->info->tx_attr->op_flags : 0;
}

static uint64_t rfi_rx_op_flags(struct rfi_ep *ep)
{
	return ep->info->rx_attr ? ep->info->rx_attr->op_flags : 0;
}

/* --- messages ------------------------------------------------------------ */

static ssize_t rfi_msg_recv(struct fid_ep *fep, void *buf, size_t len,
			    void *desc, fi_addr_t src, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { buf, len };

	return rfi_recv(ep, &iov, 1, src, 0, 0, rfi_rx_op_flags(ep), context);
}

static ssize_t rfi_msg_recvv(struct fid_ep *fep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);

	return rfi_recv(ep, iov, count, src, 0, 0, rfi_rx_op_flags(ep),
			context);
}

static ssize_t rfi_msg_recvmsg(struct fid_ep *fep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return rfi_recv(rfi_ep_of(fep), msg->msg_iov, msg->iov_count,
			msg->addr, 0, 0, flags & ~FI_TAGGED, msg->context);
}

static ssize_t rfi_msg_send(struct fid_ep *fep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { (void *)buf, len };

	return rfi_send(ep, &iov, 1, dest, 0, 0, rfi_tx_op_flags(ep), context);
}

static ssize_t rfi_msg_sendv(struct fid_ep *fep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);

	return rfi_send(ep, iov, count, dest, 0, 0, rfi_tx_op_flags(ep),
			context);
}

static ssize_t rfi_msg_sendmsg(struct fid_ep *fep, const struct fi_msg *msg,
			       uint64_t flags)
{
	return rfi_send(rfi_ep_of(fep), msg->msg_iov, msg->iov_count,
			msg->addr, 0, msg->data, flags & ~FI_TAGGED,
			msg->context);
}

static ssize_t rfi_msg_inject(struct fid_ep *fep, const void *buf, size_t len,
			      fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return rfi_inject(rfi_ep_of(fep), &iov, 1, dest, 0, 0, 0);
}

static ssize_t rfi_msg_senddata(struct fid_ep *fep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { (void *)buf, len };

	return rfi_send(ep, &iov, 1, dest, 0, data,
			rfi_tx_op_flags(ep) | FI_REMOTE_CQ_DATA, context);
}

static ssize_t rfi_msg_injectdata(struct fid_ep *fep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return rfi_inject(rfi_ep_of(fep), &iov, 1, dest, 0, data,
			  FI_REMOTE_CQ_DATA);
}

struct fi_ops_msg rfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = rfi_msg_recv,
	.recvv = rfi_msg_recvv,
	.recvmsg = rfi_msg_recvmsg,
	.send = rfi_msg_send,
	.sendv = rfi_msg_sendv,
	.sendmsg = rfi_msg_sendmsg,
	.inject = rfi_msg_inject,
	.senddata = rfi_msg_senddata,
	.injectdata = rfi_msg_injectdata,
};

/* --- tagged messages ------------------------------------------------------ */

static ssize_t rfi_tag_recv(struct fid_ep *fep, void *buf, size_t len,
			    void *desc, fi_addr_t src, uint64_t tag,
			    uint64_t ignore, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { buf, len };

	return rfi_recv(ep, &iov, 1, src, tag, ignore,
			rfi_rx_op_flags(ep) | FI_TAGGED, context);
}

static ssize_t rfi_tag_recvv(struct fid_ep *fep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);

	return rfi_recv(ep, iov, count, src, tag, ignore,
			rfi_rx_op_flags(ep) | FI_TAGGED, context);
}

static ssize_t rfi_tag_recvmsg(struct fid_ep *fep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return rfi_recv(rfi_ep_of(fep), msg->msg_iov, msg->iov_count,
			msg->addr, msg->tag, msg->ignore, flags | FI_TAGGED,
			msg->context);
}

static ssize_t rfi_tag_send(struct fid_ep *fep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest, uint64_t tag,
			    void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { (void *)buf, len };

	return rfi_send(ep, &iov, 1, dest, tag, 0,
			rfi_tx_op_flags(ep) | FI_TAGGED, context);
}

static ssize_t rfi_tag_sendv(struct fid_ep *fep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);

	return rfi_send(ep, iov, count, dest, tag, 0,
			rfi_tx_op_flags(ep) | FI_TAGGED, context);
}

static ssize_t rfi_tag_sendmsg(struct fid_ep *fep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{
	return rfi_send(rfi_ep_of(fep), msg->msg_iov, msg->iov_count,
			msg->addr, msg->tag, msg->data, flags | FI_TAGGED,
			msg->context);
}

static ssize_t rfi_tag_inject(struct fid_ep *fep, const void *buf, size_t len,
			      fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return rfi_inject(rfi_ep_of(fep), &iov, 1, dest, tag, 0, FI_TAGGED);
}

static ssize_t rfi_tag_senddata(struct fid_ep *fep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest, uint64_t tag, void *context)
{
	struct rfi_ep *ep = rfi_ep_of(fep);
	struct iovec iov = { (void *)buf, len };

	return rfi_send(ep, &iov, 1, dest, tag, data,
			rfi_tx_op_flags(ep) | FI_TAGGED | FI_REMOTE_CQ_DATA,
			context);
}

static ssize_t rfi_tag_injectdata(struct fid_ep *fep, const void *buf,
				  size_t len, uint64_t data, fi_addr_t dest,
				  uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return rfi_inject(rfi_ep_of(fep), &iov, 1, dest, tag, data,
			  FI_TAGGED | FI_REMOTE_CQ_DATA);
}

struct fi_ops_tagged rfi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = rfi_tag_recv,
	.recvv = rfi_tag_recvv,
	.recvmsg = rfi_tag_recvmsg,
	.send = rfi_tag_send,
	.sendv = rfi_tag_sendv,
	.sendmsg = rfi_tag_sendmsg,
	.inject = rfi_tag_inject,
	.senddata = rfi_tag_senddata,
	.injectdata = rfi_tag_injectdata,
};

/* --- not offered ----------------------------------------------------------- */

static ssize_t rfi_no_rma_read(struct fid_ep *ep, void *buf, size_t len,
			       void *desc, fi_addr_t src_addr, uint64_t addr,
			       uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_readv(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t src_addr,
				uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_readmsg(struct fid_ep *ep,
				  const struct fi_msg_rma *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_write(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest_addr, uint64_t addr,
				uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_writev(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_writemsg(struct fid_ep *ep,
				   const struct fi_msg_rma *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_writedata(struct fid_ep *ep, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_rma_injectdata(struct fid_ep *ep, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest_addr, uint64_t addr,
				     uint64_t key)
{
	return -FI_ENOSYS;
}

struct fi_ops_rma rfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rfi_no_rma_read,
	.readv = rfi_no_rma_readv,
	.readmsg = rfi_no_rma_readmsg,
	.write = rfi_no_rma_write,
	.writev = rfi_no_rma_writev,
	.writemsg = rfi_no_rma_writemsg,
	.inject = rfi_no_rma_inject,
	.writedata = rfi_no_rma_writedata,
	.injectdata = rfi_no_rma_injectdata,
};

static ssize_t rfi_no_atomic_write(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, enum fi_datatype datatype,
				   enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				    void **desc, size_t count,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_writemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_inject(struct fid_ep *ep, const void *buf,
				    size_t count, fi_addr_t dest_addr,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_readwrite(struct fid_ep *ep, const void *buf,
				       size_t count, void *desc, void *result,
				       void *result_desc, fi_addr_t dest_addr,
				       uint64_t addr, uint64_t key,
				       enum fi_datatype datatype, enum fi_op op,
				       void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_readwritev(struct fid_ep *ep,
					const struct fi_ioc *iov, void **desc,
					size_t count, struct fi_ioc *resultv,
					void **result_desc, size_t result_count,
					fi_addr_t dest_addr, uint64_t addr,
					uint64_t key, enum fi_datatype datatype,
					enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_readwritemsg(struct fid_ep *ep,
					  const struct fi_msg_atomic *msg,
					  struct fi_ioc *resultv,
					  void **result_desc,
					  size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_compwrite(struct fid_ep *ep, const void *buf,
				       size_t count, void *desc,
				       const void *compare, void *compare_desc,
				       void *result, void *result_desc,
				       fi_addr_t dest_addr, uint64_t addr,
				       uint64_t key, enum fi_datatype datatype,
				       enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_atomic_compwritev(
	struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
	const struct fi_ioc *comparev, void **compare_desc,
	size_t compare_count, struct fi_ioc *resultv, void **result_desc,
	size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	enum fi_datatype datatype, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
rfi_no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			   const struct fi_ioc *comparev, void **compare_desc,
			   size_t compare_count, struct fi_ioc *resultv,
			   void **result_desc, size_t result_count,
			   uint64_t flags)
{
	return -FI_ENOSYS;
}

static int rfi_no_atomic_writevalid(struct fid_ep *ep,
				    enum fi_datatype datatype, enum fi_op op,
				    size_t *count)
{
	return -FI_ENOSYS;
}

static int rfi_no_atomic_readwritevalid(struct fid_ep *ep,
					enum fi_datatype datatype,
					enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

static int rfi_no_atomic_compwritevalid(struct fid_ep *ep,
					enum fi_datatype datatype,
					enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

struct fi_ops_atomic rfi_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = rfi_no_atomic_write,
	.writev = rfi_no_atomic_writev,
	.writemsg = rfi_no_atomic_writemsg,
	.inject = rfi_no_atomic_inject,
	.readwrite = rfi_no_atomic_readwrite,
	.readwritev = rfi_no_atomic_readwritev,
	.readwritemsg = rfi_no_atomic_readwritemsg,
	.compwrite = rfi_no_atomic_compwrite,
	.compwritev = rfi_no_atomic_compwritev,
	.compwritemsg = rfi_no_atomic_compwritemsg,
	.writevalid = rfi_no_atomic_writevalid,
	.readwritevalid = rfi_no_atomic_readwritevalid,
	.compwritevalid = rfi_no_atomic_compwritevalid,
};

static ssize_t rfi_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
					 void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_broadcast(struct fid_ep *ep, void *buf,
					   size_t count, void *desc,
					   fi_addr_t coll_addr,
					   fi_addr_t root_addr,
					   enum fi_datatype datatype,
					   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_alltoall(struct fid_ep *ep, const void *buf,
					  size_t count, void *desc,
					  void *result, void *result_desc,
					  fi_addr_t coll_addr,
					  enum fi_datatype datatype,
					  uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t
rfi_no_collective_allreduce(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype datatype,
			    enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_allgather(struct fid_ep *ep, const void *buf,
					   size_t count, void *desc,
					   void *result, void *result_desc,
					   fi_addr_t coll_addr,
					   enum fi_datatype datatype,
					   uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_reduce_scatter(
	struct fid_ep *ep, const void *buf, size_t count, void *desc,
	void *result, void *result_desc, fi_addr_t coll_addr,
	enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_reduce(struct fid_ep *ep, const void *buf,
					size_t count, void *desc, void *result,
					void *result_desc, fi_addr_t coll_addr,
					fi_addr_t root_addr,
					enum fi_datatype datatype,
					enum fi_op op, uint64_t flags,
					void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_scatter(struct fid_ep *ep, const void *buf,
					 size_t count, void *desc, void *result,
					 void *result_desc, fi_addr_t coll_addr,
					 fi_addr_t root_addr,
					 enum fi_datatype datatype,
					 uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_gather(struct fid_ep *ep, const void *buf,
					size_t count, void *desc, void *result,
					void *result_desc, fi_addr_t coll_addr,
					fi_addr_t root_addr,
					enum fi_datatype datatype,
					uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_msg(struct fid_ep *ep,
				     const struct fi_msg_collective *msg,
				     struct fi_ioc *resultv, void **result_desc,
				     size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t rfi_no_collective_barrier2(struct fid_ep *ep,
					  fi_addr_t coll_addr, uint64_t flags,
					  void *context)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective rfi_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = rfi_no_collective_barrier,
	.broadcast = rfi_no_collective_broadcast,
	.alltoall = rfi_no_collective_alltoall,
	.allreduce = rfi_no_collective_allreduce,
	.allgather = rfi_no_collective_allgather,
	.reduce_scatter = rfi_no_collective_reduce_scatter,
	.reduce = rfi_no_collective_reduce,
	.scatter = rfi_no_collective_scatter,
	.gather = rfi_no_collective_gather,
	.msg = rfi_no_collective_msg,
	.barrier2 = rfi_no_collective_barrier2,
};
