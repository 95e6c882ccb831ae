/*
 * auth.h - pre-shared-key authentication of gateway streams.
 *
 * Both sides prove knowledge of the key with HMAC-SHA-256 over both nonces
 * and both cluster names (docs/protocol.md, "Handshake"); MACs are compared
 * in constant time.
 */
#ifndef LDS_AUTH_H
#define LDS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum auth_side { AUTH_LISTENER, AUTH_CONNECTOR };

/* Fills buf with len cryptographically random bytes; 0 or -errno. */
int auth_random(void *buf, size_t len);

/* Computes the MAC that `side` sends.  connector/listener are the cluster
 * names of the two ends.  Returns 0 or -EIO. */
int auth_mac(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t nonce_c[WIRE_NONCE_LEN],
	     const uint8_t nonce_l[WIRE_NONCE_LEN], const char *connector, const char *listener,
	     uint8_t mac[WIRE_MAC_LEN]);

/* Recomputes the MAC and compares it with `got` in constant time: 1 if it
 * verifies, 0 if not. */
int auth_verify(enum auth_side side, const uint8_t *key, size_t keylen, const uint8_t nonce_c[WIRE_NONCE_LEN],
		const uint8_t nonce_l[WIRE_NONCE_LEN], const char *connector, const char *listener,
		const uint8_t got[WIRE_MAC_LEN]);

#endif
