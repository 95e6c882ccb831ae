/* gso.c - splits the TCP super-packets that TSO makes the kernel hand us
 * into the wire packets they stand for, so that loss, rate and queue
 * limits act on real packet sizes.  Checksums are computed in full: the
 * segments are written without offload flags and the receiving kernel
 * verifies them as if they came from a wire. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/virtio_net.h>

#include "wanemu.h"

struct gso_hdrs {
	int v6;
	size_t l3, l4;          /* header lengths: IP, TCP */
	size_t total;           /* IP packet length */
};

/* The IP and TCP headers of ip (len bytes), checked against len. */
static int gso_parse(const unsigned char *ip, size_t len, struct gso_hdrs *h)
{
	if (len < 20)
		return -EINVAL;
	h->total = len;
	if ((ip[0] >> 4) == 4) {
		h->v6 = 0;
		h->l3 = (size_t)(ip[0] & 0x0f) * 4;
		if (h->l3 < 20 || ip[9] != IPPROTO_TCP)
			return -EINVAL;
	} else if ((ip[0] >> 4) == 6) {
		h->v6 = 1;
		h->l3 = 40;
		/* Extension headers are not segmented: they are rare and
		 * the packet is then forwarded whole. */
		if (len < 40 || ip[6] != IPPROTO_TCP)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (len < h->l3 + 20)
		return -EINVAL;
	h->l4 = (size_t)(ip[h->l3 + 12] >> 4) * 4;
	if (h->l4 < 20 || len < h->l3 + h->l4)
		return -EINVAL;
	return 0;
}

int gso_is_super(const unsigned char *pkt, size_t len, unsigned *segs, size_t *wire)
{
	const struct virtio_net_hdr *vh = (const void *)pkt;
	struct gso_hdrs h;
	size_t payload;

	*segs = 1;
	*wire = len > WE_VNET_LEN ? len - WE_VNET_LEN : 0;
	if (len < WE_VNET_LEN || (vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) == VIRTIO_NET_HDR_GSO_NONE ||
	    vh->gso_size == 0)
		return 0;
	if (gso_parse(pkt + WE_VNET_LEN, len - WE_VNET_LEN, &h) < 0)
		return 0;
	payload = h.total - h.l3 - h.l4;
	*segs = payload ? (unsigned)((payload + vh->gso_size - 1) / vh->gso_size) : 1;
	if (payload > vh->gso_size)
		*wire = h.l3 + h.l4 + vh->gso_size;
	return 1;
}

static uint32_t csum_add(uint32_t sum, const unsigned char *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* Fills in lengths and checksums of one segment of seglen bytes. */
static void gso_fix(unsigned char *ip, const struct gso_hdrs *h, size_t seglen)
{
	unsigned char *tcp = ip + h->l3;
	size_t tcplen = seglen - h->l3;
	uint32_t sum;

	if (h->v6) {
		put16(ip + 4, (uint16_t)tcplen);
		sum = csum_add(0, ip + 8, 32);
	} else {
		put16(ip + 2, (uint16_t)seglen);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, h->l3)));
		sum = csum_add(0, ip + 12, 8);
	}
	sum += IPPROTO_TCP + (uint32_t)tcplen;
	put16(tcp + 16, 0);
	put16(tcp + 16, csum_fold(csum_add(sum, tcp, tcplen)));
}

int gso_segment(const unsigned char *pkt, size_t len, gso_emit_fn *emit, void *arg)
{
	static unsigned char seg[WE_PKT_MAX];
	const struct virtio_net_hdr *vh = (const void *)pkt;
	const unsigned char *ip = pkt + WE_VNET_LEN;
	struct gso_hdrs h;
	size_t hl, payload, mss = vh->gso_size, off;
	uint32_t seq;
	uint16_t id;
	unsigned char flags;

	if (len < WE_VNET_LEN || mss == 0 || gso_parse(ip, len - WE_VNET_LEN, &h) < 0)
		return -EINVAL;
	hl = h.l3 + h.l4;
	payload = h.total - hl;
	seq = (uint32_t)ip[h.l3 + 4] << 24 | (uint32_t)ip[h.l3 + 5] << 16 | (uint32_t)ip[h.l3 + 6] << 8 | ip[h.l3 + 7];
	id = (uint16_t)(ip[4] << 8 | ip[5]);
	flags = ip[h.l3 + 13];
	for (off = 0; off < payload || off == 0; off += mss) {
		size_t n = payload - off < mss ? payload - off : mss;
		unsigned char *sip = seg + WE_VNET_LEN;
		unsigned char *tcp = sip + h.l3;
		int last = off + n >= payload;

		memset(seg, 0, WE_VNET_LEN);
		memcpy(sip, ip, hl);
		memcpy(sip + hl, ip + hl + off, n);
		if (!h.v6)
			put16(sip + 4, (uint16_t)(id + off / mss));
		put16(tcp + 4, (uint16_t)((seq + off) >> 16));
		put16(tcp + 6, (uint16_t)(seq + off));
		/* FIN and PSH belong to the last segment, CWR to the first. */
		tcp[13] = flags & (unsigned char)~((last ? 0 : 0x09) | (off ? 0x80 : 0));
		gso_fix(sip, &h, hl + n);
		emit(seg, WE_VNET_LEN + hl + n, arg);
		if (last)
			break;
	}
	return 0;
}
