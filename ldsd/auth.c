/* auth.c - HMAC-SHA-256 challenge-response with OpenSSL; see auth.h. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth.h"

int auth_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int auth_mac(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t nonce_c[WIRE_NONCE_LEN],
	     const uint8_t nonce_l[WIRE_NONCE_LEN], const char *connector, const char *listener,
	     uint8_t mac[WIRE_MAC_LEN])
{
	/* Label, both nonces (own first, so the two MACs differ in order as
	 * well as label), both names each prefixed with its length so that
	 * no two name pairs give the same bytes. */
	uint8_t msg[6 + 2 * WIRE_NONCE_LEN + 2 * (1 + WIRE_NAME_MAX)];
	size_t cl = strlen(connector), ll = strlen(listener), n = 0;
	unsigned int maclen = 0;

	if (cl > WIRE_NAME_MAX || ll > WIRE_NAME_MAX)
		return -EINVAL;
	memcpy(msg, side == AUTH_LISTENER ? "LDS1-L" : "LDS1-C", 6);
	n = 6;
	memcpy(msg + n, side == AUTH_LISTENER ? nonce_c : nonce_l, WIRE_NONCE_LEN);
	n += WIRE_NONCE_LEN;
	memcpy(msg + n, side == AUTH_LISTENER ? nonce_l : nonce_c, WIRE_NONCE_LEN);
	n += WIRE_NONCE_LEN;
	msg[n++] = (uint8_t)cl;
	memcpy(msg + n, connector, cl);
	n += cl;
	msg[n++] = (uint8_t)ll;
	memcpy(msg + n, listener, ll);
	n += ll;
	if (HMAC(EVP_sha256(), key, (int)keylen, msg, n, mac, &maclen) == NULL || maclen != WIRE_MAC_LEN)
		return -EIO;
	return 0;
}

int auth_verify(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t nonce_c[WIRE_NONCE_LEN],
		const uint8_t nonce_l[WIRE_NONCE_LEN], const char *connector, const char *listener,
		const uint8_t got[WIRE_MAC_LEN])
{
	uint8_t want[WIRE_MAC_LEN];

	if (auth_mac(side, key, keylen, nonce_c, nonce_l, connector, listener, want) < 0)
		return 0;
	return CRYPTO_memcmp(want, got, WIRE_MAC_LEN) == 0;
}
