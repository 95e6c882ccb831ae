/*
 * config.c - ldsd's configuration file; see config.h and docs/config.md.
 *
 * Every setting is described once, in the field tables below: its name, how
 * to parse it, where it goes and its range.  Parsing, the unknown-setting
 * check, the required-setting check and config_print() all walk the same
 * tables, so a new setting is one table line (plus a default if it has one).
 * What needs more than one setting, or the whole file, is checked by
 * cfgcheck.c after the tables are read; both name errors through cfgerr.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "cfgcheck.h"
#include "cfgerr.h"
#include "cfgnum.h"
#include "config.h"
#include "execmsg.h"
#include "resolve.h"
#include "libclient/lds.h"
#include "transports/transport.h"
#include "wire.h"

enum kind {
	K_STR,       /* non-empty string of at most .max (or .size - 1) bytes */
	K_NAME,      /* cluster name, wire_name_valid() */
	K_HOSTPORT,  /* "host:port" */
	K_WORD,      /* one of .words, stored as the string */
	K_ENUM,      /* one of .words, stored as its index */
	K_BOOL,      /* stored as int */
	K_UINT,      /* integer in .min .. .max (.max 0: as large as the field holds) */
	K_STREAMS,   /* K_UINT, or "auto" stored as 0 */
	K_BYTES,     /* K_UINT, or a string with a binary suffix ("64M"); at most config_mem_max() */
	K_SECONDS,   /* int or float, > 0 and at most .max seconds (.max 0: SECONDS_MAX), stored as double */
	K_GROUP,     /* group of .sub settings, stored in the same struct */
	K_OPTGROUP,  /* K_GROUP whose presence is stored as int at .off; printed only if present */
	K_LIST,      /* [ "...", ... ] of .elem (K_STR or K_NAME): .max rows of .size / .max bytes, count at .count_off */
	K_PEERS,     /* the peers list */
	K_GROUPS,    /* ( { ... }, ... ) of .sub groups: .max rows of .size / .max bytes, count at .count_off */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;                  /* in struct config or struct config_peer */
	size_t size;
	unsigned long long min, max;  /* K_UINT, K_STREAMS, K_BYTES: the range; K_SECONDS: max in seconds */
	const char *const *words;    /* NULL-terminated */
	const struct field *sub;
	enum kind elem;              /* K_LIST: kind of each element */
	size_t count_off;            /* K_LIST: size_t count of elements */
	bool required;
};

/* The longest duration a K_SECONDS setting without a .max of its own may
 * give: a day.  Durations become nanoseconds in a uint64_t (584 years),
 * milliseconds in an int (24 days: TCP_USER_TIMEOUT), deadlines added to
 * the monotonic clock; bounding them here keeps every conversion defined. */
#define SECONDS_MAX 86400

#define AT(type, member) \
	.off = offsetof(struct type, member), .size = sizeof(((struct type *)0)->member)

static const char *const roles[] = { "connect", "listen", NULL };  /* enum config_role order */
static const char *const encryptions[] = { "aead", "none", NULL };  /* enum config_encryption order */
static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };  /* log_level_parse() */

