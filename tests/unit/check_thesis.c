/*
 * check_thesis.c - the thesis API (libclient/thesis.c) against a fake ldsd
 * (fakeldsd.h), and its configuration files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakeldsd.h"
#include "suites.h"

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Figure A-5, verbatim, plus the socket of the fake daemon. */
static void write_fig_a5(const struct fake *f, char *path, size_t cap)
{
	char text[512];

	snprintf(path, cap, "%s/LDN_client.ini", f->dir);
	snprintf(text, sizeof(text),
		 "Server = 0\n"
		 "ServerHostName = infoquir2\n"
		 "BlockSize = 40000\n"
		 "SendMemory = 1200000\n"
		 "RecvMemory = 1200000\n"
		 "SenderPort = 60000\n"
		 "ReceiverPort = 60100\n"
		 "Socket = %s\n",
		 f->path);
	write_file(path, text);
}

static void s_thesis_client(struct fake *f)
{
	static const struct {
		const char *src, *data;
	} deliv[] = {
		{ "infoquir2/lds-server", "abc" }, { "clusterZ/stranger", "XXXX" }, { "infoquir2/lds-server", "defg" },
		{ "infoquir2/lds-server", "" },    { "infoquir2/lds-server", "hij" },
	};
	char got[16] = "";

	if (fk_welcome(f, "clusterA") < 0)
		return;
	FK_CHECK(f, strcmp(f->hello_name, "lds-client") == 0);
	/* max_msg 4: LDS_Send's 10 bytes come as three messages. */
	for (int i = 0; i < 3; i++) {
		struct fk_frame fr;
		int ok;

		if (fk_read_frame(f, &fr, CP_SEND) < 0) {
			free(fr.body);
			return;
		}
		ok = strcmp(fr.m.name, "infoquir2/lds-server") == 0 && fr.m.payload_len <= 4;
		if (ok)
			strncat(got, (const char *)fr.m.payload, fr.m.payload_len);
		free(fr.body);
		FK_CHECK(f, ok);
	}
	FK_CHECK(f, strcmp(got, "ping!ping!") == 0);
	for (size_t i = 0; i < sizeof(deliv) / sizeof(deliv[0]); i++)
		if (fk_deliver(f, deliv[i].src, i + 1, deliv[i].data, strlen(deliv[i].data)) < 0)
			return;
	if (fk_acked(f, 1, 3) == 0)
		fk_bye(f);
}

START_TEST(t_thesis_client)
{
	struct fake f = { .max_msg = 4 };
	char path[128], buf[8];

	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Recv(buf, 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Finalize(), LDS_ESTATE);
	ck_assert_int_eq(LDS_Rank(), LDS_ESTATE);
	ck_assert_int_eq(LDSM_SetConfigFile("/nonexistent/LDN_Service.ini"), LDS_ECONFIG);

	fake_start(&f, s_thesis_client);
	write_fig_a5(&f, path, sizeof(path));
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_ESTATE);
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_ESTATE);
	ck_assert_int_eq(LDS_Rank(), 0);
	ck_assert_int_eq(LDS_Send("ping!ping!", 10), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 4), LDS_OK);
	ck_assert_mem_eq(buf, "abcd", 4);
	ck_assert_int_eq(LDS_Recv(buf, 0), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 6), LDS_OK);
	ck_assert_mem_eq(buf, "efghij", 6);
	ck_assert_int_eq(LDS_Recv(buf, -1), LDS_EARG);
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Finalize(), LDS_ESTATE);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
}
END_TEST

static void s_thesis_server(struct fake *f)
{
	struct fk_frame fr;
	int ok;

	if (fk_welcome(f, "infoquir2") < 0)
		return;
	FK_CHECK(f, strcmp(f->hello_name, "lds-server") == 0);
	if (fk_wait_go(f) < 0 || fk_deliver(f, "clusterA/lds-client", 1, "0123456789", 10) < 0)
		return;
	if (fk_read_frame(f, &fr, CP_SEND) < 0) {
		free(fr.body);
		return;
	}
	ok = strcmp(fr.m.name, "clusterA/lds-client") == 0 && fr.m.payload_len == 4 &&
	     memcmp(fr.m.payload, "pong", 4) == 0;
	free(fr.body);
	FK_CHECK(f, ok);
	/* The peer's gateway lost it: LDS_Finalize sends it again, same id. */
	if (fk_range(f, CP_LOST, 1, 1, "clusterA", "peer gateway restarted") == 0 && fk_ack_send(f, 1, "pong") == 0)
		fk_bye(f);
}

START_TEST(t_thesis_server)
{
	struct fake f = { 0 };
	char path[128], text[256], buf[16];

	fake_start(&f, s_thesis_server);
	snprintf(path, sizeof(path), "%s/server.ini", f.dir);
	snprintf(text, sizeof(text), "Server = 1\nSocket = %s\n", f.path);
	write_file(path, text);
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_OK);
	ck_assert_int_eq(LDS_Rank(), 1);
	/* A server answers whoever spoke first: nobody yet. */
	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	fake_go(&f);
	ck_assert_int_eq(LDS_Recv(buf, 10), LDS_OK);
	ck_assert_mem_eq(buf, "0123456789", 10);
	ck_assert_int_eq(LDS_Send("pong", 4), LDS_OK);
	/* The peer's gateway lost message 1, which is sent again. */
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
	ck_assert_uint_eq(f.resumes, 1);
}
END_TEST

