/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_cq.c: the completion ring from the kernel's side; rmsg_sq.c: the
 * submission ring's.
 */
#ifndef _RMSG_CQ_H
#define _RMSG_CQ_H

#include <linux/types.h>

struct rmsg_endpoint;
struct rmsg_cqe;

u32 rmsg_cq_ready(struct rmsg_endpoint *ep);
int rmsg_cq_flush_locked(struct rmsg_endpoint *ep);
void rmsg_ep_wake(struct rmsg_endpoint *ep);
int rmsg_ep_flush_events(struct rmsg_endpoint *ep);
int rmsg_cq_wait(struct rmsg_endpoint *ep, u32 min);
void rmsg_ep_post_event(struct rmsg_endpoint *ep, const struct rmsg_cqe *cqe);
void rmsg_ep_post_cqe_locked(struct rmsg_endpoint *ep,
			     const struct rmsg_cqe *cqe, bool reserved);
void rmsg_cq_drop_kept(struct rmsg_endpoint *ep);

int rmsg_ep_submit(struct rmsg_endpoint *ep, u32 to_submit);

#endif /* _RMSG_CQ_H */
