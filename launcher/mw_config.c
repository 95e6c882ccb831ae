/* mw_config.c - libconfig file to struct mw_config, table driven. */
#include <libconfig.h>
#include <stdio.h>
#include <string.h>

#include "launcher/mw_config.h"

enum kind { K_SECONDS, K_UINT, K_BOOL, K_BEHAVIOUR, K_FAILURE };

static const struct setting {
	const char *name;
	enum kind kind;
	size_t off;
	double max;             /* largest accepted value */
} settings[] = {
	{ "StatisticsInterval", K_SECONDS, offsetof(struct mw_config, stats_interval), 86400 },
	{ "WorkerBehaviour", K_BEHAVIOUR, offsetof(struct mw_config, worker_behaviour), 2 },
	{ "LoadBalance", K_BOOL, offsetof(struct mw_config, load_balance), 1 },
	{ "PrefetchDepth", K_UINT, offsetof(struct mw_config, prefetch), 1024 },
	{ "MaxCopies", K_UINT, offsetof(struct mw_config, max_copies), 16 },
	{ "StepLimit", K_UINT, offsetof(struct mw_config, step_limit), 1 << 20 },
	{ "PickWindow", K_UINT, offsetof(struct mw_config, pick_window), 256 },
	{ "IdleSleepMax", K_SECONDS, offsetof(struct mw_config, idle_sleep_max), 1 },
	{ "MasterNap", K_SECONDS, offsetof(struct mw_config, master_nap), 1 },
	{ "JournalSync", K_BOOL, offsetof(struct mw_config, journal_sync), 1 },
	{ "WorkerFailure", K_FAILURE, offsetof(struct mw_config, worker_continue), 1 },
	{ "WorkerTimeout", K_SECONDS, offsetof(struct mw_config, worker_timeout), 86400 },
};

void mw_config_defaults(struct mw_config *c)
{
	*c = (struct mw_config){
		.stats_interval = 10,
		.worker_behaviour = 2,
		.load_balance = true,
		.prefetch = 2,
		.max_copies = 2,
		.step_limit = 64,
		.pick_window = 64,
		.idle_sleep_max = 0,
		.master_nap = 0.005,
		.journal_sync = false,
		.worker_continue = false,
		.worker_timeout = 10,
	};
}

int mw_config_failure(const char *text, bool *cont)
{
	if (text == NULL || (strcmp(text, "abort") != 0 && strcmp(text, "continue") != 0))
		return -1;
	*cont = strcmp(text, "continue") == 0;
	return 0;
}

static int read_setting(const struct setting *s, config_setting_t *cs, struct mw_config *c,
			const char *path, char *err, size_t errlen)
{
	char *field = (char *)c + s->off;
	int type = config_setting_type(cs);
	double v;

	if (s->kind == K_BOOL) {
		if (type != CONFIG_TYPE_BOOL) {
			snprintf(err, errlen, "%s:%d: %s must be true or false", path,
				 config_setting_source_line(cs), s->name);
			return -1;
		}
		*(bool *)field = config_setting_get_bool(cs);
		return 0;
	}
	if (s->kind == K_FAILURE) {
		if (mw_config_failure(type == CONFIG_TYPE_STRING ? config_setting_get_string(cs) : NULL,
				      (bool *)field) < 0) {
			snprintf(err, errlen, "%s:%d: %s must be \"abort\" or \"continue\"", path,
				 config_setting_source_line(cs), s->name);
			return -1;
		}
		return 0;
	}
	if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
		v = (double)config_setting_get_int64(cs);
	else if (type == CONFIG_TYPE_FLOAT && s->kind == K_SECONDS)
		v = config_setting_get_float(cs);
	else {
		snprintf(err, errlen, "%s:%d: %s must be %s", path, config_setting_source_line(cs),
			 s->name, s->kind == K_SECONDS ? "a number of seconds" : "an integer");
		return -1;
	}
	if (v < 0 || v > s->max || (s->kind == K_BEHAVIOUR && v < 1)) {
		snprintf(err, errlen, "%s:%d: %s = %g is out of range (%s to %g)", path,
			 config_setting_source_line(cs), s->name, v, s->kind == K_BEHAVIOUR ? "1" : "0", s->max);
		return -1;
	}
	if (s->kind == K_SECONDS)
		*(double *)field = v;
	else if (s->kind == K_BEHAVIOUR)
		*(int *)field = (int)v;
	else
		*(unsigned *)field = (unsigned)v;
	return 0;
}

