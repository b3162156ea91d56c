// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: rmsg_addrs_decode(), the accepting side's address list that
 * follows an ACCEPT hello in the REP's private data (failover).
 *
 * Invariants: the decoder agrees with a plainer reading of the rules in
 * rmsg_wire.h, a failed decode leaves its result alone, every decoded
 * address is one another node can dial, and a decoded list encodes back
 * to the very entries received (and decodes again to itself).
 */
#include "fuzz.h"
#include "rmsg_wire.h"

static bool zero(const u8 *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* One entry, read from its 20 bytes: may another node dial it? */
static bool model_usable(const u8 *e)
{
	const u8 *a = e + 4;

	if (!zero(e + 1, 3))
		return false;
	if (e[0] == RMSG_ADDR_IPV4)
		return zero(a + 4, 12) && a[0] && a[0] != 127 && a[0] < 224;
	if (e[0] != RMSG_ADDR_IPV6)
		return false;
	if (zero(a, 16) || (zero(a, 15) && a[15] == 1))
		return false;			/* :: and ::1 */
	return a[0] != 0xff && !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

/* -1: -EPROTO; else the number of addresses. */
static int model_decode(const u8 *b, size_t len)
{
	struct fuzz_in in = { b, len };
	u32 magic;
	u8 count;
	size_t i;

	if (len < 4)
		return 0;
	magic = fuzz_u32(&in);
	if (!magic)
		return 0;
	if (magic != RMSG_WIRE_ADDRS_MAGIC || len < 8)
		return -1;
	count = b[4];
	if (!zero(b + 5, 3) || count > RMSG_WIRE_ADDRS_MAX ||
	    len < 8 + (size_t)count * 20)
		return -1;
	for (i = 0; i < count; i++)
		if (!model_usable(b + 8 + i * 20))
			return -1;
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rmsg_addrs a, before, again;
	struct rmsg_wire_addrs wire;
	u32 len = size > 0xffffffffU ? 0xffffffffU : (u32)size;
	int ret, want;
	u32 i, n;

	memset(&a, 0xa5, sizeof(a));
	before = a;
	ret = rmsg_addrs_decode(&a, size ? data : NULL, len);
	want = model_decode(data, size);
	if (want < 0) {
		FUZZ_CHECK(ret == -EPROTO);
		FUZZ_CHECK(!memcmp(&a, &before, sizeof(a)));
		return 0;
	}
	FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(a.count == (u32)want);
	for (i = 0; i < a.count; i++)
		FUZZ_CHECK(rmsg_addr_usable(&a.addr[i]));

	/* What was accepted is what was sent, entry by entry. */
	n = rmsg_addrs_encode(&wire, &a);
	FUZZ_CHECK(n == 8 + a.count * 20);
	if (a.count)
		FUZZ_CHECK(!memcmp(&wire, data, n));
	FUZZ_CHECK(rmsg_addrs_decode(&again, &wire, n) == 0);
	FUZZ_CHECK(again.count == a.count &&
		   !memcmp(again.addr, a.addr, a.count * sizeof(a.addr[0])));
	return 0;
}
