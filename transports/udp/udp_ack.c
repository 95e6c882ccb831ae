/* udp_ack.c - received packet numbers and the ACK frames written of them; see udp_ack.h. */
#include <errno.h>
#include <string.h>

#include "udp_ack.h"

void udp_rx_init(struct udp_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	udp_ranges_init(&rx->seen, UDP_RX_RANGES_MAX);
}

void udp_rx_free(struct udp_rx *rx)
{
	udp_ranges_free(&rx->seen);
}

uint64_t udp_rx_pn(const struct udp_rx *rx, uint32_t low)
{
	const uint64_t win = 1ull << 32, half = win / 2;
	uint64_t expected = rx->seen.n > 0 || rx->floor > 0 ? rx->largest + 1 : 0;
	uint64_t pn = (expected & ~(win - 1)) | low;

	if (pn + half <= expected)
		pn += win;
	else if (pn > expected + half && pn >= win)
		pn -= win;
	return pn;
}

int udp_rx_seen(const struct udp_rx *rx, uint64_t pn)
{
	return pn < rx->floor || udp_ranges_contains(&rx->seen, pn);
}

int udp_rx_record(struct udp_rx *rx, uint64_t pn, int eliciting, uint64_t now_ns)
{
	int had = rx->seen.n > 0 || rx->floor > 0, r;
	uint64_t prev = rx->largest;

	while ((r = udp_ranges_add(&rx->seen, pn, pn + 1)) == -ENOSPC) {
		/* Forget the oldest range: its packets count as seen from now on. */
		rx->floor = rx->seen.r[0].last + 1;
		udp_ranges_remove_below(&rx->seen, rx->floor);
	}
	if (r < 0)
		return r;
	/* Reordered, or a new gap: the sender learns of it at once. */
	if (had && (pn < prev || pn > prev + 1))
		rx->now = 1;
	if (!had || pn > prev) {
		rx->largest = pn;
		rx->largest_ns = now_ns;
	}
	if (eliciting && rx->unacked++ == 0)
		rx->first_unacked_ns = now_ns;
	return 0;
}

void udp_ack_encode(struct udp_rx *rx, struct udp_wr *w, uint64_t now_ns)
{
	const struct idset *s = &rx->seen;
	size_t n = s->n, k;
	uint64_t delay_us = (now_ns - rx->largest_ns) / 1000;

	if (n == 0)
		return;
	/* Count the ranges that fit: type, largest, delay, count, first range,
	 * then a gap and a length for each further range. */
	k = 1;
	{
		size_t need = 1 + udp_varint_len(s->r[n - 1].last) + udp_varint_len(delay_us) + 1 +
			      udp_varint_len(s->r[n - 1].last - s->r[n - 1].first);
		size_t room = (size_t)(w->end - w->p);

		if (need > room) {
			w->full = 1;
			return;
		}
		while (k < n && k < UDP_ACK_RANGES_MAX) {
			const struct idrange *hi = &s->r[n - k], *lo = &s->r[n - k - 1];
			size_t more = udp_varint_len(hi->first - lo->last - 2) + udp_varint_len(lo->last - lo->first);

			if (need + more > room)
				break;
			need += more;
			k++;
		}
	}
	udp_wr_varint(w, UDP_FR_ACK);
	udp_wr_varint(w, s->r[n - 1].last);
	udp_wr_varint(w, delay_us);
	udp_wr_varint(w, k - 1);
	udp_wr_varint(w, s->r[n - 1].last - s->r[n - 1].first);
	for (size_t i = 1; i < k; i++) {
		const struct idrange *hi = &s->r[n - i], *lo = &s->r[n - i - 1];

		/* Gap: numbers missing between the ranges, less one (never 0 missing). */
		udp_wr_varint(w, hi->first - lo->last - 2);
		udp_wr_varint(w, lo->last - lo->first);
	}
	rx->unacked = 0;
	rx->now = 0;
	rx->last_ack_ns = now_ns;
}
