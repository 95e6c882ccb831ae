/* seal.c - AES-256-GCM frame sealing (aesgcm.h), keys by HKDF from
 * OpenSSL; see seal.h. */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "aesgcm.h"
#include "bytebuf.h"
#include "seal.h"

/* seal_frame and seal_open hand aesgcm the frame's tag in place. */
_Static_assert(SEAL_OVERHEAD == AESGCM_TAG_LEN, "a sealed frame's tag is the cipher's");

static const char info_c2l[] = "LDS3 connector to listener";
static const char info_l2c[] = "LDS3 listener to connector";

static int hkdf(const uint8_t *psk, size_t psk_len, const uint8_t th[AUTH_TH_LEN], const char *info,
		uint8_t key[AESGCM_KEY_LEN])
{
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t n = AESGCM_KEY_LEN;
	int ok;

	if (pc == NULL)
		return -EIO;
	ok = EVP_PKEY_derive_init(pc) > 0 && EVP_PKEY_CTX_set_hkdf_md(pc, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_salt(pc, th, AUTH_TH_LEN) > 0 &&
	     EVP_PKEY_CTX_set1_hkdf_key(pc, psk, (int)psk_len) > 0 &&
	     EVP_PKEY_CTX_add1_hkdf_info(pc, (const unsigned char *)info, (int)strlen(info)) > 0 &&
	     EVP_PKEY_derive(pc, key, &n) > 0 && n == AESGCM_KEY_LEN;
	EVP_PKEY_CTX_free(pc);
	return ok ? 0 : -EIO;
}

static int dir_init(struct seal_dir *d, const uint8_t key[AESGCM_KEY_LEN])
{
	d->ctx = aesgcm_new(key, AESGCM_FASTEST);
	d->count = 0;
	return d->ctx != NULL ? 0 : -EIO;
}

int seal_init(struct seal *s, enum auth_side side, const uint8_t *psk, size_t psk_len, const uint8_t th[AUTH_TH_LEN])
{
	uint8_t k_c2l[AESGCM_KEY_LEN], k_l2c[AESGCM_KEY_LEN];
	int r;

	seal_free(s);
	r = hkdf(psk, psk_len, th, info_c2l, k_c2l);
	if (r == 0)
		r = hkdf(psk, psk_len, th, info_l2c, k_l2c);
	if (r == 0)
		r = dir_init(&s->tx, side == AUTH_CONNECTOR ? k_c2l : k_l2c);
	if (r == 0)
		r = dir_init(&s->rx, side == AUTH_CONNECTOR ? k_l2c : k_c2l);
	OPENSSL_cleanse(k_c2l, sizeof(k_c2l));
	OPENSSL_cleanse(k_l2c, sizeof(k_l2c));
	if (r < 0)
		seal_free(s);
	return r;
}

void seal_free(struct seal *s)
{
	aesgcm_free(s->tx.ctx);
	aesgcm_free(s->rx.ctx);
	memset(s, 0, sizeof(*s));
}

/* The nonce: 4 zero bytes and the frame counter, big-endian.  Never
 * reused: a spent counter stops the direction (seal_frame, seal_open). */
static void nonce_iv(uint64_t count, uint8_t iv[AESGCM_IV_LEN])
{
	memset(iv, 0, 4);
	bb_put_be64(iv + 4, count);
}

/* Seals a frame whose header and clear part go to hdr, its secret part
 * (read in turn from the nsecret regions of secret, secret_len bytes in
 * all) to ct as ciphertext and its tag to tag: one buffer (seal_frame) or
 * three (seal_block).  The counter it took in *nonce.  0, -EKEYEXPIRED
 * (no key, counter spent or frame too long: nothing written) or -EIO (the
 * cipher failed: ct is garbage). */
static int seal_parts(struct seal_dir *d, uint8_t type, const uint8_t *clear, size_t clear_len,
		      const struct iovec *secret, int nsecret, size_t secret_len, uint8_t *hdr, uint8_t *ct, uint8_t *tag,
		      uint64_t *nonce)
{
	size_t plen = clear_len + secret_len + SEAL_OVERHEAD;
	uint8_t iv[AESGCM_IV_LEN];

	if (d->ctx == NULL || d->count == UINT64_MAX || plen > WIRE_MAX_PAYLOAD)
		return -EKEYEXPIRED;
	wire_encode_sealed_hdr(hdr, type, (uint32_t)plen);
	if (clear_len > 0)
		memcpy(hdr + WIRE_HDR_LEN, clear, clear_len);
	nonce_iv(d->count, iv);
	if (aesgcm_seal_iov(d->ctx, iv, hdr, WIRE_HDR_LEN + clear_len, secret, nsecret, ct, tag) < 0)
		return -EIO;
	*nonce = d->count++;
	return 0;
}

size_t seal_frame(struct seal_dir *d, uint8_t type, const uint8_t *clear, size_t clear_len, const uint8_t *secret,
		  size_t secret_len, uint8_t *out)
{
	const struct iovec v = { (void *)secret, secret_len };
	uint8_t *ct = out + WIRE_HDR_LEN + clear_len;
	uint64_t nonce;

	if (seal_parts(d, type, clear, clear_len, &v, 1, secret_len, out, ct, ct + secret_len, &nonce) < 0)
		return 0;
	return WIRE_HDR_LEN + clear_len + secret_len + SEAL_OVERHEAD;
}

int seal_block(struct seal_dir *d, uint64_t seq, const struct iovec *src, int nsrc, uint8_t *block, uint32_t len,
	       uint8_t hdr[WIRE_DATA_HDR_LEN], uint8_t tag[SEAL_OVERHEAD], uint64_t *nonce)
{
	uint8_t be[8];

	bb_put_be64(be, seq);
	return seal_parts(d, WIRE_DATA, be, sizeof(be), src, nsrc, len, hdr, block, tag, nonce);
}

int seal_unseal_block(const struct seal_dir *d, uint64_t nonce, const uint8_t hdr[WIRE_DATA_HDR_LEN], uint8_t *block,
		      uint32_t len, const uint8_t tag[SEAL_OVERHEAD])
{
	uint8_t iv[AESGCM_IV_LEN];

	if (d->ctx == NULL)
		return -EBADMSG;
	nonce_iv(nonce, iv);
	return aesgcm_open(d->ctx, iv, hdr, WIRE_DATA_HDR_LEN, block, len, tag) < 0 ? -EBADMSG : 0;
}

int seal_open(struct seal_dir *d, const uint8_t *aad, size_t aad_len, uint8_t *secret, size_t len,
	      const uint8_t tag[SEAL_OVERHEAD])
{
	uint8_t iv[AESGCM_IV_LEN];

	if (d->ctx == NULL || d->count == UINT64_MAX || len > WIRE_MAX_PAYLOAD)
		return -EBADMSG;
	nonce_iv(d->count, iv);
	if (aesgcm_open(d->ctx, iv, aad, aad_len, secret, len, tag) < 0)
		return -EBADMSG;
	d->count++;
	return 0;
}

int seal_open_frame(struct seal_dir *d, uint8_t *frame, struct wire_frame *f)
{
	size_t aad = WIRE_HDR_LEN + (f->type == WIRE_DATA ? 8u : 0u);
	size_t secret = WIRE_HDR_LEN + f->len - SEAL_OVERHEAD - aad;

	if (!f->sealed || f->len < aad - WIRE_HDR_LEN + SEAL_OVERHEAD)
		return -EBADMSG;
	if (seal_open(d, frame, aad, frame + aad, secret, frame + WIRE_HDR_LEN + f->len - SEAL_OVERHEAD) < 0)
		return -EBADMSG;
	f->sealed = 0;
	f->len -= SEAL_OVERHEAD;
	return 0;
}
