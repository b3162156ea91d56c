/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_links.c: links between rmsg kernels, for the connect path above it
 * and the module's entry and exit.
 */
#ifndef RMSG_LINKS_H
#define RMSG_LINKS_H

#include <linux/socket.h>

struct net;
struct rmsg_carrier;

void rmsg_link_want(struct net *net, const struct sockaddr_storage *addr);
struct rmsg_carrier *rmsg_link_carrier(struct net *net,
				       const struct sockaddr_storage *addr);
long rmsg_link_list(void __user *uarg);
void rmsg_link_init_module(void);
void rmsg_link_exit_module(void);

#endif
