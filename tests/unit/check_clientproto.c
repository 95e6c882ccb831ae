/* check_clientproto.c - frames between liblds and ldsd (libclient/clientproto.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/clientproto.h"
#include "suites.h"

#define PAYLOAD "payload bytes"

/* A message of each type with every field of that type set. */
static void sample(uint8_t type, struct cp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	switch (type) {
	case CP_HELLO:
		m->version = CP_VERSION;
		m->flags = 0x8001;
		m->incarnation = 0xF1E2D3C4B5A69788ull;
		strcpy(m->name, "cm");
		break;
	case CP_WELCOME:
		m->version = CP_VERSION;
		m->max_msg = 0x10000000;
		strcpy(m->name, "clusterA");
		strcpy(m->endpoint, "clusterA/cm");
		m->flags = CP_F_TAKEN;
		break;
	case CP_SEND:
	case CP_DELIVER:
		m->msg_id = 0x0102030405060708ull;
		/* A SEND carries no incarnation: ldsd knows it from HELLO. */
		if (type == CP_DELIVER)
			m->incarnation = 0x1112131415161718ull;
		strcpy(m->name, "clusterB/worker-7");
		m->payload = (const uint8_t *)PAYLOAD;
		m->payload_len = sizeof(PAYLOAD) - 1;
		break;
	case CP_ACKED:
		m->first = 3;
		m->last = 0xFFFFFFFFFFull;
		break;
	case CP_LOST:
		m->first = 1;
		m->last = 9;
		strcpy(m->name, "clusterB");
		strcpy(m->text, "peer gateway restarted: state lost");
		break;
	case CP_ERROR:
		m->msg_id = 42;
		m->err = EHOSTUNREACH;
		strcpy(m->text, "no link to cluster clusterC");
		break;
	case CP_RESUME:
		m->count = 77;
		strcpy(m->name, "clusterB");
		break;
	case CP_PEERQ:
		strcpy(m->name, "clusterB");
		break;
	case CP_TAKEN:
		m->count = 0x0A0B0C0D0E0Full;
		break;
	case CP_SHM:
		m->ring_size = 0x0102030405060708ull;
		break;
	case CP_PEER:
		strcpy(m->name, "clusterB");
		m->state = CP_PEER_DOWN;
		m->seconds = 0x01020304;
		strcpy(m->text, "auth-sent: refused: authentication failed (wrong key?)");
		m->has_bytes = 1;
		m->bytes_out = 0x0102030405060708ull;
		m->bytes_in = 0xF0E0D0C0B0A09080ull;
		break;
	case CP_CHALLENGE:
	case CP_PROOF:
		for (size_t i = 0; i < sizeof(m->nonce); i++)
			m->nonce[i] = (uint8_t)(0xA0 + i);
		if (type == CP_PROOF)
			for (size_t i = 0; i < sizeof(m->mac); i++)
				m->mac[i] = (uint8_t)(0x30 + i);
		break;
	default:
		break;
	}
}

static int has_payload(uint8_t type)
{
	return type == CP_SEND || type == CP_DELIVER;
}

/* Encodes m and appends its payload: the frame as it travels. */
static size_t frame_of(const struct cp_msg *m, uint8_t *buf, size_t cap)
{
	size_t n = cp_encode(buf, cap, m);

	ck_assert_uint_gt(n, 0);
	if (has_payload(m->type)) {
		ck_assert_uint_le(n + m->payload_len, cap);
		memcpy(buf + n, m->payload, m->payload_len);
		n += m->payload_len;
	}
	return n;
}

/* Decodes a copy of body of exactly len bytes, so that ASan sees any read
 * past the end. */
static int decode_exact(uint8_t type, const uint8_t *body, size_t len, struct cp_msg *m, uint8_t **copy)
{
	struct cp_hdr h = { .len = (uint32_t)len, .type = type, .version = CP_VERSION };

	*copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(*copy);
	memcpy(*copy, body, len);
	return cp_decode(&h, *copy, m);
}

START_TEST(t_type_names)
{
	for (int t = 0; t < CP_TYPE_MAX; t++)
		ck_assert_ptr_nonnull(cp_type_names[t]);
	ck_assert_str_eq(cp_type_names[CP_DELIVER], "DELIVER");
}
END_TEST