static const struct field client_fields[] = {
	{ .name = "socket", .kind = K_STR, AT(config, client_socket), .max = UNIX_PATH_LEN },
	{ .name = "socket_owner", .kind = K_STR, AT(config, clients.socket_owner) },
	{ .name = "socket_group", .kind = K_STR, AT(config, clients.socket_group) },
	{ .name = "socket_mode", .kind = K_STR, AT(config, clients.socket_mode) },
	{ .name = "tcp", .kind = K_HOSTPORT, AT(config, client_tcp) },
	{ .name = "tcp_key_file", .kind = K_STR, AT(config, clients.tcp_key_file) },
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

static const struct field peer_fields[] = {
	{ .name = "cluster", .kind = K_NAME, AT(config_peer, cluster), .required = true },
	{ .name = "address", .kind = K_STR, AT(config_peer, address), .required = true },
	{ .name = "port", .kind = K_UINT, AT(config_peer, port), .min = 1, .max = 65535, .required = true },
	{ .name = "role", .kind = K_ENUM, AT(config_peer, role), .words = roles, .required = true },
	/* One of the registered transports (peer_transport), whose own
	 * settings join this table for its peers (peer_table). */
	{ .name = "transport", .kind = K_STR, AT(config_peer, transport) },
	{ .name = "streams", .kind = K_STREAMS, AT(config_peer, streams), .min = 1, .max = CONFIG_MAX_STREAMS },
	{ .name = "streams_min", .kind = K_UINT, AT(config_peer, streams_min), .min = 1, .max = CONFIG_MAX_STREAMS },
	{ .name = "streams_max", .kind = K_UINT, AT(config_peer, streams_max), .min = 1, .max = CONFIG_MAX_STREAMS },
	{ .name = "block_size", .kind = K_BYTES, AT(config_peer, block_size), .min = 512, .max = WIRE_MAX_BLOCK },
	/* The real lower bound, 4 * block_size, is checked once block_size is known. */
	{ .name = "send_memory", .kind = K_BYTES, AT(config_peer, send_memory), .min = 4 * 512, .max = SIZE_MAX },
	{ .name = "recv_memory", .kind = K_BYTES, AT(config_peer, recv_memory), .min = 4 * 512, .max = SIZE_MAX },
	{ .name = "inactivity_timeout", .kind = K_SECONDS, AT(config_peer, inactivity_timeout), .max = SECONDS_MAX },
	{ .name = "keepalive", .kind = K_SECONDS, AT(config_peer, keepalive), .max = SECONDS_MAX },
	{ .name = "reconnect_min", .kind = K_SECONDS, AT(config_peer, reconnect_min), .max = 3600 },
	{ .name = "reconnect_max", .kind = K_SECONDS, AT(config_peer, reconnect_max), .max = 3600 },
	{ .name = "connect_timeout", .kind = K_SECONDS, AT(config_peer, connect_timeout), .max = 3600 },
	{ .name = "key_file", .kind = K_STR, AT(config_peer, key_file), .required = true },
	{ .name = "encryption", .kind = K_ENUM, AT(config_peer, encryption), .words = encryptions },
	{ .name = NULL },
};

#define LIST(type, member, count, ek) \
	.kind = K_LIST, AT(type, member), .elem = ek, .count_off = offsetof(struct type, count), \
	.max = sizeof(((struct type *)0)->member) / sizeof(((struct type *)0)->member[0])

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
	{ .name = "peers", .kind = K_PEERS },
	{ .name = "exec", .kind = K_OPTGROUP, AT(config, exec.enabled), .sub = exec_fields },
	{ .name = NULL },
};

/* keepalive is left 0 here: its default depends on inactivity_timeout. */
static const struct config_peer peer_defaults = {
	.transport = "tcp",
	.streams = 4,
	.streams_min = 1,
	.streams_max = 16,
	.block_size = 65536,
	.send_memory = 128u << 20,
	.recv_memory = 128u << 20,
	.inactivity_timeout = 30.0,
	.reconnect_min = 0.05,
	.reconnect_max = 1.0,
	.connect_timeout = 10.0,
};

static const struct config_handshake handshake_defaults = {
	.timeout = 10.0,
	.max_unauth = 256,
	.early_drop = 128,
	.max_per_source = 64,
	.max_failures = 60,
};

/* Edit distance, case-insensitive, for "did you mean" on a misspelt name. */
static size_t distance(const char *a, const char *b)
{
	size_t lb = strlen(b), row[64];

	if (lb >= sizeof(row) / sizeof(row[0]))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; a[i - 1]; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;

			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known name closest to name if it is a plausible typo of it: at most a
 * third of its characters wrong ("stream", "BlockSize", "keepalvie"). */
static const char *suggest(const char *name, const struct field *table)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (const struct field *f = table; f->name; f++) {
		size_t d = distance(name, f->name);

		if (d <= strlen(f->name) / 3 && d < best_d) {
			best = f->name;
			best_d = d;
		}
	}
	return best;
}

static int fail_unknown(struct cfgctx *c, const config_setting_t *s, const struct field *table)
{
	const char *hint = suggest(config_setting_name(s), table);

	if (hint != NULL)
		return cfg_fail(c, s, NULL, "unknown setting; did you mean \"%s\"?", hint);
	return cfg_fail(c, s, NULL, "unknown setting");
}

/* ---- scalar parsing ------------------------------------------------------ */

/* Integer settings land in fields of several widths (uint16_t port,
 * unsigned streams, size_t sizes, int and enum): the table gives the size. */
static void store_uint(void *dst, size_t size, unsigned long long v)
{
	if (size == sizeof(uint16_t)) {
		uint16_t x = (uint16_t)v;
		memcpy(dst, &x, size);
	} else if (size == sizeof(uint32_t)) {
		uint32_t x = (uint32_t)v;
		memcpy(dst, &x, size);
	} else {
		uint64_t x = v;
		memcpy(dst, &x, sizeof(x));
	}
}

static unsigned long long load_uint(const void *src, size_t size)
{
	if (size == sizeof(uint16_t)) {
		uint16_t x;
		memcpy(&x, src, size);
		return x;
	} else if (size == sizeof(uint32_t)) {
		uint32_t x;
		memcpy(&x, src, size);
		return x;
	} else {
		uint64_t x;
		memcpy(&x, src, sizeof(x));
		return x;
	}
}

