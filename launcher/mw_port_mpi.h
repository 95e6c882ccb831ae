/*
 * mw_port_mpi.h - the port over MPI point-to-point within one cluster.
 *
 * Idle waiting: Open MPI's blocking calls spin, and on a machine with
 * fewer cores than ranks a spinning master or worker takes the CPU a
 * worker computes on.  wait() therefore polls with MPI_Iprobe/MPI_Testsome
 * for a short spin and then naps for a growing interval, never longer than
 * idle_sleep_max (0: spin and yield only).  A busy loop never naps.
 */
#ifndef MW_PORT_MPI_H
#define MW_PORT_MPI_H

#include <mpi.h>

#include "launcher/mw_port.h"

/* A port from this rank to the given ranks of comm (peer i = ranks[i]).
 * NULL when out of memory. */
struct mw_port *mw_port_mpi_new(MPI_Comm comm, const int *ranks, unsigned n, double idle_sleep_max);

#endif
