// SPDX-License-Identifier: GPL-2.0
/*
 * rmsgctl: look at what rmsg sees and does.
 *
 *   rmsgctl [--json] dev       RDMA devices and their ports
 *   rmsgctl [--json] version   the module's ABI version and features
 *   rmsgctl [--json] chan      channels of every endpoint the caller may see
 *   rmsgctl fault KIND EP:CH   inject a fault into a channel
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include <rmsg.h>

static bool json;
static bool long_list;

static void print_usage(FILE *out)
{
	fputs("usage: rmsgctl [--json] [--long] COMMAND\n", out);
	fputs("       rmsgctl --version | --help\n\n", out);
	fputs("commands:\n", out);
	fputs("  dev       RDMA devices rmsg sees, with their ports\n", out);
	fputs("  version   ABI version and features of the loaded module\n",
	      out);
	fputs("  chan      channels, with their state and repairs (--long: every\n",
	      out);
	fputs("            column: epoch, bytes sent again, block, ...)\n", out);
	fputs("  links     the module's links to other rmsg kernels (root)\n",
	      out);
	fputs("  fault {qp-error|disconnect|device-fatal} EP:CH\n", out);
	fputs("            inject a fault into channel CH of endpoint EP\n",
	      out);
}

static int open_device(void)
{
	int fd = rmsg_node_open();

	if (fd == -ENOENT)
		fprintf(stderr, "rmsgctl: no %s: the rmsg module is not loaded (modprobe rmsg)\n",
			RMSG_DEVICE_PATH);
	else if (fd == -EACCES)
		fprintf(stderr, "rmsgctl: %s: %s: the module's dev_mode and dev_gid keep this user out\n",
			RMSG_DEVICE_PATH, strerror(-fd));
	else if (fd < 0)
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

/* One "key": value member; every member but an object's first has a comma. */
static void json_key(const char *key, bool first)
{
	printf("%s\"%s\": ", first ? "" : ", ", key);
}

static void json_uint(const char *key, unsigned long long value, bool first)
{
	json_key(key, first);
	printf("%llu", value);
}

static void json_str(const char *key, const char *value, bool first)
{
	json_key(key, first);
	json_string(value);
}

static void json_int(const char *key, long long value, bool first)
{
	json_key(key, first);
	printf("%lld", value);
}

static void print_port_json(const struct rmsg_port_info *pi)
{
	putchar('{');
	json_uint("port", pi->port_num, true);
	json_str("state", rmsg_port_state_name(pi->state), false);
	json_str("phys_state", rmsg_port_phys_state_name(pi->phys_state),
		 false);
	json_str("protocol", rmsg_port_protocol_name(pi->protocol), false);
	json_uint("active_mtu", pi->active_mtu, false);
	json_uint("gid_tbl_len", pi->gid_tbl_len, false);
	json_uint("lid", pi->lid, false);
	json_uint("events", pi->events, false);
	json_str("netdev", pi->netdev, false);
	putchar('}');
}

static void print_dev_json(const struct rmsg_dev_info *devs, int n,
			   unsigned int generation)
{
	char guid[17];
	unsigned int p, nports;
	int i;

	putchar('{');
	json_uint("generation", generation, true);
	json_key("devices", false);
	putchar('[');
	for (i = 0; i < n; i++) {
		const struct rmsg_dev_info *d = &devs[i];

		printf("%s{", i ? ", " : "");
		json_str("name", d->name, true);
		json_uint("index", d->index, false);
		json_uint("num_ports", d->num_ports, false);
		snprintf(guid, sizeof(guid), "%016" PRIx64,
			 (uint64_t)d->node_guid);
		json_str("node_guid", guid, false);
		json_uint("fatal_events", d->fatal_events, false);
		json_key("ports", false);
		putchar('[');
		nports = d->num_ports < RMSG_MAX_PORTS ?
			 d->num_ports : RMSG_MAX_PORTS;
		for (p = 0; p < nports; p++) {
			if (p)
				printf(", ");
			print_port_json(&d->port[p]);
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
	n = rmsg_node_devices(fd, &devs, &generation);
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
	ret = rmsg_node_version(fd, &ver);
	close(fd);
	if (ret && ret != -EPROTO) {
		fprintf(stderr, "rmsgctl: version: %s\n", strerror(-ret));
		return 1;
	}
	if (json) {
		putchar('{');
		json_uint("abi_version", ver.abi_version, true);
		json_uint("library_abi_version", RMSG_ABI_VERSION, false);
		json_uint("features", ver.features, false);
		printf("}\n");
	} else {
		printf("module ABI %u, library ABI %u, features 0x%llx\n",
		       ver.abi_version, RMSG_ABI_VERSION,
		       (unsigned long long)ver.features);
	}
	if (ret == -EPROTO)
		fprintf(stderr, "rmsgctl: module and library ABI differ\n");
	return ret ? 1 : 0;
}

/* "-" for no error, else the errno's name ("ETIMEDOUT"), or its number. */
static const char *error_name(int err, char *buf, size_t len)
{
	const char *name;

	if (!err)
		return "-";
	name = strerrorname_np(err < 0 ? -err : err);
	if (name)
		return name;
	snprintf(buf, len, "%d", err);
	return buf;
}

/* A channel's device (rmsg_chan_info.dev) by name: "-" for none. */
static const char *dev_name(uint32_t dev, const struct rmsg_dev_info *devs,
			    int ndevs, char *buf, size_t len)
{
	int i;

	if (!dev)
		return "-";
	for (i = 0; i < ndevs; i++)
		if (devs[i].index == dev - 1)
			return devs[i].name;
	snprintf(buf, len, "#%u", dev - 1);
	return buf;
}

/* "a.b.c.d:port", "[v6]:port", or "-" for none (not connected yet). */
static const char *addr_name(const struct __kernel_sockaddr_storage *ss,
			     char *buf, size_t len)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET &&
	    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)))
		snprintf(buf, len, "%s:%u", ip, ntohs(in->sin_port));
	else if (ss->ss_family == AF_INET6 &&
		 inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip)))
		snprintf(buf, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
	else
		snprintf(buf, len, "-");
	return buf;
}

