/*
 * clientauth.h - the key check of a liblds connection over TCP
 * (clients.tcp), where the kernel cannot say which user a client is.
 * Before HELLO, ldsd sends CHALLENGE with a fresh nonce; the client answers
 * PROOF with its own nonce and a MAC over both under the shared key; ldsd
 * answers PROOF with its MAC, which the client checks, so that neither end
 * talks to one that does not hold the key.  docs/protocol.md "TCP clients".
 */
#ifndef LDS_CLIENTAUTH_H
#define LDS_CLIENTAUTH_H

#include <stddef.h>
#include <stdint.h>

#define CPAUTH_NONCE_LEN 32
#define CPAUTH_MAC_LEN 32

enum cpauth_side { CPAUTH_CLIENT, CPAUTH_DAEMON };

/* A fresh nonce from the kernel.  Returns 0 or -errno. */
int cpauth_nonce(uint8_t nonce[CPAUTH_NONCE_LEN]);

/* HMAC-SHA-256 under key of the side's label, the daemon's nonce and the
 * client's nonce: the labels keep one side's MAC from passing as the
 * other's.  Returns 0, or -EIO if the library failed. */
int cpauth_mac(const uint8_t *key, size_t key_len, enum cpauth_side side, const uint8_t dnonce[CPAUTH_NONCE_LEN],
	       const uint8_t cnonce[CPAUTH_NONCE_LEN], uint8_t mac[CPAUTH_MAC_LEN]);

/* 1 if mac is side's MAC over the two nonces, else 0; in constant time. */
int cpauth_verify(const uint8_t *key, size_t key_len, enum cpauth_side side, const uint8_t dnonce[CPAUTH_NONCE_LEN],
		  const uint8_t cnonce[CPAUTH_NONCE_LEN], const uint8_t mac[CPAUTH_MAC_LEN]);

#endif
