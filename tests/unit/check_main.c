/* check_main.c - runs every unit-test suite; exit status 0 only if all pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "suites.h"

static Suite *(*const suites[])(void) = {
	make_wire_suite,      make_config_suite,  make_clientproto_suite, make_lds_suite,
	make_lds_send_suite,  make_lds_reconnect_suite, make_thesis_suite,
	make_idset_suite,     make_dedup_suite,   make_sendbuf_suite,     make_recvbuf_suite,
	make_sendbuf_send_suite, make_sendbuf_ack_suite, make_recvbuf_ack_suite,
	make_evloop_suite,    make_autostreams_suite, make_model_suite,   make_mw_sched_suite,
	make_mw_journal_suite, make_mw_misc_suite, make_execmsg_suite,    make_jobexec_suite,
	make_ldsbench_suite,  make_mw_cache_suite, make_calstat_suite,    make_probe_suite,
	make_admission_suite,
	make_seal_suite,
	make_resolve_suite,
	make_mw_calib_suite,
	make_endpoint_suite,
	make_jobend_suite,
	make_transport_suite,
	make_conformance_suite,
	make_handshake_suite,
	make_link_suite,
	make_linkturn_suite,
	make_link_session_suite,
	make_udp_proto_suite,
	make_udp_cc_suite,
	make_udp_e2e_suite,
	make_rdma_pool_suite, make_rdma_credit_suite, make_rdma_chunk_suite, make_rdma_sendq_suite,
	make_rdma_recvq_suite, make_rdma_kind_suite, make_rdma_relay_suite, make_rdma_wspace_suite, make_tploop_suite,
	make_shmring_suite,
	make_bytebuf_suite,
	make_wanemu_path_suite,
	make_wanemu_gso_suite,
};

struct tally {
	int run, failures, errors;
};

/* Runs one suite and prints its failed tests; the counts go to fd. */
static int run_suite(Suite *(*make)(void), int fd)
{
	SRunner *sr = srunner_create(make());
	struct tally t = { 0, 0, 0 };
	TestResult **fails;

	srunner_run_all(sr, CK_SILENT);
	t.run = srunner_ntests_run(sr);
	fails = srunner_failures(sr);
	for (int i = 0; fails != NULL && i < srunner_ntests_failed(sr); i++) {
		int error = tr_rtype(fails[i]) == CK_ERROR;

		printf("%s:%d:%c:%s: %s\n", tr_lfile(fails[i]), tr_lno(fails[i]), error ? 'E' : 'F',
		       tr_tcname(fails[i]), tr_msg(fails[i]));
		t.errors += error;
		t.failures += !error;
	}
	free(fails);
	fflush(stdout);
	srunner_free(sr);
	return write(fd, &t, sizeof(t)) == (ssize_t)sizeof(t) ? 0 : -1;
}

/*
 * Each suite runs in a process of its own.  Check forks once per test, and
 * under LeakSanitizer every one of those children scans what the process
 * running the tests accumulated before it: suites run one after another in
 * one process made the sanitizer run four times slower than all of them
 * run apart.
 */
int main(void)
{
	struct tally sum = { 0, 0, 0 };
	int lost = 0;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		struct tally t;
		int fds[2], status, got;
		pid_t pid;

		fflush(stdout);
		if (pipe(fds) < 0 || (pid = fork()) < 0) {
			perror("check_main: cannot start a suite");
			return EXIT_FAILURE;
		}
		if (pid == 0) {
			close(fds[0]);
			_exit(run_suite(suites[i], fds[1]) == 0 ? 0 : 1);
		}
		close(fds[1]);
		got = read(fds[0], &t, sizeof(t)) == (ssize_t)sizeof(t);
		if (!got)
			t = (struct tally){ 0, 0, 0 };
		close(fds[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !got) {
			fprintf(stderr, "check_main: suite %zu ended without its results (status 0x%x)\n", i, status);
			lost++;
		}
		sum.run += t.run;
		sum.failures += t.failures;
		sum.errors += t.errors;
	}
	printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
	       sum.run ? 100 * (sum.run - sum.failures - sum.errors) / sum.run : 100, sum.run, sum.failures,
	       sum.errors);
	return sum.failures == 0 && sum.errors == 0 && lost == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
