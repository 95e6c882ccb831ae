/* tp_mem.h - the unit tests' in-memory sample transport (tp_mem.c). */
#ifndef LDS_TEST_TP_MEM_H
#define LDS_TEST_TP_MEM_H

#include "transports/transport.h"

extern const struct lds_transport_ops mem_transport_ops;

#endif
