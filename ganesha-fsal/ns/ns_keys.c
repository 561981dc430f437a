/* Keys and records of the namespace store (../README.md has the table).
 *
 * Keys, integers big-endian so that iteration runs in id order:
 *
 *   'S'                          superblock
 *   'N'                          next id to hand out (merge: max)
 *   'C' which(1)                 statfs counter (merge: add), which = i b l
 *   'I' ino(8)                   inode record
 *   'D' dir(8) name(1..255)      directory entry: ino(8) seq(8)
 *   'R' dir(8) seq(8)            readdir index: ino(8) type(1) name
 *   'L' ino(8)                   symlink target
 *   'F' ino(8)                   inline file data
 *   'M' ino(8)                   storage map (opaque, from the layout library)
 *   'X' id(8)                    removal intent: version(1) kind(1) ino(8) blob
 *   'Y' ino(8)                   storage policy (opaque, from the layout library)
 *   'J' ino(8)                   junction (opaque, from the manager: ns_junction.c)
 *   'A'                          seq (and term) of the last journaled batch held (ns_apply.c)
 *   'Q'                          the store's quota (ns_quota.c)
 *
 * Inode record, 136 bytes, times as i64 seconds + u32 nanoseconds:
 *    0  u8   version (1)        1  u8   type         2  u16  flags
 *    4  u32  mode               8  u32  uid         12  u32  gid
 *   16  u32  nlink             20  u32  generation  24  u64  size
 *   32  u64  rdev              40  u64  change      48  u64  parent
 *   56  u64  next_seq          64  u64  nentries    72  u32  inline_len
 *   76  u32  0                 80  u8[8] verifier
 *   88  atime  100  mtime  112  ctime  124  btime   (12 bytes each)
 *
 * Superblock, 29 bytes: u8 format version (1), uuid(16), created time(12). */
#include "ns_internal.h"

#include <string.h>

#include "byteorder.h"

/* ---- keys ------------------------------------------------------------ */

size_t key_id(uint8_t *k, uint8_t type, uint64_t id)
{
	k[0] = type;
	put_be64(k + 1, id);
	return ID_KEY_LEN;
}

size_t key_dirent(uint8_t *k, uint64_t dir, const char *name, size_t len)
{
	key_id(k, K_DIRENT, dir);
	memcpy(k + ID_KEY_LEN, name, len);
	return ID_KEY_LEN + len;
}

size_t key_index(uint8_t *k, uint64_t dir, uint64_t seq)
{
	key_id(k, K_INDEX, dir);
	put_be64(k + ID_KEY_LEN, seq);
	return INDEX_KEY_LEN;
}

size_t key_counter(uint8_t *k, uint8_t which)
{
	k[0] = K_COUNTER;
	k[1] = which;
	return 2;
}

/* 'C' C_OWNERS kind id(4) which: an owner's counter. */
size_t key_owner_counter(uint8_t *k, const struct ns_owner *o, uint8_t which)
{
	k[0] = K_COUNTER;
	k[1] = C_OWNERS;
	k[2] = (uint8_t)o->kind;
	put_be32(k + 3, o->id);
	k[7] = which;
	return OWNER_COUNTER_KEY_LEN;
}

/* 'Q' kind id(4): an owner's quota. */
size_t key_owner_quota(uint8_t *k, const struct ns_owner *o)
{
	k[0] = K_QUOTA;
	k[1] = (uint8_t)o->kind;
	put_be32(k + 2, o->id);
	return OWNER_QUOTA_KEY_LEN;
}

static bool owner_kind_ok(uint8_t kind)
{
	return kind == NS_OWNER_USER || kind == NS_OWNER_GROUP;
}

bool owner_of_key(const uint8_t *k, size_t klen, struct ns_owner *o)
{
	const uint8_t *p;

	if (klen == OWNER_COUNTER_KEY_LEN && k[0] == K_COUNTER && k[1] == C_OWNERS &&
	    (k[7] == C_INODES || k[7] == C_BYTES))
		p = k + 2;
	else if (klen == OWNER_QUOTA_KEY_LEN && k[0] == K_QUOTA)
		p = k + 1;
	else
		return false;
	if (!owner_kind_ok(p[0]))
		return false;
	*o = (struct ns_owner){ (enum ns_owner_kind)p[0], get_be32(p + 1) };
	return true;
}

/* The smallest key above every key that starts with k[0..len). */
void prefix_end(uint8_t *k, size_t len)
{
	while (len > 0 && k[len - 1] == 0xff)
		k[--len] = 0;
	k[len - 1]++;
}

/* ---- inode records --------------------------------------------------- */

static void put_time(uint8_t *p, const struct timespec *ts)
{
	put_be64(p, (uint64_t)ts->tv_sec);
	put_be32(p + 8, (uint32_t)ts->tv_nsec);
}

