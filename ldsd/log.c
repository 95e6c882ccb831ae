/* log.c - stderr or syslog logging; see log.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "log.h"

static int log_stderr = 1;
/* stderr is systemd's journal stream: "<N>" prefixes carry the priority,
 * and the journal adds its own time stamps. */
static int log_journal;
static enum log_level log_level = LOG_LVL_INFO;
static const char *log_ident = "lds";

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const int level_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

/* $JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; it
 * counts only while stderr is still that stream. */
static int on_journal_stream(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js != NULL && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, int to_stderr, enum log_level level)
{
	log_ident = ident;
	log_stderr = to_stderr;
	log_level = level;
	if (!to_stderr)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	else
		log_journal = on_journal_stream();
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

int log_level_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i;
	return -1;
}

static void log_vwrite(enum log_level lvl, const char *fmt, va_list ap, int append_errno)
{
	char msg[2048];
	int saved = errno;
	int n;

	if (lvl > log_level)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (append_errno && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(saved));
	if (log_journal) {
		fprintf(stderr, "<%d>%s\n", level_prio[lvl], msg);
	} else if (log_stderr) {
		struct timeval tv;
		struct tm tm;
		char ts[32];

		gettimeofday(&tv, NULL);
		localtime_r(&tv.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s[%s] %s\n", ts, (long)(tv.tv_usec / 1000), log_ident,
			level_names[lvl], msg);
	} else {
		syslog(level_prio[lvl], "%s", msg);
	}
	errno = saved;
}

#define LOG_FN(fn, lvl, with_errno)                    \
	void fn(const char *fmt, ...)                  \
	{                                              \
		va_list ap;                            \
		va_start(ap, fmt);                     \
		log_vwrite(lvl, fmt, ap, with_errno);  \
		va_end(ap);                            \
	}

LOG_FN(log_warn, LOG_LVL_WARN, 1)
LOG_FN(log_warnx, LOG_LVL_WARN, 0)
LOG_FN(log_info, LOG_LVL_INFO, 0)
LOG_FN(log_debug, LOG_LVL_DEBUG, 0)

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERR, fmt, ap, 1);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERR, fmt, ap, 0);
	va_end(ap);
	exit(1);
}
