/*
 * config.h - ldsd's configuration: parse a libconfig file into plain structs,
 * validate it, print it back.
 *
 * Every error names the file, the line and the setting, e.g.
 *   "ldsd.conf:14: peers.[1].streams: too small: must be 1..64 or "auto" (got 0)".
 * Every number is range-checked as the file wrote it (ldsd/cfgnum.h),
 * before it is converted to the field's type: durations have an upper
 * bound each, byte sizes at most config_mem_max().
 * docs/config.md documents every field; conf/ldsd.conf is the annotated
 * example.  Nothing here touches the network.  Beyond the config file (and
 * its @include files) the only files read are the key files: each peer's
 * key file is checked (regular file, mode & 077 == 0, 16..1024 bytes after
 * one trailing newline) and read into its struct config_peer (key,
 * key_len), and key_file comes back as an absolute path.  A peer's
 * transport must be registered (transports/registry.c) and able to carry
 * links; its own settings (transport.h: ops->options) are parsed into the
 * peer's settings block with the same rules and messages as the core's,
 * then checked by the transport against this machine (TCP: the kernel's
 * congestion controls and socket-buffer limit; an error otherwise: a link
 * that cannot use what its file says should not start).  A peer's address may be "[v6]": it is stored without the
 * brackets.  Names are not looked up here (confcheck.h does, for --check).
 *
 * The functions below live in three files (banners): config.c (the file as
 * a whole and the daemon's own settings), cfgpeer.c (a peer's settings),
 * cfgfield.c (the table-driven reader every setting goes through).  Their
 * helpers: cfgprint.c prints settings back, cfgcheck.c checks across
 * settings, cfgerr.c words errors, cfgnum.c reads numbers as written.
 */
#ifndef LDS_CONFIG_H
#define LDS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "transports/transport.h"
#include "wire.h"
#include "libclient/keyfile.h"

#define CONFIG_PATH_MAX 256
#define CONFIG_ADDR_MAX 256
#define CONFIG_MAX_PEERS 64
#define CONFIG_MAX_STREAMS 64
#define CONFIG_KEY_MIN KEYFILE_MIN  /* bytes of secret in a key file */
#define CONFIG_KEY_MAX KEYFILE_MAX
#define CONFIG_EXEC_MAX_PROGRAMS 32
#define CONFIG_EXEC_MAX_ARGS 16
#define CONFIG_USER_MAX 64
#define CONFIG_EXEC_MAX_RULES 16
#define CONFIG_EXEC_MAX_USERS 32

enum config_role { CONFIG_ROLE_CONNECT, CONFIG_ROLE_LISTEN };
/* How a link protects frames after its handshake (docs/protocol.md). */
enum config_encryption { CONFIG_ENC_AEAD, CONFIG_ENC_NONE };

struct config_peer {
	char cluster[WIRE_NAME_MAX + 1];
	char address[CONFIG_ADDR_MAX];   /* connect: remote host; listen: local bind */
	uint16_t port;
	enum config_role role;
	char transport[16];              /* a registered transport's name; default "tcp" */
	unsigned streams;                /* 1..CONFIG_MAX_STREAMS, or 0 = "auto"; default 4 */
	unsigned streams_min, streams_max; /* bounds for "auto"; default 1 and 16 */
	size_t block_size;               /* bytes, 512..WIRE_MAX_BLOCK; default 65536 */
	size_t send_memory;              /* bytes, >= 4 * block_size, <= config_mem_max(); default 128 MiB */
	size_t recv_memory;              /* bytes, >= 4 * block_size, <= config_mem_max(); default 128 MiB */
	double inactivity_timeout;       /* s, > 0, <= 86400; default 30 */
	double keepalive;                /* s, > 0 and < inactivity_timeout; default inactivity_timeout / 4 */
	double reconnect_min;            /* s, > 0, <= 3600; default 0.05 */
	double reconnect_max;            /* s, >= reconnect_min, <= 3600; default 1.0 */
	double connect_timeout;          /* s, > 0, <= 3600; default 10 */
	enum config_encryption encryption; /* "aead" (default) or "none"; both ends must agree */
	char key_file[CONFIG_PATH_MAX];  /* required; absolute (a relative one is resolved against the config file's directory) */
	uint8_t key[CONFIG_KEY_MAX];     /* contents of key_file, trailing newline stripped */
	size_t key_len;
	int line;                        /* line of the peer's group, for messages */
	/* The transport's own settings (transport.h: ops->options), parsed
	 * and printed with the others but read only by the transport. */
	union {
		unsigned char tp_conf[LDS_TP_CONF_MAX];
		max_align_t tp_conf_align;
	};
};

/*
 * The exec service (ldsd/jobexec.c): which peers, and which of their
 * users, may start MPI jobs here, which programs with which arguments,
 * and as whom.  Off unless the file has an exec group.
 * Loading resolves the allow-list with realpath() (each must be a regular
 * executable file not writable by group or others), looks up user and
 * group, and refuses uid 0 without allow_root, and, when the loading
 * process is not root, any user or group other than its own: such a
 * daemon can only run jobs as itself.
 */