/* Decimal digits at s (at least one) into *v; *end after them.  Unlike
 * strtoull, no sign, no blanks, and overflow is an error. */
static int parse_digits(const char *s, const char **end, unsigned long long *v)
{
	const char *p = s;

	*v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (ULLONG_MAX - (unsigned)(*p - '0')) / 10)
			return -1;
		*v = *v * 10 + (unsigned)(*p - '0');
	}
	*end = p;
	return p == s ? -1 : 0;
}

/* "65536", "512k", "64M", "1G", "1T", also "64MiB" and the like: binary
 * multiples, because memory is allocated in them. */
int config_parse_size(const char *s, unsigned long long *v)
{
	static const char units[] = "kmgt";
	size_t ndigits = strspn(s, "0123456789");
	const char *p = s + ndigits, *u;
	unsigned shift = 0;

	if (*p != '\0') {
		u = strchr(units, tolower((unsigned char)*p));
		if (u == NULL || (p[1] != '\0' && strcasecmp(p + 1, "iB") != 0))
			ndigits = 0;
		else
			shift = 10 * (unsigned)(u - units + 1);
	}
	if (ndigits == 0) {
		errno = EINVAL;
		return -1;
	}
	if (parse_digits(s, &p, v) < 0 || *v > ULLONG_MAX >> shift) {
		errno = ERANGE;
		return -1;
	}
	*v <<= shift;
	return 0;
}

/* "host:port" or "[v6]:port", port 1..65535: enough to catch a missing port
 * here; the daemon resolves the host. */
static bool hostport_valid(const char *s)
{
	const char *colon = strrchr(s, ':'), *end;
	unsigned long long port;

	if (colon == NULL || colon == s)
		return false;
	if (parse_digits(colon + 1, &end, &port) < 0 || *end != '\0')
		return false;
	return port >= 1 && port <= 65535;
}

static int word_index(const char *const *words, const char *s)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(words[i], s) == 0)
			return i;
	return -1;
}

static int fail_word(struct cfgctx *c, const config_setting_t *s, const struct field *f, const char *got)
{
	char list[128];
	size_t n = 0;

	for (int i = 0; f->words[i]; i++)
		cfg_append(list, sizeof(list), &n, "%s\"%s\"", i ? ", " : "", f->words[i]);
	return cfg_fail(c, s, NULL, "must be one of %s (got \"%s\")", list, got);
}

static int parse_string(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	const char *v = config_setting_get_string(s);
	size_t max = f->max ? f->max : f->size - 1;
	int i;

	if (v == NULL)
		return cfg_fail(c, s, NULL, "must be a string (got %s)", cfg_type_name(s));
	if (*v == '\0')
		return cfg_fail(c, s, NULL, "must not be empty");
	if (f->words != NULL) {
		if ((i = word_index(f->words, v)) < 0)
			return fail_word(c, s, f, v);
		if (f->kind == K_ENUM) {
			store_uint(dst, f->size, (unsigned)i);
			return 0;
		}
	}
	if (strlen(v) > max)
		return cfg_fail(c, s, NULL, "too long: at most %zu bytes (got %zu)", max, strlen(v));
	if (f->kind == K_NAME && !wire_name_valid(v))
		return cfg_fail(c, s, NULL, "\"%s\" is not a valid cluster name: use letters, digits, '.', '_' and '-'", v);
	if (f->kind == K_HOSTPORT && !hostport_valid(v))
		return cfg_fail(c, s, NULL, "must be \"host:port\" with a port 1..65535 (got \"%s\")", v);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int parse_bool(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return cfg_fail(c, s, NULL, "must be true or false (got %s)", cfg_type_name(s));
	store_uint(dst, f->size, (unsigned)config_setting_get_bool(s));
	return 0;
}

size_t config_mem_max(const char **what)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long mem = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : SIZE_MAX;
	const char *why = "this machine's physical memory";
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem) {
		mem = rl.rlim_cur;
		why = "this process's address-space limit (RLIMIT_AS, ulimit -v)";
	}
	if (what != NULL)
		*what = why;
	return mem < SIZE_MAX ? (size_t)mem : SIZE_MAX;
}

/* The largest value f takes: its own .max, what its field holds, and for
 * sizes what the machine has (*mem then says which limit that is). */
static unsigned long long uint_max(const struct field *f, const char **mem)
{
	unsigned long long max = f->size == sizeof(uint16_t)   ? UINT16_MAX
				 : f->size == sizeof(uint32_t) ? UINT32_MAX
							       : UINT64_MAX;
	const char *why = NULL;

	if (f->max != 0 && f->max < max)
		max = f->max;
	if (f->kind == K_BYTES) {
		size_t machine = config_mem_max(&why);

		if (machine < max)
			max = machine;
		else
			why = NULL;
	}
	*mem = why;
	return max;
}

