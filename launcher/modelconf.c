/*
 * modelconf.c - the model file; see modelconf.h and docs/model.md.
 *
 * Each group is read by one function that first rejects names it does not
 * know, then reads its settings with get_number()/get_bool()/get_string(),
 * which check type and range and name the setting in every error.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "modelconf.h"

#define PATH_LEN 128

struct ctx {
	const char *file;
	char *err;
	size_t errlen;
};

/* What a number must be. */
enum range { POSITIVE, NON_NEGATIVE, FRACTION, WHOLE_POSITIVE };
static const char *const range_text[] = { "> 0", ">= 0", "between 0 and 1 (exclusive)", "a whole number >= 1" };

static int bad(struct ctx *x, const config_setting_t *s, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "FILE:LINE: PATH: message"; s is the setting at fault or, for a missing
 * one, its group.  The root has no line of its own: line 1 stands for it. */
static int bad(struct ctx *x, const config_setting_t *s, const char *path, const char *fmt, ...)
{
	unsigned line = s ? config_setting_source_line(s) : 0;
	const char *file = s && config_setting_source_file(s) ? config_setting_source_file(s) : x->file;
	int n;
	va_list ap;

	if (x->errlen == 0)
		return -1;
	n = snprintf(x->err, x->errlen, "%s:%u: %s: ", file, line ? line : 1, path);
	if (n >= 0 && (size_t)n < x->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	/* A name quoted from the file may hold anything; the contract is one line. */
	for (char *p = x->err; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	return -1;
}

/* "where.name"; a path too long for messages is cut, which is harmless. */
static void join(char *out, const char *where, const char *name)
{
	if (snprintf(out, PATH_LEN, "%s%s%s", where, *where ? "." : "", name) >= PATH_LEN)
		out[PATH_LEN - 1] = '\0';
}

/* Every member of group g must be named in known. */
static int check_names(struct ctx *x, const config_setting_t *g, const char *where, const char *const *known)
{
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		size_t k = 0;
		char path[PATH_LEN];

		while (known[k] && strcmp(known[k], name) != 0)
			k++;
		if (known[k] == NULL) {
			join(path, where, name);
			return bad(x, s, path, "unknown setting (a typo?); see docs/model.md");
		}
	}
	return 0;
}

/* A number (int or float) in range r. */
static int number_of(struct ctx *x, const config_setting_t *s, const char *path, enum range r, double *out)
{
	int t = config_setting_type(s);
	double v;

	if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64 && t != CONFIG_TYPE_FLOAT)
		return bad(x, s, path, "must be a number");
	if (r == WHOLE_POSITIVE && t == CONFIG_TYPE_FLOAT)
		return bad(x, s, path, "must be a whole number (write it without a point or exponent)");
	v = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(s) : (double)config_setting_get_int64(s);
	if (!isfinite(v) || (r == POSITIVE && !(v > 0)) || (r == NON_NEGATIVE && !(v >= 0)) ||
	    (r == FRACTION && !(v > 0 && v < 1)) || (r == WHOLE_POSITIVE && !(v >= 1)))
		return bad(x, s, path, "must be %s (got %g)", range_text[r], v);
	*out = v;
	return 0;
}

/* Member name of g as a number; *present tells whether it was there when
 * it is optional (present == NULL: required). */
static int get_number(struct ctx *x, const config_setting_t *g, const char *where, const char *name, enum range r,
		      double *out, bool *present)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	char path[PATH_LEN];

	join(path, where, name);
	if (present)
		*present = s != NULL;
	if (s == NULL)
		return present ? 0 : bad(x, g, path, "missing (required)");
	return number_of(x, s, path, r, out);
}

static int get_bool(struct ctx *x, const config_setting_t *g, const char *where, const char *name, bool *out)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	char path[PATH_LEN];

	if (s == NULL)
		return 0;
	join(path, where, name);
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return bad(x, s, path, "must be true or false");
	*out = config_setting_get_bool(s);
	return 0;
}

