/*
 * fuzz_seal.c - libFuzzer target for sealed frames (ldsd/seal.c).
 *
 * Hostile input opened as the frames of a keyed stream must never crash,
 * read out of bounds or open: nothing but the peer's key seals.  And any
 * input sealed as a frame's payload opens, in order, to the same bytes,
 * while the same frame altered anywhere, or opened a second time, does not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/seal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static const uint8_t psk[] = "fuzz_seal: a public key, not a secret";
static const uint8_t th[AUTH_TH_LEN] = { 1, 2, 3 };

static void keys(struct seal *tx, struct seal *rx)
{
	CHECK(seal_init(tx, AUTH_CONNECTOR, psk, sizeof(psk) - 1, th) == 0);
	CHECK(seal_init(rx, AUTH_LISTENER, psk, sizeof(psk) - 1, th) == 0);
}

/* The input as a stream of frames from someone without the key. */
static void fuzz_open(const uint8_t *data, size_t size)
{
	struct seal a = { 0 }, b = { 0 };
	size_t off = 0;

	keys(&a, &b);
	while (off < size) {
		struct wire_frame f;
		size_t used = 0;
		uint8_t *copy;

		if (wire_frame_parse(data + off, size - off, &f, &used) != 1)
			break;
		copy = malloc(used);
		CHECK(copy != NULL);
		memcpy(copy, data + off, used);
		f.payload = copy + WIRE_HDR_LEN;
		if (f.sealed)
			CHECK(seal_open_frame(&b.rx, copy, &f) < 0);
		free(copy);
		off += used;
	}
	seal_free(&a);
	seal_free(&b);
}

/* The input as a DATA block (its first 8 bytes the seq) sealed by the
 * connector and opened by the listener. */
static void fuzz_roundtrip(const uint8_t *data, size_t size)
{
	struct seal a = { 0 }, b = { 0 };
	struct wire_frame f;
	uint8_t *out, *again;
	size_t n, used;

	if (size <= 8 || size - 8 > 1u << 16)
		return;
	keys(&a, &b);
	out = malloc(WIRE_HDR_LEN + size + SEAL_OVERHEAD);
	again = malloc(WIRE_HDR_LEN + size + SEAL_OVERHEAD);
	CHECK(out != NULL && again != NULL);
	n = seal_frame(&a.tx, WIRE_DATA, data, 8, data + 8, size - 8, out);
	CHECK(n == WIRE_HDR_LEN + size + SEAL_OVERHEAD);
	memcpy(again, out, n);
	/* Altered (a byte chosen by the input), the frame does not open. */
	again[data[size - 1] % n] ^= 0x01;
	if (wire_frame_parse(again, n, &f, &used) == 1 && f.sealed && f.type == WIRE_DATA) {
		struct seal c = { 0 }, d = { 0 };

		keys(&c, &d);
		CHECK(seal_open_frame(&d.rx, again, &f) < 0);
		seal_free(&c);
		seal_free(&d);
	}
	memcpy(again, out, n);
	CHECK(wire_frame_parse(out, n, &f, &used) == 1 && used == n && f.sealed && f.type == WIRE_DATA);
	CHECK(seal_open_frame(&b.rx, out, &f) == 0);
	CHECK(f.len == size && memcmp(out + WIRE_HDR_LEN, data, size) == 0);
	/* Replayed: the next nonce is not the one it was sealed with. */
	CHECK(wire_frame_parse(again, n, &f, &used) == 1);
	CHECK(seal_open_frame(&b.rx, again, &f) < 0);
	free(out);
	free(again);
	seal_free(&a);
	seal_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_open(data, size);
	fuzz_roundtrip(data, size);
	return 0;
}
