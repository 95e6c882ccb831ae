/* cfgcheck.c - ldsd.conf's checks across settings, once the whole file is
 * read; see cfgcheck.h. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cfgcheck.h"
#include "cfgerr.h"
#include "config.h"
#include "execmsg.h"
#include "seal.h"
#include "libclient/lds.h"

/* Needs the whole file read: cluster may come after peers. */
static int check_peer_names(struct cfgctx *c, const config_t *lc, const struct config *cfg)
{
	const config_setting_t *list = config_lookup(lc, "peers");

	for (size_t i = 0; i < cfg->npeers; i++) {
		const config_setting_t *name = config_setting_get_member(config_setting_get_elem(list, (unsigned)i), "cluster");

		if (strcmp(cfg->peers[i].cluster, cfg->cluster) == 0)
			return cfg_fail(c, name, NULL, "\"%s\" is this cluster's own name; a peer must be another cluster",
				    cfg->cluster);
		for (size_t j = 0; j < i; j++)
			if (strcmp(cfg->peers[i].cluster, cfg->peers[j].cluster) == 0)
				return cfg_fail(c, name, NULL, "\"%s\" is already peers.[%zu] (line %d)",
					    cfg->peers[i].cluster, j, cfg->peers[j].line);
	}
	return 0;
}

/* A socket beside the client socket: <that without .sock><suffix>. */
static int derive_socket(struct cfgctx *c, const config_t *lc, const struct config *cfg, const char *name,
			 const char *suffix, char *dst, size_t len)
{
	static const char sock[] = ".sock";
	size_t n = strlen(cfg->client_socket);

	if (dst[0] != '\0')
		return 0;
	if (n >= strlen(sock) && strcmp(cfg->client_socket + n - strlen(sock), sock) == 0)
		n -= strlen(sock);
	if (n + strlen(suffix) > UNIX_PATH_LEN)
		return cfg_fail(c, config_lookup(lc, "clients.socket"), NULL, "too long to derive %s from it "
			    "(over %zu bytes); set %s", name, UNIX_PATH_LEN, name);
	snprintf(dst, len, "%.*s%s", (int)n, cfg->client_socket, suffix);
	return 0;
}

/* liblds's default socket and, beside it, <that without .sock>.ctl and
 * .status; status_group resolved. */
static int derive_sockets(struct cfgctx *c, const config_t *lc, struct config *cfg)
{
	const struct group *gr;

	if (cfg->client_socket[0] == '\0')
		snprintf(cfg->client_socket, sizeof(cfg->client_socket), "%s", LDS_DEFAULT_SOCKET);
	if (derive_socket(c, lc, cfg, "control_socket", ".ctl", cfg->control_socket, sizeof(cfg->control_socket)) < 0 ||
	    derive_socket(c, lc, cfg, "status_socket", ".status", cfg->status_socket, sizeof(cfg->status_socket)) < 0)
		return -1;
	if (strcmp(cfg->control_socket, cfg->client_socket) == 0)
		return cfg_fail(c, config_lookup(lc, "control_socket"), NULL, "must differ from clients.socket");
	if (strcmp(cfg->status_socket, cfg->client_socket) == 0 || strcmp(cfg->status_socket, cfg->control_socket) == 0)
		return cfg_fail(c, config_lookup(lc, "status_socket"), NULL, "must differ from clients.socket and control_socket");
	cfg->status_gid = (gid_t)-1;
	if (cfg->status_group[0]) {
		if ((gr = getgrnam(cfg->status_group)) == NULL)
			return cfg_fail(c, config_lookup(lc, "status_group"), NULL, "no such group \"%s\"", cfg->status_group);
		cfg->status_gid = gr->gr_gid;
	}
	return 0;
}

/* clients.socket's mode: octal, as chmod takes it, without the set-id and
 * sticky bits, which mean nothing on a socket. */
static int parse_socket_mode(struct cfgctx *c, const config_t *lc, struct config_clients *k)
{
	char *end;
	unsigned long v;

	if (k->socket_mode[0] == '\0') {
		snprintf(k->socket_mode, sizeof(k->socket_mode), "0666");
		k->socket_perm = 0666;
		return 0;
	}
	errno = 0;
	v = strtoul(k->socket_mode, &end, 8);
	if (errno != 0 || *end != '\0' || k->socket_mode[strspn(k->socket_mode, "01234567")] != '\0' || v > 0777)
		return cfg_fail(c, config_lookup(lc, "clients.socket_mode"), NULL,
			    "\"%s\" is not an octal mode from \"0000\" to \"0777\" (e.g. \"0660\")", k->socket_mode);
	if (!(v & 0200))
		return cfg_fail(c, config_lookup(lc, "clients.socket_mode"), NULL,
			    "\"%s\" denies the owner write access, so nobody could connect", k->socket_mode);
	k->socket_perm = (unsigned)v;
	return 0;
}

