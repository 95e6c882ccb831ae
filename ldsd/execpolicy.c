/* execpolicy.c - who may run what through the exec service; see execpolicy.h. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "execpolicy.h"
#include "wire.h"

static int env_name_ok(const char *e)
{
	static const char *const prefixes[] = { "MWL_", "MW_", "LDS_" };
	const char *eq = strchr(e, '=');

	if (eq == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (strncmp(e, prefixes[i], n) == 0 && eq > e + n &&
		    strspn(e + n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == (size_t)(eq - e) - n)
			return 1;
	}
	return 0;
}

/* The allow-list entry (exec.programs or a rule's program) that path
 * resolves to, or NULL. */
static const char *allowed_program(const struct config_exec *x, const char *path)
{
	char real[PATH_MAX];

	if (path[0] != '/' || realpath(path, real) == NULL)
		return NULL;
	for (size_t i = 0; i < x->nprograms; i++)
		if (strcmp(x->programs[i], real) == 0)
			return x->programs[i];
	for (size_t i = 0; i < x->nrules; i++)
		if (strcmp(x->rules[i].program, real) == 0)
			return x->rules[i].program;
	return NULL;
}

static bool in_list(const char *name, const char (*list)[CONFIG_USER_MAX], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], "*") == 0 || strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* One pattern per argument; a last "**" takes any further ones. */
static bool args_match(const struct config_exec_rule *rl, const struct exec_rank *r)
{
	for (unsigned k = 0; k < r->nargs; k++) {
		if (k < rl->nargs && strcmp(rl->args[k], "**") == 0)
			return true;
		if (k >= rl->nargs || fnmatch(rl->args[k], r->args[k], 0) != 0)
			return false;
	}
	return r->nargs == rl->nargs || (r->nargs + 1 == rl->nargs && strcmp(rl->args[r->nargs], "**") == 0);
}

/* May user of cluster run prog (resolved) with r's arguments?  0, or
 * -EPERM with why. */
static int permitted(const struct config_exec *x, const char *cluster, const char *user, const char *prog,
		     const struct exec_rank *r, unsigned i, char *why, size_t len)
{
	bool user_may = false;

	for (size_t k = 0; k < x->nallow; k++)
		if (strcmp(x->allow[k], cluster) == 0)
			for (size_t p = 0; p < x->nprograms; p++)
				if (strcmp(x->programs[p], prog) == 0)
					return 0;
	for (size_t k = 0; k < x->nrules; k++) {
		const struct config_exec_rule *rl = &x->rules[k];

		if (strcmp(rl->cluster, cluster) != 0 || strcmp(rl->program, prog) != 0 ||
		    !in_list(user, rl->users, rl->nusers))
			continue;
		if (args_match(rl, r))
			return 0;
		user_may = true;
	}
	if (user_may)
		snprintf(why, len, "the %u arguments of rank %u do not match those exec.rules allows user %s of cluster "
			 "%s for %s", r->nargs, i, user, cluster, prog);
	else
		snprintf(why, len, "user %s of cluster %s may not run %s (exec.rules)", user, cluster, prog);
	return -EPERM;
}

