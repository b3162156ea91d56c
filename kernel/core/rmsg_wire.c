// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rmsg protocol core: encoding and validation of the connection handshake.
 *
 * Everything decoded here comes from the network: a peer running another
 * version, a buggy peer or a hostile one. Decoding checks every field that
 * can be checked without knowing the channel; what depends on the channel
 * (does the incarnation match, is the epoch newer) is the caller's.
 */
#include "rmsg_wire.h"
#include "rmsg_link.h"
#include "rmsg_vb.h"

/* The wire struct must fill the REQ private data exactly, with no holes. */
static_assert(sizeof(struct rmsg_wire_hello) == RMSG_WIRE_HELLO_SIZE);
static_assert(sizeof(struct rmsg_wire_ctrl) == RMSG_WIRE_CTRL_SIZE);
/* A link channel id, 24 bits, never RMSG_WIRE_NO_CHANNEL. */
static_assert(RMSG_LINK_NO_CHAN < RMSG_WIRE_NO_CHANNEL);
/* A GRANT's size field holds every block a lease may have. */
static_assert(RMSG_LEASE_UNITS_MAX <= 0xffff &&
	      RMSG_VB_MAX_BLOCK % RMSG_LEASE_UNIT == 0);
/* An ACCEPT and the longest address list fit the REP's private data. */
static_assert(sizeof(struct rmsg_wire_addr) == RMSG_WIRE_ADDR_SIZE);
static_assert(sizeof(struct rmsg_wire_addrs) == RMSG_WIRE_ADDRS_HDR +
	      RMSG_WIRE_ADDRS_MAX * RMSG_WIRE_ADDR_SIZE);
static_assert(RMSG_WIRE_HELLO_SIZE + sizeof(struct rmsg_wire_addrs) <=
	      RMSG_WIRE_REP_SIZE);

/**
 * rmsg_hello_encode() - a hello in wire format
 * @wire: written whole
 * @hello: what to send
 */
void rmsg_hello_encode(struct rmsg_wire_hello *wire,
		       const struct rmsg_hello *hello)
{
	memset(wire, 0, sizeof(*wire));
	wire->magic = cpu_to_le32(RMSG_WIRE_MAGIC);
	wire->version = RMSG_WIRE_VERSION;
	wire->kind = hello->kind;
	wire->flags = cpu_to_le16(hello->flags);
	wire->incarnation = cpu_to_le64(hello->incarnation);
	wire->block_addr = cpu_to_le64(hello->block_addr);
	wire->channel = cpu_to_le32(hello->channel);
	wire->peer_channel = cpu_to_le32(hello->peer_channel);
	wire->epoch = cpu_to_le32(hello->epoch);
	wire->block_rkey = cpu_to_le32(hello->block_rkey);
	wire->block_size = cpu_to_le32(hello->block_size);
	wire->rx_seq = cpu_to_le32(hello->rx_seq);
	wire->rx_freed = cpu_to_le32(hello->rx_freed);
	wire->rx_arrived = cpu_to_le32(hello->rx_arrived);
}

/*
 * A hello: in a REQ or REP, or in a HELLO on a link. Rules,
 * beyond the fixed fields: a CONNECT has epoch 0, no peer channel and
 * rx_arrived == rx_freed; a RECONNECT has an epoch of at least 1 and names
 * a peer channel, as does an ACCEPT; in all kinds rx_arrived is at most
 * block_size bytes ahead of rx_freed (wrap-safe) and rx_seq is any value.
 */
