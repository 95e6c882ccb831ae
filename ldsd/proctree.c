/* proctree.c - signals a process's descendants; see proctree.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctree.h"

struct proc {
	pid_t pid, ppid;
};

/* The parent of pid, from the field after the command name, which may
 * itself hold spaces and parentheses: hence the last ')'.  -1 for a
 * zombie: it is dead already, and its children went to a reaper. */
static pid_t parent_of(const char *pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || strlen(p) < 5 || p[2] == 'Z')
		return -1;
	return (pid_t)strtol(p + 4, NULL, 10);   /* ") S PPID" */
}

/* Every process and its parent. */
static int proc_list(struct proc **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct proc *v = NULL;
	size_t cap = 0;
	struct dirent *e;

	*n = 0;
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		pid_t pp;

		if (!isdigit((unsigned char)e->d_name[0]) || (pp = parent_of(e->d_name)) < 0)
			continue;
		if (*n == cap) {
			struct proc *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (nv == NULL) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = (struct proc){ (pid_t)strtol(e->d_name, NULL, 10), pp };
	}
	closedir(d);
	*out = v;
	return 0;
}

int proctree_signal(pid_t root, int sig)
{
	struct proc *v = NULL;
	size_t n, done = 0;
	pid_t *todo;
	size_t ntodo = 0;
	int r = proc_list(&v, &n), count = 0;

	if (r < 0)
		return r;
	todo = malloc((n + 1) * sizeof(*todo));
	if (todo == NULL) {
		free(v);
		return -ENOMEM;
	}
	/* Breadth first from root: each process is some entry's child at
	 * most once, so todo never holds more than n + 1. */
	todo[ntodo++] = root;
	while (done < ntodo) {
		pid_t parent = todo[done++];

		for (size_t i = 0; i < n; i++)
			if (v[i].ppid == parent && v[i].pid != root && ntodo <= n) {
				todo[ntodo++] = v[i].pid;
				if (kill(v[i].pid, sig) == 0)
					count++;
			}
	}
	free(todo);
	free(v);
	return count;
}