static unsigned long long seconds_max(const struct field *f)
{
	return f->max ? f->max : SECONDS_MAX;
}

/* s as the file wrote it. */
static int number_of(struct cfgctx *c, const config_setting_t *s, struct cfgnum *n)
{
	char path[2 * PATH_MAX];

	return cfgnum_from_setting(s, cfg_source_file(c, s, path, sizeof(path)), n);
}

/*
 * Every numeric setting out of its range ends here, so that each message
 * has the same parts: which way it is wrong, the range, the value as
 * written: "too large: must be 1..65535 (got 99999999999999999999)".
 */
static int fail_range(struct cfgctx *c, const config_setting_t *s, const struct field *f, const struct cfgnum *n,
		      bool high)
{
	char range[128], got[96];
	const char *mem = NULL;

	if (f->kind == K_SECONDS)
		snprintf(range, sizeof(range), "more than 0 and at most %llu seconds", seconds_max(f));
	else
		snprintf(range, sizeof(range), "%llu..%llu%s", f->min, uint_max(f, &mem),
			 f->kind == K_STREAMS ? " or \"auto\"" : "");
	/* A size string's bytes, unless it is too large to have any. */
	if (n->text[0] == '"' && !n->huge)
		snprintf(got, sizeof(got), "%s = %llu", n->text, n->mag);
	else
		snprintf(got, sizeof(got), "%s", n->text);
	return cfg_fail(c, s, NULL, "too %s: must be %s (got %s)%s%s", high ? "large" : "small", range, got,
		    high && mem ? "; the upper bound is " : "", high && mem ? mem : "");
}

/* A size string ("64M") into *n; -1 if it is none. */
static int parse_size_string(const char *v, struct cfgnum *n)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->text, sizeof(n->text), "\"%.*s%s\"", (int)sizeof(n->text) - 6, v,
		 strlen(v) > sizeof(n->text) - 6 ? "..." : "");
	if (config_parse_size(v, &n->mag) == 0)
		return 0;
	n->huge = errno == ERANGE;
	return n->huge ? 0 : -1;
}

/* Range-checked on the number as the file wrote it, before it is stored
 * into a field of the table's size. */
static int parse_uint(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	const char *mem;
	struct cfgnum n;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		number_of(c, s, &n);
		break;
	case CONFIG_TYPE_STRING:
		if (f->kind == K_STREAMS && strcmp(config_setting_get_string(s), "auto") == 0) {
			store_uint(dst, f->size, 0);
			return 0;
		}
		if (f->kind == K_BYTES) {
			if (parse_size_string(config_setting_get_string(s), &n) < 0)
				return cfg_fail(c, s, NULL, "\"%s\" is not a byte count: use an integer, or a "
					    "string like \"512k\", \"64M\", \"1G\" or \"64MiB\" (binary multiples)",
					    config_setting_get_string(s));
			break;
		}
		/* fall through */
	default:
		return cfg_fail(c, s, NULL, "must be an integer%s (got %s)",
			    f->kind == K_BYTES     ? " or a size string like \"64M\""
			    : f->kind == K_STREAMS ? " or \"auto\""
						   : "",
			    cfg_type_name(s));
	}
	if (n.neg || n.mag < f->min)
		return fail_range(c, s, f, &n, false);
	if (n.huge || n.mag > uint_max(f, &mem))
		return fail_range(c, s, f, &n, true);
	store_uint(dst, f->size, n.mag);
	return 0;
}

static int parse_seconds(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	struct cfgnum n;

	if (number_of(c, s, &n) < 0)
		return cfg_fail(c, s, NULL, "must be a number of seconds (got %s)", cfg_type_name(s));
	/* Written this way, NaN (which libconfig cannot read anyway) fails too. */
	if (!(n.d > 0))
		return fail_range(c, s, f, &n, false);
	if (n.d > (double)seconds_max(f))
		return fail_range(c, s, f, &n, true);
	memcpy(dst, &n.d, sizeof(n.d));
	return 0;
}

/* ---- groups and peers ---------------------------------------------------- */

static int parse_group(struct cfgctx *c, const config_setting_t *g, const struct field *table, void *base);
static int parse_peers(struct cfgctx *c, const config_setting_t *s, struct config *cfg);

/* Each element is parsed as a setting of kind f->elem into its row. */
static int parse_list(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	const struct field row = { .kind = f->elem, .size = f->size / f->max };
	int n = config_setting_length(s);

	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return cfg_fail(c, s, NULL, "must be a list of strings [ \"...\", ... ] (got %s)", cfg_type_name(s));
	if (n == 0 && f->required)
		return cfg_fail(c, s, NULL, "must not be empty");
	if ((unsigned long long)n > f->max)
		return cfg_fail(c, s, NULL, "at most %llu entries (got %d)", f->max, n);
	for (int i = 0; i < n; i++)
		if (parse_string(c, config_setting_get_elem(s, (unsigned)i), &row,
				 (char *)base + f->off + (size_t)i * row.size) < 0)
			return -1;
	store_uint((char *)base + f->count_off, sizeof(size_t), (unsigned)n);
	return 0;
}

