/* udp_pacer.c - token-bucket pacing; see udp_pacer.h. */
#include "udp_pacer.h"

void udp_pacer_set_rate(struct udp_pacer *p, uint64_t rate, uint32_t mss)
{
	uint64_t min = (uint64_t)UDP_PACER_BURST_MIN_PKTS * mss;

	p->rate = rate;
	p->burst = (uint64_t)((double)rate * (double)UDP_PACER_BURST_NS / 1e9);
	if (p->burst < min)
		p->burst = min;
	if (p->tokens > p->burst)
		p->tokens = p->burst;
}

void udp_pacer_init(struct udp_pacer *p, uint64_t rate, uint32_t mss, uint64_t now_ns)
{
	p->tokens = 0;
	p->last_ns = now_ns;
	udp_pacer_set_rate(p, rate, mss);
	p->tokens = p->burst;
}

int udp_pacer_allow(struct udp_pacer *p, uint64_t size, uint64_t now_ns)
{
	if (now_ns > p->last_ns) {
		double add = (double)p->rate * (double)(now_ns - p->last_ns) / 1e9;

		p->tokens = (double)p->tokens + add >= (double)p->burst ? p->burst : p->tokens + (uint64_t)add;
		/* Keep the fraction of a byte that did not make a whole one. */
		p->last_ns = add >= 1 || p->rate == 0 ? now_ns : p->last_ns;
	}
	return p->tokens >= size;
}

void udp_pacer_spend(struct udp_pacer *p, uint64_t size)
{
	p->tokens = p->tokens > size ? p->tokens - size : 0;
}

uint64_t udp_pacer_wait_ns(const struct udp_pacer *p, uint64_t size)
{
	if (p->tokens >= size)
		return 0;
	if (p->rate == 0)
		return UINT64_MAX;
	return (uint64_t)((double)(size - p->tokens) * 1e9 / (double)p->rate) + 1;
}
