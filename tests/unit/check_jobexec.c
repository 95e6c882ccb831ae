/* check_jobexec.c - the exec service's checks on a request, the mpirun
 * command line it builds and the rank file the trampoline reads
 * (ldsd/jobexec.c: execpolicy_check, execpolicy_argv; ldsd/execspec.c). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "ldsd/execspec.h"
#include "ldsd/execpolicy.h"
#include "ldsd/proctree.h"
#include "suites.h"

static struct config_exec x;
static char link_path[64];

static void setup(void)
{
	memset(&x, 0, sizeof(x));
	ck_assert_ptr_nonnull(realpath("/usr/bin/id", x.programs[0]));
	ck_assert_ptr_nonnull(realpath("/bin/true", x.programs[1]));
	x.nprograms = 2;
	strcpy(x.allow[0], "clusterA");
	x.nallow = 1;
	strcpy(x.mpirun, "/usr/bin/mpirun");
	strcpy(x.mpirun_args[0], "--oversubscribe");
	x.nmpirun_args = 1;
	x.max_ranks = 4;
	/* A symbolic link to a program that is not allowed. */
	snprintf(link_path, sizeof(link_path), "/tmp/lds-jobexec-%d", (int)getpid());
	unlink(link_path);
	ck_assert_int_eq(symlink("/bin/sh", link_path), 0);
}

static void teardown(void)
{
	unlink(link_path);
}

static const char *args[] = { "-n", "64" };
static const char *env[] = { "MWL_ROLE=worker", "MW_CONFIG=mw.conf", "LDS_SOCKET=/run/lds/b.sock" };

struct req {
	struct exec_rank ranks[5];
	struct exec_start s;
	const char *progs[5];
	char why[256];
};

/* Two ranks of /usr/bin/id with arguments and environment. */
static void sample(struct req *q)
{
	memset(q, 0, sizeof(*q));
	q->ranks[0] = (struct exec_rank){ "/usr/bin/id", args, 2, env, 3 };
	q->ranks[1] = (struct exec_rank){ "/usr/bin/id", NULL, 0, env, 1 };
	q->s = (struct exec_start){ .user = "alice", .hosts = "", .hostfile = "", .collect = "", .ranks = q->ranks, .nranks = 2 };
}

static int check(struct req *q)
{
	return execpolicy_check(&x, "clusterA", &q->s, q->progs, q->why, sizeof(q->why));
}

START_TEST(test_ok)
{
	struct req q;

	sample(&q);
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	ck_assert_ptr_eq(q.progs[0], x.programs[0]);   /* the allow-list entry is what runs */
	/* Another path to the same file is the same program. */
	q.ranks[1].program = "/usr/bin/../bin/true";
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	ck_assert_ptr_eq(q.progs[1], x.programs[1]);
	q.s.hosts = "b01,b02:4,node-3.example.org";
	q.s.hostfile = "/etc/lds/clusterB.hosts";
	ck_assert_msg(check(&q) == 0, "%s", q.why);
}
END_TEST

static const struct {
	const char *program;  /* replaces rank 1's */
	const char *env;      /* replaces rank 0's first entry */
	const char *arg;      /* replaces rank 0's first argument */
	const char *hosts, *hostfile;
	int err;
	const char *why;
} bad[] = {
	{ "/bin/sh", NULL, NULL, NULL, NULL, -EACCES, "program /bin/sh is not on the allow-list" },
	{ "id", NULL, NULL, NULL, NULL, -EACCES, "program id is not on the allow-list" },
	{ "/no/such/program", NULL, NULL, NULL, NULL, -EACCES, "not on the allow-list" },
	{ NULL, "PATH=/tmp", NULL, NULL, NULL, -EPERM, "\"PATH=/tmp\" of rank 0 is not allowed" },
	{ NULL, "LD_PRELOAD=/tmp/x.so", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, "MWL_=x", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, "mwl_role=x", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, "MWL_ROLE", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, "MWL_A-B=1", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, "OMPI_MCA_plm_rsh_agent=/bin/sh", NULL, NULL, NULL, -EPERM, "is not allowed" },
	{ NULL, NULL, NULL, "b01 b02", NULL, -EINVAL, "hosts \"b01 b02\"" },
	{ NULL, NULL, NULL, "b01;touch x", NULL, -EINVAL, "hosts" },
	{ NULL, NULL, NULL, "--mca", NULL, -EINVAL, "a name starting with -" },
	{ NULL, NULL, NULL, "b01,-mca", NULL, -EINVAL, "a name starting with -" },
	{ NULL, NULL, NULL, NULL, "hosts", -EINVAL, "hostfile \"hosts\" is not an absolute path" },
	{ NULL, NULL, NULL, NULL, "/etc/../root/h", -EINVAL, "without \"..\"" },
	{ NULL, NULL, NULL, NULL, "/etc/h osts", -EINVAL, "hostfile" },
};

