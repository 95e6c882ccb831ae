/* udp_pmtu.c - the path MTU search; see udp_pmtu.h. */
#include <string.h>

#include "udp_pmtu.h"

/* A search from the safe size, the largest size first. */
static void search(struct udp_pmtu *m)
{
	m->lo = m->cur;
	m->hi = m->max > m->cur ? m->max : m->cur;
	m->cand = m->hi;
	m->tries = 0;
	m->raise_ns = 0;
}

void udp_pmtu_init(struct udp_pmtu *m, unsigned base, unsigned max)
{
	memset(m, 0, sizeof(*m));
	m->base = m->cur = base;
	m->max = max;
	search(m);
}

/* The next size between what is carried and what failed, or done. */
static void narrow(struct udp_pmtu *m)
{
	m->tries = 0;
	if (m->hi - m->lo < UDP_PMTU_STEP)
		m->hi = m->lo;
	else
		m->cand = m->lo + (m->hi - m->lo + 1) / 2;
}

unsigned udp_pmtu_next(struct udp_pmtu *m, uint64_t now_ns)
{
	if (m->probe)
		return 0;
	if (m->lo == m->hi) {
		if (m->cur >= m->max)
			return 0;
		if (m->raise_ns == 0)
			m->raise_ns = now_ns + UDP_PMTU_RAISE_NS;
		if (now_ns < m->raise_ns)
			return 0;
		search(m);
	}
	return m->cand;
}

void udp_pmtu_sent(struct udp_pmtu *m, unsigned size)
{
	m->probe = size;
	m->probes++;
}

unsigned udp_pmtu_acked(struct udp_pmtu *m)
{
	/* A probe of an abandoned search (a black hole came between) says
	 * only that its size got through once: the new search decides. */
	if (m->probe == m->cand && m->lo < m->hi) {
		m->cur = m->lo = m->cand;
		narrow(m);
	}
	m->probe = 0;
	return m->cur;
}

unsigned udp_pmtu_lost(struct udp_pmtu *m, int too_big)
{
	/* Refused by the socket, the size never left: it was cand. */
	m->lost++;
	if ((too_big || m->probe == m->cand) && m->lo < m->hi && (too_big || ++m->tries >= UDP_PMTU_TRIES)) {
		m->hi = m->cand - 1;
		narrow(m);
	}
	m->probe = 0;
	return m->cur;
}

unsigned udp_pmtu_on_pto(struct udp_pmtu *m, unsigned ptos)
{
	if (ptos >= UDP_PMTU_PTOS && m->cur > m->base) {
		m->cur = m->base;
		search(m);
	}
	return m->cur;
}