#define ADDR_NAME_MAX	(INET6_ADDRSTRLEN + 8)

static void print_chan_json(const struct rmsg_chan_info_addrs *e, int n,
			    uint32_t own, const struct rmsg_dev_info *devs,
			    int ndevs)
{
	char ebuf[16], dbuf[RMSG_DEV_NAME_MAX], abuf[ADDR_NAME_MAX];
	const struct rmsg_chan_info *c;
	int i;

	putchar('{');
	json_uint("ep_id", own, true);
	json_key("channels", false);
	putchar('[');
	for (i = 0; i < n; i++, e++) {
		c = &e->info;
		printf("%s{", i ? ", " : "");
		json_uint("ep_id", c->ep_id, true);
		json_uint("pid", c->pid, false);
		json_uint("uid", c->uid, false);
		json_uint("channel", c->channel, false);
		json_str("state", rmsg_chan_state_name(c->state), false);
		json_uint("epoch", c->epoch, false);
		json_uint("attempts", c->attempts, false);
		json_uint("max_attempts", c->max_attempts, false);
		json_uint("repairs", c->repairs, false);
		json_uint("retx_msgs", c->retx_msgs, false);
		json_uint("retx_bytes", c->retx_bytes, false);
		json_int("last_error", c->last_error, false);
		json_str("last_error_name",
			 error_name(c->last_error, ebuf, sizeof(ebuf)), false);
		json_uint("recover_ns", c->recover_ns, false);
		json_uint("block_size", c->block_size, false);
		json_str("dev", dev_name(c->dev, devs, ndevs, dbuf,
					 sizeof(dbuf)), false);
		json_str("local", addr_name(&e->local, abuf, sizeof(abuf)),
			 false);
		json_str("peer", addr_name(&e->peer, abuf, sizeof(abuf)),
			 false);
		putchar('}');
	}
	printf("]}\n");
}

/* Room for a task's comm (TASK_COMM_LEN, 16) and then some. */
#define COMMAND_MAX	32

/*
 * The name of process @pid as /proc shows it to the caller (the same PID
 * namespace as the list's PIDs), or "-" when it cannot be read: gone, or
 * 0 (the module could not name it in the caller's namespace).
 */
static void command_name(uint32_t pid, char *buf, size_t len)
{
	char path[40];
	size_t got = 0;
	FILE *f;

	snprintf(buf, len, "-");
	if (!pid)
		return;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, len, f))
		got = strcspn(buf, "\n");
	fclose(f);
	buf[got] = '\0';
	if (!got)
		snprintf(buf, len, "-");
}