static int rmsg_hello_check_chan(const struct rmsg_wire_hello *wire)
{
	u32 size = le32_to_cpu(wire->block_size);
	u32 freed = le32_to_cpu(wire->rx_freed);
	u32 arrived = le32_to_cpu(wire->rx_arrived);
	u32 peer = le32_to_cpu(wire->peer_channel);

	if (rmsg_vb_check_block(size))
		return -EPROTO;
	/*
	 * Complete records lie between what was released and a block ahead
	 * of it; the counters are free-running, so compare distances.
	 */
	if (arrived - freed > size)
		return -EPROTO;

	switch (wire->kind) {
	case RMSG_HELLO_CONNECT:
		/*
		 * A first attempt names no channel of ours and has epoch 0;
		 * nothing has arrived in its new receive block yet.
		 */
		if (wire->epoch || peer != RMSG_WIRE_NO_CHANNEL ||
		    arrived != freed)
			return -EPROTO;
		return 0;
	case RMSG_HELLO_RECONNECT:
		/* A repair names the channel it repairs, after attempt 0. */
		if (!wire->epoch || peer == RMSG_WIRE_NO_CHANNEL)
			return -EPROTO;
		return 0;
	case RMSG_HELLO_ACCEPT:
		return peer == RMSG_WIRE_NO_CHANNEL ? -EPROTO : 0;
	}
	return -EPROTO;
}

/**
 * rmsg_hello_decode() - validate and decode a hello from the network
 * @hello: filled in on success
 * @data: the private data as received (untrusted)
 * @len: its length; transports may pad it, so more than the hello is fine
 *
 * The rules of each kind are rmsg_hello_check_chan()'s; in every kind the
 * sender names its own channel. Whether the counters fit the channel is the caller's
 * to check (rmsg_vb_tx_resume()).
 *
 * Return: 0; -EPROTONOSUPPORT for an rmsg peer of another protocol version;
 * -EPROTO for anything else that is not a valid hello.
 */
int rmsg_hello_decode(struct rmsg_hello *hello, const void *data, u32 len)
{
	struct rmsg_wire_hello wire;
	int ret;

	if (!data || len < sizeof(wire))
		return -EPROTO;
	/* One copy: the checks and the result see the same bytes. */
	memcpy(&wire, data, sizeof(wire));
	if (le32_to_cpu(wire.magic) != RMSG_WIRE_MAGIC)
		return -EPROTO;
	if (wire.version != RMSG_WIRE_VERSION)
		return -EPROTONOSUPPORT;
	if ((le16_to_cpu(wire.flags) & ~RMSG_HELLO_F_ALL) || !wire.incarnation ||
	    le32_to_cpu(wire.channel) == RMSG_WIRE_NO_CHANNEL)
		return -EPROTO;
	/* A READY in the hello: a leased channel's first connection. */
	if ((le16_to_cpu(wire.flags) & RMSG_HELLO_F_READY) &&
	    (!(le16_to_cpu(wire.flags) & RMSG_HELLO_F_LEASE) ||
	     wire.kind == RMSG_HELLO_RECONNECT))
		return -EPROTO;
	ret = rmsg_hello_check_chan(&wire);
	if (ret)
		return ret;

	hello->kind = wire.kind;
	hello->flags = le16_to_cpu(wire.flags);
	hello->incarnation = le64_to_cpu(wire.incarnation);
	hello->block_addr = le64_to_cpu(wire.block_addr);
	hello->channel = le32_to_cpu(wire.channel);
	hello->peer_channel = le32_to_cpu(wire.peer_channel);
	hello->epoch = le32_to_cpu(wire.epoch);
	hello->block_rkey = le32_to_cpu(wire.block_rkey);
	hello->block_size = le32_to_cpu(wire.block_size);
	hello->rx_seq = le32_to_cpu(wire.rx_seq);
	hello->rx_freed = le32_to_cpu(wire.rx_freed);
	hello->rx_arrived = le32_to_cpu(wire.rx_arrived);
	return 0;
}

/**
 * rmsg_ctrl_encode() - a control message in wire format
 * @wire: written whole
 * @type: enum rmsg_ctrl_type
 * @arg: its argument
 */
