/* clientauth.c - the key check of a TCP client; see clientauth.h. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "clientauth.h"

int cpauth_nonce(uint8_t nonce[CPAUTH_NONCE_LEN])
{
	size_t got = 0;

	while (got < CPAUTH_NONCE_LEN) {
		ssize_t r = getrandom(nonce + got, CPAUTH_NONCE_LEN - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	return 0;
}

int cpauth_mac(const uint8_t *key, size_t key_len, enum cpauth_side side, const uint8_t dnonce[CPAUTH_NONCE_LEN],
	       const uint8_t cnonce[CPAUTH_NONCE_LEN], uint8_t mac[CPAUTH_MAC_LEN])
{
	static const char label[2][24] = { "lds tcp client proof 1", "lds tcp daemon proof 1" };
	uint8_t msg[sizeof(label[0]) + 2 * CPAUTH_NONCE_LEN];
	unsigned len = 0;

	memcpy(msg, label[side == CPAUTH_DAEMON], sizeof(label[0]));
	memcpy(msg + sizeof(label[0]), dnonce, CPAUTH_NONCE_LEN);
	memcpy(msg + sizeof(label[0]) + CPAUTH_NONCE_LEN, cnonce, CPAUTH_NONCE_LEN);
	if (HMAC(EVP_sha256(), key, (int)key_len, msg, sizeof(msg), mac, &len) == NULL || len != CPAUTH_MAC_LEN)
		return -EIO;
	return 0;
}

int cpauth_verify(const uint8_t *key, size_t key_len, enum cpauth_side side, const uint8_t dnonce[CPAUTH_NONCE_LEN],
		  const uint8_t cnonce[CPAUTH_NONCE_LEN], const uint8_t mac[CPAUTH_MAC_LEN])
{
	uint8_t want[CPAUTH_MAC_LEN];
	int ok;

	if (cpauth_mac(key, key_len, side, dnonce, cnonce, want) < 0)
		return 0;
	ok = CRYPTO_memcmp(want, mac, CPAUTH_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}
