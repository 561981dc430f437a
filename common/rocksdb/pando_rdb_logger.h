/* RocksDB's messages, warnings and worse, handed to a callback (private
 * to pando_rdb; pando_rdb_logger.cc says why). */
#ifndef PANDO_RDB_LOGGER_H
#define PANDO_RDB_LOGGER_H

#include <rocksdb/c.h>

#include "pando_rdb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A logger for rocksdb_options_set_info_log; log may be NULL (nothing is
 * said).  NULL when out of memory.  The options keep their own reference:
 * free this one once they have it. */
rocksdb_logger_t *pando_rdb_logger_new(pando_rdb_log_fn *log, void *arg);
void pando_rdb_logger_free(rocksdb_logger_t *l);

#ifdef __cplusplus
}
#endif

#endif
