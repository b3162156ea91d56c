/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_link_chan.c: what a link tells the channels on it, and the
 * accepting side of channels opened on a link; for the module's entry and
 * exit.
 */
#ifndef RMSG_LINK_CHAN_H
#define RMSG_LINK_CHAN_H

void rmsg_link_chan_init_module(void);
void rmsg_link_chan_exit_module(void);

#endif
