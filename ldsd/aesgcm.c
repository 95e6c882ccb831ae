/* aesgcm.c - AES-256-GCM with ipsec-mb or OpenSSL; see aesgcm.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#if defined(LDS_HAVE_IPSECMB)
#include <intel-ipsec-mb.h>
#endif

#include "aesgcm.h"

struct aesgcm_ops {
	int (*key)(struct aesgcm *g, const uint8_t *key);
	int (*seal)(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, const struct iovec *in,
		    int n, uint8_t *out, uint8_t *tag);
	int (*open)(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, uint8_t *buf, size_t len,
		    const uint8_t *tag);
	void (*free)(void *ctx);
	const char *name;
};

struct aesgcm {
	const struct aesgcm_ops *ops;
	void *ctx; /* EVP_CIPHER_CTX, or ipsec-mb's expanded key */
};

/* ---- OpenSSL ------------------------------------------------------------ */

/* One context serves both ways: each call sets its IV and direction. */
static int evp_key(struct aesgcm *g, const uint8_t *key)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	if (c == NULL)
		return -EIO;
	if (EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL, 1) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, AESGCM_IV_LEN, NULL) != 1 ||
	    EVP_CipherInit_ex(c, NULL, NULL, key, NULL, 1) != 1) {
		EVP_CIPHER_CTX_free(c);
		return -EIO;
	}
	g->ctx = c;
	return 0;
}

static int evp_seal(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, const struct iovec *in,
		    int n, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *c = g->ctx;
	int len;

	if (EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, 1) != 1 ||
	    (aad_len > 0 && EVP_EncryptUpdate(c, NULL, &len, aad, (int)aad_len) != 1))
		return -EIO;
	for (int i = 0; i < n; i++) {
		if (in[i].iov_len > 0 && EVP_EncryptUpdate(c, out, &len, in[i].iov_base, (int)in[i].iov_len) != 1)
			return -EIO;
		out += in[i].iov_len;
	}
	if (EVP_EncryptFinal_ex(c, out, &len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, AESGCM_TAG_LEN, tag) != 1)
		return -EIO;
	return 0;
}

static int evp_open(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, uint8_t *buf, size_t len,
		    const uint8_t *tag)
{
	EVP_CIPHER_CTX *c = g->ctx;
	uint8_t t[AESGCM_TAG_LEN];
	int n = 0;

	/* The ctrl takes a non-const pointer; tag may lie in buf. */
	memcpy(t, tag, sizeof(t));
	if (EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, 0) != 1 ||
	    (aad_len > 0 && EVP_DecryptUpdate(c, NULL, &n, aad, (int)aad_len) != 1) ||
	    (len > 0 && EVP_DecryptUpdate(c, buf, &n, buf, (int)len) != 1) ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, AESGCM_TAG_LEN, t) != 1 ||
	    EVP_DecryptFinal_ex(c, buf + len, &n) != 1)
		return -EBADMSG;
	return 0;
}

static void evp_free(void *ctx)
{
	EVP_CIPHER_CTX_free(ctx);
}

static const struct aesgcm_ops evp_ops = { evp_key, evp_seal, evp_open, evp_free, "OpenSSL EVP" };

static const struct aesgcm_ops *fastest = &evp_ops;

/* ---- Intel ipsec-mb ------------------------------------------------------- */

#if defined(LDS_HAVE_IPSECMB)
/* Read-only once chosen: the direct GCM calls only use its function
 * pointers, so every key shares it. */
static IMB_MGR *imb;
static char imb_name[64];

static int imb_key(struct aesgcm *g, const uint8_t *key)
{
	struct gcm_key_data *k = aligned_alloc(64, (sizeof(*k) + 63) & ~(size_t)63);

	if (k == NULL)
		return -EIO;
	IMB_AES256_GCM_PRE(imb, key, k);
	g->ctx = k;
	return 0;
}