static void get_time(const uint8_t *p, struct timespec *ts)
{
	ts->tv_sec = (time_t)get_be64(p);
	ts->tv_nsec = (long)get_be32(p + 8);
}

void inode_encode(const struct ns_inode *r, uint8_t *v)
{
	v[0] = INODE_REC_VERSION;
	v[1] = r->type;
	put_be16(v + 2, r->flags);
	put_be32(v + 4, r->mode);
	put_be32(v + 8, r->uid);
	put_be32(v + 12, r->gid);
	put_be32(v + 16, r->nlink);
	put_be32(v + 20, r->gen);
	put_be64(v + 24, r->size);
	put_be64(v + 32, r->rdev);
	put_be64(v + 40, r->change);
	put_be64(v + 48, r->parent);
	put_be64(v + 56, r->next_seq);
	put_be64(v + 64, r->nentries);
	put_be32(v + 72, r->inline_len);
	put_be32(v + 76, 0);
	memcpy(v + 80, r->verf, NS_VERF_LEN);
	put_time(v + 88, &r->atime);
	put_time(v + 100, &r->mtime);
	put_time(v + 112, &r->ctime);
	put_time(v + 124, &r->btime);
}

int inode_decode(uint64_t ino, const uint8_t *v, size_t len, struct ns_inode *r)
{
	if (len != INODE_REC_LEN || v[0] != INODE_REC_VERSION || v[1] < NS_REG || v[1] > NS_SOCK)
		return -EIO;
	r->ino = ino;
	r->type = v[1];
	r->flags = get_be16(v + 2);
	r->mode = get_be32(v + 4);
	r->uid = get_be32(v + 8);
	r->gid = get_be32(v + 12);
	r->nlink = get_be32(v + 16);
	r->gen = get_be32(v + 20);
	r->size = get_be64(v + 24);
	r->rdev = get_be64(v + 32);
	r->change = get_be64(v + 40);
	r->parent = get_be64(v + 48);
	r->next_seq = get_be64(v + 56);
	r->nentries = get_be64(v + 64);
	r->inline_len = get_be32(v + 72);
	memcpy(r->verf, v + 80, NS_VERF_LEN);
	get_time(v + 88, &r->atime);
	get_time(v + 100, &r->mtime);
	get_time(v + 112, &r->ctime);
	get_time(v + 124, &r->btime);
	return 0;
}

/* ---- directory entries and the readdir index -------------------------- */

void dirent_encode(const struct dirent_rec *d, uint8_t *v)
{
	put_be64(v, d->ino);
	put_be64(v + 8, d->seq);
}

int dirent_decode(const uint8_t *v, size_t len, struct dirent_rec *d)
{
	if (len != DIRENT_REC_LEN)
		return -EIO;
	d->ino = get_be64(v);
	d->seq = get_be64(v + 8);
	return 0;
}

/* v needs INDEX_REC_HDR + len bytes. */
size_t index_encode(uint64_t ino, uint8_t type, const char *name, size_t len, uint8_t *v)
{
	put_be64(v, ino);
	v[8] = type;
	memcpy(v + INDEX_REC_HDR, name, len);
	return INDEX_REC_HDR + len;
}

/* *name points into v. */
int index_decode(const uint8_t *v, size_t vlen, uint64_t *ino, uint8_t *type, const char **name,
		 size_t *len)
{
	if (vlen <= INDEX_REC_HDR || vlen > INDEX_REC_HDR + NS_NAME_MAX)
		return -EIO;
	*ino = get_be64(v);
	*type = v[8];
	*name = (const char *)v + INDEX_REC_HDR;
	*len = vlen - INDEX_REC_HDR;
	return 0;
}

/* ---- intents and the superblock -------------------------------------- */

/* The blob follows the INTENT_REC_HDR bytes written here. */
void intent_encode_hdr(uint64_t ino, uint8_t kind, uint8_t *v)
{
	v[0] = INTENT_REC_VERSION;
	v[1] = kind;
	put_be64(v + 2, ino);
}

/* in->blob points into v. */
int intent_decode(uint64_t id, const uint8_t *v, size_t len, struct ns_intent *in)
{
	if (len < INTENT_REC_HDR || v[0] != INTENT_REC_VERSION || v[1] != NS_INTENT_REMOVE)
		return -EIO;
	in->id = id;
	in->kind = v[1];
	in->ino = get_be64(v + 2);
	in->blob = v + INTENT_REC_HDR;
	in->len = len - INTENT_REC_HDR;
	return 0;
}

void super_encode(const uint8_t *uuid, const struct timespec *created, uint8_t *v)
{
	v[0] = FORMAT_VERSION;
	memcpy(v + 1, uuid, 16);
	put_time(v + 17, created);
}

int super_decode(const uint8_t *v, size_t len, uint8_t *uuid)
{
	if (len != SUPER_REC_LEN || v[0] != FORMAT_VERSION)
		return -EIO;
	memcpy(uuid, v + 1, 16);
	return 0;
}
