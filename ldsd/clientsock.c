/* clientsock.c - payloads read straight from a client's socket into
 * their messages; see client.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "client.h"
#include "log.h"

/* Reads iov[0..n) whole from fd, the first region from offset skip on. */
static int read_regions(int fd, const struct iovec *iov, int n, size_t skip)
{
	struct iovec v[IOV_MAX];

	while (n > 0) {
		int m = n < IOV_MAX ? n : IOV_MAX;
		ssize_t r;

		memcpy(v, iov, (size_t)m * sizeof(*v));
		v[0].iov_base = (uint8_t *)v[0].iov_base + skip;
		v[0].iov_len -= skip;
		r = readv(fd, v, m);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		for (skip += (size_t)r; n > 0 && skip >= iov[0].iov_len; iov++, n--)
			skip -= iov[0].iov_len;
	}
	return 0;
}

int clientsock_fill_payload(void *arg, struct sendbuf *sb, const struct iovec *iov, int n)
{
	struct payload_src *src = arg;
	size_t skip = 0;
	int k, r;

	for (k = 0; k < n && src->have_len > 0; k++) {
		size_t take = iov[k].iov_len < src->have_len ? iov[k].iov_len : src->have_len;

		memcpy(iov[k].iov_base, src->have, take);
		src->have += take;
		src->have_len -= take;
		if (take < iov[k].iov_len) {
			skip = take;
			break;
		}
	}
	if (k == n)
		return 0;
	if (src->ring != NULL)
		r = clientshm_fill(src->ring, sb, iov + k, n - k, skip);
	else
		r = src->fd < 0 ? -EIO : read_regions(src->fd, iov + k, n - k, skip);
	if (r < 0)
		src->err = -r;
	return r;
}