/* Each element is a group of f->sub settings parsed into its row. */
static int parse_groups(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	int n = config_setting_length(s);

	if (!config_setting_is_list(s))
		return cfg_fail(c, s, NULL, "must be a list of groups ( { ... }, ... ) (got %s)", cfg_type_name(s));
	if ((unsigned long long)n > f->max)
		return cfg_fail(c, s, NULL, "at most %llu entries (got %d)", f->max, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);

		if (!config_setting_is_group(g))
			return cfg_fail(c, g, NULL, "must be a group { ... } (got %s)", cfg_type_name(g));
		if (parse_group(c, g, f->sub, (char *)base + f->off + (size_t)i * (f->size / f->max)) < 0)
			return -1;
	}
	store_uint((char *)base + f->count_off, sizeof(size_t), (unsigned)n);
	return 0;
}

static int parse_setting(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	void *dst = (char *)base + f->off;

	switch (f->kind) {
	case K_STR:
	case K_NAME:
	case K_HOSTPORT:
	case K_WORD:
	case K_ENUM:
		return parse_string(c, s, f, dst);
	case K_BOOL:
		return parse_bool(c, s, f, dst);
	case K_UINT:
	case K_STREAMS:
	case K_BYTES:
		return parse_uint(c, s, f, dst);
	case K_SECONDS:
		return parse_seconds(c, s, f, dst);
	case K_GROUP:
	case K_OPTGROUP:
		if (!config_setting_is_group(s))
			return cfg_fail(c, s, NULL, "must be a group { ... } (got %s)", cfg_type_name(s));
		if (f->kind == K_OPTGROUP)
			store_uint(dst, f->size, 1);
		return parse_group(c, s, f->sub, base);
	case K_LIST:
		return parse_list(c, s, f, base);
	case K_PEERS:
		return parse_peers(c, s, base);
	case K_GROUPS:
		return parse_groups(c, s, f, base);
	}
	return cfg_fail(c, s, NULL, "internal error: unhandled kind %d", (int)f->kind);
}

