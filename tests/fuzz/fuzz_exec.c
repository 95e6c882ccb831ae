/*
 * fuzz_exec.c - libFuzzer target for the exec service's path from a
 * peer's bytes to what runs: exec_decode() (ldsd/execmsg.c), the policy
 * check execpolicy_check() and the command line execpolicy_argv()
 * (ldsd/jobexec.c), and the rank file the trampoline reads
 * (ldsd/execspec.c).
 *
 * Besides "no crash, no out-of-bounds read" it checks the defences
 * themselves: exec_peek_requester() agrees with the full decoder; a
 * START that passes the check has only allowed programs, run with
 * arguments its rule allows; mpirun's command line holds no string of
 * the request but hosts and hostfile (and those start with no '-'); and
 * every rank reads back from the rank file exactly its program,
 * arguments and environment.  The allow-list: /bin/true for any user of
 * clusterA with any arguments, /usr/bin/id for user alice with "-u" and
 * anything after it.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/execmsg.h"
#include "ldsd/execspec.h"
#include "ldsd/execpolicy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static struct config_exec x;

static void setup(void)
{
	struct config_exec_rule *r = &x.rules[0];

	CHECK(realpath("/bin/true", x.programs[0]) != NULL);
	x.nprograms = 1;
	strcpy(x.allow[0], "clusterA");
	x.nallow = 1;
	strcpy(r->cluster, "clusterA");
	strcpy(r->users[0], "alice");
	r->nusers = 1;
	CHECK(realpath("/usr/bin/id", r->program) != NULL);
	strcpy(r->args[0], "-u");
	strcpy(r->args[1], "**");
	r->nargs = 2;
	x.nrules = 1;
	strcpy(x.mpirun, "/usr/bin/mpirun");
	strcpy(x.mpirun_args[0], "--oversubscribe");
	x.nmpirun_args = 1;
	x.max_ranks = 64;
}

/* Is s one of the strings the gateway itself puts on mpirun's line? */
static int own_word(const char *s, const char *np)
{
	static const char *const words[] = { "/usr/bin/mpirun", "--oversubscribe", "--tag-output", "-H",
					     "--hostfile", "-np", "/lib/ldsd-exec", "/job/.ldsd-exec", "d1g35t" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(s, words[i]) == 0)
			return 1;
	return strcmp(s, np) == 0;
}

static void check_argv(const struct exec_start *s)
{
	char np[16];
	char **v = execpolicy_argv(&x, s, "/lib/ldsd-exec", "/job/.ldsd-exec", "d1g35t", np, sizeof(np));

	CHECK(v != NULL);
	for (size_t i = 0; v[i]; i++) {
		if (v[i] == s->hosts || v[i] == s->hostfile) {
			CHECK(v[i][0] != '-' && i > 0 && v[i - 1][0] == '-');
			continue;
		}
		CHECK(own_word(v[i], np));
	}
	free(v);
}

static void check_spec(const struct exec_start *s, const char **progs)
{
	size_t len;
	char *buf = execspec_build(s, progs, "LDS_SOCKET=/run/lds/own.sock", &len);
	struct execspec_rank r;

	CHECK(buf != NULL);
	/* Rank i's view: the last rank, the first, and one past the end. */
	for (unsigned pass = 0; pass < 3; pass++) {
		unsigned i = pass == 0 ? 0 : pass == 1 ? s->nranks - 1 : s->nranks;
		char *copy = malloc(len);

		CHECK(copy != NULL);
		memcpy(copy, buf, len);
		if (i == s->nranks) {
			CHECK(execspec_rank(copy, len, i, &r) == -ENOENT);
			free(copy);
			continue;
		}
		CHECK(execspec_rank(copy, len, i, &r) == 0);
		CHECK(strcmp(r.prog, progs[i]) == 0 && r.nargs == s->ranks[i].nargs);
		for (unsigned k = 0; k < r.nargs; k++)
			CHECK(strcmp(r.args[k], s->ranks[i].args[k]) == 0);
		CHECK(r.nenv >= s->ranks[i].nenv && r.nenv <= s->ranks[i].nenv + 1);
		for (unsigned k = 0; k < s->ranks[i].nenv; k++)
			CHECK(strcmp(r.env[k], s->ranks[i].env[k]) == 0);
		free(copy);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	char why[256], user[EXEC_USER_MAX + 1];
	const char **progs;
	struct exec_msg m;
	uint32_t uid;
	int peek, r;

	if (x.nprograms == 0)
		setup();
	CHECK(copy != NULL);
	if (size)
		memcpy(copy, data, size);
	peek = exec_peek_requester(copy, size, &uid, user);
	r = exec_decode(copy, size, &m);
	if (r == 0 && m.type == EXEC_START)
		CHECK(peek == 1 && uid == m.start.uid && strcmp(user, m.start.user) == 0);
	if (r != 0 || m.type != EXEC_START) {
		if (r == 0)
			exec_msg_free(&m);
		free(copy);
		return 0;
	}
	progs = calloc(m.start.nranks, sizeof(*progs));
	CHECK(progs != NULL);
	if (execpolicy_check(&x, "clusterA", &m.start, progs, why, sizeof(why)) == 0) {
		for (unsigned i = 0; i < m.start.nranks; i++) {
			const struct exec_rank *rk = &m.start.ranks[i];

			CHECK(progs[i] == x.programs[0] || progs[i] == x.rules[0].program);
			if (progs[i] == x.rules[0].program)
				CHECK(strcmp(m.start.user, "alice") == 0 && rk->nargs >= 1 &&
				      strcmp(rk->args[0], "-u") == 0);
		}
		check_argv(&m.start);
		check_spec(&m.start, progs);
	}
	free(progs);
	exec_msg_free(&m);
	free(copy);
	return 0;
}