/* The client's gateway dies after acknowledging message 1 of 2 and
 * handing over "xy"; the restarted one hands "xy" over again (the server
 * resent it) and "z", and gets message 2 again before anything new. */
static void s_thesis_restart(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_expect_send(f, 1, "abcd") < 0 || fk_expect_send(f, 2, "efgh") < 0 ||
	    fk_acked(f, 1, 1) < 0 || fk_deliver(f, "infoquir2/lds-server", 1, "xy", 2) < 0)
		return;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0 || fk_deliver(f, "infoquir2/lds-server", 1, "xy", 2) < 0 ||
	    fk_deliver(f, "infoquir2/lds-server", 2, "z", 1) < 0)
		return;
	if (fk_ack_send(f, 2, "efgh") == 0 && fk_ack_send(f, 3, "more") == 0)
		fk_bye(f);
}

START_TEST(t_thesis_gateway_restart)
{
	struct fake f = { .max_msg = 4 };
	char path[128], buf[8];

	fake_start(&f, s_thesis_restart);
	write_fig_a5(&f, path, sizeof(path));
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(1), LDS_OK);
	ck_assert_int_eq(LDS_Send("abcdefgh", 8), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 3), LDS_OK);
	ck_assert_mem_eq(buf, "xyz", 3);
	ck_assert_int_eq(LDS_Send("more", 4), LDS_OK);
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
}
END_TEST

/* Parsing succeeds iff LDS_Init gets as far as connecting, which fails:
 * the socket does not exist. */
START_TEST(t_thesis_config)
{
	static const struct {
		const char *text;
		int rc;
	} cases[] = {
		{ "Server = 1\n", LDS_ECONNECT },
		{ "  server=1 ;\n", LDS_ECONNECT },
		{ "# comment\r\n; comment\r\nSERVERHOSTNAME = \"clusterB\"   # quoted\r\n"
		  "Server = 0;\r\nBlockSize=10000\r\n\r\n",
		  LDS_ECONNECT },
		{ "Server = 0\nPeer = clusterB/srv\n", LDS_ECONNECT },
		{ "Server = 1\nEndpoint = \"my-server\"; trailing comment\n", LDS_ECONNECT },
		{ "Server = 1\nBogus = 1\n", LDS_ECONFIG },
		{ "Server = 2\n", LDS_ECONFIG },
		{ "ServerHostName = infoquir2\n", LDS_ECONFIG },
		{ "Server = 0\n", LDS_ECONFIG },
		{ "Server = 1\nServer\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = \"open\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = \"a\" b\n", LDS_ECONFIG },
		{ "Server = 1\nBlockSize = lots\n", LDS_ECONFIG },
		{ "Server = 0\nPeer = nocluster\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = two words\n", LDS_ECONFIG },
		{ "Server = 1\nSocket =\n", LDS_ECONFIG },
		{ "Server = 1\n= 1\n", LDS_ECONFIG },
	};
	char dir[] = "/tmp/ldscfgXXXXXX", path[64], text[512];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "Socket = %s/none.sock\n%s", dir, cases[i].text);
		write_file(path, text);
		ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
		ck_assert_msg(LDS_Init(4) == cases[i].rc, "case %zu: %s", i, cases[i].text);
	}
	ck_assert_int_eq(LDS_Init(0), LDS_EARG);
	ck_assert_int_eq(LDSM_SetConfigFile(NULL), LDS_EARG);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Without LDSM_SetConfigFile, LDS_Init reads LDN_Service.ini here. */
START_TEST(t_thesis_default_config)
{
	char dir[] = "/tmp/ldscfgXXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(LDS_Init(4), LDS_ECONFIG);
	write_file("LDN_Service.ini", "\xEF\xBB\xBFServer = 1\nSocket = none.sock\n");
	ck_assert_int_eq(LDS_Init(4), LDS_ECONNECT);
	ck_assert_int_eq(unlink("LDN_Service.ini"), 0);
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *make_thesis_suite(void)
{
	Suite *s = suite_create("thesis");
	TCase *thesis = tcase_create("thesis");

	/* The thesis API has process-wide state: these tests rely on Check
	 * running each test in its own process (the default). */
	tcase_set_timeout(thesis, 60);
	tcase_add_test(thesis, t_thesis_client);
	tcase_add_test(thesis, t_thesis_server);
	tcase_add_test(thesis, t_thesis_gateway_restart);
	tcase_add_test(thesis, t_thesis_config);
	tcase_add_test(thesis, t_thesis_default_config);
	suite_add_tcase(s, thesis);
	return s;
}
