/*
 * aesgcm.h - AES-256-GCM, one call per frame: the cipher of sealed frames
 * (seal.c).
 *
 * Two implementations with identical output: Intel's ipsec-mb library
 * where the build found it (libipsec-mb-dev, x86-64; its VAES/AVX-512 code
 * seals at four times OpenSSL 3.0's speed on CPUs that have those
 * instructions), and OpenSSL's EVP everywhere.  The faster one is chosen
 * once, at the first key.  Nonces are 12 bytes, tags 16.
 */
#ifndef LDS_AESGCM_H
#define LDS_AESGCM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define AESGCM_KEY_LEN 32
#define AESGCM_IV_LEN 12
#define AESGCM_TAG_LEN 16

enum aesgcm_impl {
	AESGCM_FASTEST, /* ipsec-mb where built with it and usable, else OpenSSL */
	AESGCM_OPENSSL, /* for the tests and the benchmark that hold one to the other */
};

/* A key, expanded once; NULL if out of memory or the library failed. */
struct aesgcm *aesgcm_new(const uint8_t key[AESGCM_KEY_LEN], enum aesgcm_impl impl);
void aesgcm_free(struct aesgcm *g);

/* Encrypts len bytes of in to out (which may be in; never NULL) and
 * authenticates them with aad; writes the tag.  0, or -EIO if the library
 * failed. */
int aesgcm_seal(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len,
		const uint8_t *in, uint8_t *out, size_t len, uint8_t tag[AESGCM_TAG_LEN]);

/* As aesgcm_seal, the bytes read in turn from the n regions of in (each
 * one in place, or not, in out). */
int aesgcm_seal_iov(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len,
		    const struct iovec *in, int n, uint8_t *out, uint8_t tag[AESGCM_TAG_LEN]);

/* Decrypts buf (never NULL) in place; 0, or -EBADMSG if tag does not verify (buf is
 * then garbage). */
int aesgcm_open(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len, uint8_t *buf,
		size_t len, const uint8_t tag[AESGCM_TAG_LEN]);

/* What impl is here, in words ("Intel ipsec-mb 1.3.0, AVX-512", ...). */
const char *aesgcm_name(enum aesgcm_impl impl);

#endif