void rmsg_ctrl_encode(struct rmsg_wire_ctrl *wire, u8 type, u64 arg)
{
	memset(wire, 0, sizeof(*wire));
	wire->magic = cpu_to_le32(RMSG_WIRE_MAGIC);
	wire->type = type;
	wire->arg = cpu_to_le64(arg);
}

/**
 * rmsg_lease_msg_decode() - validate and decode a lease message's argument
 * @type: RMSG_CTRL_ASK, RMSG_CTRL_GRANT, RMSG_CTRL_REVOKE,
 *	RMSG_CTRL_RETURN or RMSG_CTRL_READY
 * @arg: its argument, untrusted
 * @m: filled in on success (the fields @type does not carry are zero)
 *
 * Checks the layout of RMSG_ASK_ARG() and its siblings: reserved bits
 * zero, and a GRANT's size 1 to RMSG_LEASE_UNITS_MAX units. Whether the
 * lease, counter and size fit the channel is the lease machines' to check
 * (rmsg_lease.c).
 *
 * Return: 0, or -EPROTO.
 */
int rmsg_lease_msg_decode(u8 type, u64 arg, struct rmsg_lease_msg *m)
{
	u32 units;

	memset(m, 0, sizeof(*m));
	switch (type) {
	case RMSG_CTRL_ASK:
		if (arg >> 16)
			return -EPROTO;
		m->lease = (u16)arg;
		return 0;
	case RMSG_CTRL_GRANT:
		units = (u32)(arg >> 48);
		if (!units || units > RMSG_LEASE_UNITS_MAX)
			return -EPROTO;
		m->rkey = (u32)arg;
		m->lease = (u16)(arg >> 32);
		m->size = units * RMSG_LEASE_UNIT;
		return 0;
	case RMSG_CTRL_REVOKE:
	case RMSG_CTRL_RETURN:
		if (arg >> 48 & ~(type == RMSG_CTRL_RETURN ? 1ULL : 0ULL))
			return -EPROTO;
		m->counter = (u32)arg;
		m->lease = (u16)(arg >> 32);
		m->flag = !!(arg & RMSG_RETURN_KEEP);
		return 0;
	case RMSG_CTRL_READY:
		if (arg & ~(RMSG_READY_ARG(0xffff, 1, 0xffff, 1)))
			return -EPROTO;
		m->lease = (u16)arg;
		m->flag = !!(arg & RMSG_READY_GRANTED);
		m->peer_lease = (u16)(arg >> 32);
		m->held = !!(arg & RMSG_READY_HELD);
		return 0;
	}
	return -EPROTO;
}

/* The argument's rules of the types a direct channel's connection carries. */
static int rmsg_ctrl_check_arg(u8 type, u64 arg)
{
	struct rmsg_lease_msg m;

	switch (type) {
	case RMSG_CTRL_READY:
	case RMSG_CTRL_ASK:
	case RMSG_CTRL_GRANT:
	case RMSG_CTRL_REVOKE:
	case RMSG_CTRL_RETURN:
		/* READY's argument is zero but on a leased channel. */
		return rmsg_lease_msg_decode(type, arg, &m);
	case RMSG_CTRL_CLOSE:
	case RMSG_CTRL_RESET:
	case RMSG_CTRL_HEARTBEAT:
	case RMSG_CTRL_WAKE:
		return arg ? -EPROTO : 0;
	case RMSG_CTRL_CREDIT:
	case RMSG_CTRL_NOTIFY:
	case RMSG_CTRL_CTS:
		return arg >> 32 ? -EPROTO : 0;
	case RMSG_CTRL_FIN:
	case RMSG_CTRL_DONE:
		return arg >> 40 ? -EPROTO : 0;
	case RMSG_CTRL_REKEY:
		if (!RMSG_REKEY_BYTES(arg) ||
		    RMSG_REKEY_BYTES(arg) > RMSG_REKEY_AREA ||
		    RMSG_REKEY_BYTES(arg) % RMSG_REKEY_ALIGN)
			return -EPROTO;
		return 0;
	}
	return -EPROTO;
}

