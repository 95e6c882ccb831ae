/*
 * cfgpeer.h - one entry of ldsd.conf's peers list: its settings (the field
 * table, defaults, the ranges across settings), its transport's own
 * settings joining the table, its key file read.  config.c's root table
 * names the two functions below for the peers setting; the public peer
 * calls (config_peer_*, config_read_key, config_transport_usable) are
 * declared in config.h.  Only config.c includes this.
 */
#ifndef LDS_CFGPEER_H
#define LDS_CFGPEER_H

#include <libconfig.h>

#include "cfgerr.h"
#include "cfgfield.h"

/* Reads the peers list s into base, a struct config: its peers and
 * npeers.  0, or -1 with the message in c. */
int cfgpeer_parse_list(struct cfgctx *c, const config_setting_t *s, void *base);
/* The settings of row, a struct config_peer: the peer's own and its
 * transport's, built in buf (CFGFIELD_TABLE_MAX entries). */
const struct field *cfgpeer_table(const void *row, struct field *buf);

#endif
