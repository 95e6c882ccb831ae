/*
 * keycheck.h - liblds's side of the key check a connection to clients.tcp
 * makes before HELLO (clientauth.h): the key comes from the file named by
 * LDS_KEY_FILE, as ldsd's from clients.tcp_key_file.
 */
#ifndef LDS_KEYCHECK_H
#define LDS_KEYCHECK_H

#include <stdint.h>

#define LDS_KEY_ENV "LDS_KEY_FILE"

/* Answers ldsd's CHALLENGE on the connected nonblocking socket fd and
 * checks its PROOF, until deadline_ns (clock_now_ns(); INT64_MAX: none).
 * Returns 0, -ENOKEY (LDS_KEY_FILE unset or its file unusable),
 * -EKEYREJECTED (ldsd refused the key, or could not prove it holds it),
 * -ETIMEDOUT, -EPROTO, or another -errno. */
int keycheck_client(int fd, int64_t deadline_ns);

#endif
