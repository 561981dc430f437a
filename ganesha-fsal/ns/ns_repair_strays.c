/* Repair pass 2: keys an inode owns ('F' data, 'L' target, 'M' map,
 * 'Y' policy, 'J' junction, 'P' damage records) whose inode is gone or should not have
 * them.  They are deleted, except a map: its objects still exist on the
 * OSDs, so it is handed to a removal intent rather than leaked. */
#include "ns_repair.h"

#include "byteorder.h"

/* The map goes, its objects to a removal intent, in one batch. */
static int map_to_intent(struct repairer *r, uint64_t ino, const uint8_t *k, size_t klen,
			 const uint8_t *v, size_t vlen)
{
	struct txn t;
	uint64_t id;
	int rc;

	txn_begin(&t, r->s);
	rc = txn_intent(&t, ino, v, vlen, &id);
	if (rc) {
		txn_abort(&t);
		return rc;
	}
	rocksdb_writebatch_delete(t.b, (const char *)k, klen);
	return txn_commit(&t, false);
}

static int visit_owned(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
		       size_t vlen)
{
	uint64_t ino = klen >= ID_KEY_LEN ? get_be64(k + 1) : 0;
	struct ns_inode rec;
	int rc;

	if (klen != ID_KEY_LEN) {
		repaired(r, &r->res->bad_records, "malformed '%c' key: deleted", k[0]);
		return repair_del_key(r, k, klen);
	}
	rc = inode_load(r->s, ino, &rec);
	if (rc && rc != -ESTALE)
		return rc;
	if (!rc && inode_owns_key(&rec, k[0]))
		return 0;
	repaired(r, &r->res->stray_keys, "'%c' key of inode %llu, which %s: %s", k[0],
		 (unsigned long long)ino, rc ? "does not exist" : "should not have one",
		 k[0] == K_MAP ? "its objects handed to a removal intent" : "deleted");
	if (k[0] == K_MAP)
		return map_to_intent(r, ino, k, klen, v, vlen);
	return repair_del_key(r, k, klen);
}

/* Damage records: malformed, or of a file that no longer has objects. */
static int visit_damage(struct repairer *r, const uint8_t *k, size_t klen, const uint8_t *v,
			size_t vlen)
{
	struct ns_damage dr;
	struct ns_inode rec;
	int rc;

	if (damage_decode(k, klen, v, vlen, &dr)) {
		repaired(r, &r->res->bad_records, "malformed damage record: deleted");
		return repair_del_key(r, k, klen);
	}
	rc = inode_load(r->s, dr.ino, &rec);
	if (rc && rc != -ESTALE)
		return rc;
	if (!rc && inode_owns_key(&rec, K_DAMAGE))
		return 0;
	repaired(r, &r->res->stray_keys, "damage record of inode %llu, which %s: deleted",
		 (unsigned long long)dr.ino, rc ? "does not exist" : "has no objects");
	return repair_del_key(r, k, klen);
}

int repair_strays(struct repairer *r)
{
	int rc = repair_walk(r, K_DATA, visit_owned);

	if (!rc)
		rc = repair_walk(r, K_DAMAGE, visit_damage);
	if (!rc)
		rc = repair_walk(r, K_SYMLINK, visit_owned);
	if (!rc)
		rc = repair_walk(r, K_POLICY, visit_owned);
	if (!rc)
		rc = repair_walk(r, K_JUNCTION, visit_owned);
	return rc ? rc : repair_walk(r, K_MAP, visit_owned);
}
