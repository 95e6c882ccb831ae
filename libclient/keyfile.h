/*
 * keyfile.h - reading a pre-shared key file: a peer's key_file, ldsd's
 * clients.tcp_key_file, and a TCP client's LDS_KEY_FILE.  Shared by ldsd and
 * liblds so that both ends of a key refuse the same files.
 */
#ifndef LDS_KEYFILE_H
#define LDS_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#define KEYFILE_MIN 16     /* bytes of secret */
#define KEYFILE_MAX 1024

/* Reads path into key: a regular file, mode 0600 or stricter (a key others
 * can read is no secret), KEYFILE_MIN..KEYFILE_MAX bytes, one trailing
 * newline ignored.  Returns 0, or -1 with the reason, naming the file and
 * what to do, in err. */
int keyfile_read(const char *path, uint8_t key[KEYFILE_MAX], size_t *len, char *err, size_t errlen);

#endif