START_TEST(test_bad)
{
	static const char *env1[3], *args1[2];
	struct req q;

	sample(&q);
	memcpy(env1, env, sizeof(env));
	memcpy(args1, args, sizeof(args));
	q.ranks[0].env = env1;
	q.ranks[0].args = args1;
	if (bad[_i].program)
		q.ranks[1].program = bad[_i].program;
	if (bad[_i].env)
		env1[0] = bad[_i].env;
	if (bad[_i].arg)
		args1[0] = bad[_i].arg;
	if (bad[_i].hosts)
		q.s.hosts = bad[_i].hosts;
	if (bad[_i].hostfile)
		q.s.hostfile = bad[_i].hostfile;
	ck_assert_int_eq(check(&q), bad[_i].err);
	ck_assert_msg(strstr(q.why, bad[_i].why) != NULL, "\"%s\" lacks \"%s\"", q.why, bad[_i].why);
}
END_TEST

/* A symbolic link to a program not on the list is judged by its target. */
START_TEST(test_symlink)
{
	struct req q;

	sample(&q);
	q.ranks[0].program = link_path;
	ck_assert_int_eq(check(&q), -EACCES);
	ck_assert_msg(strstr(q.why, link_path) != NULL, "%s", q.why);
}
END_TEST

START_TEST(test_limits)
{
	struct req q;

	sample(&q);
	for (int i = 0; i < 5; i++)
		q.ranks[i] = q.ranks[0];
	q.s.nranks = 5;
	ck_assert_int_eq(check(&q), -E2BIG);
	ck_assert_msg(strstr(q.why, "5 ranks asked for; exec.max_ranks allows 4") != NULL, "%s", q.why);
	q.s.nranks = 4;
	ck_assert_int_eq(check(&q), 0);
	q.s.files[0] = (struct exec_file){ "mw.conf", NULL, 0 };
	q.s.files[1] = (struct exec_file){ "mw.conf", NULL, 0 };
	q.s.nfiles = 2;
	ck_assert_int_eq(check(&q), -EINVAL);
	ck_assert_msg(strstr(q.why, "file mw.conf is sent twice") != NULL, "%s", q.why);
}
END_TEST

/* Rules grant per cluster and user, with argument patterns. */
START_TEST(test_rules)
{
	static const char *mca[] = { "--mca", "orte_fork_agent", "/bin/sh pwn.sh" };
	struct config_exec_rule *r = &x.rules[0];
	struct req q;

	x.nallow = x.nprograms = 0;
	*r = (struct config_exec_rule){ .cluster = "clusterA", .nusers = 1, .nargs = 2 };
	strcpy(r->users[0], "alice");
	ck_assert_ptr_nonnull(realpath("/usr/bin/id", r->program));
	strcpy(r->args[0], "-n");
	strcpy(r->args[1], "[0-9]*");
	x.nrules = 1;
	sample(&q);
	q.s.nranks = 1;
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	ck_assert_ptr_eq(q.progs[0], r->program);
	q.s.user = "mallory";
	ck_assert_int_eq(check(&q), -EPERM);
	ck_assert_msg(strstr(q.why, "user mallory of cluster clusterA may not run /usr/bin/id") != NULL, "%s", q.why);
	ck_assert_int_eq(execpolicy_check(&x, "clusterC", &q.s, q.progs, q.why, sizeof(q.why)), -EPERM);
	q.s.user = "alice";
	q.ranks[0].args = mca;
	q.ranks[0].nargs = 3;
	ck_assert_int_eq(check(&q), -EPERM);
	ck_assert_msg(strstr(q.why, "do not match those exec.rules allows user alice") != NULL, "%s", q.why);
	q.ranks[0].nargs = 0;
	ck_assert_int_eq(check(&q), -EPERM);
	/* "**" takes any further arguments; "*" users any user. */
	strcpy(r->args[1], "**");
	q.ranks[0].nargs = 1;
	q.ranks[0].args = args;
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	q.ranks[0].nargs = 2;
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	q.ranks[0].args = mca;
	ck_assert_int_eq(check(&q), -EPERM);
	strcpy(r->users[0], "*");
	q.s.user = "bob";
	q.ranks[0].args = args;
	ck_assert_msg(check(&q) == 0, "%s", q.why);
	/* The program of a rule is on the allow-list; others are not. */
	q.ranks[0].program = "/bin/true";
	ck_assert_int_eq(check(&q), -EACCES);
}
END_TEST

