/* cfgpeer.c - a peer's settings in ldsd.conf, its transport's included;
 * see cfgpeer.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cfgerr.h"
#include "cfgfield.h"
#include "cfgpeer.h"
#include "config.h"
#include "resolve.h"
#include "transports/transport.h"
#include "wire.h"

static const char *const roles[] = { "connect", "listen", NULL };  /* enum config_role order */
static const char *const encryptions[] = { "aead", "none", NULL };  /* enum config_encryption order */

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
	for (const struct lds_tp_option *o = ops ? ops->options : NULL; o && o->name && n + 1 < CFGFIELD_TABLE_MAX; o++)
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

		if (cfgfield_find(table, config_setting_name(s)) != NULL)
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
	struct field table[CFGFIELD_TABLE_MAX];
	char addr[CONFIG_ADDR_MAX];

	config_peer_defaults(p);
	p->line = (int)config_setting_source_line(ps);
	if ((ops = peer_transport(c, ps, p)) == NULL)
		return -1;
	peer_transport_defaults(p, ops);
	peer_table(ops, table);
	if (check_foreign_options(c, ps, table, ops) < 0 || cfgfield_parse_group(c, ps, table, p) < 0 ||
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

int cfgpeer_parse_list(struct cfgctx *c, const config_setting_t *s, void *base)
{
	struct config *cfg = base;
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

const struct field *cfgpeer_table(const void *row, struct field *buf)
{
	return peer_table(transport_find(((const struct config_peer *)row)->transport), buf);
}

int config_peer_set(struct config_peer *p, const char *name, const char *value, char *err, size_t errlen)
{
	struct cfgctx c = { .file = "(set)", .err = err, .errlen = errlen };
	const struct lds_transport_ops *ops = transport_find(p->transport);
	struct field table[CFGFIELD_TABLE_MAX];
	const struct field *f;
	const config_setting_t *g;
	char text[512];
	unsigned char before[sizeof(p->tp_conf)];
	config_t lc;
	bool quote;
	int rc = -1;

	if (ops == NULL)
		return cfg_fail_at(&c, name, "the peer's transport \"%s\" is not built in", p->transport);
	f = cfgfield_find(peer_table(ops, table), name);
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
	else if ((g = config_lookup(&lc, "x")) != NULL &&
		 cfgfield_parse_setting(&c, config_setting_get_member(g, name), f, p) == 0)
		rc = check_transport_conf(&c, g, ops, p);
	config_destroy(&lc);
	if (rc < 0)
		memcpy(p->tp_conf, before, sizeof(before));   /* a refused value is not kept */
	/* Messages name the setting alone: there is no file. */
	if (rc < 0 && err != NULL && strncmp(err, "(set):1: x.", 11) == 0)
		memmove(err, err + 11, strlen(err + 11) + 1);
	return rc;
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