/**
 * rmsg_ctrl_decode() - validate and decode a control message from the peer
 * @data: the received bytes (untrusted)
 * @len: how many were received
 * @type: set to the message's enum rmsg_ctrl_type
 * @arg: set to its argument
 *
 * For a direct channel's connection: its types only, @chan zero.
 *
 * Return: 0, or -EPROTO for anything that is not a valid control message.
 */
int rmsg_ctrl_decode(const void *data, u32 len, u8 *type, u64 *arg)
{
	struct rmsg_wire_ctrl wire;

	if (!data || len != sizeof(wire))
		return -EPROTO;
	memcpy(&wire, data, sizeof(wire));
	if (le32_to_cpu(wire.magic) != RMSG_WIRE_MAGIC ||
	    wire.chan[0] || wire.chan[1] || wire.chan[2] ||
	    rmsg_ctrl_check_arg(wire.type, le64_to_cpu(wire.arg)))
		return -EPROTO;
	*type = wire.type;
	*arg = le64_to_cpu(wire.arg);
	return 0;
}

/**
 * rmsg_lmsg_encode() - a link's message in wire format
 * @buf: RMSG_WIRE_LMSG_MAX bytes, of which those returned are written
 * @msg: what to send; @msg->hello only for RMSG_CTRL_HELLO
 *
 * Return: the bytes to send.
 */
u32 rmsg_lmsg_encode(void *buf, const struct rmsg_lmsg *msg)
{
	struct rmsg_wire_ctrl wire;

	rmsg_ctrl_encode(&wire, msg->type, msg->type != RMSG_CTRL_HELLO ?
			 msg->arg : RMSG_LINK_HELLO_ARG(msg->arg, msg->ep_chan));
	wire.chan[0] = (u8)msg->chan;
	wire.chan[1] = (u8)(msg->chan >> 8);
	wire.chan[2] = (u8)(msg->chan >> 16);
	memcpy(buf, &wire, sizeof(wire));
	if (msg->type != RMSG_CTRL_HELLO)
		return sizeof(wire);
	rmsg_hello_encode((struct rmsg_wire_hello *)((u8 *)buf + sizeof(wire)),
			  &msg->hello);
	return RMSG_WIRE_LMSG_MAX;
}

/*
 * A HELLO on a link: a channel's hello of any kind, without
 * RMSG_HELLO_F_IMM_ARRIVAL (the link's receives carry no immediates) or
 * RMSG_HELLO_F_LINK (a channel on a link carries none), its channel ids
 * link ids, the endpoint's id of the channel beside them (@ep_chan,
 * below RMSG_MAX_CHANNELS). A CONNECT goes to RMSG_LINK_NO_CHAN with the
 * service port in @arg; a RECONNECT and an ACCEPT go to the channel their
 * hello names, with @arg zero.
 */
static int rmsg_lmsg_check_hello(const struct rmsg_lmsg *msg)
{
	const struct rmsg_hello *h = &msg->hello;

	if ((h->flags & (RMSG_HELLO_F_IMM_ARRIVAL | RMSG_HELLO_F_LINK)) ||
	    !rmsg_link_chan_valid(h->channel) ||
	    msg->ep_chan >= RMSG_MAX_CHANNELS)
		return -EPROTO;
	if (h->kind == RMSG_HELLO_CONNECT)
		return msg->chan != RMSG_LINK_NO_CHAN || !msg->arg ||
		       msg->arg > 0xffff ? -EPROTO : 0;
	return !rmsg_link_chan_valid(h->peer_channel) ||
	       msg->chan != h->peer_channel || msg->arg ? -EPROTO : 0;
}

