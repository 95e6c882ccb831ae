/* mw_main.c - MPI start-up, runtime options, configuration, role
 * dispatch, MPI shutdown (or abort, so that no rank is left waiting). */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_port_mpi.h"
#include "launcher/mw_role.h"
#include "launcher/mw_run.h"

void mw_usage(FILE *out)
{
	fprintf(out,
		"runtime options (libmw, see mw(3)):\n"
		"  -c, --config FILE     runtime configuration (libconfig; default $MW_CONFIG)\n"
		"      --journal FILE    journal of joined results\n"
		"      --resume          replay the journal and run only the missing tasks\n"
		"      --json FILE       end report as JSON (- for stdout)\n"
		"      --stats-log FILE  time series, one row per statistics interval\n"
		"      --plot FILE.png   plot of tasks done and throughput (gnuplot)\n"
		"      --quiet           no progress lines and no text report\n");
}

/* Value of option o at argv[*i], as "--o VALUE" or "--o=VALUE". */
static const char *value_of(const char *o, int argc, char **argv, int *i, bool *bad)
{
	size_t n = strlen(o);

	if (strncmp(argv[*i], o, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "mw: %s needs a value\n", o);
		*bad = true;
		return NULL;
	}
	return argv[++*i];
}

/* Takes the runtime's options out of argv; the rest is the application's. */
static int parse_options(struct mw_run *r, int *argc, char **argv, const char **config)
{
	int out = 1;
	bool bad = false;

	for (int i = 1; i < *argc; i++) {
		const char *v;

		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if ((v = value_of("--config", *argc, argv, &i, &bad)) || (v = value_of("-c", *argc, argv, &i, &bad)))
			*config = v;
		else if ((v = value_of("--journal", *argc, argv, &i, &bad)))
			r->journal_path = v;
		else if ((v = value_of("--json", *argc, argv, &i, &bad)))
			r->json_path = v;
		else if ((v = value_of("--stats-log", *argc, argv, &i, &bad)))
			r->series_path = v;
		else if ((v = value_of("--plot", *argc, argv, &i, &bad)))
			r->plot_path = v;
		else if (strcmp(argv[i], "--resume") == 0)
			r->resume = true;
		else if (strcmp(argv[i], "--quiet") == 0)
			r->quiet = true;
		else if (!bad)
			argv[out++] = argv[i];
		if (bad)
			return -1;
	}
	argv[out] = NULL;
	*argc = out;
	/* --json -: standard output carries the JSON report alone; the
	 * progress lines, the text report and the application's own output
	 * go to standard error. */
	if (r->json_path != NULL && strcmp(r->json_path, "-") == 0) {
		int fd;

		fflush(stdout);
		fd = dup(STDOUT_FILENO);
		if (fd < 0 || (r->json_stdout = fdopen(fd, "w")) == NULL || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "mw: --json -: cannot set standard output aside: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int load_config(struct mw_run *r, const char *path)
{
	const char *wf = getenv("MWL_WORKER_FAILURE");
	char err[1024];

	mw_config_defaults(&r->cfg);
	if (path == NULL)
		path = getenv("MW_CONFIG");
	if (path != NULL && *path != '\0' && mw_config_load(path, &r->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "mw: %s\n", err);
		return -1;
	}
	/* mwlaunch's on_worker_failure, for the main cluster. */
	if (wf != NULL && *wf != '\0' && mw_config_failure(wf, &r->cfg.worker_continue) < 0) {
		fprintf(stderr, "mw: MWL_WORKER_FAILURE=%s: not \"abort\" or \"continue\"\n", wf);
		return -1;
	}
	if (mw_config_validate(&r->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "mw: %s\n", err);
		return -1;
	}
	return 0;
}

/* WorkerFailure = "continue": errors come back as codes, not as the job's
 * end (MPI_ERRORS_RETURN), and workers need a heartbeat thread. */
static int worker_failure_setup(const struct mw_run *r, MPI_Comm comm, int threads)
{
	if (!r->cfg.worker_continue)
		return 0;
	if (threads < MPI_THREAD_SERIALIZED) {
		fprintf(stderr, "mw: WorkerFailure = \"continue\" needs MPI_THREAD_SERIALIZED (the workers' "
			"heartbeat thread); MPI was initialized with thread level %d\n", threads);
		return -1;
	}
	if (MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
		fprintf(stderr, "mw: WorkerFailure = \"continue\": cannot set MPI_ERRORS_RETURN\n");
		return -1;
	}
	return 0;
}

/* Every rank learns every rank's role; they must make a cluster.  The
 * hub's rank (master or sub-master) in *hub, the roles in *roles. */
static int gather_roles(enum mw_role role, int rank, int size, int **roles, int *hub)
{
	int mine = (int)role;
	char err[256];

	*roles = malloc((size_t)size * sizeof(int));
	if (*roles == NULL)
		return -1;
	MPI_Allgather(&mine, 1, MPI_INT, *roles, 1, MPI_INT, MPI_COMM_WORLD);
	*hub = mw_role_check(*roles, size, err, sizeof(err));
	if (*hub < 0 && rank == 0)
		fprintf(stderr, "mw: %s\n", err);
	return *hub < 0 ? -1 : 0;
}

/* The hub talks to every other rank (a sub-master's CM first, as its
 * peer 0); every other rank talks to the hub only.  NULL when out of
 * memory (said). */
static struct mw_port *role_port(const struct mw_run *r, enum mw_role role, int rank, int size, const int *roles,
				 int hub, MPI_Comm comm)
{
	struct mw_port *port;
	int *ranks, n = 0;

	ranks = malloc((size_t)size * sizeof(int));
	if (ranks == NULL) {
		fprintf(stderr, "mw: rank %d: out of memory\n", rank);
		return NULL;
	}
	if (role == MW_ROLE_SUBMASTER)
		for (int i = 0; i < size; i++)
			if (roles[i] == MW_ROLE_CM)
				ranks[n++] = i;
	if (rank == hub) {
		for (int i = 0; i < size; i++)
			if (i != rank && (role == MW_ROLE_MASTER || roles[i] != MW_ROLE_CM))
				ranks[n++] = i;
	} else
		ranks[n++] = hub;
	port = mw_port_mpi_new(comm, ranks, (unsigned)n, r->cfg.idle_sleep_max);
	free(ranks);
	if (port == NULL)
		fprintf(stderr, "mw: rank %d: out of memory\n", rank);
	return port;
}

/* WorkerFailure = "continue": a master takes a rank that says nothing
 * for WorkerTimeout before its HELLO for dead, so the workers and CMs
 * that report to it beat from before setup(), which may take long (a
 * worker goes on beating, a CM stops at its start: mw_cm_run). */
static int beat_before_setup(const struct mw_run *r, enum mw_role role, int rank, const int *roles, int hub,
			     struct mw_port *port)
{
	int rc;

	if (!r->cfg.worker_continue || roles == NULL || rank == hub || roles[hub] != MW_ROLE_MASTER ||
	    (role != MW_ROLE_WORKER && role != MW_ROLE_CM))
		return 0;
	rc = mw_port_beat(port, 0, &(struct mw_hdr){ .type = MW_MSG_PING }, r->cfg.worker_timeout / 4);
	if (rc < 0)
		fprintf(stderr, "mw: rank %d: cannot start the heartbeat: %s\n", rank, strerror(-rc));
	return rc;
}

static int run_role(struct mw_run *r, enum mw_role role, const int *roles, int hub, struct mw_port *port)
{
	switch (role) {
	case MW_ROLE_MASTER: return mw_master_run(r, port);
	case MW_ROLE_SUBMASTER: return mw_submaster_run(r, port);
	case MW_ROLE_CM:
		/* Its own messages keep the master informed from here on. */
		mw_port_beat(port, 0, NULL, 0);
		return mw_cm_run(r, port, roles[hub] == MW_ROLE_MASTER);
	case MW_ROLE_SERIAL: return mw_serial_run(r);
	default: return mw_worker_run(r, port);
	}
}

int mw_main(int argc, char **argv, const struct mw_app *app)
{
	struct mw_run r = { .app = app, .cluster = "local" };
	const char *config = NULL, *cl = getenv("MWL_CLUSTER");
	char err[512];
	enum mw_role role;
	int rank, size, hub = 0, status, inited = 0, threads = MPI_THREAD_SINGLE, *roles = NULL;
	struct mw_port *port = NULL;
	MPI_Comm comm;

	r.t0 = mw_now();
	MPI_Initialized(&inited);
	/* Serialized threads cost Open MPI nothing, and a worker's heartbeat
	 * (WorkerFailure = "continue", read later) needs them. */
	if (!inited && MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &threads) != MPI_SUCCESS) {
		fprintf(stderr, "mw: MPI_Init failed\n");
		return 1;
	}
	if (inited)
		MPI_Query_thread(&threads);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (cl != NULL && *cl != '\0')
		r.cluster = cl;
	status = 2;
	if (app == NULL || app->size < offsetof(struct mw_app, pick) || !app->split || !app->task_pack ||
	    !app->task_run || !app->result_join) {
		fprintf(stderr, "mw: the application lacks split, task_pack, task_run or result_join\n");
		goto abort;
	}
	if (parse_options(&r, &argc, argv, &config) < 0 || load_config(&r, config) < 0)
		goto abort;
	if (mw_role_parse(getenv("MWL_ROLE"), rank, size, &role, err, sizeof(err)) < 0) {
		fprintf(stderr, "mw: rank %d: %s\n", rank, err);
		goto abort;
	}
	if (size > 1 && gather_roles(role, rank, size, &roles, &hub) < 0)
		goto abort;
	if (size == 1 && (role == MW_ROLE_SUBMASTER || role == MW_ROLE_CM)) {
		fprintf(stderr, "mw: MWL_ROLE=%s needs other ranks in its cluster\n", mw_role_names[role]);
		goto abort;
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	if (worker_failure_setup(&r, comm, threads) < 0)
		goto abort;
	if (role != MW_ROLE_SERIAL && ((port = role_port(&r, role, rank, size, roles, hub, comm)) == NULL ||
				       beat_before_setup(&r, role, rank, roles, hub, port) < 0))
		goto abort;
	r.args_hash = mw_journal_args(argc, argv);
	if (app->setup != NULL && (status = app->setup(app->ctx, argc, argv, role)) < 0) {
		status = status == -2 ? 2 : 1;
		goto abort;
	}
	status = run_role(&r, role, roles, hub, port);
	if (port != NULL)
		mw_port_close(port);
	port = NULL;
	if (app->cleanup != NULL)
		app->cleanup(app->ctx);
	if (status != 0)
		goto abort;
	free(roles);
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return 0;
abort:
	/* A rank that gives up takes the job with it: the others would
	 * wait for it forever. */
	if (port != NULL)
		mw_port_close(port);
	free(roles);
	fflush(stdout);
	fflush(stderr);
	if (size > 1)
		MPI_Abort(MPI_COMM_WORLD, status);
	MPI_Finalize();
	return status;
}