static void print_chan_table(const struct rmsg_chan_info_addrs *e, int n,
			     const struct rmsg_dev_info *devs, int ndevs)
{
	char attempts[24], ebuf[16], dbuf[RMSG_DEV_NAME_MAX];
	char lbuf[ADDR_NAME_MAX], pbuf[ADDR_NAME_MAX], cbuf[COMMAND_MAX];
	const struct rmsg_chan_info *c;
	const char *error, *dev;
	int i;

	if (long_list)
		printf("%5s %7s %5s %-10s %5s %-10s %7s %9s %11s %-12s %12s %8s %-8s %-21s %-21s %s\n",
		       "EP", "PID", "CHAN", "STATE", "EPOCH", "ATTEMPTS",
		       "REPAIRS", "RETX_MSGS", "RETX_BYTES", "LAST_ERROR",
		       "RECOVERING", "BLOCK", "DEV", "LOCAL", "PEER", "COMMAND");
	else
		printf("%5s %7s %5s %-10s %-10s %7s %-12s %-8s %-21s %s\n",
		       "EP", "PID", "CHAN", "STATE", "ATTEMPTS", "REPAIRS",
		       "LAST_ERROR", "DEV", "PEER", "COMMAND");
	for (i = 0; i < n; i++, e++) {
		c = &e->info;
		/* N of M while a repair runs, else how many it may take. */
		if (c->attempts || c->max_attempts)
			snprintf(attempts, sizeof(attempts), "%u of %u",
				 c->attempts, c->max_attempts);
		else
			snprintf(attempts, sizeof(attempts), "-");
		/* Each names a constant or fills its buffer: print what it returns. */
		error = error_name(c->last_error, ebuf, sizeof(ebuf));
		dev = dev_name(c->dev, devs, ndevs, dbuf, sizeof(dbuf));
		addr_name(&e->peer, pbuf, sizeof(pbuf));
		command_name(c->pid, cbuf, sizeof(cbuf));
		if (!long_list) {
			printf("%5u %7u %5u %-10s %-10s %7u %-12s %-8s %-21s %s\n",
			       c->ep_id, c->pid, c->channel,
			       rmsg_chan_state_name(c->state), attempts,
			       c->repairs, error, dev, pbuf, cbuf);
			continue;
		}
		printf("%5u %7u %5u %-10s %5u %-10s %7u %9llu %11llu %-12s %10.3fms %8u %-8s %-21s %-21s %s\n",
		       c->ep_id, c->pid, c->channel,
		       rmsg_chan_state_name(c->state), c->epoch, attempts,
		       c->repairs, (unsigned long long)c->retx_msgs,
		       (unsigned long long)c->retx_bytes, error,
		       c->recover_ns / 1e6, c->block_size, dev,
		       addr_name(&e->local, lbuf, sizeof(lbuf)), pbuf, cbuf);
	}
}

static int cmd_chan(void)
{
	struct rmsg_dev_info *devs = NULL;
	struct rmsg_chan_info_addrs *chans;
	int fd, i, n, ndevs;
	uint32_t own;

	fd = open_device();
	if (fd < 0)
		return 1;
	n = rmsg_node_channel_addrs(fd, RMSG_CHAN_LIST_F_ALL, &chans, &own);
	/*
	 * For the devices' names (without them, their numbers); only when a
	 * channel is on one: querying ports makes some drivers log.
	 */
	ndevs = 0;
	for (i = 0; i < n; i++)
		if (chans[i].info.dev)
			ndevs = -1;
	if (ndevs)
		ndevs = rmsg_node_devices(fd, &devs, NULL);
	if (ndevs < 0) {
		ndevs = 0;
		devs = NULL;
	}
	close(fd);
	if (n < 0) {
		fprintf(stderr, "rmsgctl: channel list: %s\n", strerror(-n));
		return 1;
	}
	if (json)
		print_chan_json(chans, n, own, devs, ndevs);
	else
		print_chan_table(chans, n, devs, ndevs);
	free(chans);
	free(devs);
	return 0;
}

static void print_links(const struct rmsg_link_info *l, int n)
{
	char pbuf[ADDR_NAME_MAX];
	int i;

	if (!json)
		printf("%-21s %5s %5s %-10s %-7s %9s %9s %8s %8s %8s %8s %7s %6s\n",
		       "PEER", "EP", "CHAN", "STATE", "DIALLED", "SENT",
		       "RECEIVED", "LCR_OUT", "LCR_IN", "REF_OUT", "REF_IN",
		       "DROPPED", "CHANS");
	else
		putchar('[');
	for (i = 0; i < n; i++, l++) {
		const char *state = l->state ?
				    rmsg_chan_state_name(l->state) : "-";

		addr_name(&l->peer, pbuf, sizeof(pbuf));
		if (!json) {
			printf("%-21s %5u %5u %-10s %-7s %9llu %9llu %8llu %8llu %8llu %8llu %7llu %6u\n",
			       pbuf, l->ep_id, l->channel, state,
			       l->flags & RMSG_LINK_INFO_F_DIALLED ? "yes" : "no",
			       (unsigned long long)l->sent,
			       (unsigned long long)l->received,
			       (unsigned long long)l->lcredit_sent,
			       (unsigned long long)l->lcredit_received,
			       (unsigned long long)l->refused_sent,
			       (unsigned long long)l->refused_received,
			       (unsigned long long)l->dropped, l->channels);
			continue;
		}
		printf("%s{", i ? "," : "");
		json_str("peer", pbuf, true);
		json_uint("ep", l->ep_id, false);
		json_uint("channel", l->channel, false);
		json_str("state", state, false);
		json_uint("dialled", !!(l->flags & RMSG_LINK_INFO_F_DIALLED),
			  false);
		json_uint("sent", l->sent, false);
		json_uint("received", l->received, false);
		json_uint("lcredit_sent", l->lcredit_sent, false);
		json_uint("lcredit_received", l->lcredit_received, false);
		json_uint("refused_sent", l->refused_sent, false);
		json_uint("refused_received", l->refused_received, false);
		json_uint("dropped", l->dropped, false);
		json_uint("channels", l->channels, false);
		json_uint("channels_total", l->channels_total, false);
		json_uint("accepts_refused", l->accepts_refused, false);
		putchar('}');
	}
	if (json)
		printf("]\n");
}

