/* plan.c - one cluster's mpirun command line. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mwlaunch/plan.h"

/* Appends one argument; out of memory sets p->failed, checked once at
 * the end, so that building reads as the command it builds. */
static void add(struct plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct plan *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (p->failed)
		return;
	if (p->argc + 2 > p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		char **v = realloc(p->argv, (size_t)cap * sizeof(*v));

		if (v == NULL) {
			p->failed = true;
			return;
		}
		p->argv = v;
		p->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		p->failed = true;
		return;
	}
	p->argv[p->argc++] = s;
	p->argv[p->argc] = NULL;
}

/* -x NAME=VALUE */
static void env(struct plan *p, const char *name, const char *value)
{
	add(p, "-x");
	add(p, "%s=%s", name, value);
}

static void env_u(struct plan *p, const char *name, double value)
{
	char v[32];

	snprintf(v, sizeof(v), "%g", value);
	env(p, name, v);
}

/* One app context: a rank with its role. */
static void rank(const struct job *j, unsigned c, const char *role, const struct job_cluster *peer,
		 const char *mw_config, const char *report, struct plan *p)
{
	const struct job_cluster *cl = &j->cl[c];

	if (p->nranks > 0)
		add(p, ":");
	p->roles[p->nranks] = role;
	add(p, "-np");
	add(p, "1");
	env(p, "MWL_ROLE", role);
	env(p, "MWL_CLUSTER", cl->name);
	env_u(p, "MWL_RANK", p->nranks);
	env(p, "LDS_SOCKET", cl->socket);
	if (mw_config != NULL)
		env(p, "MW_CONFIG", mw_config);
	if (strcmp(role, "cm") == 0) {
		/* A main-side CM serves peer; the remote cluster's entry says
		 * how the link between them is used. */
		if (peer != NULL) {
			env(p, "MWL_REMOTE", peer->name);
			env_u(p, "MWL_GRAIN", peer->grain);
			env_u(p, "MWL_PREFETCH", peer->prefetch);
		}
		env_u(p, "MWL_LINK_TIMEOUT", j->link_timeout);
		env_u(p, "MWL_DEADLINE", (peer ? peer : cl)->deadline);
	}
	/* The data cache: its main-side mirror and the sub-master hold as
	 * much as the remote cluster's entry says. */
	if (strcmp(role, "submaster") == 0 || (strcmp(role, "cm") == 0 && peer != NULL)) {
		char bytes[32];

		snprintf(bytes, sizeof(bytes), "%.0f", (peer ? peer : cl)->cache_mib * 1048576.0);
		env(p, "MWL_CACHE", bytes);
	}
	add(p, "%s", j->program);
	for (int i = 0; i < j->nargs; i++)
		add(p, "%s", j->args[i]);
	if (report != NULL && (strcmp(role, "master") == 0 || strcmp(role, "submaster") == 0)) {
		add(p, "--json");
		add(p, "%s", report);
	}
	p->nranks++;
}

int plan_cluster(const struct job *j, unsigned c, const char *mw_config, const char *report, struct plan *p)
{
	const struct job_cluster *cl = &j->cl[c];

	memset(p, 0, sizeof(*p));
	add(p, "%s", j->mpirun);
	add(p, "--oversubscribe");
	add(p, "--tag-output");
	if (cl->hosts[0]) {
		add(p, "-H");
		add(p, "%s", cl->hosts);
	}
	if (cl->hostfile[0]) {
		add(p, "--hostfile");
		add(p, "%s", cl->hostfile);
	}
	for (int i = 0; i < j->nmpirun_args; i++)
		add(p, "%s", j->mpirun_args[i]);
	if (cl->main) {
		rank(j, c, "master", NULL, mw_config, report, p);
		for (unsigned w = 0; w < cl->workers; w++)
			rank(j, c, "worker", NULL, mw_config, report, p);
		for (unsigned k = 0; k < j->ncl; k++)
			if (k != c)
				rank(j, c, "cm", &j->cl[k], mw_config, report, p);
	} else {
		rank(j, c, "submaster", NULL, mw_config, report, p);
		rank(j, c, "cm", NULL, mw_config, report, p);
		for (unsigned w = 0; w < cl->workers; w++)
			rank(j, c, "worker", NULL, mw_config, report, p);
	}
	return p->failed ? -1 : 0;
}

void plan_free(struct plan *p)
{
	for (int i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	memset(p, 0, sizeof(*p));
}

void plan_print(const struct plan *p, FILE *out)
{
	for (int i = 0; i < p->argc; i++) {
		const char *a = p->argv[i];

		if (i > 0)
			fputc(' ', out);
		if (a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")] == '\0' && *a != '\0') {
			fputs(a, out);
			continue;
		}
		fputc('\'', out);
		for (; *a; a++)
			a[0] == '\'' ? fputs("'\\''", out) : fputc(*a, out);
		fputc('\'', out);
	}
	fputc('\n', out);
}