/* The command line holds only the gateway's words, whatever the ranks'
 * arguments: no "--mca" of a request reaches mpirun. */
START_TEST(test_argv)
{
	static const char *mca[] = { "--mca", "orte_fork_agent", "/bin/sh pwn.sh" };
	static const char *const want[] = {
		"/usr/bin/mpirun", "--oversubscribe", "--tag-output", "-H", "b01,b02", "-np", "2",
		"/usr/lib/ldsd-exec", "/tmp/job/.ldsd-exec", "0123abcd",
	};
	struct req q;
	char **v, np[16];
	size_t i;

	sample(&q);
	q.ranks[0].args = mca;
	q.ranks[0].nargs = 3;
	q.s.hosts = "b01,b02";
	ck_assert_int_eq(check(&q), 0);
	v = execpolicy_argv(&x, &q.s, "/usr/lib/ldsd-exec", "/tmp/job/.ldsd-exec", "0123abcd", np, sizeof(np));
	ck_assert_ptr_nonnull(v);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_ptr_nonnull(v[i]);
		ck_assert_str_eq(v[i], want[i]);
	}
	ck_assert_ptr_null(v[i]);
	free(v);
}
END_TEST

/* The rank file: each rank finds its own program, arguments and
 * environment, with LDS_SOCKET added where the request set none. */
