/*
 * log.h - the one logging module of LDS (daemon, tools and tests).
 *
 * Messages go to stderr (foreground, tools) or syslog (daemon).  Modelled on
 * OpenBSD's log.c: log_warn() appends strerror(errno), log_warnx() does not;
 * fatal()/fatalx() are for start-up failures and broken invariants only.
 * Not thread-safe beyond what stdio/syslog guarantee; LDS logs from one
 * thread per process.
 */
#ifndef LDS_LOG_H
#define LDS_LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* to_stderr != 0: log to stderr with a timestamp; else openlog(ident). */
void log_init(const char *ident, int to_stderr, enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parses "error", "warn", "info", "debug"; returns -1 if unknown. */
int log_level_parse(const char *s);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
