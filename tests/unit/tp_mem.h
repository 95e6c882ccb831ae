/* tp_mem.h - the unit tests' in-memory sample transport (tp_mem.c). */
#ifndef LDS_TEST_TP_MEM_H
#define LDS_TEST_TP_MEM_H

#include "transports/transport.h"

extern const struct lds_transport_ops mem_transport_ops;
/* Its message twin: whole messages, held MEMMSG_HOLD_ROUNDS loop rounds
 * before their sent upcall, registered memory (tp_mem.c). */
extern const struct lds_transport_ops memmsg_transport_ops;

/* Faults for the link's tests.  Breaks c's connection: both ends lose
 * what they hold unread (bytes in flight either way), and their recv and
 * send fail with -ECONNRESET from now on, as after a reset. */
void tp_mem_break(struct lds_tp_conn *c);
/* While on, bytes sent to c wait: no readable upcall, recv says -EAGAIN,
 * pending 0; other conns overtake them.  Off: they are handed up. */
void tp_mem_hold(struct lds_tp_conn *c, int on);
/* While on, every connect fails with -ECONNREFUSED, as while the path
 * to the listener is down; listeners and their conns stay. */
void tp_mem_refuse(int on);
/* A number no other conn of this process had or will have: a test that
 * keeps a conn across loop rounds asks whether the link still holds it by
 * this, since the conn may be closed and freed meanwhile. */
uint64_t tp_mem_id(const struct lds_tp_conn *c);
/* A slow path: while bytes_per_round is not 0, each conn makes at most
 * that many more of what arrived readable per loop round. */
void tp_mem_drip(size_t bytes_per_round);
/* recv calls on c that took bytes. */
unsigned tp_mem_recvs(const struct lds_tp_conn *c);
/* Bytes sent to c that it has not handed up yet, held or not. */
size_t tp_mem_unread(const struct lds_tp_conn *c);
/* c receives len bytes its peer never sent (memmsg: as one message), as
 * a lying or broken peer would send them.  0 or -ENOBUFS. */
int tp_mem_inject(struct lds_tp_conn *c, const void *bytes, size_t len);

#endif