struct config_exec_rule {
	char cluster[WIRE_NAME_MAX + 1]; /* a peer; required */
	char users[CONFIG_EXEC_MAX_USERS][CONFIG_USER_MAX];  /* its users who may; "*" any; required */
	size_t nusers;
	char program[CONFIG_PATH_MAX];   /* resolved like programs; required */
	char args[CONFIG_EXEC_MAX_ARGS][CONFIG_PATH_MAX];    /* fnmatch() pattern per argument, a last
							     * "**" any more; default none: no arguments */
	size_t nargs;
};

struct config_exec {
	int enabled;                     /* the file has an exec group */
	char allow[CONFIG_MAX_PEERS][WIRE_NAME_MAX + 1];   /* allow_clusters: any user of these peers may... */
	size_t nallow;
	char programs[CONFIG_EXEC_MAX_PROGRAMS][CONFIG_PATH_MAX];  /* ...run these, resolved, with any arguments */
	size_t nprograms;
	struct config_exec_rule rules[CONFIG_EXEC_MAX_RULES];   /* per cluster and user; rules or the two above required */
	size_t nrules;
	char trampoline[CONFIG_PATH_MAX];   /* ldsd-exec; default "": the one next to the ldsd binary */
	char mpirun[CONFIG_PATH_MAX];    /* absolute path; default "/usr/bin/mpirun" */
	char mpirun_args[CONFIG_EXEC_MAX_ARGS][CONFIG_PATH_MAX];   /* before the ranks; default "--oversubscribe" */
	size_t nmpirun_args;
	char user[CONFIG_USER_MAX];      /* jobs run as this user; required */
	char group[CONFIG_USER_MAX];     /* ...and group; default the user's primary group */
	uid_t uid;                       /* user and group, resolved */
	gid_t gid;
	int allow_root;                  /* user may be uid 0; default false */
	unsigned max_jobs;               /* running at once, 1..1024; default 4 */
	unsigned max_ranks;              /* per job, 1..EXEC_MAX_RANKS; default 64 */
	double max_time;                 /* s a job may run, > 0, <= 365 days; default 86400 */
	char workdir[CONFIG_PATH_MAX];   /* jobs' directories are made in it; default "/tmp" */
	char path[CONFIG_PATH_MAX];      /* PATH of jobs; default "/usr/local/bin:/usr/bin:/bin" */
};

/* What a listener allows connections before they authenticate
 * (admission.h, docs/security.md "Before authentication"). */
struct config_handshake {
	double timeout;                  /* s from accept to a verified AUTH, > 0; default 10 */
	unsigned max_unauth;             /* connections not yet authenticated, 1..CONFIG_MAX_UNAUTH; default 256 */
	unsigned early_drop;             /* above this many, new ones are dropped at random; <= max_unauth; default
					    half of max_unauth */
	unsigned max_per_source;         /* ...from one address, <= max_unauth; default 64, or max_unauth if less */
	unsigned max_failures;           /* failed handshakes of one address per 10 s, after which its connections are
					    dropped for the rest of the 10 s; default 60 */
};
#define CONFIG_MAX_UNAUTH 4096
/* Bounds on local clients (docs/config.md, "clients"). */
struct config_clients {
	unsigned max_clients;            /* connections at once; default 1024 */
	unsigned max_per_user;           /* ...of one uid (TCP clients count as one); default 256 */
	double hello_timeout;            /* s a connection may take to send HELLO; default 10 */
	size_t max_message;              /* largest SEND payload; default WIRE_MAX_MSG */
	size_t queue_max;                /* bytes of notices a client leaves unread before it is closed; default 16M */
	size_t input_per_user;           /* bytes of unfinished frames of one user's clients; default 1G */
	/* Bytes of each of a local client's two shared-memory rings (0: the
	 * socket only); they count against input_per_user.  Default 4M. */
	size_t shm_ring;
	unsigned undelivered_share;      /* % of a link's recv_memory for messages nobody has open; default 50 */
	double undelivered_ttl;          /* s such a message waits; default 600 */
	/* clients.tcp's key: a TCP client is not identified by the kernel, so
	 * it proves it holds this key before HELLO (docs/protocol.md). */
	char tcp_key_file[CONFIG_PATH_MAX];   /* absolute; required with clients.tcp */
	uint8_t tcp_key[CONFIG_KEY_MAX];
	size_t tcp_key_len;
	/* clients.socket's owner, group and mode; default ldsd's user and
	 * group, "0666" (every local user may connect; endpoints belong to
	 * their uid). */
	char socket_owner[CONFIG_USER_MAX];
	char socket_group[CONFIG_USER_MAX];
	char socket_mode[8];
	uid_t socket_uid;                /* resolved; (uid_t)-1 = ldsd's */
	gid_t socket_gid;                /* resolved; (gid_t)-1 = ldsd's */
	unsigned socket_perm;            /* socket_mode's value */
};