/**
 * rmsg_lmsg_decode() - validate and decode a message that arrived on a link
 * @msg: filled in on success
 * @data: the received bytes (untrusted)
 * @len: how many were received: RMSG_WIRE_LMSG_MAX for a HELLO,
 *	RMSG_WIRE_CTRL_SIZE for every other type
 *
 * A channel's types (READY to REKEY, ASK to RETURN) name a channel, with
 * the argument rules of a direct connection, except HEARTBEAT, which is
 * the link's (RMSG_LINK_SELF); LCREDIT is the link's, with a 32-bit count; REFUSE
 * names a channel, with an errno of 1 to 255; a HELLO follows
 * rmsg_lmsg_check_hello(), its argument split into the port (@msg->arg)
 * and the endpoint's id of the channel (@msg->ep_chan) by
 * RMSG_LINK_HELLO_ARG()'s layout. Whether the channel exists, and is the
 * sender's, is the caller's to check.
 *
 * Return: 0; -EPROTONOSUPPORT for a HELLO of another protocol version;
 * -EPROTO for anything else that is not a valid message.
 */
int rmsg_lmsg_decode(struct rmsg_lmsg *msg, const void *data, u32 len)
{
	struct rmsg_wire_ctrl wire;
	struct rmsg_lmsg m;
	int ret;

	if (!data || len < sizeof(wire))
		return -EPROTO;
	memcpy(&wire, data, sizeof(wire));
	if (le32_to_cpu(wire.magic) != RMSG_WIRE_MAGIC)
		return -EPROTO;
	memset(&m, 0, sizeof(m));
	m.type = wire.type;
	m.chan = wire.chan[0] | (u32)wire.chan[1] << 8 |
		 (u32)wire.chan[2] << 16;
	m.arg = le64_to_cpu(wire.arg);
	if (len != (m.type == RMSG_CTRL_HELLO ? RMSG_WIRE_LMSG_MAX :
		    RMSG_WIRE_CTRL_SIZE))
		return -EPROTO;

	switch (m.type) {
	case RMSG_CTRL_HEARTBEAT:
	case RMSG_CTRL_LCREDIT:
		if (m.chan != RMSG_LINK_SELF || m.arg >> 32 ||
		    (m.type == RMSG_CTRL_HEARTBEAT && m.arg))
			return -EPROTO;
		break;
	case RMSG_CTRL_REFUSE:
		if (!rmsg_link_chan_valid(m.chan) || !m.arg || m.arg > 255)
			return -EPROTO;
		break;
	case RMSG_CTRL_HELLO:
		ret = rmsg_hello_decode(&m.hello, (const u8 *)data +
					sizeof(wire), len - sizeof(wire));
		if (ret)
			return ret;
		m.ep_chan = RMSG_LINK_HELLO_EP_CHAN(m.arg);
		m.arg = RMSG_LINK_HELLO_PORT(m.arg);
		if (rmsg_lmsg_check_hello(&m))
			return -EPROTO;
		break;
	default:
		if (!rmsg_link_chan_valid(m.chan) ||
		    rmsg_ctrl_check_arg(m.type, m.arg))
			return -EPROTO;
	}
	*msg = m;
	return 0;
}

