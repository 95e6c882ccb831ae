/* clock.h - the monotonic clock every LDS timer and statistic uses. */
#ifndef LDS_CLOCK_H
#define LDS_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Seconds since the Unix epoch, for log and JSON timestamps. */
static inline double clock_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* wall_s (seconds since the epoch) as ISO 8601 in UTC with milliseconds,
 * "2026-11-27T11:13:02.123Z", into buf (at least 25 bytes). */
static inline const char *clock_iso8601(double wall_s, char *buf, size_t len)
{
	time_t t = (time_t)wall_s;
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03dZ", (int)((wall_s - (double)t) * 1000));
	return buf;
}

#endif
