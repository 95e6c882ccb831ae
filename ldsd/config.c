/*
 * config.c - ldsd's configuration file; see config.h and docs/config.md.
 *
 * The daemon's own settings are described here, in field tables that the
 * generic reader (cfgfield.c) parses and the printer (cfgprint.c) prints
 * back; a peer's settings are cfgpeer.c's.  What needs more than one
 * setting, or the whole file, is checked by cfgcheck.c once the tables are
 * read; all of them name errors through cfgerr.c.
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfgcheck.h"
#include "cfgerr.h"
#include "cfgfield.h"
#include "cfgpeer.h"
#include "cfgprint.h"
#include "config.h"
#include "execmsg.h"
#include "wire.h"

static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };  /* log_level_parse() */

static const struct field client_fields[] = {
	{ .name = "socket", .kind = K_STR, AT(config, client_socket), .max = UNIX_PATH_LEN },
	{ .name = "socket_owner", .kind = K_STR, AT(config, clients.socket_owner) },
	{ .name = "socket_group", .kind = K_STR, AT(config, clients.socket_group) },
	{ .name = "socket_mode", .kind = K_STR, AT(config, clients.socket_mode) },
	{ .name = "tcp", .kind = K_HOSTPORT, AT(config, client_tcp) },
	{ .name = "tcp_key_file", .kind = K_STR, AT(config, clients.tcp_key_file) },
	{ .name = "rdma", .kind = K_HOSTPORT, AT(config, client_rdma) },
	{ .name = "max_clients", .kind = K_UINT, AT(config, clients.max_clients), .min = 1, .max = 65536 },
	{ .name = "max_clients_per_user", .kind = K_UINT, AT(config, clients.max_per_user), .min = 1, .max = 65536 },
	{ .name = "hello_timeout", .kind = K_SECONDS, AT(config, clients.hello_timeout) },
	{ .name = "max_message", .kind = K_BYTES, AT(config, clients.max_message), .min = 1, .max = WIRE_MAX_MSG },
	{ .name = "queue_max", .kind = K_BYTES, AT(config, clients.queue_max), .min = 65536, .max = SIZE_MAX },
	{ .name = "input_per_user", .kind = K_BYTES, AT(config, clients.input_per_user), .min = 1 << 20, .max = SIZE_MAX },
	{ .name = "shm_ring", .kind = K_BYTES, AT(config, clients.shm_ring), .min = 0, .max = 1u << 30 },
	{ .name = "undelivered_share", .kind = K_UINT, AT(config, clients.undelivered_share), .min = 1, .max = 90 },
	{ .name = "undelivered_ttl", .kind = K_SECONDS, AT(config, clients.undelivered_ttl) },
	{ .name = NULL },
};

static const struct field exec_rule_fields[] = {
	{ .name = "cluster", .kind = K_NAME, AT(config_exec_rule, cluster), .required = true },
	{ .name = "users", LIST(config_exec_rule, users, nusers, K_STR), .required = true },
	{ .name = "program", .kind = K_STR, AT(config_exec_rule, program), .required = true },
	{ .name = "args", LIST(config_exec_rule, args, nargs, K_STR) },
	{ .name = NULL },
};

static const struct field exec_fields[] = {
	{ .name = "allow_clusters", LIST(config, exec.allow, exec.nallow, K_NAME) },
	{ .name = "programs", LIST(config, exec.programs, exec.nprograms, K_STR) },
	{ .name = "rules", .kind = K_GROUPS, AT(config, exec.rules), .sub = exec_rule_fields,
	  .count_off = offsetof(struct config, exec.nrules), .max = CONFIG_EXEC_MAX_RULES },
	{ .name = "trampoline", .kind = K_STR, AT(config, exec.trampoline) },
	{ .name = "mpirun", .kind = K_STR, AT(config, exec.mpirun) },
	{ .name = "mpirun_args", LIST(config, exec.mpirun_args, exec.nmpirun_args, K_STR) },
	{ .name = "user", .kind = K_STR, AT(config, exec.user), .required = true },
	{ .name = "group", .kind = K_STR, AT(config, exec.group) },
	{ .name = "allow_root", .kind = K_BOOL, AT(config, exec.allow_root) },
	{ .name = "max_jobs", .kind = K_UINT, AT(config, exec.max_jobs), .min = 1, .max = 1024 },
	{ .name = "max_ranks", .kind = K_UINT, AT(config, exec.max_ranks), .min = 1, .max = EXEC_MAX_RANKS },
	{ .name = "max_time", .kind = K_SECONDS, AT(config, exec.max_time), .max = 365 * 86400 },
	{ .name = "workdir", .kind = K_STR, AT(config, exec.workdir) },
	{ .name = "path", .kind = K_STR, AT(config, exec.path) },
	{ .name = NULL },
};