struct config {
	char file[CONFIG_PATH_MAX];      /* the file this came from */
	char cluster[WIRE_NAME_MAX + 1]; /* this cluster's name; required */
	char client_socket[CONFIG_PATH_MAX];   /* unix socket for liblds; default LDS_DEFAULT_SOCKET (/run/lds/ldsd.sock), where liblds looks */
	char client_tcp[CONFIG_ADDR_MAX];      /* optional "host:port" for liblds over TCP; "" = none */
	char client_rdma[CONFIG_ADDR_MAX];     /* optional "addr:port" for liblds over RDMA (rdma://); "" = none */
	int client_rdma_line;                  /* its line in file, for messages */
	char control_socket[CONFIG_PATH_MAX];  /* ldsctl socket; default <client_socket without .sock>.ctl */
	char status_socket[CONFIG_PATH_MAX];   /* read-only ldsctl socket; default <... without .sock>.status */
	char status_group[CONFIG_USER_MAX];    /* group that may use status_socket; "" = ldsd's own */
	gid_t status_gid;                      /* status_group's id, or (gid_t)-1 for ldsd's own */
	char metrics_listen[CONFIG_ADDR_MAX];  /* "host:port" serving OpenMetrics over HTTP; "" = off */
	struct config_clients clients;
	char log_level[16];              /* "error", "warn", "info" (default), "debug" */
	int allow_faults;                /* ldsctl fault injection allowed; default false */
	double drain_timeout;            /* s, > 0, <= 86400, to wait for unacked data at SIGTERM; default 10 */
	struct config_handshake handshake;
	size_t npeers;
	struct config_peer peers[CONFIG_MAX_PEERS];
	struct config_exec exec;
};

/* config.c */

/*
 * Reads and validates path into *cfg (zeroed first).  On error returns -1
 * and writes one line "FILE:LINE: SETTING: what is wrong" (without newline)
 * into err.  Validation covers types, ranges, unknown settings (an error,
 * to catch typos), duplicate peer clusters, a peer named like this cluster,
 * and unreadable, too short or group/world-readable key files.
 */
int config_load(const char *path, struct config *cfg, char *err, size_t errlen);

/* Writes the effective configuration, defaults filled in, as libconfig text
 * (keys shown as key_file paths only, never their contents). */
void config_print(const struct config *cfg, FILE *out);

/* Fills *h with the defaults of the handshake group, for programs that
 * build a configuration without a file. */
void config_handshake_defaults(struct config_handshake *h);

/* cfgpeer.c */

/* Fills *p with the defaults of every optional peer setting (keepalive
 * still 0: it follows inactivity_timeout), congestion resolved against
 * this kernel; for programs that build a link without a file (ldsbench
 * --direct). */
void config_peer_defaults(struct config_peer *p);
/* Reads p->key_file into p->key: a regular file, mode 0600 or stricter,
 * CONFIG_KEY_MIN..CONFIG_KEY_MAX bytes (one trailing newline ignored).
 * Returns 0, or -1 with the reason, naming the file, in err. */
int config_read_key(struct config_peer *p, char *err, size_t errlen);

/* A transport the core's links can use: reliable and ordered, carrying a
 * byte stream or messages (its caps). */
int config_transport_usable(const struct lds_transport_ops *ops);

/* Sets the setting name of p's transport (docs/transports.md) from value
 * as ldsd.conf would write it, without quotes ("cubic", "4M"), with the
 * same rules and the transport's own check: for programs that build a
 * peer without a file (ldsbench --direct).  p->transport must be set.
 * Returns 0, or -1 with the reason, naming the setting, in err. */
int config_peer_set(struct config_peer *p, const char *name, const char *value, char *err, size_t errlen);

/* The peer whose cluster is name, or NULL. */
const struct config_peer *config_peer_find(const struct config *cfg, const char *name);

/* Gives p the transport name with that transport's default settings, as
 * `transport = NAME;` in a file would (ldsbench --direct --transport): 0,
 * or -1 with err filled (not built in, or cannot carry links). */
int config_peer_set_transport(struct config_peer *p, const char *name, char *err, size_t errlen);

/* cfgfield.c */

/* A size as ldsd.conf writes it ("65536", "512k", "64M", "1GiB": binary
 * multiples) into *v; -1 with errno EINVAL if s is none, ERANGE if it is
 * one beyond 64 bits. */
int config_parse_size(const char *s, unsigned long long *v);

/* The most memory one size setting may name: physical memory
 * (sysconf _SC_PHYS_PAGES * _SC_PAGESIZE), or the address-space limit
 * (RLIMIT_AS) if that is smaller; SIZE_MAX if neither is known.  *what, if
 * what is not NULL, gets which of the two it is, for messages. */
size_t config_mem_max(const char **what);

#endif
