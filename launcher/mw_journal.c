/* mw_journal.c - append-only journal of joined results; replay on resume. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "launcher/mw_journal.h"
#include "ldsd/crc32c.h"

#define MAGIC "MWJRNL2"         /* 8 bytes with its NUL */
#define MAGIC_V1 "MWJRNL1"      /* before the fingerprint */
#define HDR_LEN 32
#define REC_LEN 16
#define MAX_RECORD (1u << 30)

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void make_header(unsigned char *h, const char *app, uint64_t ntasks, uint64_t fingerprint)
{
	memcpy(h, MAGIC, 8);
	put_le(h + 8, ntasks, 8);
	put_le(h + 16, crc32c(0, app, strlen(app)), 4);
	put_le(h + 20, fingerprint, 8);
	put_le(h + 28, crc32c(0, h, 28), 4);
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : (int)got;
		got += (size_t)n;
	}
	return (int)got;
}

static int write_full(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Reads records until the end or a torn/corrupt one, which is cut off. */
static int replay(struct mw_journal *j, uint64_t ntasks, mw_journal_replay_fn fn, void *arg,
		  char *err, size_t errlen)
{
	unsigned char rec[REC_LEN];
	unsigned char *data = NULL;
	off_t good = HDR_LEN, end = lseek(j->fd, 0, SEEK_END);
	int rc = 0;

	if (end < 0 || lseek(j->fd, HDR_LEN, SEEK_SET) < 0) {
		snprintf(err, errlen, "%s: cannot seek: %s", j->path, strerror(errno));
		return -1;
	}
	for (;;) {
		uint64_t id;
		uint32_t len;
		unsigned char *p;
		int n = read_full(j->fd, rec, REC_LEN);

		if (n != REC_LEN)
			break;
		id = get_le(rec, 8);
		len = (uint32_t)get_le(rec + 8, 4);
		if (id >= ntasks || len > MAX_RECORD || (off_t)(good + REC_LEN + len) > end)
			break;
		p = realloc(data, len ? len : 1);
		if (p == NULL) {
			snprintf(err, errlen, "%s: out of memory replaying %u bytes", j->path, len);
			rc = -1;
			goto out;
		}
		data = p;
		if (read_full(j->fd, data, len) != (int)len)
			break;
		if (crc32c(crc32c(0, rec, 12), data, len) != (uint32_t)get_le(rec + 12, 4))
			break;
		if (fn(arg, id, data, len) != 0) {
			snprintf(err, errlen, "%s: record %llu (task %llu) was refused by the application",
				 j->path, (unsigned long long)j->records, (unsigned long long)id);
			rc = -1;
			goto out;
		}
		j->records++;
		good += REC_LEN + len;
	}
	j->torn = (uint64_t)(end - good);
	if ((j->torn > 0 && ftruncate(j->fd, good) < 0) || lseek(j->fd, good, SEEK_SET) < 0) {
		snprintf(err, errlen, "%s: cannot cut the torn tail: %s", j->path, strerror(errno));
		rc = -1;
	}
out:
	free(data);
	return rc;
}

int mw_journal_open(struct mw_journal *j, const char *path, const char *app, uint64_t ntasks,
		    uint64_t fingerprint, bool resume, bool sync, mw_journal_replay_fn fn, void *arg,
		    char *err, size_t errlen)
{
	unsigned char want[HDR_LEN], have[HDR_LEN];

	memset(j, 0, sizeof(*j));
	j->path = path;
	j->sync = sync;
	make_header(want, app, ntasks, fingerprint);
	j->fd = open(path, resume ? O_RDWR : O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (j->fd < 0) {
		snprintf(err, errlen, "%s: cannot open the journal: %s%s", path, strerror(errno),
			 resume && errno == ENOENT ? " (nothing to resume; run without --resume)" : "");
		return -1;
	}
	if (!resume) {
		struct iovec iov = { want, HDR_LEN };

		if (write_full(j->fd, &iov, 1) < 0) {
			snprintf(err, errlen, "%s: cannot write the journal: %s", path, strerror(errno));
			goto fail;
		}
		return 0;
	}
	if (read_full(j->fd, have, HDR_LEN) >= 8 && memcmp(have, MAGIC_V1, 8) == 0) {
		snprintf(err, errlen, "%s: journal of an older libmw, which kept no fingerprint of the job: it cannot "
			 "say whether this is the same job; run without --resume", path);
		goto fail;
	}
	if (memcmp(have, MAGIC, 8) != 0 || crc32c(0, have, 28) != (uint32_t)get_le(have + 28, 4)) {
		snprintf(err, errlen, "%s: not a master-worker journal (bad header)", path);
		goto fail;
	}
	if (memcmp(have + 8, want + 8, 12) != 0) {
		snprintf(err, errlen, "%s: journal of another problem (%llu tasks or another application; this run has %llu tasks of %s)",
			 path, (unsigned long long)get_le(have + 8, 8), (unsigned long long)ntasks, app);
		goto fail;
	}
	if (memcmp(have + 20, want + 20, 8) != 0) {
		snprintf(err, errlen, "%s: journal of the same application and task count but another job: its "
			 "arguments or inputs differ (fingerprint %016llx, this run %016llx), so its results would be "
			 "wrong here; resume with the first run's arguments, or run without --resume", path,
			 (unsigned long long)get_le(have + 20, 8), (unsigned long long)fingerprint);
		goto fail;
	}
	if (replay(j, ntasks, fn, arg, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	close(j->fd);
	j->fd = -1;
	return -1;
}

/* FNV-1a, 64 bits. */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

uint64_t mw_journal_args(int argc, char *const argv[])
{
	uint64_t h = FNV_OFFSET;

	/* argv[0] left out (the same program by another path); each argument
	 * with its NUL, so that ("ab", "c") and ("a", "bc") differ. */
	for (int i = 1; i < argc; i++)
		for (const char *s = argv[i];; s++) {
			h = (h ^ (unsigned char)*s) * FNV_PRIME;
			if (*s == '\0')
				break;
		}
	return h;
}

uint64_t mw_journal_fingerprint(uint64_t args, uint64_t app_value)
{
	for (int k = 0; k < 8; k++)
		args = (args ^ ((app_value >> (8 * k)) & 0xff)) * FNV_PRIME;
	return args;
}

int mw_journal_append(struct mw_journal *j, uint64_t id, const void *data, size_t len)
{
	unsigned char rec[REC_LEN];
	struct iovec iov[2] = { { rec, REC_LEN }, { (void *)data, len } };
	int rc;

	if (len > MAX_RECORD)
		return -EFBIG;
	put_le(rec, id, 8);
	put_le(rec + 8, len, 4);
	put_le(rec + 12, crc32c(crc32c(0, rec, 12), data, len), 4);
	rc = write_full(j->fd, iov, 2);
	if (rc == 0 && j->sync && fdatasync(j->fd) < 0)
		rc = -errno;
	if (rc == 0)
		j->records++;
	return rc;
}

void mw_journal_close(struct mw_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}