static int parse_app(struct ctx *x, const config_setting_t *root, struct model_app *a)
{
	static const char *const known[] = { "tasks", "oper", "task_bytes", "result_bytes", "reassign_last_task",
					     "inter_task_growth", "inter_result_growth", NULL };
	const config_setting_t *g = config_setting_get_member(root, "application");
	double tasks;

	if (g == NULL)
		return bad(x, root, "application", "missing (required)");
	if (!config_setting_is_group(g))
		return bad(x, g, "application", "must be a group { tasks = ...; oper = ...; ... }");
	a->task_growth = a->result_growth = 1.0;
	/* As the runtime does by default (LoadBalance = true). */
	a->reassign = true;
	if (check_names(x, g, "application", known) < 0 ||
	    get_number(x, g, "application", "tasks", WHOLE_POSITIVE, &tasks, NULL) < 0 ||
	    get_number(x, g, "application", "oper", POSITIVE, &a->oper, NULL) < 0 ||
	    get_number(x, g, "application", "task_bytes", NON_NEGATIVE, &a->task_bytes, NULL) < 0 ||
	    get_number(x, g, "application", "result_bytes", NON_NEGATIVE, &a->result_bytes, NULL) < 0 ||
	    get_bool(x, g, "application", "reassign_last_task", &a->reassign) < 0 ||
	    get_number(x, g, "application", "inter_task_growth", NON_NEGATIVE, &a->task_growth, &(bool){ 0 }) < 0 ||
	    get_number(x, g, "application", "inter_result_growth", NON_NEGATIVE, &a->result_growth, &(bool){ 0 }) < 0)
		return -1;
	if (tasks > 1e15)
		return bad(x, config_setting_get_member(g, "tasks"), "application.tasks", "must be at most 1e15 (got %g)",
			   tasks);
	a->tasks = (long)tasks;
	return 0;
}

static int parse_workers(struct ctx *x, const config_setting_t *g, const char *where, struct model_cluster *c)
{
	const config_setting_t *s = config_setting_get_member(g, "workers");
	char path[PATH_LEN], epath[PATH_LEN + 16];
	int n;

	join(path, where, "workers");
	if (s == NULL)
		return bad(x, g, path, "missing (required): a list of each worker's available performance, op/s");
	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return bad(x, s, path, "must be a list of numbers [ op/s, ... ]");
	n = config_setting_length(s);
	if (n < 1 || n > MODEL_MAX_WORKERS)
		return bad(x, s, path, "must hold 1..%d workers (got %d)", MODEL_MAX_WORKERS, n);
	for (int i = 0; i < n; i++) {
		snprintf(epath, sizeof(epath), "%s.[%d]", path, i);
		if (number_of(x, config_setting_get_elem(s, (unsigned)i), epath, POSITIVE, &c->perf[i]) < 0)
			return -1;
		c->index[i] = i;
	}
	c->nworkers = (size_t)n;
	return 0;
}

static int parse_cluster(struct ctx *x, const config_setting_t *g, const char *where, const struct model_app *a,
			 struct model_cluster *c)
{
	static const char *const known[] = { "name", "main", "lan_throughput", "workers", "inet_in", "inet_out",
					     "grain", "inter_task_bytes", "inter_result_bytes", NULL };
	static const char *const remote_only[] = { "inet_in", "inet_out", "grain", "inter_task_bytes",
						   "inter_result_bytes", NULL };
	const config_setting_t *s = config_setting_get_member(g, "name");
	char path[PATH_LEN];
	double grain = 1;
	bool has_task, has_result;

