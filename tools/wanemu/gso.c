/* gso.c - splits the super-packets that TCP and UDP segmentation offload
 * make the kernel hand us into the wire packets they stand for, so that
 * loss, rate and queue limits act on real packet sizes.  The segments
 * carry their L4 checksum as the sender's kernel hands a packet to a NIC
 * with checksum offload (and as wanemu forwards the packets it does not
 * split): partial, completed by whoever needs it.  Receiving, a gateway's
 * kernel then skips the payload's sum as behind a NIC's receive offload;
 * before, only the split packets made it sum them in software, which
 * UDP's receiver pays in its own context and TCP's in wanemu's. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/virtio_net.h>

#include "wanemu.h"

struct gso_hdrs {
	int v6;
	int proto;              /* IPPROTO_TCP or IPPROTO_UDP */
	size_t l3, l4;          /* header lengths: IP, TCP or UDP */
	size_t total;           /* IP packet length */
};

/* The IP and TCP or UDP headers of ip (len bytes), checked against len. */
static int gso_parse(const unsigned char *ip, size_t len, struct gso_hdrs *h)
{
	if (len < 20)
		return -EINVAL;
	h->total = len;
	if ((ip[0] >> 4) == 4) {
		h->v6 = 0;
		h->l3 = (size_t)(ip[0] & 0x0f) * 4;
		h->proto = ip[9];
		if (h->l3 < 20)
			return -EINVAL;
	} else if ((ip[0] >> 4) == 6) {
		h->v6 = 1;
		h->l3 = 40;
		/* Extension headers are not segmented: they are rare and
		 * the packet is then forwarded whole. */
		if (len < 40)
			return -EINVAL;
		h->proto = ip[6];
	} else {
		return -EINVAL;
	}
	if (h->proto == IPPROTO_UDP) {
		h->l4 = 8;
	} else if (h->proto == IPPROTO_TCP) {
		if (len < h->l3 + 20)
			return -EINVAL;
		h->l4 = (size_t)(ip[h->l3 + 12] >> 4) * 4;
		if (h->l4 < 20)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return len < h->l3 + h->l4 ? -EINVAL : 0;
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

/* Fills in the lengths and the IPv4 header checksum of one segment of
 * seglen bytes, and leaves its L4 checksum to be completed as a sending
 * kernel leaves it to a NIC's checksum offload: the pseudo-header's sum
 * in the field, the rest marked in the vnet header (NEEDS_CSUM).  The
 * receiving kernel takes such a packet as checked, as it takes one that
 * went through whole, and sums no payload; wanemu sums none either. */
static void gso_fix(struct virtio_net_hdr *vh, unsigned char *ip, const struct gso_hdrs *h, size_t seglen)
{
	unsigned char *l4 = ip + h->l3;
	size_t l4len = seglen - h->l3;
	uint16_t at = h->proto == IPPROTO_UDP ? 6 : 16;
	uint32_t sum;

	if (h->v6) {
		put16(ip + 4, (uint16_t)l4len);
		sum = csum_add(0, ip + 8, 32);
	} else {
		put16(ip + 2, (uint16_t)seglen);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, h->l3)));
		sum = csum_add(0, ip + 12, 8);
	}
	if (h->proto == IPPROTO_UDP)
		put16(l4 + 4, (uint16_t)l4len);
	sum += (uint32_t)h->proto + (uint32_t)l4len;
	put16(l4 + at, (uint16_t)~csum_fold(sum));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->csum_start = (uint16_t)h->l3;
	vh->csum_offset = at;
}

int gso_segment(const unsigned char *pkt, size_t len, gso_emit_fn *emit, void *arg)
{
	static unsigned char seg[WE_PKT_MAX];
	const struct virtio_net_hdr *vh = (const void *)pkt;
	const unsigned char *ip = pkt + WE_VNET_LEN;
	struct gso_hdrs h;
	size_t hl, payload, mss = vh->gso_size, off;
	uint32_t seq = 0;
	uint16_t id;
	unsigned char flags = 0;

	if (len < WE_VNET_LEN || mss == 0 || gso_parse(ip, len - WE_VNET_LEN, &h) < 0)
		return -EINVAL;
	hl = h.l3 + h.l4;
	payload = h.total - hl;
	id = (uint16_t)(ip[4] << 8 | ip[5]);
	if (h.proto == IPPROTO_TCP) {
		seq = (uint32_t)ip[h.l3 + 4] << 24 | (uint32_t)ip[h.l3 + 5] << 16 | (uint32_t)ip[h.l3 + 6] << 8 | ip[h.l3 + 7];
		flags = ip[h.l3 + 13];
	}
	for (off = 0; off < payload || off == 0; off += mss) {
		size_t n = payload - off < mss ? payload - off : mss;
		unsigned char *sip = seg + WE_VNET_LEN;
		unsigned char *l4 = sip + h.l3;
		int last = off + n >= payload;

		memset(seg, 0, WE_VNET_LEN);
		memcpy(sip, ip, hl);
		memcpy(sip + hl, ip + hl + off, n);
		if (!h.v6)
			put16(sip + 4, (uint16_t)(id + off / mss));
		if (h.proto == IPPROTO_TCP) {
			put16(l4 + 4, (uint16_t)((seq + off) >> 16));
			put16(l4 + 6, (uint16_t)(seq + off));
			/* FIN and PSH belong to the last segment, CWR to the first. */
			l4[13] = flags & (unsigned char)~((last ? 0 : 0x09) | (off ? 0x80 : 0));
		}
		gso_fix((struct virtio_net_hdr *)(void *)seg, sip, &h, hl + n);
		emit(seg, WE_VNET_LEN + hl + n, arg);
		if (last)
			break;
	}
	return 0;
}
