/* auth.c - HMAC-SHA-256 challenge-response with OpenSSL; see auth.h. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth.h"
#include "bytebuf.h"

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

static int digest_len(EVP_MD_CTX *md, size_t len)
{
	uint8_t be[4];

	bb_put_be32(be, (uint32_t)len);

	return EVP_DigestUpdate(md, be, sizeof(be));
}

int auth_transcript(const uint8_t *hello, size_t hello_len, const uint8_t *challenge, size_t challenge_len,
		    uint8_t th[AUTH_TH_LEN])
{
	static const uint8_t zero_mac[WIRE_MAC_LEN];
	static const char label[] = "LDS3 transcript";
	const size_t after = WIRE_CHALLENGE_MAC_OFF + WIRE_MAC_LEN;
	EVP_MD_CTX *md;
	unsigned int n = 0;
	int ok;

	if (challenge_len < after || hello_len > UINT32_MAX || challenge_len > UINT32_MAX)
		return -EINVAL;
	md = EVP_MD_CTX_new();
	if (md == NULL)
		return -EIO;
	/* Each part prefixed with its length, so that no two transcripts
	 * hash the same bytes. */
	ok = EVP_DigestInit_ex(md, EVP_sha256(), NULL) && EVP_DigestUpdate(md, label, sizeof(label) - 1) &&
	     digest_len(md, hello_len) && EVP_DigestUpdate(md, hello, hello_len) &&
	     digest_len(md, challenge_len) && EVP_DigestUpdate(md, challenge, WIRE_CHALLENGE_MAC_OFF) &&
	     EVP_DigestUpdate(md, zero_mac, WIRE_MAC_LEN) &&
	     EVP_DigestUpdate(md, challenge + after, challenge_len - after) && EVP_DigestFinal_ex(md, th, &n) &&
	     n == AUTH_TH_LEN;
	EVP_MD_CTX_free(md);
	return ok ? 0 : -EIO;
}

int auth_mac(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t th[AUTH_TH_LEN],
	     uint8_t mac[WIRE_MAC_LEN])
{
	/* Distinct labels, so that neither MAC can be replayed as the other. */
	uint8_t msg[6 + AUTH_TH_LEN];
	unsigned int maclen = 0;

	memcpy(msg, side == AUTH_LISTENER ? "LDS3-L" : "LDS3-C", 6);
	memcpy(msg + 6, th, AUTH_TH_LEN);
	if (HMAC(EVP_sha256(), key, (int)keylen, msg, sizeof(msg), mac, &maclen) == NULL || maclen != WIRE_MAC_LEN)
		return -EIO;
	return 0;
}

int auth_verify(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t th[AUTH_TH_LEN],
		const uint8_t got[WIRE_MAC_LEN])
{
	uint8_t want[WIRE_MAC_LEN];

	if (auth_mac(side, key, keylen, th, want) < 0)
		return 0;
	return CRYPTO_memcmp(want, got, WIRE_MAC_LEN) == 0;
}
