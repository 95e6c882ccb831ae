/* reload.c - SIGHUP's configuration reload; see reload.h. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "reload.h"

/* Keeps old's value of a setting that cannot change at run time. */
#define KEEP(field, name)                                                                     \
	do {                                                                                  \
		if (memcmp(&old->field, &cfg->field, sizeof(cfg->field)) != 0) {              \
			log_warnx("reload: %s changed: that needs a restart; keeping the old one", \
				  name);                                                      \
			memcpy(&cfg->field, &old->field, sizeof(cfg->field));                 \
		}                                                                             \
	} while (0)

static void keep_fixed(const struct config *old, struct config *cfg)
{
	KEEP(cluster, "cluster");
	KEEP(client_socket, "clients.socket");
	KEEP(client_tcp, "clients.tcp");
	KEEP(client_rdma, "clients.rdma");
	KEEP(clients.socket_owner, "clients.socket_owner");
	KEEP(clients.socket_group, "clients.socket_group");
	KEEP(clients.socket_mode, "clients.socket_mode");
	cfg->clients.socket_uid = old->clients.socket_uid;
	cfg->clients.socket_gid = old->clients.socket_gid;
	cfg->clients.socket_perm = old->clients.socket_perm;
	KEEP(control_socket, "control_socket");
	KEEP(status_socket, "status_socket");
	KEEP(status_group, "status_group");
	cfg->status_gid = old->status_gid;
	KEEP(metrics_listen, "metrics_listen");
	KEEP(exec, "exec");
	KEEP(handshake, "handshake");
}

int reload_config(struct daemon *d, const char *path)
{
	struct config *cfg = malloc(sizeof(*cfg)), *old = d->cfg;
	char err[1024];
	int lvl;

	if (cfg == NULL) {
		log_warnx("reload: out of memory; running on with the configuration as it was");
		return -1;
	}
	if (config_load(path, cfg, err, sizeof(err)) < 0) {
		log_warnx("reload: %s; running on with the configuration as it was", err);
		explicit_bzero(cfg, sizeof(*cfg));
		free(cfg);
		return -1;
	}
	keep_fixed(old, cfg);
	lvl = log_level_parse(cfg->log_level);
	if (strcmp(old->log_level, cfg->log_level) != 0 && lvl >= 0)
		log_set_level((enum log_level)lvl);
	daemon_reconfigure(d, cfg);
	explicit_bzero(old, sizeof(*old));
	free(old);
	log_info("reload: configuration of %s applied: %zu peers", path, cfg->npeers);
	return 0;
}
