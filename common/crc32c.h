/* CRC32C (Castagnoli), as iSCSI and ext4 use it: the extent checksums the
 * object store keeps for scrub, and the metadata manager's journal records.
 * SSE4.2's crc32 instruction where the CPU has it, a table otherwise; both
 * give the same values. */
#ifndef PANDO_CRC32C_H
#define PANDO_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc32c(0, "123456789", 9) == 0xe3069283.  Chains: crc32c(crc32c(0, a),
 * b) is the CRC of a followed by b. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