START_TEST(test_spec)
{
	static const char *odd[] = { "--mca", "", "a b  c", "-np" };
	char digest[EXECSPEC_DIGEST_LEN + 1], again[EXECSPEC_DIGEST_LEN + 1];
	struct execspec_rank r;
	struct req q;
	size_t len;
	char *buf;

	sample(&q);
	q.ranks[1].args = odd;
	q.ranks[1].nargs = 4;
	ck_assert_int_eq(check(&q), 0);
	buf = execspec_build(&q.s, q.progs, "LDS_SOCKET=/run/lds/own.sock", &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(execspec_digest(buf, len, digest), 0);
	ck_assert_uint_eq(strlen(digest), EXECSPEC_DIGEST_LEN);
	ck_assert_int_eq(execspec_rank(buf, len, 0, &r), 0);
	ck_assert_str_eq(r.prog, x.programs[0]);
	ck_assert_uint_eq(r.nargs, 2);
	ck_assert_str_eq(r.args[1], "64");
	ck_assert_uint_eq(r.nenv, 3);
	ck_assert_str_eq(r.env[2], "LDS_SOCKET=/run/lds/b.sock");
	free(buf);
	buf = execspec_build(&q.s, q.progs, "LDS_SOCKET=/run/lds/own.sock", &len);
	ck_assert_int_eq(execspec_digest(buf, len, again), 0);
	ck_assert_str_eq(digest, again);
	ck_assert_int_eq(execspec_rank(buf, len, 1, &r), 0);
	ck_assert_uint_eq(r.nargs, 4);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_str_eq(r.args[i], odd[i]);
	ck_assert_uint_eq(r.nenv, 2);
	ck_assert_str_eq(r.env[1], "LDS_SOCKET=/run/lds/own.sock");
	free(buf);
	buf = execspec_build(&q.s, q.progs, "LDS_SOCKET=/x", &len);
	ck_assert_int_eq(execspec_rank(buf, len, 2, &r), -ENOENT);
	free(buf);
	buf = strdup("ldsd-exec 1\nrank\nprog /bin/true\nexec /bin/sh\n");
	ck_assert_int_eq(execspec_rank(buf, strlen(buf), 0, &r), -EBADMSG);
	free(buf);
	buf = strdup("ldsd-exec 1\nrank\nprog bin/true\n");
	ck_assert_int_eq(execspec_rank(buf, strlen(buf), 0, &r), -EBADMSG);
	free(buf);
}
END_TEST

/* Encodes a START of user/uid, or a STOP, into buf. */
static size_t requester_msg(uint8_t *buf, size_t cap, int type, const char *user, uint32_t uid)
{
	struct exec_msg m = { .type = (uint8_t)type, .job = 1 };
	struct req q;

	sample(&q);
	q.s.user = user;
	q.s.uid = uid;
	m.start = q.s;
	return exec_encode(&m, buf, cap);
}

/* The requesting gateway passes a START only from the user it names, and
 * only over a unix socket. */
START_TEST(test_vouch)
{
	const struct passwd *pw = getpwuid(getuid());
	uint8_t buf[4096];
	char why[160];
	int sv[2], inet;
	size_t n;

	ck_assert_ptr_nonnull(pw);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	n = requester_msg(buf, sizeof(buf), EXEC_START, pw->pw_name, (uint32_t)getuid());
	ck_assert_int_eq(execpolicy_vouch(sv[0], buf, n, why, sizeof(why)), 0);
	n = requester_msg(buf, sizeof(buf), EXEC_START, "someone-else", (uint32_t)getuid());
	ck_assert_int_eq(execpolicy_vouch(sv[0], buf, n, why, sizeof(why)), -EACCES);
	ck_assert_msg(strstr(why, "names user someone-else") != NULL, "%s", why);
	n = requester_msg(buf, sizeof(buf), EXEC_START, pw->pw_name, (uint32_t)getuid() + 1);
	ck_assert_int_eq(execpolicy_vouch(sv[0], buf, n, why, sizeof(why)), -EACCES);
	n = requester_msg(buf, sizeof(buf), EXEC_STOP, pw->pw_name, 0);
	ck_assert_int_eq(execpolicy_vouch(sv[0], buf, n, why, sizeof(why)), 0);
	inet = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(inet, 0);
	n = requester_msg(buf, sizeof(buf), EXEC_START, pw->pw_name, (uint32_t)getuid());
	ck_assert_int_eq(execpolicy_vouch(inet, buf, n, why, sizeof(why)), -EACCES);
	ck_assert_msg(strstr(why, "only over the unix socket") != NULL, "%s", why);
	close(inet);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A process state from /proc/PID/stat: 'Z' once it is dead but not
 * reaped. */
static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return '-';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p ? p[2] : '?';
}

/* proctree_signal reaches a grandchild in a session of its own, and not
 * the root it starts from. */
START_TEST(test_proctree)
{
	int fds[2];
	pid_t child, grandchild = 0;

	ck_assert_int_eq(pipe(fds), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pid_t g = fork();

		if (g == 0) {
			setsid();
			pause();
			_exit(0);
		}
		if (write(fds[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(fds[0], &grandchild, sizeof(grandchild)), (int)sizeof(grandchild));
	ck_assert_int_eq(proctree_signal(child, SIGKILL), 1);
	for (int i = 0; i < 200 && proc_state(grandchild) != 'Z'; i++)
		usleep(10000);
	ck_assert_int_eq(proc_state(grandchild), 'Z');   /* dead; its parent has not reaped it */
	ck_assert_int_ne(proc_state(child), 'Z');
	ck_assert_int_eq(proctree_signal(child, SIGKILL), 0);   /* a zombie is no one to signal */
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

Suite *make_jobexec_suite(void)
{
	Suite *s = suite_create("jobexec");
	TCase *tc = tcase_create("requests");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ok);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_symlink);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_argv);
	tcase_add_test(tc, test_spec);
	tcase_add_test(tc, test_proctree);
	tcase_add_test(tc, test_vouch);
	suite_add_tcase(s, tc);
	return s;
}