static int cmd_links(void)
{
	struct rmsg_link_info *links;
	int fd, n;

	fd = open_device();
	if (fd < 0)
		return 1;
	n = rmsg_node_links(fd, &links);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "rmsgctl: link list: %s\n", strerror(-n));
		return 1;
	}
	print_links(links, n);
	free(links);
	return 0;
}

/* "EP:CH", both decimal, EP from 1. */
static bool parse_target(const char *s, uint32_t *ep_id, uint32_t *channel)
{
	unsigned long ep, ch;
	char *end;

	errno = 0;
	ep = strtoul(s, &end, 10);
	if (end == s || *end != ':' || !ep || ep > UINT32_MAX || errno)
		return false;
	s = end + 1;
	ch = strtoul(s, &end, 10);
	if (end == s || *end || ch > UINT32_MAX || errno)
		return false;
	*ep_id = ep;
	*channel = ch;
	return true;
}

/* Whether endpoint @ep_id has a channel the caller may see. */
static bool endpoint_listed(int fd, uint32_t ep_id)
{
	struct rmsg_chan_info *chans;
	bool found = false;
	int i, n;

	n = rmsg_node_channels(fd, RMSG_CHAN_LIST_F_ALL, &chans, NULL);
	for (i = 0; i < n; i++)
		found |= chans[i].ep_id == ep_id;
	if (n > 0)
		free(chans);
	return found;
}

static int cmd_fault(int argc, char **argv)
{
	uint32_t kind, ep_id, channel;
	int fd, ret;

	if (argc != 3) {
		print_usage(stderr);
		return 2;
	}
	for (kind = RMSG_FAULT_QP_ERROR; kind <= RMSG_FAULT_DEVICE_FATAL;
	     kind++)
		if (!strcmp(argv[1], rmsg_fault_kind_name(kind)))
			break;
	if (kind > RMSG_FAULT_DEVICE_FATAL) {
		fprintf(stderr, "rmsgctl: unknown fault '%s'\n", argv[1]);
		return 2;
	}
	if (!parse_target(argv[2], &ep_id, &channel)) {
		fprintf(stderr, "rmsgctl: '%s' is not EP:CH (see rmsgctl chan)\n",
			argv[2]);
		return 2;
	}
	fd = open_device();
	if (fd < 0)
		return 1;
	ret = rmsg_node_fault(fd, ep_id, channel, kind);
	if (ret == -ENOENT)
		fprintf(stderr, "rmsgctl: fault %s on %u:%u: %s (rmsgctl chan lists them)\n",
			argv[1], ep_id, channel,
			endpoint_listed(fd, ep_id) ? "no such channel" :
			"no such endpoint");
	else if (ret)
		fprintf(stderr, "rmsgctl: fault %s on %u:%u: %s\n", argv[1],
			ep_id, channel, strerror(-ret));
	close(fd);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "long", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	int c;

	while ((c = getopt_long(argc, argv, "jlhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'l':
			long_list = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		case 'V':
			printf("rmsgctl (rmsg) %s, library ABI %u\n", RMSG_VERSION,
			       RMSG_ABI_VERSION);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "dev"))
		return cmd_dev();
	if (!strcmp(argv[optind], "version"))
		return cmd_version();
	if (!strcmp(argv[optind], "chan"))
		return cmd_chan();
	if (!strcmp(argv[optind], "links"))
		return cmd_links();
	if (!strcmp(argv[optind], "fault"))
		return cmd_fault(argc - optind, argv + optind);
	fprintf(stderr, "rmsgctl: unknown command '%s'\n", argv[optind]);
	print_usage(stderr);
	return 2;
}