static bool rmsg_all_zero_bytes(const u8 *p, u32 len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/**
 * rmsg_addr_usable() - may another node dial this address?
 * @a: the address
 *
 * Return: false for an unknown family, an IPv4 address with bytes beyond
 * its four, and for addresses nobody else can dial: IPv4 0.0.0.0/8,
 * loopback (127/8), multicast and above (224/3: multicast, reserved and
 * broadcast); IPv6 unspecified, loopback, multicast and link-local (it
 * needs a scope the dialling side cannot know).
 */
bool rmsg_addr_usable(const struct rmsg_addr *a)
{
	const u8 *b = a->addr;
	static const u8 v6_loopback[16] = { [15] = 1 };

	switch (a->family) {
	case RMSG_ADDR_IPV4:
		return rmsg_all_zero_bytes(b + 4, 12) && b[0] != 0 &&
		       b[0] != 127 && b[0] < 224;
	case RMSG_ADDR_IPV6:
		return !rmsg_all_zero_bytes(b, 16) &&
		       memcmp(b, v6_loopback, 16) && b[0] != 0xff &&
		       !(b[0] == 0xfe && (b[1] & 0xc0) == 0x80);
	default:
		return false;
	}
}

/**
 * rmsg_addrs_encode() - an address list in wire format
 * @wire: written whole
 * @addrs: the addresses, at most RMSG_WIRE_ADDRS_MAX of them taken;
 *	those rmsg_addr_usable() refuses are left out
 *
 * Return: the bytes of @wire to send: the header and the entries.
 */
u32 rmsg_addrs_encode(struct rmsg_wire_addrs *wire,
		      const struct rmsg_addrs *addrs)
{
	u32 i, n = 0;

	memset(wire, 0, sizeof(*wire));
	wire->magic = cpu_to_le32(RMSG_WIRE_ADDRS_MAGIC);
	for (i = 0; i < addrs->count && n < RMSG_WIRE_ADDRS_MAX; i++) {
		if (!rmsg_addr_usable(&addrs->addr[i]))
			continue;
		wire->addr[n].family = addrs->addr[i].family;
		memcpy(wire->addr[n].addr, addrs->addr[i].addr, 16);
		n++;
	}
	wire->count = n;
	return RMSG_WIRE_ADDRS_HDR + n * RMSG_WIRE_ADDR_SIZE;
}

/**
 * rmsg_addrs_decode() - validate and decode the address list of an ACCEPT
 * @addrs: filled in on success
 * @data: the private data after the hello, as received (untrusted); may
 *	be NULL when @len is 0
 * @len: its length; the transport may pad it with zeros
 *
 * Fewer than 4 bytes, or a zero magic, is no list (a peer that sends
 * none): @addrs is then empty, whatever follows. Otherwise the magic must
 * be RMSG_WIRE_ADDRS_MAGIC, the header whole, @count at most
 * RMSG_WIRE_ADDRS_MAX, every reserved byte zero, all @count entries
 * present and each usable (rmsg_addr_usable()). Bytes after the entries
 * are ignored.
 *
 * Return: 0, or -EPROTO for anything else.
 */
int rmsg_addrs_decode(struct rmsg_addrs *addrs, const void *data, u32 len)
{
	struct rmsg_wire_addrs wire;
	struct rmsg_addr a;
	u32 i, count;

	if (!data || len < sizeof(wire.magic)) {
		addrs->count = 0;
		return 0;
	}
	memset(&wire, 0, sizeof(wire));
	/* One copy: the checks and the result see the same bytes. */
	memcpy(&wire, data, len < sizeof(wire) ? len : sizeof(wire));
	if (!wire.magic) {
		addrs->count = 0;
		return 0;
	}
	if (le32_to_cpu(wire.magic) != RMSG_WIRE_ADDRS_MAGIC ||
	    len < RMSG_WIRE_ADDRS_HDR ||
	    !rmsg_all_zero_bytes(wire.resv0, sizeof(wire.resv0)))
		return -EPROTO;
	count = wire.count;
	if (count > RMSG_WIRE_ADDRS_MAX ||
	    len < RMSG_WIRE_ADDRS_HDR + count * RMSG_WIRE_ADDR_SIZE)
		return -EPROTO;
	for (i = 0; i < count; i++) {
		a.family = wire.addr[i].family;
		memcpy(a.addr, wire.addr[i].addr, 16);
		if (!rmsg_all_zero_bytes(wire.addr[i].resv0,
					 sizeof(wire.addr[i].resv0)) ||
		    !rmsg_addr_usable(&a))
			return -EPROTO;
	}
	for (i = 0; i < count; i++) {
		addrs->addr[i].family = wire.addr[i].family;
		memcpy(addrs->addr[i].addr, wire.addr[i].addr, 16);
	}
	addrs->count = count;
	return 0;
}