/* One call where the bytes are in one piece; else its streaming calls. */
static int imb_seal(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, const struct iovec *in,
		    int n, uint8_t *out, uint8_t *tag)
{
	struct gcm_context_data cd;

	if (n == 1) {
		IMB_AES256_GCM_ENC(imb, g->ctx, &cd, out, in[0].iov_base, in[0].iov_len, iv, aad, aad_len, tag,
				   AESGCM_TAG_LEN);
		return imb_get_errno(imb) == 0 ? 0 : -EIO;
	}
	IMB_AES256_GCM_INIT(imb, g->ctx, &cd, iv, aad, aad_len);
	for (int i = 0; i < n; i++) {
		if (in[i].iov_len > 0)
			IMB_AES256_GCM_ENC_UPDATE(imb, g->ctx, &cd, out, in[i].iov_base, in[i].iov_len);
		out += in[i].iov_len;
	}
	IMB_AES256_GCM_ENC_FINALIZE(imb, g->ctx, &cd, tag, AESGCM_TAG_LEN);
	return imb_get_errno(imb) == 0 ? 0 : -EIO;
}

static int imb_open(struct aesgcm *g, const uint8_t *iv, const uint8_t *aad, size_t aad_len, uint8_t *buf, size_t len,
		    const uint8_t *tag)
{
	struct gcm_context_data cd;
	uint8_t t[AESGCM_TAG_LEN];

	IMB_AES256_GCM_DEC(imb, g->ctx, &cd, buf, buf, len, iv, aad, aad_len, t, sizeof(t));
	if (imb_get_errno(imb) != 0 || CRYPTO_memcmp(t, tag, sizeof(t)) != 0)
		return -EBADMSG;
	return 0;
}

static void imb_free(void *ctx)
{
	OPENSSL_cleanse(ctx, sizeof(struct gcm_key_data));
	free(ctx);
}

static const struct aesgcm_ops imb_ops = { imb_key, imb_seal, imb_open, imb_free, imb_name };

/* ipsec-mb wherever it finds AES-NI; without it, its code emulates the
 * instructions and OpenSSL's is no slower. */
static void choose(void)
{
	static const char *const arch_name[] = { [IMB_ARCH_SSE] = "SSE", [IMB_ARCH_AVX] = "AVX",
						 [IMB_ARCH_AVX2] = "AVX2", [IMB_ARCH_AVX512] = "AVX-512" };
	IMB_ARCH arch = IMB_ARCH_NONE;

	imb = alloc_mb_mgr(0);
	if (imb == NULL)
		return;
	init_mb_mgr_auto(imb, &arch);
	if (imb_get_errno(imb) != 0 || arch < IMB_ARCH_SSE || arch >= IMB_ARCH_NUM) {
		free_mb_mgr(imb);
		imb = NULL;
		return;
	}
	snprintf(imb_name, sizeof(imb_name), "Intel ipsec-mb %s, %s", imb_get_version_str(), arch_name[arch]);
	fastest = &imb_ops;
}
#else
static void choose(void)
{
}
#endif

/* Chosen at the first key, not at start-up: only processes that seal pay
 * for ipsec-mb's 50 KiB manager. */
static const struct aesgcm_ops *ops_of(enum aesgcm_impl impl)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (impl == AESGCM_OPENSSL)
		return &evp_ops;
	pthread_once(&once, choose);
	return fastest;
}

/* ---- the interface ------------------------------------------------------------- */

struct aesgcm *aesgcm_new(const uint8_t key[AESGCM_KEY_LEN], enum aesgcm_impl impl)
{
	struct aesgcm *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->ops = ops_of(impl);
	if (g->ops->key(g, key) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

void aesgcm_free(struct aesgcm *g)
{
	if (g == NULL)
		return;
	g->ops->free(g->ctx);
	free(g);
}

int aesgcm_seal(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len,
		const uint8_t *in, uint8_t *out, size_t len, uint8_t tag[AESGCM_TAG_LEN])
{
	const struct iovec v = { (void *)in, len };

	return g->ops->seal(g, iv, aad, aad_len, &v, 1, out, tag);
}

int aesgcm_seal_iov(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len,
		    const struct iovec *in, int n, uint8_t *out, uint8_t tag[AESGCM_TAG_LEN])
{
	return g->ops->seal(g, iv, aad, aad_len, in, n, out, tag);
}

int aesgcm_open(struct aesgcm *g, const uint8_t iv[AESGCM_IV_LEN], const uint8_t *aad, size_t aad_len, uint8_t *buf,
		size_t len, const uint8_t tag[AESGCM_TAG_LEN])
{
	return g->ops->open(g, iv, aad, aad_len, buf, len, tag);
}

const char *aesgcm_name(enum aesgcm_impl impl)
{
	return ops_of(impl)->name;
}
