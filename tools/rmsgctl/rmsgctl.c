// SPDX-License-Identifier: GPL-2.0
/*
 * rmsgctl: look at what rmsg sees and does.
 *
 *   rmsgctl [--json] dev       RDMA devices and their ports
 *   rmsgctl [--json] version   the module's ABI version and features
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmsg.h>

static bool json;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rmsgctl [--json] COMMAND\n"
		"\n"
		"commands:\n"
		"  dev       RDMA devices rmsg sees, with their ports\n"
		"  version   ABI version and features of the loaded module\n");
}

static int open_device(void)
{
	int fd = rmsg_open_device();

	if (fd < 0)
		fprintf(stderr, "rmsgctl: %s: %s\n", RMSG_DEVICE_PATH,
			strerror(-fd));
	return fd;
}

/* Device and port names come from the kernel; keep JSON well formed anyway. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_dev_json(const struct rmsg_dev_info *devs, int n,
			   unsigned int generation)
{
	int i;
	unsigned int p, nports;

	printf("{\"generation\": %u, \"devices\": [", generation);
	for (i = 0; i < n; i++) {
		const struct rmsg_dev_info *d = &devs[i];

		printf("%s{\"name\": ", i ? ", " : "");
		json_string(d->name);
		printf(", \"index\": %u, \"num_ports\": %u, "
		       "\"node_guid\": \"%016" PRIx64 "\", "
		       "\"fatal_events\": %u, \"ports\": [",
		       d->index, d->num_ports, (uint64_t)d->node_guid,
		       d->fatal_events);
		nports = d->num_ports < RMSG_MAX_PORTS ?
			 d->num_ports : RMSG_MAX_PORTS;
		for (p = 0; p < nports; p++) {
			const struct rmsg_port_info *pi = &d->port[p];

			printf("%s{\"port\": %u, \"state\": \"%s\", "
			       "\"phys_state\": \"%s\", \"protocol\": \"%s\", "
			       "\"active_mtu\": %u, \"gid_tbl_len\": %u, "
			       "\"lid\": %u, \"events\": %u, \"netdev\": ",
			       p ? ", " : "", pi->port_num,
			       rmsg_port_state_name(pi->state),
			       rmsg_port_phys_state_name(pi->phys_state),
			       rmsg_port_protocol_name(pi->protocol),
			       pi->active_mtu, pi->gid_tbl_len, pi->lid,
			       pi->events);
			json_string(pi->netdev);
			putchar('}');
		}
		printf("]}");
	}
	printf("]}\n");
}

static void print_dev_table(const struct rmsg_dev_info *devs, int n)
{
	int i;
	unsigned int p, nports;

	printf("%-16s %4s %-12s %-10s %-5s %5s %-16s %6s\n", "DEVICE", "PORT",
	       "STATE", "PHYS", "PROTO", "MTU", "NETDEV", "EVENTS");
	for (i = 0; i < n; i++) {
		const struct rmsg_dev_info *d = &devs[i];

		nports = d->num_ports < RMSG_MAX_PORTS ?
			 d->num_ports : RMSG_MAX_PORTS;
		for (p = 0; p < nports; p++) {
			const struct rmsg_port_info *pi = &d->port[p];

			printf("%-16s %4u %-12s %-10s %-5s %5u %-16s %6u\n",
			       d->name, pi->port_num,
			       rmsg_port_state_name(pi->state),
			       rmsg_port_phys_state_name(pi->phys_state),
			       rmsg_port_protocol_name(pi->protocol),
			       pi->active_mtu,
			       pi->netdev[0] ? pi->netdev : "-", pi->events);
		}
		if (d->flags & RMSG_DEV_F_FATAL)
			printf("%-16s fatal device events: %u\n", d->name,
			       d->fatal_events);
	}
}

static int cmd_dev(void)
{
	struct rmsg_dev_info *devs;
	unsigned int generation;
	int fd, n;

	fd = open_device();
	if (fd < 0)
		return 1;
	n = rmsg_query_devices(fd, &devs, &generation);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "rmsgctl: device list: %s\n", strerror(-n));
		return 1;
	}
	if (json)
		print_dev_json(devs, n, generation);
	else
		print_dev_table(devs, n);
	free(devs);
	return 0;
}

static int cmd_version(void)
{
	struct rmsg_version ver;
	int fd, ret;

	fd = open_device();
	if (fd < 0)
		return 1;
	ret = rmsg_query_version(fd, &ver);
	close(fd);
	if (ret && ret != -EPROTO) {
		fprintf(stderr, "rmsgctl: version: %s\n", strerror(-ret));
		return 1;
	}
	if (json)
		printf("{\"abi_version\": %u, \"library_abi_version\": %u, "
		       "\"features\": %llu}\n", ver.abi_version,
		       RMSG_ABI_VERSION, (unsigned long long)ver.features);
	else
		printf("module ABI %u, library ABI %u, features 0x%llx\n",
		       ver.abi_version, RMSG_ABI_VERSION,
		       (unsigned long long)ver.features);
	if (ret == -EPROTO)
		fprintf(stderr, "rmsgctl: module and library ABI differ\n");
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "dev"))
		return cmd_dev();
	if (!strcmp(argv[optind], "version"))
		return cmd_version();
	fprintf(stderr, "rmsgctl: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return 2;
}
