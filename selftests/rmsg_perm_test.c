// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions and per-user bounds (Documentation/uapi.rst, "Permissions
 * and limits"): who may open /dev/rmsg, the per-user caps on endpoints
 * and channels, the pages the kernel allocates for an endpoint (charged
 * to the memory cgroup, not RLIMIT_MEMLOCK), and what one user's process
 * can do to another user's endpoints, also through a descriptor passed
 * to it.
 *
 * Parts run as nobody (65534) in a child: fork(), setresgid/setresuid,
 * then the child returns the number of the step that failed (0 for none)
 * and the parent asserts it. The parent checks the module's live-object
 * counts (debugfs rmsg/objects) before and after: every charge and count
 * goes back.
 */
#include <fcntl.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define NOBODY		RMSG_NOBODY
#define PG		4096
#define PARAMS		"/sys/module/rmsg/parameters/"
#define OBJECTS		"/sys/kernel/debug/rmsg/objects"
#define EVENT_MS	10000

/* A live-object count of the module (debugfs), -1 when unreadable. */
static long objects(const char *name)
{
	char key[64];
	long v, found = -1;
	FILE *f = fopen(OBJECTS, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* The counts settle once teardown work has run; wait for @want. */
static bool objects_are(const char *name, long want)
{
	long deadline = rmsg_now_ms() + 5000;

	do {
		if (objects(name) == want)
			return true;
		usleep(10000);
	} while (rmsg_now_ms() < deadline);
	return false;
}

static int param_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return (int)rmsg_read_number(path);
}

static int param_set(const char *name, int v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", v);
	return fclose(f) ? -errno : 0;
}

static int set_memlock(rlim_t bytes)
{
	struct rlimit rl = { .rlim_cur = bytes, .rlim_max = bytes };

	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* RMSG_IOC_EP_SETUP on a bare descriptor; 0 or -errno. */
static int setup(int fd, unsigned int sq, unsigned int area)
{
	struct rmsg_ep_setup p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = sq;
	p.send_area_size = area;
	return ioctl(fd, RMSG_IOC_EP_SETUP, &p) ? -errno : 0;
}

static int fault(int fd, __u32 ep_id, __u32 channel, __u32 kind)
{
	struct rmsg_fault req = {
		.ep_id = ep_id, .channel = channel, .kind = kind,
	};

	return ioctl(fd, RMSG_IOC_FAULT, &req) ? -errno : 0;
}

/* The next event of @ep that is of @kind; 0 with it in *@cqe. */
static int wait_kind(struct rmsg_ep *ep, unsigned int kind,
		     struct rmsg_cqe *cqe)
{
	int ret;

	do {
		ret = rmsg_next_cqe(ep, cqe, EVENT_MS);
		if (ret)
			return ret;
	} while (RMSG_CQE_KIND(cqe->flags) != kind);
	return 0;
}

static int open_ep(struct rmsg_ep **ep)
{
	return rmsg_ep_open(ep, 16, 0);
}

/* The object counts a test started from; every test ends at them. */
FIXTURE(perm) {
	long base[3];
	int endpoints_cap, channels_cap;	/* to restore */
	bool ready;
};

static const char *const counted[] = {
	"endpoints", "channels", "kernel_pages",
};

/* @name is back at @base, or says where it is. */
static bool back_at(const char *name, long base)
{
	if (objects_are(name, base))
		return true;
	fprintf(stderr, "# %s: %ld, was %ld\n", name, objects(name), base);
	return false;
}

FIXTURE_SETUP(perm)
{
	unsigned int i;

	if (geteuid())
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "needs root to become nobody and set parameters");
	if (objects("endpoints") < 0)
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "no " OBJECTS " (debugfs not mounted?)");
	for (i = 0; i < 3; i++)
		self->base[i] = objects(counted[i]);
	self->endpoints_cap = param_get("max_endpoints_per_user");
	self->channels_cap = param_get("max_channels_per_user");
	ASSERT_LE(0, self->endpoints_cap);
	ASSERT_LE(0, self->channels_cap);
	self->ready = true;
}

FIXTURE_TEARDOWN(perm)
{
	unsigned int i;

	if (!self->ready)
		return;
	param_set("max_endpoints_per_user", self->endpoints_cap);
	param_set("max_channels_per_user", self->channels_cap);
	for (i = 0; i < 3; i++)
		EXPECT_TRUE(back_at(counted[i], self->base[i]));
}

