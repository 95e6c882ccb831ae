/*
 * check_wanemu_gso.c - wanemu's software segmentation (tools/wanemu/gso.c)
 * of the super-packets TSO and USO hand it: every wire packet carries its
 * slice of the payload, its own lengths, IP id and TCP sequence number, an
 * IPv4 header checksum and an L4 checksum left partial as for a NIC's
 * checksum offload, right once completed (verified here by an RFC 1071
 * sum of our own, not gso.c's).
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "suites.h"
#include "tools/wanemu/wanemu.h"

#define MSS 1000
#define PAYLOAD 2500    /* three segments: 1000, 1000, 500 */
#define MAX_SEGS 8
#define GSO_UDP_L4 5    /* VIRTIO_NET_HDR_GSO_UDP_L4, newer than Debian 12's headers */

struct seg {
	unsigned char b[WE_VNET_LEN + 60 + MSS];
	size_t len;
};

static struct seg segs[MAX_SEGS];
static int nsegs;

static void collect(const unsigned char *pkt, size_t len, void *arg)
{
	(void)arg;
	ck_assert_int_lt(nsegs, MAX_SEGS);
	ck_assert_uint_le(len, sizeof(segs[0].b));
	memcpy(segs[nsegs].b, pkt, len);
	segs[nsegs++].len = len;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t sum16(uint32_t sum, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* One's complement sum folded: 0xffff when the checksum inside is right. */
static unsigned folded(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* A super-packet: vnet header, IPv4 or IPv6 header, TCP (20 bytes, seq
 * 0x01020304, ACK|PSH|FIN) or UDP header, PAYLOAD bytes of i * 7. */
static size_t make_super(unsigned char *p, int v6, int proto)
{
	struct virtio_net_hdr *vh = (void *)p;
	size_t l3 = v6 ? 40 : 20, l4 = proto == IPPROTO_TCP ? 20 : 8;
	size_t total = l3 + l4 + PAYLOAD;
	unsigned char *ip = p + WE_VNET_LEN, *h = ip + l3;

	memset(p, 0, WE_VNET_LEN + total);
	vh->gso_type = proto == IPPROTO_UDP ? GSO_UDP_L4 : v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	vh->gso_size = MSS;
	if (v6) {
		ip[0] = 0x60;
		ip[6] = (unsigned char)proto;
		ip[7] = 64;
		ip[23] = 1;     /* 2001:db8::1 -> 2001:db8::2 */
		ip[39] = 2;
		ip[8] = ip[24] = 0x20;
		ip[9] = ip[25] = 0x01;
		ip[10] = ip[26] = 0x0d;
		ip[11] = ip[27] = 0xb8;
	} else {
		ip[0] = 0x45;
		ip[2] = (unsigned char)(total >> 8);
		ip[3] = (unsigned char)total;
		ip[4] = 0x12;   /* id 0x1234 */
		ip[5] = 0x34;
		ip[8] = 64;
		ip[9] = (unsigned char)proto;
		memcpy(ip + 12, (unsigned char[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	}
	h[0] = 0x30;            /* ports 12345 -> 54321 */
	h[1] = 0x39;
	h[2] = 0xd4;
	h[3] = 0x31;
	if (proto == IPPROTO_TCP) {
		memcpy(h + 4, (unsigned char[]){ 1, 2, 3, 4 }, 4);
		h[12] = 5 << 4;
		h[13] = 0x10 | 0x08 | 0x01;
	}
	for (size_t i = 0; i < PAYLOAD; i++)
		h[l4 + i] = (unsigned char)(i * 7);
	return WE_VNET_LEN + total;
}

/* Checks segment k of a super-packet made by make_super. */
static void check_seg(int k, int v6, int proto)
{
	const unsigned char *p = segs[k].b, *ip = p + WE_VNET_LEN;
	size_t l3 = v6 ? 40 : 20, l4 = proto == IPPROTO_TCP ? 20 : 8;
	size_t n = k < 2 ? MSS : PAYLOAD - 2 * MSS, seglen = l3 + l4 + n;
	const unsigned char *h = ip + l3;
	uint32_t pseudo;

	const struct virtio_net_hdr *vh = (const void *)p;
	unsigned char l4buf[60 + MSS];
	size_t at = proto == IPPROTO_UDP ? 6 : 16;

	ck_assert_uint_eq(segs[k].len, WE_VNET_LEN + seglen);
	/* No GSO; the L4 checksum partial, as for a NIC's checksum offload. */
	ck_assert_uint_eq(vh->flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	ck_assert_uint_eq(vh->gso_type, VIRTIO_NET_HDR_GSO_NONE);
	ck_assert_uint_eq(vh->csum_start, l3);
	ck_assert_uint_eq(vh->csum_offset, at);
	if (v6) {
		ck_assert_uint_eq(get16(ip + 4), l4 + n);
		pseudo = sum16(0, ip + 8, 32);
	} else {
		ck_assert_uint_eq(get16(ip + 2), seglen);
		ck_assert_uint_eq(get16(ip + 4), 0x1234u + (unsigned)k);
		ck_assert_uint_eq(folded(sum16(0, ip, l3)), 0xffff);
		pseudo = sum16(0, ip + 12, 8);
	}
	/* Completed as the NIC or the kernel would (the sum from csum_start
	 * into the field), it is right. */
	memcpy(l4buf, h, l4 + n);
	{
		unsigned c = ~folded(sum16(0, l4buf, l4 + n)) & 0xffff;

		l4buf[at] = (unsigned char)(c >> 8);
		l4buf[at + 1] = (unsigned char)c;
	}
	ck_assert_uint_eq(folded(sum16(pseudo + (uint32_t)proto + (uint32_t)(l4 + n), l4buf, l4 + n)), 0xffff);
	if (proto == IPPROTO_UDP) {
		ck_assert_uint_eq(get16(h + 4), l4 + n);
	} else {
		uint32_t seq = (uint32_t)get16(h + 4) << 16 | get16(h + 6);

		ck_assert_uint_eq(seq, 0x01020304u + (uint32_t)(k * MSS));
		ck_assert_uint_eq(h[13], k == 2 ? 0x19 : 0x10);
	}
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(h[l4 + i], (unsigned char)((k * MSS + i) * 7));
}

static void segment_and_check(int v6, int proto)
{
	static unsigned char pkt[WE_PKT_MAX];
	size_t len = make_super(pkt, v6, proto), wire;
	unsigned n;

	ck_assert_int_eq(gso_is_super(pkt, len, &n, &wire), 1);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(wire, (v6 ? 40 : 20) + (proto == IPPROTO_TCP ? 20 : 8) + MSS);
	nsegs = 0;
	ck_assert_int_eq(gso_segment(pkt, len, collect, NULL), 0);
	ck_assert_int_eq(nsegs, 3);
	for (int k = 0; k < nsegs; k++)
		check_seg(k, v6, proto);
}

START_TEST(test_gso_tcp4)
{
	segment_and_check(0, IPPROTO_TCP);
}
END_TEST

START_TEST(test_gso_tcp6)
{
	segment_and_check(1, IPPROTO_TCP);
}
END_TEST

START_TEST(test_gso_udp4)
{
	segment_and_check(0, IPPROTO_UDP);
}
END_TEST

START_TEST(test_gso_udp6)
{
	segment_and_check(1, IPPROTO_UDP);
}
END_TEST

/* A header cut short, or another protocol, is not split: the caller then
 * forwards the packet whole. */
START_TEST(test_gso_refuses)
{
	static unsigned char pkt[WE_PKT_MAX];
	size_t len = make_super(pkt, 0, IPPROTO_UDP), wire;
	unsigned n;

	ck_assert_int_eq(gso_is_super(pkt, WE_VNET_LEN + 24, &n, &wire), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(gso_segment(pkt, WE_VNET_LEN + 24, collect, NULL), -EINVAL);
	pkt[WE_VNET_LEN + 9] = IPPROTO_ICMP;
	ck_assert_int_eq(gso_is_super(pkt, len, &n, &wire), 0);
	nsegs = 0;
	ck_assert_int_eq(gso_segment(pkt, len, collect, NULL), -EINVAL);
	ck_assert_int_eq(nsegs, 0);
}
END_TEST

Suite *make_wanemu_gso_suite(void)
{
	Suite *s = suite_create("wanemu_gso");
	TCase *tc = tcase_create("wanemu_gso");

	tcase_add_test(tc, test_gso_tcp4);
	tcase_add_test(tc, test_gso_tcp6);
	tcase_add_test(tc, test_gso_udp4);
	tcase_add_test(tc, test_gso_udp6);
	tcase_add_test(tc, test_gso_refuses);
	suite_add_tcase(s, tc);
	return s;
}
