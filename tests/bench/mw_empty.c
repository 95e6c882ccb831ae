/* mw_empty - empty tasks through the runtime: the dispatch-rate benchmark
 * (tests/bench/bench-mw.sh).  mw_empty [-t TASKS]: tasks carry 8 bytes,
 * do nothing and return 8 bytes; finish() checks every id was joined once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

struct empty {
	uint64_t n;
	unsigned char *seen;
};

static int e_setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	struct empty *e = ctx;

	e->n = 100000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			e->n = strtoull(argv[++i], NULL, 10);
		else {
			if (role != MW_ROLE_WORKER) {
				fprintf(stderr, "usage: mw_empty [-t TASKS] [runtime options]\n");
				mw_usage(stderr);
			}
			return -2;
		}
	}
	if (role != MW_ROLE_WORKER && (e->seen = calloc(e->n ? e->n : 1, 1)) == NULL)
		return -1;
	return 0;
}

static int e_split(void *ctx, uint64_t *n)
{
	*n = ((struct empty *)ctx)->n;
	return 0;
}

static int e_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	(void)ctx;
	return mw_buf_put(out, &id, sizeof(id));
}

static int e_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	(void)ctx;
	return mw_buf_put(out, task, len);
}

static int e_join(void *ctx, uint64_t id, const void *res, size_t len)
{
	struct empty *e = ctx;
	uint64_t echo;

	if (len != sizeof(echo))
		return -1;
	memcpy(&echo, res, sizeof(echo));
	if (echo != id || e->seen[id]++)
		return -1;
	return 0;
}

static int e_finish(void *ctx)
{
	struct empty *e = ctx;

	for (uint64_t i = 0; i < e->n; i++)
		if (e->seen[i] != 1) {
			fprintf(stderr, "mw_empty: task %llu joined %u times\n", (unsigned long long)i, e->seen[i]);
			return -1;
		}
	return 0;
}

static void e_cleanup(void *ctx)
{
	free(((struct empty *)ctx)->seen);
}

int main(int argc, char **argv)
{
	static struct empty e;
	const struct mw_app app = {
		.size = sizeof(app), .name = "empty", .ctx = &e,
		.setup = e_setup, .split = e_split, .task_pack = e_pack, .task_run = e_run,
		.result_join = e_join, .finish = e_finish, .cleanup = e_cleanup,
	};

	return mw_main(argc, argv, &app);
}