int mw_config_load(const char *path, struct mw_config *c, char *err, size_t errlen)
{
	config_t cf;
	config_setting_t *root;
	int rc = -1;

	config_init(&cf);
	if (!config_read_file(&cf, path)) {
		if (config_error_type(&cf) == CONFIG_ERR_FILE_IO)
			snprintf(err, errlen, "%s: cannot read the file", path);
		else
			snprintf(err, errlen, "%s:%d: %s", path, config_error_line(&cf), config_error_text(&cf));
		goto out;
	}
	root = config_root_setting(&cf);
	rc = mw_config_read_group(root, path, c, err, errlen);
out:
	config_destroy(&cf);
	return rc;
}

int mw_config_read_group(const config_setting_t *group, const char *path, struct mw_config *c, char *err,
			 size_t errlen)
{
	int rc;

	for (int i = 0; i < config_setting_length(group); i++) {
		config_setting_t *cs = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(cs);
		size_t k;

		for (k = 0; k < sizeof(settings) / sizeof(settings[0]); k++)
			if (strcmp(settings[k].name, name) == 0)
				break;
		if (k == sizeof(settings) / sizeof(settings[0])) {
			snprintf(err, errlen, "%s:%d: unknown setting %s (see docs/mw.md)", path,
				 config_setting_source_line(cs), name);
			return -1;
		}
		if (read_setting(&settings[k], cs, c, path, err, errlen) < 0)
			return -1;
	}
	rc = mw_config_validate(c, err, errlen);
	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
	}
	return rc;
}

int mw_config_validate(struct mw_config *c, char *err, size_t errlen)
{
	if (c->prefetch < 1) {
		snprintf(err, errlen, "PrefetchDepth must be at least 1");
		return -1;
	}
	if (c->max_copies < 1 || c->step_limit < 1 || c->pick_window < 1) {
		snprintf(err, errlen, "MaxCopies, StepLimit and PickWindow must be at least 1");
		return -1;
	}
	if (c->worker_continue && c->worker_timeout <= 0) {
		snprintf(err, errlen, "WorkerTimeout must be more than 0 with WorkerFailure = \"continue\"");
		return -1;
	}
	/* Behaviour 1 is the design's single buffer: one task per worker. */
	if (c->worker_behaviour == 1)
		c->prefetch = 1;
	return 0;
}

int mw_config_print(const struct mw_config *c, char *out, size_t outlen)
{
	size_t used = 0;

	for (size_t k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
		const struct setting *s = &settings[k];
		const char *field = (const char *)c + s->off;
		int n;

		if (s->kind == K_BOOL)
			n = snprintf(out + used, outlen - used, "%s = %s;\n", s->name,
				     *(const bool *)field ? "true" : "false");
		else if (s->kind == K_FAILURE)
			n = snprintf(out + used, outlen - used, "%s = \"%s\";\n", s->name,
				     *(const bool *)field ? "continue" : "abort");
		else if (s->kind == K_SECONDS)
			n = snprintf(out + used, outlen - used, "%s = %.17g%s;\n", s->name,
				     *(const double *)field, *(const double *)field == (long)*(const double *)field ? ".0" : "");
		else if (s->kind == K_BEHAVIOUR)
			n = snprintf(out + used, outlen - used, "%s = %d;\n", s->name, *(const int *)field);
		else
			n = snprintf(out + used, outlen - used, "%s = %u;\n", s->name, *(const unsigned *)field);
		if (n < 0 || (size_t)n >= outlen - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}