	if (!config_setting_is_group(g))
		return bad(x, g, where, "must be a group { name = ...; ... }");
	if (check_names(x, g, where, known) < 0)
		return -1;
	join(path, where, "name");
	if (s == NULL)
		return bad(x, g, path, "missing (required)");
	if (config_setting_type(s) != CONFIG_TYPE_STRING || config_setting_get_string(s)[0] == '\0' ||
	    strlen(config_setting_get_string(s)) > MODEL_NAME_MAX)
		return bad(x, s, path, "must be a non-empty string of at most %d bytes", MODEL_NAME_MAX);
	strcpy(c->name, config_setting_get_string(s));
	if (get_bool(x, g, where, "main", &c->main) < 0 ||
	    get_number(x, g, where, "lan_throughput", POSITIVE, &c->lan, NULL) < 0 || parse_workers(x, g, where, c) < 0)
		return -1;
	c->grain = 1;
	if (c->main) {
		/* The main cluster has no Internet link of its own in the model. */
		for (size_t k = 0; remote_only[k]; k++) {
			if ((s = config_setting_get_member(g, remote_only[k])) != NULL) {
				join(path, where, remote_only[k]);
				return bad(x, s, path, "only for remote clusters (this one has main = true)");
			}
		}
		return 0;
	}
	if (get_number(x, g, where, "inet_in", POSITIVE, &c->inet_in, NULL) < 0 ||
	    get_number(x, g, where, "inet_out", POSITIVE, &c->inet_out, NULL) < 0 ||
	    get_number(x, g, where, "grain", WHOLE_POSITIVE, &grain, &(bool){ 0 }) < 0 ||
	    get_number(x, g, where, "inter_task_bytes", NON_NEGATIVE, &c->inter_task_bytes, &has_task) < 0 ||
	    get_number(x, g, where, "inter_result_bytes", NON_NEGATIVE, &c->inter_result_bytes, &has_result) < 0)
		return -1;
	if (grain > (double)a->tasks) {
		join(path, where, "grain");
		return bad(x, config_setting_get_member(g, "grain"), path, "must be at most application.tasks = %ld (got %g)",
			   a->tasks, grain);
	}
	c->grain = (long)grain;
	/* Without a measured size, N fine tasks travel as N tasks' bytes. */
	if (!has_task)
		c->inter_task_bytes = grain * a->task_bytes;
	if (!has_result)
		c->inter_result_bytes = grain * a->result_bytes;
	return 0;
}

static int parse_clusters(struct ctx *x, const config_setting_t *root, struct model *m)
{
	const config_setting_t *l = config_setting_get_member(root, "clusters");
	const config_setting_t *main_at = NULL;
	char where[PATH_LEN];
	int n;

	if (l == NULL)
		return bad(x, root, "clusters", "missing (required)");
	if (!config_setting_is_list(l))
		return bad(x, l, "clusters", "must be a list ( { ... }, { ... } )");
	n = config_setting_length(l);
	if (n < 1 || n > MODEL_MAX_CLUSTERS)
		return bad(x, l, "clusters", "must hold 1..%d clusters (got %d)", MODEL_MAX_CLUSTERS, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(l, (unsigned)i);
		struct model_cluster *c = &m->cl[i];

		snprintf(where, sizeof(where), "clusters.[%d]", i);
		if (parse_cluster(x, g, where, &m->app, c) < 0)
			return -1;
		for (int j = 0; j < i; j++)
			if (strcmp(m->cl[j].name, c->name) == 0)
				return bad(x, config_setting_get_member(g, "name"), where,
					   "name \"%s\" is also the name of clusters.[%d]", c->name, j);
		if (c->main && main_at)
			return bad(x, config_setting_get_member(g, "main"), where,
				   "a second cluster with main = true (the first is at line %u)",
				   config_setting_source_line(main_at));
		if (c->main)
			main_at = config_setting_get_member(g, "main");
	}
	if (main_at == NULL)
		return bad(x, l, "clusters", "no cluster has main = true (the one holding the master)");
	m->nclusters = (size_t)n;
	return 0;
}

int modelconf_parse(const config_t *cfg, const char *file, int allow_other, struct model *m, char *err,
		    size_t errlen)
{
	static const char *const known[] = { "efficiency_threshold", "application", "clusters", NULL };
	struct ctx x = { .file = file, .err = err, .errlen = errlen };
	const config_setting_t *root = config_root_setting(cfg);

	memset(m, 0, sizeof(*m));
	if (!allow_other && check_names(&x, root, "", known) < 0)
		return -1;
	if (get_number(&x, root, "", "efficiency_threshold", FRACTION, &m->threshold, NULL) < 0 ||
	    parse_app(&x, root, &m->app) < 0 || parse_clusters(&x, root, m) < 0)
		return -1;
	return 0;
}

int modelconf_load(const char *path, struct model *m, char *err, size_t errlen)
{
	config_t cfg;
	int rc;

	config_init(&cfg);
	if (config_read_file(&cfg, path) == CONFIG_FALSE) {
		if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
			snprintf(err, errlen, "%s: cannot read the file (does it exist? readable?)", path);
		else
			snprintf(err, errlen, "%s:%d: syntax error: %s", config_error_file(&cfg) ? config_error_file(&cfg) : path,
				 config_error_line(&cfg), config_error_text(&cfg));
		config_destroy(&cfg);
		return -1;
	}
	rc = modelconf_parse(&cfg, path, 0, m, err, errlen);
	config_destroy(&cfg);
	return rc;
}
