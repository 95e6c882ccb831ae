/* keyfile.c - reading a pre-shared key file; see keyfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "keyfile.h"

int keyfile_read(const char *path, uint8_t key[KEYFILE_MAX], size_t *len_out, char *err, size_t errlen)
{
	uint8_t buf[KEYFILE_MAX + 2];   /* room to see that a key is too long */
	size_t len = 0;
	struct stat st;
	int fd, rc = -1;
	ssize_t r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s is accessible by group or others (mode %04o): chmod 600 %s", path,
			 (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	while (len < sizeof(buf) && (r = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			goto out;
		}
		len += (size_t)r;
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len < KEYFILE_MIN || len > KEYFILE_MAX) {
		snprintf(err, errlen, "%s holds %s%zu bytes of key; it must hold %d..%d "
			 "(make one with: head -c 32 /dev/urandom | base64 > FILE)",
			 path, len > KEYFILE_MAX ? "more than " : "", len > KEYFILE_MAX ? (size_t)KEYFILE_MAX : len,
			 KEYFILE_MIN, KEYFILE_MAX);
		goto out;
	}
	memcpy(key, buf, len);
	*len_out = len;
	rc = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rc;
}