static const struct field *find_field(const struct field *table, const char *name)
{
	for (const struct field *f = table; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* Every member of g must be in table; every required entry of table in g. */
static int parse_group(struct cfgctx *c, const config_setting_t *g, const struct field *table, void *base)
{
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const struct field *f = find_field(table, config_setting_name(s));

		if (f == NULL)
			return fail_unknown(c, s, table);
		if (parse_setting(c, s, f, base) < 0)
			return -1;
	}
	for (const struct field *f = table; f->name; f++)
		if (f->required && config_setting_get_member(g, f->name) == NULL)
			return cfg_fail(c, g, f->name, "required setting missing");
	return 0;
}

static int check_peer_ranges(struct cfgctx *c, const config_setting_t *ps, const struct config_peer *p)
{
	if (p->send_memory / 4 < p->block_size)
		return cfg_fail(c, cfg_blame(ps, "send_memory", "block_size"), NULL,
			    "send_memory (%zu) must be at least 4 * block_size (%zu)", p->send_memory, 4 * p->block_size);
	if (p->recv_memory / 4 < p->block_size)
		return cfg_fail(c, cfg_blame(ps, "recv_memory", "block_size"), NULL,
			    "recv_memory (%zu) must be at least 4 * block_size (%zu)", p->recv_memory, 4 * p->block_size);
	if (p->streams_min > p->streams_max)
		return cfg_fail(c, cfg_blame(ps, "streams_min", "streams_max"), NULL,
			    "streams_min (%u) must not exceed streams_max (%u)", p->streams_min, p->streams_max);
	if (!(p->keepalive < p->inactivity_timeout))
		return cfg_fail(c, cfg_blame(ps, "keepalive", "inactivity_timeout"), NULL,
			    "keepalive (%g) must be less than inactivity_timeout (%g)", p->keepalive, p->inactivity_timeout);
	if (p->reconnect_max < p->reconnect_min)
		return cfg_fail(c, cfg_blame(ps, "reconnect_max", "reconnect_min"), NULL,
			    "reconnect_max (%g) must be at least reconnect_min (%g)", p->reconnect_max, p->reconnect_min);
	return 0;
}

int config_read_key(struct config_peer *p, char *err, size_t errlen)
{
	return keyfile_read(p->key_file, p->key, &p->key_len, err, errlen);
}

static int read_key(struct cfgctx *c, const config_setting_t *s, struct config_peer *p)
{
	char err[4 * CONFIG_PATH_MAX];

	return config_read_key(p, err, sizeof(err)) < 0 ? cfg_fail(c, s, NULL, "%s", err) : 0;
}

/* ---- transports' own settings -------------------------------------------- */

#define PEER_TABLE_MAX 64

/* The transport's own defaults in p's settings block. */
static void peer_transport_defaults(struct config_peer *p, const struct lds_transport_ops *ops)
{
	memset(p->tp_conf, 0, sizeof(p->tp_conf));
	if (ops != NULL && ops->conf_defaults != NULL)
		ops->conf_defaults(p->tp_conf);
}

/* peer_fields, then the settings of transport ops (which may be NULL),
 * as fields stored in the peer's settings block: one table for parsing,
 * the unknown-setting check and printing. */
static const struct field *peer_table(const struct lds_transport_ops *ops, struct field *buf)
{
	static const enum kind kinds[] = {
		[LDS_TP_OPT_STRING] = K_STR, [LDS_TP_OPT_BYTES] = K_BYTES, [LDS_TP_OPT_UINT] = K_UINT,
		[LDS_TP_OPT_SECONDS] = K_SECONDS, [LDS_TP_OPT_BOOL] = K_BOOL,
	};
	size_t n = 0;

	for (const struct field *f = peer_fields; f->name; f++)
		buf[n++] = *f;
	for (const struct lds_tp_option *o = ops ? ops->options : NULL; o && o->name && n + 1 < PEER_TABLE_MAX; o++)
		buf[n++] = (struct field){ .name = o->name, .kind = kinds[o->type],
					   .off = offsetof(struct config_peer, tp_conf) + o->off, .size = o->size,
					   .min = o->min, .max = o->max };
	buf[n] = (struct field){ .name = NULL };
	return buf;
}

/* The peer's transport, registered and able to carry links, or NULL after
 * the error naming the transport setting (*p has its defaults then). */
static const struct lds_transport_ops *peer_transport(struct cfgctx *c, const config_setting_t *ps,
						      struct config_peer *p)
{
	const config_setting_t *ts = config_setting_get_member(ps, "transport");
	const char *name = ts ? config_setting_get_string(ts) : p->transport;
	const struct lds_transport_ops *ops;

	if (name == NULL) {
		cfg_fail(c, ts, NULL, "must be a string (got %s)", cfg_type_name(ts));
		return NULL;
	}
	ops = transport_find(name);
	if (ops == NULL) {
		cfg_fail(c, ts, NULL, "transport \"%s\" is not built in; available: %s", name, transport_names());
		return NULL;
	}
	if (!config_transport_usable(ops)) {
		cfg_fail(c, ts, NULL, "transport \"%s\" cannot carry links: they need reliable, ordered "
			 "delivery (a byte stream or messages)",
		     name);
		return NULL;
	}
	return ops;
}

/* A setting the peer's transport does not know but another one does: say
 * whose it is rather than just "unknown". */
static int check_foreign_options(struct cfgctx *c, const config_setting_t *ps, const struct field *table,
				 const struct lds_transport_ops *ops)
{
	const struct lds_transport_ops *o;

	for (int i = 0; i < config_setting_length(ps); i++) {
		const config_setting_t *s = config_setting_get_elem(ps, (unsigned)i);

		if (find_field(table, config_setting_name(s)) != NULL)
			continue;
		for (size_t k = 0; (o = transport_at(k)) != NULL; k++)
			for (const struct lds_tp_option *opt = o->options; opt && opt->name; opt++)
				if (strcmp(opt->name, config_setting_name(s)) == 0)
					return cfg_fail(c, s, NULL, "a setting of transport \"%s\", not of this peer's "
						    "transport \"%s\"", o->name, ops->name);
	}
	return 0;
}

/* The transport's own check of its settings, against this machine. */
static int check_transport_conf(struct cfgctx *c, const config_setting_t *ps, const struct lds_transport_ops *ops,
				const struct config_peer *p)
{
	struct lds_tp_conf_error e = { .option = NULL };
	const config_setting_t *s;

	if (ops->check == NULL || ops->check(p->tp_conf, &e) == 0)
		return 0;
	s = e.option ? config_setting_get_member(ps, e.option) : NULL;
	return cfg_fail(c, s ? s : ps, NULL, "%s", e.msg);
}

static int parse_peer(struct cfgctx *c, const config_setting_t *ps, struct config_peer *p)
{
	const config_setting_t *key;
	const struct lds_transport_ops *ops;
	struct field table[PEER_TABLE_MAX];
	char addr[CONFIG_ADDR_MAX];

	config_peer_defaults(p);
	p->line = (int)config_setting_source_line(ps);
	if ((ops = peer_transport(c, ps, p)) == NULL)
		return -1;
	peer_transport_defaults(p, ops);
	peer_table(ops, table);
	if (check_foreign_options(c, ps, table, ops) < 0 || parse_group(c, ps, table, p) < 0 ||
	    check_transport_conf(c, ps, ops, p) < 0)
		return -1;
	/* "[2001:db8::1]", as URLs write it, works as well as the bare address. */
	if (resolve_unbracket(p->address, addr, sizeof(addr)) < 0)
		return cfg_fail(c, config_setting_get_member(ps, "address"), NULL,
			    "\"%s\" is neither a host name nor an address (an IPv6 address may be written [v6])",
			    p->address);
	memcpy(p->address, addr, sizeof(addr));
	if (config_setting_get_member(ps, "keepalive") == NULL)
		p->keepalive = p->inactivity_timeout / 4;
	if (check_peer_ranges(c, ps, p) < 0)
		return -1;
	key = config_setting_get_member(ps, "key_file");
	if (cfg_resolve_path(c, key, p->key_file, sizeof(p->key_file)) < 0)
		return -1;
	return read_key(c, key, p);
}

static int parse_peers(struct cfgctx *c, const config_setting_t *s, struct config *cfg)
{
	int n = config_setting_length(s);

	if (!config_setting_is_list(s))
		return cfg_fail(c, s, NULL, "must be a list of groups: peers = ( { ... }, { ... } ); (got %s)", cfg_type_name(s));
	if (n > CONFIG_MAX_PEERS)
		return cfg_fail(c, s, NULL, "at most %d peers (got %d)", CONFIG_MAX_PEERS, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *ps = config_setting_get_elem(s, (unsigned)i);

		if (!config_setting_is_group(ps))
			return cfg_fail(c, ps, NULL, "must be a group { ... } (got %s)", cfg_type_name(ps));
		if (parse_peer(c, ps, &cfg->peers[i]) < 0)
			return -1;
		cfg->npeers = (size_t)i + 1;
	}
	return 0;
}

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
	if (parse_group(c, config_root_setting(lc), root_fields, cfg) < 0)
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

int config_peer_set(struct config_peer *p, const char *name, const char *value, char *err, size_t errlen)
{
	struct cfgctx c = { .file = "(set)", .err = err, .errlen = errlen };
	const struct lds_transport_ops *ops = transport_find(p->transport);
	struct field table[PEER_TABLE_MAX];
	const struct field *f;
	const config_setting_t *g;
	char text[512];
	unsigned char before[sizeof(p->tp_conf)];
	config_t lc;
	bool quote;
	int rc = -1;

	if (ops == NULL)
		return cfg_fail_at(&c, name, "the peer's transport \"%s\" is not built in", p->transport);
	f = find_field(peer_table(ops, table), name);
	if (f == NULL || f->off < offsetof(struct config_peer, tp_conf))
		return cfg_fail_at(&c, name, "not a setting of transport \"%s\"", ops->name);
	memcpy(before, p->tp_conf, sizeof(before));
	/* Read as the file would write it, so that it is checked the same:
	 * strings and size strings ("4M") quoted. */
	quote = f->kind == K_STR || (f->kind == K_BYTES && value[strspn(value, "0123456789")] != '\0');
	snprintf(text, sizeof(text), quote ? "x = { %s = \"%s\"; };" : "x = { %s = %s; };", name, value);
	config_init(&lc);
	if (!config_read_string(&lc, text))
		rc = cfg_fail_at(&c, name, "\"%s\" is not a value: %s", value, config_error_text(&lc));
	else if ((g = config_lookup(&lc, "x")) != NULL && parse_setting(&c, config_setting_get_member(g, name), f, p) == 0)
		rc = check_transport_conf(&c, g, ops, p);
	config_destroy(&lc);
	if (rc < 0)
		memcpy(p->tp_conf, before, sizeof(before));   /* a refused value is not kept */
	/* Messages name the setting alone: there is no file. */
	if (rc < 0 && err != NULL && strncmp(err, "(set):1: x.", 11) == 0)
		memmove(err, err + 11, strlen(err + 11) + 1);
	return rc;
}

/* ---- printing -------------------------------------------------------------- */

static void print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < ' ' || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* The shortest form that reads back as the same double, always with a '.'
 * or an exponent so that libconfig reads a float. */
static void print_double(FILE *out, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fprintf(out, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

static bool is_string(enum kind k)
{
	return k == K_STR || k == K_NAME || k == K_HOSTPORT || k == K_WORD;
}

static void print_group(FILE *out, const struct field *table, const void *base, int indent);

/* ( { row }, ... ): n rows of table's settings (NULL: each peer's,
 * peer_table), size bytes apart. */
static void print_rows(FILE *out, const struct field *table, const char *rows, size_t n, size_t size, int indent)
{
	struct field buf[PEER_TABLE_MAX];

	fputc('(', out);
	for (size_t i = 0; i < n; i++) {
		const char *row = rows + i * size;

		fprintf(out, "%s\n%*s{\n", i ? "," : "", indent + 2, "");
		print_group(out, table ? table : peer_table(transport_find(((const struct config_peer *)row)->transport), buf),
			    row, indent + 4);
		fprintf(out, "%*s}", indent + 2, "");
	}
	fprintf(out, "\n%*s)", indent, "");
}

static void print_value(FILE *out, const struct field *f, const void *base, int indent)
{
	const char *src = (const char *)base + f->off;
	unsigned long long v;
	double d;

	switch (f->kind) {
	case K_STR:
	case K_NAME:
	case K_HOSTPORT:
	case K_WORD:
		print_string(out, src);
		break;
	case K_ENUM:
		print_string(out, f->words[load_uint(src, f->size)]);
		break;
	case K_BOOL:
		fputs(load_uint(src, f->size) ? "true" : "false", out);
		break;
	case K_STREAMS:
		if (load_uint(src, f->size) == 0) {
			print_string(out, "auto");
			break;
		}
		/* fall through */
	case K_UINT:
	case K_BYTES:
		/* libconfig 1.5 silently truncates integers past 2^31 - 1 unless
		 * they carry an L. */
		v = load_uint(src, f->size);
		fprintf(out, "%llu%s", v, v > INT_MAX ? "L" : "");
		break;
	case K_SECONDS:
		memcpy(&d, src, sizeof(d));
		print_double(out, d);
		break;
	case K_GROUP:
	case K_OPTGROUP:
		fputs("{\n", out);
		print_group(out, f->sub, base, indent + 2);
		fprintf(out, "%*s}", indent, "");
		break;
	case K_LIST:
		fputc('[', out);
		for (size_t i = 0; i < load_uint((const char *)base + f->count_off, sizeof(size_t)); i++) {
			fputs(i ? ", " : " ", out);
			print_string(out, src + i * (f->size / f->max));
		}
		fputs(" ]", out);
		break;
	case K_PEERS:
		print_rows(out, NULL, (const char *)((const struct config *)base)->peers,
			   ((const struct config *)base)->npeers, sizeof(struct config_peer), indent);
		break;
	case K_GROUPS:
		print_rows(out, f->sub, src, load_uint((const char *)base + f->count_off, sizeof(size_t)),
			   f->size / f->max, indent);
		break;
	}
}

static void print_group(FILE *out, const struct field *table, const void *base, int indent)
{
	for (const struct field *f = table; f->name; f++) {
		if (is_string(f->kind) && *((const char *)base + f->off) == '\0')
			continue;   /* an optional string that is not set */
		if (f->kind == K_OPTGROUP && load_uint((const char *)base + f->off, f->size) == 0)
			continue;   /* an optional group that is not there */
		fprintf(out, "%*s%s = ", indent, "", f->name);
		print_value(out, f, base, indent);
		fputs(";\n", out);
	}
}
void config_print(const struct config *cfg, FILE *out)
{
	fprintf(out, "# ldsd configuration from ");
	print_string(out, cfg->file);
	fprintf(out, ", defaults filled in\n");
	print_group(out, root_fields, cfg, 0);
}

void config_peer_defaults(struct config_peer *p)
{
	*p = peer_defaults;
	peer_transport_defaults(p, transport_find(p->transport));
}

int config_transport_usable(const struct lds_transport_ops *ops)
{
	const unsigned need = LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE;

	return (ops->caps.flags & need) == need && (ops->caps.flags & (LDS_TP_CAP_STREAM | LDS_TP_CAP_MESSAGE));
}

void config_handshake_defaults(struct config_handshake *h)
{
	*h = handshake_defaults;
}

const struct config_peer *config_peer_find(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->npeers; i++)
		if (strcmp(cfg->peers[i].cluster, name) == 0)
			return &cfg->peers[i];
	return NULL;
}

int config_peer_set_transport(struct config_peer *p, const char *name, char *err, size_t errlen)
{
	const struct lds_transport_ops *ops = transport_find(name);

	if (ops == NULL || !config_transport_usable(ops) || strlen(name) >= sizeof(p->transport)) {
		snprintf(err, errlen, "transport \"%s\" %s; available: %s", name,
			 ops ? "cannot carry links" : "is not built in", transport_names());
		return -1;
	}
	snprintf(p->transport, sizeof(p->transport), "%s", name);
	peer_transport_defaults(p, ops);
	return 0;
}
