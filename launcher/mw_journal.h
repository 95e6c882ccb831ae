/*
 * mw_journal.h - the master's journal of joined results, for --resume.
 *
 * A file of one header (magic, task count, checksum of the application
 * name, the job's fingerprint) and one record per joined task: id,
 * length, CRC-32C, result bytes.
 * The results themselves are kept because the application's joined state
 * lives in memory and dies with a crash: resuming replays them through
 * result_join and then runs only the tasks missing from the journal.
 * Records are written with one write() each, so a killed master loses at
 * most the record being written; a torn tail is cut off on resume.
 * No MPI here: unit-tested.
 */
#ifndef MW_JOURNAL_H
#define MW_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mw_journal {
	int fd;
	bool sync;              /* fdatasync after every record */
	uint64_t records;       /* in the file, replayed ones included */
	uint64_t torn;          /* bytes cut off a torn tail on resume */
	const char *path;
};

/* Called for every record on resume; non-zero stops the replay. */
typedef int (*mw_journal_replay_fn)(void *arg, uint64_t id, const void *data, size_t len);

/* Creates path (truncating it) or, with resume, checks that it belongs to
 * this application, task count and job fingerprint (mw_journal_fingerprint)
 * and replays it.  0, or -1 with a message naming the file and what is
 * wrong in err. */
int mw_journal_open(struct mw_journal *j, const char *path, const char *app, uint64_t ntasks,
		    uint64_t fingerprint, bool resume, bool sync, mw_journal_replay_fn fn, void *arg,
		    char *err, size_t errlen);

/* The fingerprint of a job: mw_journal_args() of its arguments (before
 * the application's setup() may reorder them), then what the application
 * adds (its fingerprint callback's value, 0 without one). */
uint64_t mw_journal_args(int argc, char *const argv[]);
uint64_t mw_journal_fingerprint(uint64_t args, uint64_t app_value);

/* 0, or -errno (a full disk: the caller stops rather than lose results). */
int mw_journal_append(struct mw_journal *j, uint64_t id, const void *data, size_t len);

void mw_journal_close(struct mw_journal *j);

#endif
