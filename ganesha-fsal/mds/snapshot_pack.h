/* A snapshot's bytes: the files of a store snapshot (ns_snapshot), one
 * after the other, as a group keeps it on the OSDs for a standby that
 * starts from nothing (group_snapshot.h).  Big-endian:
 *
 *   header
 *    0  magic    u32  SNAPSHOT_PACK_MAGIC ("PSNP")
 *    4  version  u32  1
 *    8  seq      u64  the last journal record the store holds
 *   16  files    u32  at most SNAPSHOT_FILES_MAX
 *   20  crc      u32  CRC32C of bytes 0..19
 *   then each file
 *    0  name_len u32  1..SNAPSHOT_NAME_MAX
 *    4  size     u64
 *   12  data_crc u32  CRC32C of its bytes
 *   16  crc      u32  CRC32C of bytes 0..15, then of the name
 *   20  name (letters, digits, '.', '_', '-'; not "." or ".."), then its bytes
 *
 * and nothing after the last file.  A store snapshot is one directory of
 * plain files (RocksDB's checkpoint), so that is all a pack holds. */
#ifndef PANDO_SNAPSHOT_PACK_H
#define PANDO_SNAPSHOT_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAPSHOT_PACK_MAGIC 0x50534e50u
#define SNAPSHOT_PACK_HEADER 24u
#define SNAPSHOT_FILE_HEADER 20u
#define SNAPSHOT_NAME_MAX 255u
#define SNAPSHOT_FILES_MAX 100000u

/* Where the bytes go, and come from: exactly n bytes at off, 0 or -errno. */
typedef int (*snapshot_write_fn)(void *arg, uint64_t off, const void *buf, size_t n);
typedef int (*snapshot_read_fn)(void *arg, uint64_t off, void *buf, size_t n);

/* What a parse finds, file by file: a file begins, its bytes in order,
 * and it ends with every byte there and its CRC right.  0 or -errno,
 * which ends the parse. */
struct snapshot_sink {
	int (*file)(void *arg, const char *name, uint64_t size);
	int (*data)(void *arg, const void *buf, size_t n);
	int (*done)(void *arg);
	void *arg;
};

/* Whether name[len] may be a file's name in a pack. */
bool snapshot_name_ok(const char *name, size_t len);

/* The plain files of dir, in name order, under seq; *total the bytes
 * written.  -EINVAL: dir holds something other than a plain file, or a
 * name a pack cannot carry; -E2BIG: more than SNAPSHOT_FILES_MAX files;
 * the write's and the file system's errors. */
int snapshot_pack(const char *dir, uint64_t seq, snapshot_write_fn w, void *arg, uint64_t *total);

/* Reads a pack of total bytes through r into sink; *seq its seq.
 * -EINVAL for anything but a well-formed pack of exactly total bytes
 * (every CRC right, every name allowed and none twice); else r's and
 * sink's errors. */
int snapshot_parse(snapshot_read_fn r, void *arg, uint64_t total, const struct snapshot_sink *sink,
		   uint64_t *seq);

/* snapshot_parse into dir, which must not exist (-EEXIST): made with
 * every file in it, each durable, and dir itself, on return; removed on
 * failure. */
int snapshot_unpack(snapshot_read_fn r, void *arg, uint64_t total, const char *dir, uint64_t *seq);

/* Removes dir and the plain files in it, if it is there. */
void snapshot_dir_remove(const char *dir);

#endif
