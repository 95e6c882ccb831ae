/*
 * mw_proto.h - the runtime's messages between master and workers.
 *
 * Every message is one MPI message of MPI_BYTE on the runtime's own
 * communicator: a 24-byte header, little endian, then len payload bytes.
 *
 *   HELLO   worker -> master  aux = prefetch depth wanted; payload = host
 *   TASK    master -> worker  id; payload = the serialized task
 *   RESULT  worker -> master  id; aux = ns spent in task_run; payload = result
 *   STOP    master -> worker  no more tasks; drop what is queued
 *   BYE     worker -> master  aux = its execution time in ns; last message
 *   FAIL    worker -> master  id; payload = why a callback failed
 *
 * Pure encode/decode with bounds checks: unit-tested.
 */
#ifndef MW_PROTO_H
#define MW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MW_HDR_LEN 24

enum mw_msg_type {
	MW_MSG_HELLO = 1,
	MW_MSG_TASK,
	MW_MSG_RESULT,
	MW_MSG_STOP,
	MW_MSG_BYE,
	MW_MSG_FAIL,
	MW_MSG_MAX
};

struct mw_hdr {
	uint32_t type;
	uint32_t len;           /* payload bytes after the header */
	uint64_t id;
	uint64_t aux;
};

extern const char *const mw_msg_names[MW_MSG_MAX];

void mw_hdr_encode(unsigned char out[MW_HDR_LEN], const struct mw_hdr *h);

/* Decodes a whole message of n bytes.  0, or -EBADMSG when it is shorter
 * than a header, of an unknown type, or its length disagrees with n. */
int mw_hdr_decode(const unsigned char *msg, size_t n, struct mw_hdr *h);

#endif
