/* check_main.c - runs every unit-test suite; exit status 0 only if all pass. */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(make_wire_suite());
	int failed;

	srunner_add_suite(sr, make_config_suite());
	srunner_add_suite(sr, make_clientproto_suite());
	srunner_add_suite(sr, make_lds_suite());
	srunner_add_suite(sr, make_idset_suite());
	srunner_add_suite(sr, make_dedup_suite());
	srunner_add_suite(sr, make_sendbuf_suite());
	srunner_add_suite(sr, make_recvbuf_suite());
	srunner_add_suite(sr, make_evloop_suite());
	srunner_add_suite(sr, make_autostreams_suite());
	srunner_add_suite(sr, make_model_suite());
	srunner_add_suite(sr, make_mw_sched_suite());
	srunner_add_suite(sr, make_mw_journal_suite());
	srunner_add_suite(sr, make_mw_misc_suite());
	srunner_add_suite(sr, make_execmsg_suite());
	srunner_add_suite(sr, make_jobexec_suite());
	srunner_add_suite(sr, make_ldsbench_suite());
	srunner_add_suite(sr, make_mw_cache_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
