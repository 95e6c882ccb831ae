/*
 * jobconf.h - mwlaunch's job file (libconfig; docs/mwlaunch.md): the
 * application, the runtime's framework entries, and one entry per
 * cluster.  Reading validates everything and names the file, the line and
 * the setting of the first problem.  No processes here: unit-sized.
 */
#ifndef MWLAUNCH_JOBCONF_H
#define MWLAUNCH_JOBCONF_H

#include <stdbool.h>
#include <stddef.h>

#define JOB_MAX_CLUSTERS 16
#define JOB_MAX_ARGS 64
#define JOB_ID_LEN 16
/* The main CM's endpoint, MAIN/cm-REMOTE-ID, fits WIRE_ENDPOINT_MAX (127):
 * the two cluster names together take at most 127 - 21 bytes. */
#define JOB_CM_NAMES_MAX 106

struct job_cluster {
	char name[64];
	bool main;
	char hosts[1024];          /* -H list, or "" */
	char hostfile[1024];       /* --hostfile, or "" */
	char cpus[256];            /* the CPUs its ranks run on (taskset -c list), "" = any */
	char worker_cpus[256];     /* ... its workers, "" = cpus */
	unsigned workers;
	bool gateway;              /* start = "gateway": its gateway runs its mpirun */
	char socket[1024];         /* its gateway's client socket; through a gateway: where
				    * its ranks find it there, "" = the gateway's own */
	unsigned grain;            /* remote: fine tasks per inter-cluster task */
	unsigned prefetch;         /* remote: its main-side CM's queue depth */
	double prefetch_mib;       /* remote: task MiB its main-side CM puts on the WAN at once (0 = no limit) */
	double deadline;           /* remote: longest silence before its tasks go elsewhere, s */
	double lease;              /* remote: longest silence of the main side before the cluster ends itself, s */
	double cache_mib;          /* remote: its sub-master's data cache, MiB (0 = none) */
	/* Not from the file: what the model predicts for this cluster (the
	 * main one: for the job), shown by its master or sub-master; 0 = none. */
	double predict_best, predict_worst;
	/* Not from the file: its tasks in a calibration run (--benchmark). */
	long calib_tasks;
};

struct job {
	char path[1024];
	char program[1024];
	char *args[JOB_MAX_ARGS + 1];
	int nargs;
	char framework[8192];      /* the framework entries as libconfig text */
	char mpirun[1024];
	char *mpirun_args[JOB_MAX_ARGS + 1];
	int nmpirun_args;
	double timeout;            /* whole job, s */
	double link_timeout;       /* CMs must reach each other by then, s */
	bool continue_on_remote_failure;
	bool continue_on_worker_failure; /* the main cluster's mpirun with --enable-recovery, its ranks
					    with MWL_WORKER_FAILURE=continue */
	char model[1024];          /* the model file (docs/model.md), relative to the job file's directory; "" = none */
	long task_limit;           /* not from the file: --benchmark's calibration runs this many tasks; 0 = all */
	double join_wait;          /* not from the file: a calibration run's wait for every cluster to join, s */
	char id[JOB_ID_LEN + 1];   /* not from the file: this run's id, random hex (job_new_id); scopes the
				      communication managers' endpoints so that no job gets another's messages */
	struct job_cluster cl[JOB_MAX_CLUSTERS];
	unsigned ncl;
	unsigned main;             /* index of the main cluster */
};

/* 0, or -1 with why in err (file:line: setting: problem). */
int job_read(const char *path, struct job *j, char *err, size_t errlen);
/* A fresh j->id from the kernel's random source.  0, or -1 with why in err. */
int job_new_id(struct job *j, char *err, size_t errlen);
void job_free(struct job *j);

#endif
