/*
 * seal.h - the sealed data channel of a gateway stream (encryption = "aead").
 *
 * After a stream's handshake both ends derive two AES-256-GCM keys, one per
 * direction, with HKDF-SHA-256 from the pre-shared key and the handshake
 * transcript hash (auth.h), and seal every later frame: its payload
 * encrypted, its header (and a DATA frame's seq, which stays in clear so
 * that the block can be placed before it is opened) authenticated, a
 * 16-byte tag appended.  The nonce is the direction's frame counter, never
 * sent: a frame dropped, replayed, reordered or copied from another stream
 * (whose keys differ, its nonces being fresh) fails its tag.
 * docs/protocol.md, "Sealed frames", is the normative description.
 *
 * Not thread-safe; one struct seal per stream.  A struct seal that is all
 * zero is valid and has no keys; seal_free() makes it so again.
 */
#ifndef LDS_SEAL_H
#define LDS_SEAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "aesgcm.h"
#include "auth.h"
#include "wire.h"

/* One direction: a cipher context keyed once, and the next frame's number. */
struct seal_dir {
	struct aesgcm *ctx;         /* NULL until keyed */
	uint64_t count;
};

struct seal {
	struct seal_dir tx, rx;
};

/* Bytes a sealed frame adds to its clear form. */
#define SEAL_OVERHEAD WIRE_TAG_LEN

/*
 * Derives the stream's keys: tx is the key of side's direction
 * ("LDS3 connector to listener" for AUTH_CONNECTOR), rx the other.
 * Returns 0, or -EIO (s is then left without keys).
 */
int seal_init(struct seal *s, enum auth_side side, const uint8_t *psk, size_t psk_len, const uint8_t th[AUTH_TH_LEN]);
void seal_free(struct seal *s);

/*
 * Seals one frame of `type` into out: the sealed header, the clear_len
 * bytes of clear (a DATA frame's seq; authenticated, not encrypted), the
 * secret_len bytes of secret encrypted, the tag.  out has room for
 * WIRE_HDR_LEN + clear_len + secret_len + SEAL_OVERHEAD bytes; returns
 * that length, or 0 if the payload would exceed WIRE_MAX_PAYLOAD, the
 * counter is spent or the cipher failed.
 */
size_t seal_frame(struct seal_dir *d, uint8_t type, const uint8_t *clear, size_t clear_len, const uint8_t *secret,
		  size_t secret_len, uint8_t *out);

/*
 * Seals a DATA frame of seq whose len bytes are read in turn from the
 * nsrc regions of src (each either in block, at its own place, or
 * elsewhere) into block as ciphertext, hdr its sealed header and seq, tag
 * its tag, so that the frame is written from where the block lies (hdr,
 * block, tag) and no copy of it is made.  *nonce is the counter it took:
 * seal_unseal_block needs it to turn the block back if it must be sent
 * again on another stream.  0, -EKEYEXPIRED (no key or counter spent;
 * block untouched) or -EIO (the cipher failed: block is garbage).
 */
int seal_block(struct seal_dir *d, uint64_t seq, const struct iovec *src, int nsrc, uint8_t *block, uint32_t len,
	       uint8_t hdr[WIRE_DATA_HDR_LEN], uint8_t tag[SEAL_OVERHEAD], uint64_t *nonce);
/* Undoes seal_block with the same direction's key: 0, or -EBADMSG if
 * the block or its tag changed since (memory corrupted). */
int seal_unseal_block(const struct seal_dir *d, uint64_t nonce, const uint8_t hdr[WIRE_DATA_HDR_LEN], uint8_t *block,
		      uint32_t len, const uint8_t tag[SEAL_OVERHEAD]);

/*
 * Opens the next frame received: aad is its header and clear part as
 * received (aad_len bytes), secret its len encrypted bytes, decrypted in
 * place, tag its last SEAL_OVERHEAD bytes.  Returns 0, or -EBADMSG if the
 * tag does not verify (the frame was altered, replayed, reordered or
 * sealed with another key: the stream must be closed, secret is garbage).
 */
int seal_open(struct seal_dir *d, const uint8_t *aad, size_t aad_len, uint8_t *secret, size_t len,
	      const uint8_t tag[SEAL_OVERHEAD]);

/* Opens a sealed frame that wire_frame_parse() returned, in place in its
 * buffer (frame is its first byte); on success f describes the clear
 * payload (f->sealed 0, f->len without the tag).  0 or -EBADMSG. */
int seal_open_frame(struct seal_dir *d, uint8_t *frame, struct wire_frame *f);

#endif