START_TEST(t_hdr)
{
	uint8_t b[CP_HDR_LEN];
	const uint8_t want[CP_HDR_LEN] = { 0x01, 0x02, 0x03, 0x04, CP_ACKED, CP_VERSION, 0, 0 };
	struct cp_hdr h;

	cp_hdr_write(b, CP_ACKED, 0x01020304);
	ck_assert_mem_eq(b, want, sizeof(want));
	cp_hdr_write(b, CP_BYE, CP_MAX_BODY);
	ck_assert_int_eq(cp_hdr_parse(b, &h), 0);
	ck_assert_uint_eq(h.len, CP_MAX_BODY);
	ck_assert_uint_eq(h.type, CP_BYE);
	ck_assert_uint_eq(h.version, CP_VERSION);

	cp_hdr_write(b, CP_BYE, CP_MAX_BODY + 1);
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	cp_hdr_write(b, CP_BYE, 0xFFFFFFFFu);
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	cp_hdr_write(b, 0, 0);
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	cp_hdr_write(b, CP_TYPE_MAX, 0);
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	cp_hdr_write(b, 0xFF, 0);
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	cp_hdr_write(b, CP_HELLO, 4);
	b[5] = CP_VERSION + 1;
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
	b[5] = 0;
	ck_assert_int_eq(cp_hdr_parse(b, &h), -EBADMSG);
}
END_TEST

/* Every type survives encode, header parse and decode unchanged. */
START_TEST(t_round_trip)
{
	uint8_t type = (uint8_t)_i, buf[1024], *copy;
	struct cp_msg in, out;
	struct cp_hdr h;
	size_t n;

	sample(type, &in);
	n = frame_of(&in, buf, sizeof(buf));
	ck_assert_int_eq(cp_hdr_parse(buf, &h), 0);
	ck_assert_uint_eq(h.type, type);
	ck_assert_uint_eq(h.len, n - CP_HDR_LEN);
	ck_assert_int_eq(decode_exact(type, buf + CP_HDR_LEN, h.len, &out, &copy), 0);
	ck_assert_uint_eq(out.payload_len, in.payload_len);
	if (has_payload(type))
		ck_assert_mem_eq(out.payload, in.payload, in.payload_len);
	in.payload = out.payload = NULL;
	ck_assert_mem_eq(&out, &in, sizeof(in));
	free(copy);
}
END_TEST

/* Any body cut short inside its fields is refused; SEND and DELIVER bodies
 * end in a payload of any length, so only their fields can be cut.  A
 * WELCOME cut before its flags is the WELCOME without flags, a PEER cut
 * before its counters the PEER without them (t_fields). */
START_TEST(t_truncated)
{
	uint8_t type = (uint8_t)_i, buf[1024], *copy;
	struct cp_msg m, out;
	size_t fields;

	sample(type, &m);
	fields = cp_encode(buf, sizeof(buf), &m) - CP_HDR_LEN;
	for (size_t len = 0; len < fields; len++) {
		if ((type == CP_WELCOME && len == fields - 2) || (type == CP_PEER && len == fields - 16))
			continue;
		ck_assert_msg(decode_exact(type, buf + CP_HDR_LEN, len, &out, &copy) == -EBADMSG,
			      "%s cut to %zu of %zu bytes", cp_type_names[type], len, fields);
		free(copy);
	}
}
END_TEST

/* The fields of SEND and DELIVER decode from the start of the body alone;
 * the payload's length comes from the header. */
START_TEST(t_decode_head)
{
	uint8_t type = (uint8_t)_i, buf[1024];
	struct cp_msg m, out;
	struct cp_hdr h;
	size_t n, fields;

	sample(type, &m);
	n = frame_of(&m, buf, sizeof(buf));
	ck_assert_int_eq(cp_hdr_parse(buf, &h), 0);
	fields = n - CP_HDR_LEN - m.payload_len;
	for (size_t avail = 0; avail < fields; avail++)
		ck_assert_int_eq(cp_decode_head(&h, buf + CP_HDR_LEN, avail, &out), -EAGAIN);
	ck_assert_int_eq(cp_decode_head(&h, buf + CP_HDR_LEN, fields, &out), 0);
	ck_assert_uint_eq(out.msg_id, m.msg_id);
	ck_assert_uint_eq(out.incarnation, m.incarnation);
	ck_assert_str_eq(out.name, m.name);
	ck_assert_uint_eq(out.payload_len, m.payload_len);
	ck_assert_ptr_eq(out.payload, buf + CP_HDR_LEN + fields);
	/* A name running past the frame's end, a frame too short for its
	 * fixed fields, and other types are refused. */
	h.len = (uint32_t)fields - 1;
	ck_assert_int_eq(cp_decode_head(&h, buf + CP_HDR_LEN, fields, &out), -EBADMSG);
	h.len = 5;
	ck_assert_int_eq(cp_decode_head(&h, buf + CP_HDR_LEN, 5, &out), -EBADMSG);
	h.type = CP_ACKED;
	h.len = (uint32_t)(n - CP_HDR_LEN);
	ck_assert_int_eq(cp_decode_head(&h, buf + CP_HDR_LEN, fields, &out), -EBADMSG);
}
END_TEST

