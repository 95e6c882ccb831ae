/*
 * service.h - how ldsd runs as a system service: detaching from the
 * terminal, the pid file, and systemd's readiness protocol.
 *
 * Detaching happens before anything that needs the final process: a
 * signalfd's readiness is tied to the process that created it, and an
 * epoll instance in a child does not hear the signals queued for the
 * child when its parent made the signalfd.  So service_detach() forks
 * first; the parent waits on a pipe until the child reports the outcome
 * of its start-up (service_ready() or its exit), and exits with it, so
 * that `ldsd -c FILE` still fails with the start-up's status.
 */
#ifndef LDS_SERVICE_H
#define LDS_SERVICE_H

/* Forks.  In the parent: waits for the child's report and exits (0 when
 * the child called service_ready(), else the child's exit status, or 1).
 * In the child: returns a descriptor for service_ready(), or -errno (the
 * fork or pipe failed; the caller is still the only process). */
int service_detach(void);

/* Start-up is complete: tells the waiting parent (fd from
 * service_detach(), or -1 in the foreground), points stdin, stdout and
 * stderr at /dev/null when detached, and sends READY=1 to systemd when
 * NOTIFY_SOCKET is set. */
void service_ready(int fd);

/* Sends STOPPING=1 to systemd when NOTIFY_SOCKET is set. */
void service_stopping(void);

/* Creates and locks path holding this process's pid.  Returns an open
 * descriptor (keep it until exit), or -errno: -EWOULDBLOCK when another
 * process holds the lock (another ldsd runs with this pid file). */
int service_pidfile_open(const char *path);
/* Removes the pid file and closes fd; a no-op for fd < 0. */
void service_pidfile_close(const char *path, int fd);

#endif