/* The node devtmpfs made has the mode and group of the parameters. */
TEST_F(perm, device_node)
{
	struct stat st;

	ASSERT_EQ(0, stat(RMSG_DEVICE_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(param_get("dev_mode"), (int)(st.st_mode & 07777));
	EXPECT_EQ(param_get("dev_gid"), (int)st.st_gid);
	EXPECT_EQ(0, (int)st.st_uid);
	/* Read-only: applied when the node is made. */
	EXPECT_NE(0, param_set("dev_mode", 0600));
}

static int nobody_open_child(bool expect_ok)
{
	int fd;

	if (rmsg_become_nobody())
		return 1;
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (expect_ok ? fd < 0 : fd >= 0 || errno != EACCES)
		return 2;
	return 0;
}

/* With the default mode 0666, nobody opens /dev/rmsg. */
TEST_F(perm, nobody_opens)
{
	pid_t pid;

	if ((param_get("dev_mode") & 06) != 06)
		SKIP(return, "dev_mode %o keeps others out",
		     param_get("dev_mode"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_open_child(true));
	EXPECT_EQ(0, rmsg_child_status(pid));
}

static int endpoint_cap_child(void)
{
	int fds[5], i, fd;

	if (rmsg_become_nobody())
		return 1;
	for (i = 0; i < 4; i++) {
		fds[i] = open(RMSG_DEVICE_PATH, O_RDWR);
		if (fds[i] < 0)
			return 2;
	}
	/* The fifth is over the cap: EMFILE, and nothing is left behind. */
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fd >= 0 || errno != EMFILE)
		return 3;
	if (objects("endpoints") >= 0)
		return 4;	/* debugfs is root's: nobody cannot read it */
	close(fds[0]);
	fds[0] = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fds[0] < 0)
		return 5;
	/* A descriptor of the user's, duplicated, is no new endpoint. */
	fds[4] = dup(fds[1]);
	if (fds[4] < 0)
		return 6;
	for (i = 0; i < 5; i++)
		close(fds[i]);
	return 0;
}

/*
 * max_endpoints_per_user 4: nobody's fifth open fails with EMFILE until
 * one of its four closes; root (CAP_SYS_RESOURCE) is not counted against
 * it, and nobody's endpoints do not count against root.
 */
TEST_F(perm, endpoint_cap)
{
	int fds[6], i, n = 0;
	pid_t pid;

	ASSERT_EQ(0, param_set("max_endpoints_per_user", 4));
	for (i = 0; i < 6; i++) {
		fds[i] = open(RMSG_DEVICE_PATH, O_RDWR);
		EXPECT_LE(0, fds[i]);
		n += fds[i] >= 0;
	}
	EXPECT_EQ(self->base[0] + n, objects("endpoints"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(endpoint_cap_child());
	EXPECT_EQ(0, rmsg_child_status(pid));
	for (i = 0; i < 6; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	EXPECT_TRUE(objects_are("users", 0) || self->base[0])
		TH_LOG("users: %ld with no endpoint open",
		       objects("users"));
}

/*
 * As nobody, both ends ours: max_channels_per_user 2 lets one
 * connection (a channel at each end) open, refuses the next CONNECT with
 * EDQUOT; with 3 the CONNECT is taken but the accepting end is refused,
 * so the connection fails. Closing gives the counts back.
 */
static int channel_cap_child(unsigned short port)
{
	struct rmsg_ep *a = NULL, *b = NULL;
	struct sockaddr_in sin;
	struct rmsg_cqe ca, cb;
	int id;

	if (rmsg_become_nobody())
		return 1;
	if (!rmsg_local_addr(&sin, port))
		return 2;
	if (open_ep(&a) || open_ep(&b))
		return 3;
	if (rmsg_pair_up(a, b, &sin, &ca, &cb, EVENT_MS))
		return 4;
	id = rmsg_chan_connect(b, (struct sockaddr *)&sin, sizeof(sin), 0xb1,
			       0);
	if (id != -EDQUOT)
		return 5;
	if (param_set("max_channels_per_user", 3) != -EACCES)
		return 6;	/* nobody cannot raise it */
	/* The parent raised it to 3 before we started: see channel_cap. */
	return 0;
}

static int channel_cap3_child(unsigned short port)
{
	struct rmsg_ep *a = NULL, *b = NULL;
	struct sockaddr_in sin;
	struct rmsg_cqe ca, cb, ev;
	int id;

	if (rmsg_become_nobody())
		return 1;
	if (!rmsg_local_addr(&sin, port))
		return 2;
	if (open_ep(&a) || open_ep(&b))
		return 3;
	if (rmsg_pair_up(a, b, &sin, &ca, &cb, EVENT_MS))
		return 4;
	/* The third channel is ours; the fourth, the peer's end, is not. */
	id = rmsg_chan_connect(b, (struct sockaddr *)&sin, sizeof(sin), 0xb1,
			       0);
	if (id < 0)
		return 5;
	if (wait_kind(b, RMSG_CQE_CONNECTED, &ev) || ev.channel != (__u32)id)
		return 6;
	if (ev.res >= 0)
		return 7;
	/* Its room is free again, so the count is back at 2: one more. */
	id = rmsg_chan_connect(b, (struct sockaddr *)&sin, sizeof(sin), 0xb2,
			       0);
	if (id < 0)
		return 8;
	if (wait_kind(b, RMSG_CQE_CONNECTED, &ev) || ev.res >= 0)
		return 9;
	rmsg_ep_drop(&b);
	rmsg_ep_drop(&a);
	return 0;
}

TEST_F_TIMEOUT(perm, channel_cap, 120)
{
	pid_t pid;

	ASSERT_EQ(0, param_set("max_channels_per_user", 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(channel_cap_child(4810));
	EXPECT_EQ(0, rmsg_child_status(pid));
	EXPECT_TRUE(objects_are("channels", self->base[1]));

	ASSERT_EQ(0, param_set("max_channels_per_user", 3));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(channel_cap3_child(4811));
	EXPECT_EQ(0, rmsg_child_status(pid));
}

/*
 * The kernel's pages of an endpoint are charged to the memory cgroup, not
 * to RLIMIT_MEMLOCK, which is for the program's own pinned memory only:
 * as nobody with an RLIMIT_MEMLOCK of 0, rings and a 64 KiB send area set
 * up, a channel with 64 KiB receive blocks (and their shadows) opens and
 * carries a message each way, byte for byte; registering one page of the
 * program's memory is still refused with ENOMEM.
 */
static int kernel_pages_child(unsigned short port)
{
	struct rmsg_ep_setup p = { .sq_entries = 16 };
	struct rmsg_ep *a = NULL, *b = NULL;
	struct sockaddr_in sin;
	struct rmsg_event ev;
	__u32 a_ch, handle;
	int fd, id;
	void *page;

	if (set_memlock(0) || rmsg_become_nobody())
		return 1;
	if (!rmsg_local_addr(&sin, port))
		return 2;
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fd < 0 || setup(fd, 8, 16 * PG))
		return 3;
	close(fd);
	p.send_area_size = 16 * PG;
	if (rmsg_ep_open_setup(&a, &p))
		return 4;
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	p.send_area_size = 16 * PG;
	if (rmsg_ep_open_setup(&b, &p))
		return 5;
	if (rmsg_ep_listen(a, (struct sockaddr *)&sin, sizeof(sin), 0xa0,
			   16 * PG))
		return 6;
	id = rmsg_chan_connect(b, (struct sockaddr *)&sin, sizeof(sin), 0xb0,
			       16 * PG);
	if (id < 0)
		return 7;
	if (rmsg_lib_event(b, RMSG_CQE_CONNECTED, &ev, EVENT_MS) || ev.res ||
	    ev.channel != (__u32)id)
		return 8;
	if (rmsg_lib_event(a, RMSG_CQE_ACCEPTED, &ev, EVENT_MS) || ev.res)
		return 9;
	a_ch = ev.channel;
	if (rmsg_echo(b, id, a, a_ch, 0x3c, 3000, EVENT_MS) ||
	    rmsg_echo(a, a_ch, b, id, 0xc3, 3000, EVENT_MS))
		return 10;
	/* The program's own memory is what RLIMIT_MEMLOCK still bounds. */
	page = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 11;
	memset(page, 1, PG);
	if (rmsg_reg(a, page, PG, &handle) != -ENOMEM)
		return 12;
	munmap(page, PG);
	rmsg_ep_drop(&b);
	rmsg_ep_drop(&a);
	return 0;
}

TEST_F_TIMEOUT(perm, kernel_pages_outside_memlock, 60)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(kernel_pages_child(4812));
	EXPECT_EQ(0, rmsg_child_status(pid));
}

/*
 * The pages stay, and stay counted, while a program maps them, also after
 * the endpoint's file is closed: root's send area of 16 pages and rings
 * of one page each.
 */
TEST_F(perm, kernel_pages_live_while_mapped)
{
	long k0 = objects("kernel_pages");
	int fd = open(RMSG_DEVICE_PATH, O_RDWR);
	void *area;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setup(fd, 8, 16 * PG));
	EXPECT_EQ(k0 + 18, objects("kernel_pages"));
	area = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    RMSG_OFF_SEND_AREA);
	ASSERT_NE(MAP_FAILED, area);
	close(fd);
	/* The mapping holds the file, and with it the rings. */
	EXPECT_EQ(k0 + 18, objects("kernel_pages"));
	memset(area, 0x5a, 16 * PG);
	munmap(area, 16 * PG);
	EXPECT_TRUE(objects_are("kernel_pages", k0));
}

/* Root's pair: a listens, b connects; one channel each. */
struct pair {
	struct rmsg_ep *a, *b;
	__u32 a_ch, b_ch, a_id, b_id;
};

static int pair_up(struct pair *p, unsigned short port)
{
	struct sockaddr_in sin;
	struct rmsg_cqe ca, cb;
	struct rmsg_chan_list req;
	struct rmsg_chan_info info;

	if (!rmsg_local_addr(&sin, port) || open_ep(&p->a) || open_ep(&p->b))
		return -1;
	if (rmsg_pair_up(p->a, p->b, &sin, &ca, &cb, EVENT_MS))
		return -1;
	p->a_ch = ca.channel;
	p->b_ch = cb.channel;
	memset(&req, 0, sizeof(req));
	req.chans = (uintptr_t)&info;
	req.capacity = 1;
	if (ioctl(rmsg_ep_fd(p->a), RMSG_IOC_CHAN_LIST, &req))
		return -1;
	p->a_id = req.ep_id;
	if (ioctl(rmsg_ep_fd(p->b), RMSG_IOC_CHAN_LIST, &req))
		return -1;
	p->b_id = req.ep_id;
	return 0;
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * A process of nobody that was handed b's descriptor (SCM_RIGHTS, after
 * it dropped root): the descriptor works as any file does (its rings map,
 * a NOP completes, its channels are listed and still owned by root), but
 * the caller's own rights decide about other endpoints: a's channels are
 * neither listed nor faultable, and no endpoint's device may be faulted.
 */
static int passed_fd_child(int sock, const struct pair *p)
{
	struct rmsg_chan_info c[8];
	struct rmsg_chan_list req;
	struct rmsg_ep_stats st;
	int fd;
	unsigned int i;
	void *sq;

	if (rmsg_become_nobody())
		return 1;
	fd = recv_fd(sock);
	if (fd < 0)
		return 2;
	sq = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, RMSG_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return 3;
	munmap(sq, PG);
	memset(&req, 0, sizeof(req));
	req.chans = (uintptr_t)c;
	req.capacity = 8;
	if (ioctl(fd, RMSG_IOC_CHAN_LIST, &req) || req.filled != 1 ||
	    req.ep_id != p->b_id)
		return 4;
	if (c[0].uid != 0 || c[0].channel != p->b_ch)
		return 5;
	req.flags = RMSG_CHAN_LIST_F_ALL;
	if (ioctl(fd, RMSG_IOC_CHAN_LIST, &req))
		return 6;
	for (i = 0; i < req.filled; i++)
		if (c[i].ep_id == p->a_id)
			return 7;
	if (fault(fd, p->a_id, p->a_ch, RMSG_FAULT_QP_ERROR) != -EPERM)
		return 8;
	if (fault(fd, 0, p->b_ch, RMSG_FAULT_DEVICE_FATAL) != -EPERM)
		return 9;
	if (fault(fd, p->a_id, p->a_ch, RMSG_FAULT_DEVICE_FATAL) != -EPERM)
		return 10;
	/* The endpoint answers whoever holds the descriptor. */
	if (ioctl(fd, RMSG_IOC_EP_STATS, &st))
		return 11;
	return 0;
}

TEST_F_TIMEOUT(perm, passed_descriptor, 60)
{
	struct pair p;
	int sv[2];
	pid_t pid;

	ASSERT_EQ(0, pair_up(&p, 4813));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(passed_fd_child(sv[1], &p));
	}
	close(sv[1]);
	usleep(100000);
	ASSERT_EQ(0, send_fd(sv[0], rmsg_ep_fd(p.b)));
	EXPECT_EQ(0, rmsg_child_status(pid));
	close(sv[0]);
	/* Root may, on either: the device error is not injected here. */
	EXPECT_EQ(-ENOENT, fault(rmsg_ep_fd(p.a), 0, 12345,
				 RMSG_FAULT_DEVICE_FATAL));
	rmsg_ep_drop(&p.b);
	rmsg_ep_drop(&p.a);
}

/*
 * Names from another endpoint mean nothing in nobody's own: a's channel
 * id, region handle and receive-block offset are refused or name only
 * nobody's own things, and a rendezvous answer naming a cookie that is not
 * its channel's next is refused.
 */
static int foreign_names_child(const struct pair *p, __u32 a_region)
{
	struct rmsg_dereg d = { .handle = a_region };
	struct rmsg_ep *ep = NULL;
	struct rmsg_sqe *sqe;
	struct rmsg_cqe cqe;
	char *buf;
	__u32 h;
	void *blk;

	if (rmsg_become_nobody())
		return 1;
	if (open_ep(&ep))
		return 2;
	/* a's region handle: nobody's endpoint has no such region. */
	if (ioctl(rmsg_ep_fd(ep), RMSG_IOC_DEREG, &d) != -1 || errno != ENOENT)
		return 3;
	/* a's channel's receive block: no such channel here. */
	blk = mmap(NULL, PG, PROT_READ, MAP_SHARED, rmsg_ep_fd(ep),
		   RMSG_OFF_BLOCK(p->a_ch));
	if (blk != MAP_FAILED || errno != ENOENT)
		return 4;
	/* A region of our own, then SQEs naming a's channel id. */
	buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || rmsg_reg(ep, buf, 4 * PG, &h))
		return 5;
	sqe = rmsg_sq_get_sqe(ep);
	sqe->opcode = RMSG_OP_SEND_RNDV;
	sqe->channel = p->a_ch;
	sqe->addr = (uintptr_t)buf;
	sqe->len = PG;
	sqe->region = h;
	sqe->user_data = 1;
	sqe = rmsg_sq_get_sqe(ep);
	sqe->opcode = RMSG_OP_RECV_RNDV;
	sqe->channel = p->a_ch;
	sqe->addr = (uintptr_t)buf;
	sqe->len = PG;
	sqe->region = a_region;
	sqe->user_data = 2;
	if (rmsg_ep_enter(ep, rmsg_sq_submit(ep), 0, 0) < 0)
		return 6;
	if (rmsg_next_cqe(ep, &cqe, EVENT_MS) || cqe.user_data != 1 ||
	    cqe.res != -ENOTCONN)
		return 7;
	if (rmsg_next_cqe(ep, &cqe, EVENT_MS) || cqe.user_data != 2 ||
	    cqe.res != -ENOTCONN)
		return 8;
	rmsg_ep_drop(&ep);
	return 0;
}