START_TEST(t_trailing)
{
	uint8_t type = (uint8_t)_i, buf[1024], *copy;
	struct cp_msg m, out;
	size_t n;

	sample(type, &m);
	n = frame_of(&m, buf, sizeof(buf) - 1);
	buf[n] = 'x';
	if (has_payload(type)) {
		ck_assert_int_eq(decode_exact(type, buf + CP_HDR_LEN, n + 1 - CP_HDR_LEN, &out, &copy), 0);
		ck_assert_uint_eq(out.payload_len, m.payload_len + 1);
	} else {
		ck_assert_int_eq(decode_exact(type, buf + CP_HDR_LEN, n + 1 - CP_HDR_LEN, &out, &copy), -EBADMSG);
	}
	free(copy);
}
END_TEST

/* A HELLO body with a name of n bytes of c. */
static size_t hello_body(uint8_t *b, size_t n, char c)
{
	b[0] = 0;
	b[1] = CP_VERSION;
	b[2] = b[3] = 0;
	memset(b + 4, 0x5A, 8);
	b[12] = (uint8_t)n;
	memset(b + 13, c, n);
	return 13 + n;
}

/* An ERROR body with a text of n bytes of c. */
static size_t error_body(uint8_t *b, size_t n, char c)
{
	memset(b, 0, 12);
	b[7] = 1;
	b[11] = EIO;
	b[12] = (uint8_t)(n >> 8);
	b[13] = (uint8_t)n;
	memset(b + 14, c, n);
	return 14 + n;
}

START_TEST(t_strings)
{
	uint8_t b[400], *copy;
	struct cp_msg m;

	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, WIRE_ENDPOINT_MAX, 'a'), &m, &copy), 0);
	ck_assert_uint_eq(strlen(m.name), WIRE_ENDPOINT_MAX);
	ck_assert_uint_eq(m.incarnation, 0x5A5A5A5A5A5A5A5Aull);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, WIRE_ENDPOINT_MAX + 1, 'a'), &m, &copy), -EBADMSG);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, 0, 'a'), &m, &copy), 0);
	ck_assert_str_eq(m.name, "");
	free(copy);
	/* Names are single printable tokens. */
	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, 3, ' '), &m, &copy), -EBADMSG);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, 3, '\0'), &m, &copy), -EBADMSG);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_HELLO, b, hello_body(b, 3, '\x7f'), &m, &copy), -EBADMSG);
	free(copy);

	ck_assert_int_eq(decode_exact(CP_ERROR, b, error_body(b, CP_TEXT_MAX, ' '), &m, &copy), 0);
	ck_assert_uint_eq(strlen(m.text), CP_TEXT_MAX);
	ck_assert_uint_eq(m.msg_id, 1);
	ck_assert_int_eq(m.err, EIO);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_ERROR, b, error_body(b, CP_TEXT_MAX + 1, 'a'), &m, &copy), -EBADMSG);
	free(copy);
	ck_assert_int_eq(decode_exact(CP_ERROR, b, error_body(b, 2, '\n'), &m, &copy), -EBADMSG);
	free(copy);
}
END_TEST

START_TEST(t_fields)
{
	uint8_t buf[256], *copy;
	struct cp_msg m, out;
	size_t n;

	/* errno travels as a big-endian two's complement i32. */
	sample(CP_ERROR, &m);
	m.err = -5;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_mem_eq(buf + CP_HDR_LEN + 8, "\xFF\xFF\xFF\xFB", 4);
	ck_assert_int_eq(decode_exact(CP_ERROR, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), 0);
	ck_assert_int_eq(out.err, -5);
	free(copy);

	/* Id ranges start at 1 and are not reversed. */
	sample(CP_ACKED, &m);
	m.first = 0;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_ACKED, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);
	m.first = 5;
	m.last = 4;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_ACKED, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);

	/* A SEND needs a destination. */
	sample(CP_SEND, &m);
	m.name[0] = '\0';
	n = frame_of(&m, buf, sizeof(buf));
	ck_assert_int_eq(decode_exact(CP_SEND, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);

	/* A PEER's state is one the protocol names; its text may be empty. */
	sample(CP_PEER, &m);
	m.state = CP_PEER_STATE_MAX;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_PEER, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);
	m.state = CP_PEER_UP;
	m.text[0] = '\0';
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_PEER, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), 0);
	ck_assert_uint_eq(out.state, CP_PEER_UP);
	free(copy);
	/* Without CP_F_LINKBYTES, the PEER protocol 2 first had: no counters. */
	m.has_bytes = 0;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_uint_eq(n, CP_HDR_LEN + 8 + strlen(m.name));
	ck_assert_int_eq(decode_exact(CP_PEER, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), 0);
	ck_assert_int_eq(out.has_bytes, 0);
	ck_assert_uint_eq(out.bytes_out, 0);
	free(copy);
	/* A PEERQ names a cluster. */
	sample(CP_PEERQ, &m);
	m.name[0] = '\0';
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_PEERQ, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);

	/* A WELCOME without flags is protocol 2's first form; flags present
	 * are never 0. */
	sample(CP_WELCOME, &m);
	m.flags = 0;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_WELCOME, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), 0);
	ck_assert_uint_eq(out.flags, 0);
	free(copy);
	buf[n++] = 0;
	buf[n++] = 0;
	ck_assert_int_eq(decode_exact(CP_WELCOME, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);
	/* A TAKEN covers at least one DELIVER. */
	sample(CP_TAKEN, &m);
	m.count = 0;
	n = cp_encode(buf, sizeof(buf), &m);
	ck_assert_int_eq(decode_exact(CP_TAKEN, buf + CP_HDR_LEN, n - CP_HDR_LEN, &out, &copy), -EBADMSG);
	free(copy);

	/* The type comes from the header: an unknown one decodes nothing. */
	ck_assert_int_eq(decode_exact(CP_TYPE_MAX, buf, 0, &out, &copy), -EBADMSG);
	free(copy);
}
END_TEST