/* The client socket's owner, group and mode; clients.tcp's key, without
 * which a TCP or RDMA client port is refused: anyone who reaches it could
 * send and receive as any endpoint. */
static int check_clients(struct cfgctx *c, const config_t *lc, struct config *cfg)
{
	struct config_clients *k = &cfg->clients;
	const config_setting_t *key;
	const struct passwd *pw;
	const struct group *gr;
	char err[4 * CONFIG_PATH_MAX];

	k->socket_uid = (uid_t)-1;
	k->socket_gid = (gid_t)-1;
	if (k->socket_owner[0]) {
		if ((pw = getpwnam(k->socket_owner)) == NULL)
			return cfg_fail(c, config_lookup(lc, "clients.socket_owner"), NULL, "no such user \"%s\"",
				    k->socket_owner);
		k->socket_uid = pw->pw_uid;
	}
	if (k->socket_group[0]) {
		if ((gr = getgrnam(k->socket_group)) == NULL)
			return cfg_fail(c, config_lookup(lc, "clients.socket_group"), NULL, "no such group \"%s\"",
				    k->socket_group);
		k->socket_gid = gr->gr_gid;
	}
	if (parse_socket_mode(c, lc, k) < 0)
		return -1;
	key = config_lookup(lc, "clients.tcp_key_file");
	if (cfg->client_rdma[0])
		cfg->client_rdma_line = config_setting_source_line(config_lookup(lc, "clients.rdma"));
	if (cfg->client_tcp[0] == '\0' && cfg->client_rdma[0] == '\0') {
		if (key != NULL)
			return cfg_fail(c, key, NULL, "is set but neither clients.tcp nor clients.rdma is: a key for a "
				    "port ldsd does not open");
		return 0;
	}
	if (key == NULL)
		return cfg_fail(c, config_lookup(lc, cfg->client_tcp[0] ? "clients.tcp" : "clients.rdma"), NULL,
			    "needs clients.tcp_key_file: the kernel does not say who a TCP or RDMA client is, so without "
			    "a key anyone who can reach %s could send and receive as any endpoint "
			    "(make one with: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)",
			    cfg->client_tcp[0] ? cfg->client_tcp : cfg->client_rdma);
	if (cfg_resolve_path(c, key, k->tcp_key_file, sizeof(k->tcp_key_file)) < 0)
		return -1;
	if (keyfile_read(k->tcp_key_file, k->tcp_key, &k->tcp_key_len, err, sizeof(err)) < 0)
		return cfg_fail(c, key, NULL, "%s", err);
	return 0;
}

/* ---- the exec service ------------------------------------------------------ */

void cfgcheck_exec_defaults(struct config_exec *x)
{
	snprintf(x->mpirun, sizeof(x->mpirun), "/usr/bin/mpirun");
	snprintf(x->mpirun_args[0], sizeof(x->mpirun_args[0]), "--oversubscribe");
	x->nmpirun_args = 1;
	x->max_jobs = 4;
	x->max_ranks = 64;
	x->max_time = 86400.0;
	snprintf(x->workdir, sizeof(x->workdir), "/tmp");
	snprintf(x->path, sizeof(x->path), "/usr/local/bin:/usr/bin:/bin");
}

/* An allowed program: resolved once here, so that requests are compared
 * with (and jobs run) the file the administrator meant, not whatever a
 * symbolic link points to later. */
