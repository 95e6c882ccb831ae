/*
 * auth.h - pre-shared-key authentication of gateway streams.
 *
 * Both sides prove knowledge of the key with HMAC-SHA-256 over a hash of
 * the handshake transcript: every field of HELLO and CHALLENGE (nonces,
 * names, stream index and count, max_msg, instance ids, encryption), so
 * that an attacker who alters any of them breaks the handshake
 * (docs/protocol.md, "Handshake").  MACs are compared in constant time.
 */
#ifndef LDS_AUTH_H
#define LDS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define AUTH_TH_LEN 32u   /* SHA-256 transcript hash */

enum auth_side { AUTH_LISTENER, AUTH_CONNECTOR };

/* Fills buf with len cryptographically random bytes; 0 or -errno. */
int auth_random(void *buf, size_t len);

/*
 * The transcript hash th = SHA-256("LDS3 transcript" || u32 len(hello) ||
 * hello || u32 len(challenge) || challenge), over the HELLO and CHALLENGE
 * payloads as sent, with the CHALLENGE's mac field taken as zero bytes
 * (it is computed over th).  challenge_len must be at least
 * WIRE_CHALLENGE_MAC_OFF + WIRE_MAC_LEN.  Returns 0, -EINVAL or -EIO.
 */
int auth_transcript(const uint8_t *hello, size_t hello_len, const uint8_t *challenge, size_t challenge_len,
		    uint8_t th[AUTH_TH_LEN]);

/* Computes the MAC that `side` sends: HMAC-SHA-256(key, "LDS3-L" or
 * "LDS3-C" || th).  Returns 0 or -EIO. */
int auth_mac(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t th[AUTH_TH_LEN],
	     uint8_t mac[WIRE_MAC_LEN]);

/* Recomputes the MAC and compares it with `got` in constant time: 1 if it
 * verifies, 0 if not. */
int auth_verify(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t th[AUTH_TH_LEN],
		const uint8_t got[WIRE_MAC_LEN]);

#endif
