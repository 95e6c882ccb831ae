/*
 * mw_wan.h - a communication manager's side of the WAN: one liblds
 * handle to its cluster's ldsd, runtime messages (mw_proto.h header and
 * payload, one liblds message each) to one peer endpoint in another
 * cluster, and an outgoing queue so that the MPI side never waits for
 * the WAN: messages are handed to ldsd with lds_send_nb while it accepts
 * them, and wait behind it otherwise.  No MPI here.
 *
 * Errors are negative errno values with why in the handle's err text.
 */
#ifndef MW_WAN_H
#define MW_WAN_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/mw_port.h"
#include "libclient/lds.h"

struct mw_wan;

/* Opens endpoint name at the gateway socket (NULL: $LDS_SOCKET, else
 * liblds's default).  NULL with why in err. */
struct mw_wan *mw_wan_open(const char *socket, const char *name, int timeout_ms, char *err, size_t errlen);
void mw_wan_close(struct mw_wan *w);

/* The gateway's cluster, and the text of the last error. */
const char *mw_wan_cluster(const struct mw_wan *w);
const char *mw_wan_error(const struct mw_wan *w);

/* Where mw_wan_send() sends ("cluster/name"). */
void mw_wan_set_peer(struct mw_wan *w, const char *dst);
const char *mw_wan_peer(const struct mw_wan *w);

/* Queues a message for the peer and hands ldsd what it takes.  0, or
 * -EMSGSIZE (larger than the link allows), -ENOMEM, or a liblds error. */
int mw_wan_send(struct mw_wan *w, const struct mw_hdr *h, const void *data);
/* Hands ldsd queued messages while it accepts them: how many, or < 0. */
int mw_wan_pump(struct mw_wan *w);
/* Messages queued here, not yet taken by ldsd. */
size_t mw_wan_queued(const struct mw_wan *w);
/* Hands ldsd no more while bytes of messages it took are not yet
 * acknowledged by the remote gateway (at least one message goes; 0: no
 * limit but ldsd's): what waits here can still be dropped, what ldsd
 * took crosses the WAN.  And those bytes now. */
void mw_wan_set_inflight_max(struct mw_wan *w, size_t bytes);
size_t mw_wan_inflight(struct mw_wan *w);
/* Drops the queued messages of that type (not yet taken by ldsd): how
 * many, and their bytes in *bytes. */
size_t mw_wan_drop_queued(struct mw_wan *w, uint8_t type, uint64_t *bytes);
/* Bytes of messages the remote gateway acknowledged (they crossed the
 * WAN), and of messages received. */
uint64_t mw_wan_bytes_out(struct mw_wan *w);
uint64_t mw_wan_bytes_in(const struct mw_wan *w);
/* What the gateway's link to the peer's cluster carried each way since
 * the first call, block by block (lds_link_bytes): its latest answer,
 * and a new question; call it at the pace samples are wanted.  Both
 * stay 0 where the gateway does not say (an older ldsd). */
void mw_wan_link_bytes(struct mw_wan *w, uint64_t *out, uint64_t *in);

/* One received message (m->peer 0; payload valid until the next call)
 * and its sender in src: 1, 0 when none, -ECONNRESET when messages sent
 * were reported lost (the peer's gateway restarted without its state;
 * mw_wan_error says which), or another -errno (a malformed message, the
 * gateway gone, a send that failed). */
int mw_wan_poll(struct mw_wan *w, struct mw_msg *m, char src[LDS_NAME_MAX]);
/* Blocks until the gateway has something for us, at most seconds.
 * 0 or < 0. */
int mw_wan_wait(struct mw_wan *w, double seconds);
/* What the gateway says of its link to cluster, in words for a message,
 * with what to look at: "its link to B is up, so is its communication
 * manager running?", "... is down (for N s; last attempt: WHY) (ldsctl
 * status says more...)", or why it could not say.  Returns buf. */
const char *mw_wan_describe_peer(struct mw_wan *w, const char *cluster, char *buf, size_t len);
/* Waits until ldsd took every queued message, at most timeout_ms.  0,
 * -ETIMEDOUT or another error. */
int mw_wan_flush(struct mw_wan *w, int timeout_ms);

#endif