START_TEST(t_encode_limits)
{
	uint8_t type = (uint8_t)_i, buf[1024];
	struct cp_msg m;
	size_t need;

	sample(type, &m);
	need = cp_encode(buf, sizeof(buf), &m);
	ck_assert_uint_gt(need, 0);
	for (size_t cap = 0; cap < need; cap++)
		ck_assert_uint_eq(cp_encode(buf, cap, &m), 0);
	/* Strings without their NUL cannot be encoded. */
	memset(m.name, 'a', sizeof(m.name));
	memset(m.endpoint, 'a', sizeof(m.endpoint));
	memset(m.text, 'a', sizeof(m.text));
	if (type != CP_ACKED && type != CP_BYE && type != CP_CHALLENGE && type != CP_PROOF && type != CP_TAKEN &&
	    type != CP_SHM)
		ck_assert_uint_eq(cp_encode(buf, sizeof(buf), &m), 0);
}
END_TEST

START_TEST(t_encode_misc)
{
	uint8_t buf[256];
	struct cp_msg m;

	sample(CP_SEND, &m);
	m.payload_len = CP_MAX_BODY;
	ck_assert_uint_eq(cp_encode(buf, sizeof(buf), &m), 0);
	m.payload_len = WIRE_MAX_MSG;
	ck_assert_uint_gt(cp_encode(buf, sizeof(buf), &m), 0);
	m.type = CP_TYPE_MAX;
	ck_assert_uint_eq(cp_encode(buf, sizeof(buf), &m), 0);
	m.type = 0;
	ck_assert_uint_eq(cp_encode(buf, sizeof(buf), &m), 0);
}
END_TEST

/* What ldsd takes from a client: a HELLO before WELCOME, then a SEND of
 * WELCOME's max_msg around its longest destination. */
START_TEST(client_body_limits)
{
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION };
	uint8_t buf[CP_HDR_LEN + CP_HELLO_MAX_BODY];

	memset(m.name, 'n', WIRE_ENDPOINT_MAX);
	ck_assert_uint_eq(cp_encode(buf, sizeof(buf), &m), sizeof(buf));
	ck_assert_uint_eq(cp_client_body_max(0, 1000), CP_HELLO_MAX_BODY);
	ck_assert_uint_eq(cp_client_body_max(1, 1000), 9 + WIRE_ENDPOINT_MAX + 1000);
	ck_assert_uint_le(cp_client_body_max(1, WIRE_MAX_MSG), CP_MAX_BODY);
}
END_TEST

Suite *make_clientproto_suite(void)
{
	Suite *s = suite_create("clientproto");
	TCase *tc = tcase_create("frames");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_type_names);
	tcase_add_test(tc, client_body_limits);
	tcase_add_test(tc, t_hdr);
	tcase_add_loop_test(tc, t_round_trip, CP_HELLO, CP_TYPE_MAX);
	tcase_add_loop_test(tc, t_truncated, CP_HELLO, CP_TYPE_MAX);
	tcase_add_loop_test(tc, t_trailing, CP_HELLO, CP_TYPE_MAX);
	tcase_add_loop_test(tc, t_decode_head, CP_SEND, CP_DELIVER + 1);
	tcase_add_test(tc, t_strings);
	tcase_add_test(tc, t_fields);
	tcase_add_loop_test(tc, t_encode_limits, CP_HELLO, CP_TYPE_MAX);
	tcase_add_test(tc, t_encode_misc);
	suite_add_tcase(s, tc);
	return s;
}