/* hosts is a list of names for mpirun's -H: none may look like an option. */
static bool hosts_ok(const char *hosts)
{
	if (strspn(hosts, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:_-") != strlen(hosts))
		return false;
	for (const char *h = hosts; h; h = strchr(h, ','), h = h ? h + 1 : NULL)
		if (h[0] == '-')
			return false;
	return true;
}

int execpolicy_check(const struct config_exec *x, const char *cluster, const struct exec_start *s,
		     const char **progs, char *why, size_t len)
{
	int r;

	if (s->nranks > x->max_ranks) {
		snprintf(why, len, "%u ranks asked for; exec.max_ranks allows %u", s->nranks, x->max_ranks);
		return -E2BIG;
	}
	for (unsigned i = 0; i < s->nranks; i++) {
		const struct exec_rank *rk = &s->ranks[i];

		if ((progs[i] = allowed_program(x, rk->program)) == NULL) {
			snprintf(why, len, "program %s is not on the allow-list (exec.programs, exec.rules)", rk->program);
			return -EACCES;
		}
		if ((r = permitted(x, cluster, s->user, progs[i], rk, i, why, len)) < 0)
			return r;
		for (unsigned k = 0; k < rk->nenv; k++)
			if (!env_name_ok(rk->env[k])) {
				snprintf(why, len, "environment entry \"%.64s\" of rank %u is not allowed: only NAME=VALUE "
					 "with NAME MWL_*, MW_* or LDS_*", rk->env[k], i);
				return -EPERM;
			}
	}
	if (!hosts_ok(s->hosts)) {
		snprintf(why, len, "hosts \"%.64s\" holds characters other than letters, digits and .,:_-, or a name "
			 "starting with -", s->hosts);
		return -EINVAL;
	}
	if (s->hostfile[0] && (s->hostfile[0] != '/' || strstr(s->hostfile, "/..") != NULL ||
			       strspn(s->hostfile, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
						   "0123456789/._-") != strlen(s->hostfile))) {
		snprintf(why, len, "hostfile \"%.64s\" is not an absolute path of letters, digits and /._- without \"..\"",
			 s->hostfile);
		return -EINVAL;
	}
	for (unsigned i = 0; i < s->nfiles; i++)
		for (unsigned k = 0; k < i; k++)
			if (strcmp(s->files[i].name, s->files[k].name) == 0) {
				snprintf(why, len, "file %s is sent twice", s->files[i].name);
				return -EINVAL;
			}
	return 0;
}

char **execpolicy_argv(const struct config_exec *x, const struct exec_start *s, const char *trampoline,
		       const char *spec_path, const char *digest, char *np, size_t np_len)
{
	/* mpirun, its arguments, --tag-output, -H and --hostfile with their
	 * values, -np N, the trampoline and its two arguments. */
	size_t n = 0;
	char **v = calloc(1 + x->nmpirun_args + 1 + 4 + 2 + 3 + 1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v[n++] = (char *)x->mpirun;
	for (size_t i = 0; i < x->nmpirun_args; i++)
		v[n++] = (char *)x->mpirun_args[i];
	v[n++] = "--tag-output";   /* mwlaunch tags every line with its rank from this */
	if (s->hosts[0]) {
		v[n++] = "-H";
		v[n++] = (char *)s->hosts;
	}
	if (s->hostfile[0]) {
		v[n++] = "--hostfile";
		v[n++] = (char *)s->hostfile;
	}
	snprintf(np, np_len, "%u", s->nranks);
	v[n++] = "-np";
	v[n++] = np;
	v[n++] = (char *)trampoline;
	v[n++] = (char *)spec_path;
	v[n++] = (char *)digest;
	v[n] = NULL;
	return v;
}

bool execpolicy_cluster(const struct config_exec *x, const char *endpoint)
{
	for (size_t i = 0; i < x->nallow; i++)
		if (wire_endpoint_in(endpoint, x->allow[i]))
			return true;
	for (size_t i = 0; i < x->nrules; i++)
		if (wire_endpoint_in(endpoint, x->rules[i].cluster))
			return true;
	return false;
}

int execpolicy_vouch(int fd, const uint8_t *msg, size_t len, char *why, size_t wlen)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred), dl = sizeof(int);
	int domain = 0;
	char user[EXEC_USER_MAX + 1], buf[4096];
	struct passwd pw, *pwp = NULL;
	uint32_t uid = 0;
	int r = exec_peek_requester(msg, len, &uid, user);

	if (r <= 0)
		return 0;   /* not a START: the service itself refuses a malformed one */
	/* On a TCP socket SO_PEERCRED answers too, with uid -1. */
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0 || domain != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cl != sizeof(cred)) {
		snprintf(why, wlen, "a job can be started only over the unix socket, where ldsd knows who asks");
		return -EACCES;
	}
	if (getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL) {
		snprintf(why, wlen, "uid %u has no user name on this host: it cannot start jobs", (unsigned)cred.uid);
		return -EACCES;
	}
	if (uid != cred.uid || strcmp(user, pw.pw_name) != 0) {
		snprintf(why, wlen, "the start request names user %s (uid %" PRIu32 "), but comes from %s (uid %u)",
			 user, uid, pw.pw_name, (unsigned)cred.uid);
		return -EACCES;
	}
	return 0;
}