static const struct field handshake_fields[] = {
	{ .name = "timeout", .kind = K_SECONDS, AT(config, handshake.timeout) },
	{ .name = "max_unauth", .kind = K_UINT, AT(config, handshake.max_unauth), .min = 1, .max = CONFIG_MAX_UNAUTH },
	/* Both at most max_unauth, checked once it is known. */
	{ .name = "early_drop", .kind = K_UINT, AT(config, handshake.early_drop), .min = 1, .max = CONFIG_MAX_UNAUTH },
	{ .name = "max_per_source", .kind = K_UINT, AT(config, handshake.max_per_source), .min = 1,
	  .max = CONFIG_MAX_UNAUTH },
	{ .name = "max_failures", .kind = K_UINT, AT(config, handshake.max_failures), .min = 1, .max = 1000000 },
	{ .name = NULL },
};

static const struct field root_fields[] = {
	{ .name = "cluster", .kind = K_NAME, AT(config, cluster), .required = true },
	{ .name = "log_level", .kind = K_WORD, AT(config, log_level), .words = log_levels },
	{ .name = "allow_faults", .kind = K_BOOL, AT(config, allow_faults) },
	{ .name = "drain_timeout", .kind = K_SECONDS, AT(config, drain_timeout), .max = SECONDS_MAX },
	{ .name = "clients", .kind = K_GROUP, .sub = client_fields },
	{ .name = "handshake", .kind = K_GROUP, .sub = handshake_fields },
	{ .name = "control_socket", .kind = K_STR, AT(config, control_socket), .max = UNIX_PATH_LEN },
	{ .name = "status_socket", .kind = K_STR, AT(config, status_socket), .max = UNIX_PATH_LEN },
	{ .name = "status_group", .kind = K_STR, AT(config, status_group) },
	{ .name = "metrics_listen", .kind = K_HOSTPORT, AT(config, metrics_listen) },
	{ .name = "peers", .kind = K_ROWS, AT(config, peers), .count_off = offsetof(struct config, npeers),
	  .max = CONFIG_MAX_PEERS, .parse = cfgpeer_parse_list, .row_table = cfgpeer_table },
	{ .name = "exec", .kind = K_OPTGROUP, AT(config, exec.enabled), .sub = exec_fields },
	{ .name = NULL },
};

static const struct config_handshake handshake_defaults = {
	.timeout = 10.0,
	.max_unauth = 256,
	.early_drop = 128,
	.max_per_source = 64,
	.max_failures = 60,
};

static int parse_config(struct cfgctx *c, const config_t *lc, struct config *cfg)
{
	snprintf(cfg->log_level, sizeof(cfg->log_level), "info");
	cfg->drain_timeout = 10.0;
	cfg->handshake = handshake_defaults;
	cfg->clients = (struct config_clients){ .max_clients = 1024, .max_per_user = 256, .hello_timeout = 10.0,
						.max_message = WIRE_MAX_MSG, .queue_max = 16u << 20,
						.input_per_user = 1u << 30, .shm_ring = 4u << 20,
						.undelivered_share = 50, .undelivered_ttl = 600.0 };
	cfgcheck_exec_defaults(&cfg->exec);
	if (cfgfield_parse_group(c, config_root_setting(lc), root_fields, cfg) < 0)
		return -1;
	return cfgcheck_file(c, lc, cfg);
}

static int config_dir(struct cfgctx *c, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (realpath(dir, c->dir) == NULL)
		return cfg_fail_at(c, c->file, "cannot resolve its directory: %s", strerror(errno));
	return 0;
}

int config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	struct cfgctx c = { .file = path, .err = err, .errlen = errlen };
	struct stat st;
	config_t lc;
	FILE *f;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (strlen(path) >= sizeof(cfg->file))
		return cfg_fail_at(&c, path, "path too long (at most %zu bytes)", sizeof(cfg->file) - 1);
	memcpy(cfg->file, path, strlen(path) + 1);
	f = fopen(path, "re");
	if (f == NULL)
		return cfg_fail_at(&c, path, "cannot open: %s", strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return cfg_fail_at(&c, path, "is a directory");
	}
	if (config_dir(&c, path) < 0) {
		fclose(f);
		return -1;
	}
	config_init(&lc);
	/* @include, like key_file, is relative to the file's own directory. */
	config_set_include_dir(&lc, c.dir);
	if (!config_read(&lc, f)) {
		char prefix[CONFIG_PATH_MAX + 32];

		snprintf(prefix, sizeof(prefix), "%s:%d",
			 config_error_file(&lc) ? config_error_file(&lc) : path, config_error_line(&lc));
		rc = cfg_fail_at(&c, prefix, "%s", config_error_text(&lc));
	} else {
		rc = parse_config(&c, &lc, cfg);
	}
	config_destroy(&lc);
	fclose(f);
	if (rc < 0)
		explicit_bzero(cfg, sizeof(*cfg));   /* may hold keys read before the error */
	return rc;
}

void config_print(const struct config *cfg, FILE *out)
{
	fprintf(out, "# ldsd configuration from ");
	cfgprint_string(out, cfg->file);
	fprintf(out, ", defaults filled in\n");
	cfgprint_group(out, root_fields, cfg, 0);
}

void config_handshake_defaults(struct config_handshake *h)
{
	*h = handshake_defaults;
}
