/*
 * udp_token.c - stateless retry tokens: an HMAC-SHA256 of the client's
 * address, port and conn id and a 30-second epoch, under a secret of the
 * instance.  A listener allocates a conn only for an INIT that carries a
 * token it made for that address lately, so a spoofed source cannot make
 * it keep state, and a RETRY is never larger than the INIT it answers.
 */
#include <string.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "udp.h"

void udp_token_make(const uint8_t *secret, const struct sockaddr_storage *ss, uint64_t cid, uint64_t epoch,
		    uint8_t *token)
{
	uint8_t in[16 + 2 + 8 + 8] = { 0 }, mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		memcpy(in, &a->sin6_addr, 16);
		memcpy(in + 16, &a->sin6_port, 2);
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		memcpy(in, &a->sin_addr, 4);
		memcpy(in + 16, &a->sin_port, 2);
	}
	memcpy(in + 18, &cid, 8);
	memcpy(in + 26, &epoch, 8);
	if (HMAC(EVP_sha256(), secret, 32, in, sizeof(in), mac, &maclen) == NULL)
		memset(mac, 0, sizeof(mac));  /* a token nobody can match */
	memcpy(token, mac, UDP_TOKEN_LEN);
}

int udp_token_check(const uint8_t *secret, const struct sockaddr_storage *ss, uint64_t cid, uint64_t now_s,
		    const uint8_t *token)
{
	uint64_t epoch = now_s / UDP_TOKEN_EPOCH_S;
	uint8_t want[UDP_TOKEN_LEN];

	/* This epoch or the last: a token lives 30 to 60 seconds. */
	for (int back = 0; back < 2 && back <= (int)epoch; back++) {
		udp_token_make(secret, ss, cid, epoch - (uint64_t)back, want);
		if (CRYPTO_memcmp(want, token, UDP_TOKEN_LEN) == 0)
			return 0;
	}
	return -1;
}
