/* sockio.h - what the security tests' attackers share: whole writes. */
#ifndef LDS_TESTS_SOCKIO_H
#define LDS_TESTS_SOCKIO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* Writes all n bytes of buf to the blocking fd: 0, or -1 (errno set). */
static inline int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

#endif