TEST_F_TIMEOUT(perm, foreign_names, 60)
{
	char *buf = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rmsg_sqe *sqe;
	struct rmsg_cqe cqe;
	struct pair p;
	__u32 h;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, pair_up(&p, 4814));
	ASSERT_EQ(0, rmsg_reg(p.a, buf, 4 * PG, &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(foreign_names_child(&p, h));
	EXPECT_EQ(0, rmsg_child_status(pid));
	/* a's own answer to a cookie its channel has not reached: EINVAL. */
	sqe = rmsg_sq_get_sqe(p.a);
	ASSERT_NE(NULL, sqe);
	sqe->opcode = RMSG_OP_RECV_RNDV;
	sqe->channel = p.a_ch;
	sqe->addr = (uintptr_t)buf;
	sqe->len = PG;
	sqe->region = h;
	sqe->aux = 7;
	sqe->user_data = 3;
	ASSERT_LE(0, rmsg_ep_enter(p.a, rmsg_sq_submit(p.a), 0, 0));
	ASSERT_EQ(0, rmsg_next_cqe(p.a, &cqe, EVENT_MS));
	EXPECT_EQ(3, cqe.user_data);
	EXPECT_EQ(-EINVAL, cqe.res);
	/* The region is a's still, and unused. */
	EXPECT_EQ(0, rmsg_dereg(p.a, h));
	rmsg_ep_drop(&p.b);
	rmsg_ep_drop(&p.a);
	munmap(buf, 4 * PG);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
