/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg: the user library of rmsg.
 *
 * Functions return 0 or a non-negative value on success and a negative errno
 * on failure; they never set errno as their way of reporting.
 */
#ifndef _RMSG_LIB_H
#define _RMSG_LIB_H

#include <rdma/rmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rmsg_open_device() - open /dev/rmsg
 *
 * Return: a file descriptor (close-on-exec) or a negative errno.
 */
int rmsg_open_device(void);

/**
 * rmsg_query_version() - the running module's ABI version and features
 * @fd: a /dev/rmsg file descriptor
 * @ver: filled in
 *
 * Return: 0, -EPROTO when the module's ABI is not the one this library was
 * built for (@ver is filled in all the same), or another negative errno.
 */
int rmsg_query_version(int fd, struct rmsg_version *ver);

/**
 * rmsg_query_devices() - the RDMA devices rmsg sees
 * @fd: a /dev/rmsg file descriptor
 * @devs: set to an array the caller releases with free()
 * @generation: if not NULL, set to the device list's generation
 *
 * The list is consistent: it is retaken when a device came or went while it
 * was being read.
 *
 * Return: the number of devices (0 or more) or a negative errno.
 */
int rmsg_query_devices(int fd, struct rmsg_dev_info **devs,
		       unsigned int *generation);

/* Names for the enum values of <rdma/rmsg.h>, "?" for unknown ones. */
const char *rmsg_port_state_name(unsigned int state);
const char *rmsg_port_phys_state_name(unsigned int phys_state);
const char *rmsg_port_protocol_name(unsigned int protocol);

#ifdef __cplusplus
}
#endif

#endif /* _RMSG_LIB_H */
