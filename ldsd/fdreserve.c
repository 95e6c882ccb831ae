/* fdreserve.c - a descriptor kept for listeners out of them; see fdreserve.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fdreserve.h"

static int reserve = -1;

int fdreserve_init(void)
{
	if (reserve < 0)
		reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return reserve < 0 ? -errno : 0;
}

void fdreserve_fini(void)
{
	if (reserve >= 0)
		close(reserve);
	reserve = -1;
}

int fdreserve_drop(int listen_fd, int err)
{
	int fd;

	if ((err != EMFILE && err != ENFILE) || reserve < 0)
		return 0;
	close(reserve);
	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 1;
}
