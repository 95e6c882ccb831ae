/* suites.h - one make_<area>_suite() per tests/unit/check_<area>.c. */
#ifndef LDS_TEST_SUITES_H
#define LDS_TEST_SUITES_H

#include <check.h>

Suite *make_wire_suite(void);
Suite *make_bytebuf_suite(void);
Suite *make_config_suite(void);
Suite *make_clientproto_suite(void);
Suite *make_lds_suite(void);
Suite *make_lds_send_suite(void);
Suite *make_lds_reconnect_suite(void);
Suite *make_thesis_suite(void);
Suite *make_idset_suite(void);
Suite *make_dedup_suite(void);
Suite *make_sendbuf_suite(void);
Suite *make_sendbuf_send_suite(void);
Suite *make_sendbuf_ack_suite(void);
Suite *make_recvbuf_suite(void);
Suite *make_recvbuf_ack_suite(void);
Suite *make_evloop_suite(void);
Suite *make_autostreams_suite(void);
Suite *make_model_suite(void);
Suite *make_mw_sched_suite(void);
Suite *make_mw_journal_suite(void);
Suite *make_mw_misc_suite(void);
Suite *make_execmsg_suite(void);
Suite *make_jobexec_suite(void);
Suite *make_ldsbench_suite(void);
Suite *make_mw_cache_suite(void);
Suite *make_calstat_suite(void);
Suite *make_mw_calib_suite(void);
Suite *make_probe_suite(void);
Suite *make_admission_suite(void);
Suite *make_seal_suite(void);
Suite *make_resolve_suite(void);
Suite *make_endpoint_suite(void);
Suite *make_jobend_suite(void);
Suite *make_transport_suite(void);
Suite *make_conformance_suite(void);
Suite *make_handshake_suite(void);
Suite *make_link_suite(void);
Suite *make_link_session_suite(void);
Suite *make_udp_proto_suite(void);
Suite *make_udp_cc_suite(void);
Suite *make_udp_e2e_suite(void);
Suite *make_rdma_pool_suite(void);
Suite *make_rdma_credit_suite(void);
Suite *make_rdma_chunk_suite(void);
Suite *make_rdma_sendq_suite(void);
Suite *make_rdma_recvq_suite(void);
Suite *make_rdma_kind_suite(void);
Suite *make_rdma_relay_suite(void);
Suite *make_shmring_suite(void);
Suite *make_wanemu_path_suite(void);

#endif