static int check_program(struct cfgctx *c, const config_setting_t *s, char *path, size_t len)
{
	char real[PATH_MAX];
	struct stat st;

	if (path[0] != '/')
		return cfg_fail(c, s, NULL, "\"%s\" is not an absolute path", path);
	if (realpath(path, real) == NULL || stat(real, &st) < 0)
		return cfg_fail(c, s, NULL, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return cfg_fail(c, s, NULL, "%s is not an executable file", real);
	if (st.st_mode & 022)
		return cfg_fail(c, s, NULL, "%s is writable by group or others (mode %04o), so anyone could change "
			    "what it runs: chmod go-w %s", real, (unsigned)(st.st_mode & 07777), real);
	if (strlen(real) >= len)
		return cfg_fail(c, s, NULL, "%s: path too long (at most %zu bytes)", real, len - 1);
	memcpy(path, real, strlen(real) + 1);
	return 0;
}

/* Who jobs run as.  A daemon that is not root cannot switch users, so it
 * can only run jobs as itself. */
static int check_exec_user(struct cfgctx *c, const config_setting_t *g, struct config_exec *x)
{
	const config_setting_t *us = config_setting_get_member(g, "user");
	const config_setting_t *gs = config_setting_get_member(g, "group");
	const struct passwd *pw = getpwnam(x->user);
	const struct group *gr;

	if (pw == NULL)
		return cfg_fail(c, us, NULL, "no such user \"%s\"", x->user);
	x->uid = pw->pw_uid;
	x->gid = pw->pw_gid;
	if (x->group[0]) {
		if ((gr = getgrnam(x->group)) == NULL)
			return cfg_fail(c, gs, NULL, "no such group \"%s\"", x->group);
		x->gid = gr->gr_gid;
	}
	if ((x->uid == 0 || x->gid == 0) && !x->allow_root)
		return cfg_fail(c, x->uid == 0 || gs == NULL ? us : gs, NULL, "jobs would run as %s \"%s\" (id 0): "
			    "name an unprivileged one, or set allow_root = true", x->uid == 0 ? "user" : "group",
			    x->uid == 0 ? x->user : x->group);
	if (geteuid() != 0 && x->uid != geteuid())
		return cfg_fail(c, us, NULL, "ldsd runs as uid %u and can start jobs only as itself, not as \"%s\" "
			    "(uid %u): run ldsd as root, or name its own user", (unsigned)geteuid(), x->user,
			    (unsigned)x->uid);
	if (geteuid() != 0 && x->gid != getegid())
		return cfg_fail(c, gs ? gs : us, NULL, "ldsd runs with gid %u and can start jobs only with it, not "
			    "gid %u: run ldsd as root, or name its own group", (unsigned)getegid(), (unsigned)x->gid);
	return 0;
}

static int check_workdir(struct cfgctx *c, const config_setting_t *g, const struct config_exec *x)
{
	const config_setting_t *s = cfg_blame(g, "workdir", "user");
	struct stat st;
	mode_t need;

	if (x->workdir[0] != '/')
		return cfg_fail(c, s, NULL, "\"%s\" is not an absolute path", x->workdir);
	if (stat(x->workdir, &st) < 0)
		return cfg_fail(c, s, NULL, "%s: %s", x->workdir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cfg_fail(c, s, NULL, "%s is not a directory", x->workdir);
	need = st.st_uid == x->uid ? S_IWUSR | S_IXUSR : st.st_gid == x->gid ? S_IWGRP | S_IXGRP : S_IWOTH | S_IXOTH;
	if ((st.st_mode & need) != need)
		return cfg_fail(c, s, NULL, "%s is not writable by user %s, who makes the jobs' directories there",
			    x->workdir, x->user);
	return 0;
}

/* A rule: its cluster a peer, its program resolved, user names that a
 * START can carry, "**" only as the last pattern. */
static int check_exec_rule(struct cfgctx *c, const config_setting_t *rs, const struct config *cfg,
			   struct config_exec_rule *r)
{
	const config_setting_t *list = config_setting_get_member(rs, "users");

	if (config_peer_find(cfg, r->cluster) == NULL)
		return cfg_fail(c, config_setting_get_member(rs, "cluster"), NULL, "\"%s\" is not one of this gateway's "
			    "peers", r->cluster);
	for (size_t i = 0; i < r->nusers; i++)
		if (strcmp(r->users[i], "*") != 0 && !exec_user_name_valid(r->users[i]))
			return cfg_fail(c, config_setting_get_elem(list, (unsigned)i), NULL, "\"%s\" is not a user name "
				    "(1..%u of A-Z a-z 0-9 . _ -) nor \"*\"", r->users[i], EXEC_USER_MAX);
	list = config_setting_get_member(rs, "args");
	for (size_t i = 0; i + 1 < r->nargs; i++)
		if (strcmp(r->args[i], "**") == 0)
			return cfg_fail(c, config_setting_get_elem(list, (unsigned)i), NULL, "\"**\" (any further arguments) "
				    "must be the last pattern");
	return check_program(c, config_setting_get_member(rs, "program"), r->program, sizeof(r->program));
}

static int check_exec(struct cfgctx *c, const config_t *lc, struct config *cfg)
{
	const config_setting_t *g = config_lookup(lc, "exec");
	const config_setting_t *list = config_setting_get_member(g, "allow_clusters");
	struct config_exec *x = &cfg->exec;

	if (x->nallow == 0 && x->nprograms > 0)
		return cfg_fail(c, g, "allow_clusters", "required with programs: the clusters any of whose users may run "
			    "them (or give rules instead)");
	if (x->nprograms == 0 && x->nallow > 0)
		return cfg_fail(c, g, "programs", "required with allow_clusters: what their users may run (or give rules "
			    "instead)");
	if (x->nrules == 0 && x->nallow == 0)
		return cfg_fail(c, g, "rules", "required: who may start which jobs (or allow_clusters and programs)");
	for (size_t i = 0; i < x->nrules; i++)
		if (check_exec_rule(c, config_setting_get_elem(config_setting_get_member(g, "rules"), (unsigned)i), cfg,
				    &x->rules[i]) < 0)
			return -1;
	if (x->trampoline[0] && (x->trampoline[0] != '/' || access(x->trampoline, X_OK) < 0))
		return cfg_fail(c, config_setting_get_member(g, "trampoline"), NULL, "%s: %s", x->trampoline,
			    x->trampoline[0] != '/' ? "not an absolute path" : strerror(errno));
	for (size_t i = 0; i < x->nallow; i++)
		if (config_peer_find(cfg, x->allow[i]) == NULL)
			return cfg_fail(c, config_setting_get_elem(list, (unsigned)i), NULL,
				    "\"%s\" is not one of this gateway's peers", x->allow[i]);
	list = config_setting_get_member(g, "programs");
	for (size_t i = 0; i < x->nprograms; i++)
		if (check_program(c, config_setting_get_elem(list, (unsigned)i), x->programs[i],
				  sizeof(x->programs[i])) < 0)
			return -1;
	if (x->mpirun[0] != '/' || access(x->mpirun, X_OK) < 0)
		return cfg_fail(c, cfg_blame(g, "mpirun", "programs"), NULL, "%s: %s", x->mpirun,
			    x->mpirun[0] != '/' ? "not an absolute path" : strerror(errno));
	if (check_exec_user(c, g, x) < 0)
		return -1;
	return check_workdir(c, g, x);
}

/* early_drop and max_per_source not in the file follow max_unauth. */
static int check_handshake(struct cfgctx *c, const config_t *lc, struct config_handshake *h)
{
	const config_setting_t *g = config_lookup(lc, "handshake");

	if (g == NULL)
		return 0;
	if (config_setting_get_member(g, "early_drop") == NULL)
		h->early_drop = (h->max_unauth + 1) / 2;
	if (config_setting_get_member(g, "max_per_source") == NULL && h->max_per_source > h->max_unauth)
		h->max_per_source = h->max_unauth;
	if (h->early_drop > h->max_unauth)
		return cfg_fail(c, cfg_blame(g, "early_drop", "max_unauth"), NULL, "early_drop (%u) must not exceed max_unauth (%u)",
			    h->early_drop, h->max_unauth);
	if (h->max_per_source > h->max_unauth)
		return cfg_fail(c, cfg_blame(g, "max_per_source", "max_unauth"), NULL,
			    "max_per_source (%u) must not exceed max_unauth (%u)", h->max_per_source, h->max_unauth);
	return 0;
}

/* A message transport carries whole frames: a peer's largest, a DATA frame
 * of a full block (sealed: with its tag), must fit in one message. */
static int check_peer_messages(struct cfgctx *c, const config_t *lc, const struct config *cfg)
{
	const config_setting_t *list = config_lookup(lc, "peers");

	for (size_t i = 0; i < cfg->npeers; i++) {
		const struct config_peer *p = &cfg->peers[i];
		const struct lds_transport_ops *ops = transport_find(p->transport);
		size_t frame = WIRE_DATA_HDR_LEN + p->block_size + (p->encryption == CONFIG_ENC_AEAD ? SEAL_OVERHEAD : 0);

		if (ops == NULL || !(ops->caps.flags & LDS_TP_CAP_MESSAGE) || frame <= ops->caps.max_msg)
			continue;
		return cfg_fail(c, cfg_blame(config_setting_get_elem(list, (unsigned)i), "block_size", "transport"),
				NULL, "a block of %zu bytes makes DATA frames of %zu bytes%s, larger than transport \"%s\" "
				"carries in one message (max_msg %zu); make block_size at most %zu", p->block_size, frame,
				p->encryption == CONFIG_ENC_AEAD ? " sealed" : "", ops->name, ops->caps.max_msg,
				p->block_size - (frame - ops->caps.max_msg));
	}
	return 0;
}

int cfgcheck_file(struct cfgctx *c, const config_t *lc, struct config *cfg)
{
	if (check_handshake(c, lc, &cfg->handshake) < 0)
		return -1;
	if (check_peer_names(c, lc, cfg) < 0 || check_peer_messages(c, lc, cfg) < 0)
		return -1;
	if (cfg->exec.enabled && check_exec(c, lc, cfg) < 0)
		return -1;
	if (derive_sockets(c, lc, cfg) < 0)
		return -1;
	return check_clients(c, lc, cfg);
}
