/* Object attributes.  Page 1 ("object info") is not stored as such: each
 * value comes from the data file or the object record.  User pages are one
 * RocksDB key per attribute. */
#include "objstore_internal.h"

#include <string.h>

#include "byteorder.h"

/* ---- page 1 ---------------------------------------------------------- */

static size_t info_width(uint32_t number)
{
	if (number < OBJ_ATTR_LENGTH || number > OBJ_ATTR_READ_FLOOR)
		return 0;
	return number == OBJ_ATTR_COMPONENT || number == OBJ_ATTR_CAP_VERSION ||
			       number == OBJ_ATTR_READ_FLOOR
		       ? 4
		       : 8;
}

static uint64_t info_value(const struct obj_info *in, uint32_t number)
{
	switch (number) {
	case OBJ_ATTR_LENGTH:
		return in->length;
	case OBJ_ATTR_MTIME:
		return in->mtime_ns;
	case OBJ_ATTR_CTIME:
		return in->ctime_ns;
	case OBJ_ATTR_CREATED:
		return in->created_ns;
	case OBJ_ATTR_OWNER:
		return in->owner_file;
	case OBJ_ATTR_COMPONENT:
		return in->component;
	case OBJ_ATTR_CAP_VERSION:
		return in->cap_version;
	case OBJ_ATTR_READ_FLOOR:
		return in->read_floor;
	default:
		return in->used_bytes;
	}
}

static int info_get(struct objstore *s, const struct obj_id *id, uint32_t number, void *buf,
		    size_t cap, size_t *len)
{
	size_t width = info_width(number);
	struct obj_info in;
	struct obj_ref *ref;
	int rc;

	if (!width || cap < width)
		return -EINVAL;
	rc = objstore_get(s, id, &ref);
	if (rc)
		return rc;
	rc = obj_ref_info(ref, &in);
	objstore_put(s, ref);
	if (rc)
		return rc;
	if (width == 4)
		put_be32(buf, (uint32_t)info_value(&in, number));
	else
		put_be64(buf, info_value(&in, number));
	*len = width;
	return 0;
}

/* Writes a changed record, with an optional attribute change in the same
 * batch; bumps ctime.  Called with meta_lock held. */
static int rec_store(struct objstore *s, const struct obj_id *id, struct obj_rec *r,
		     const uint8_t *ak, const void *val, size_t len)
{
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	uint8_t k[KEY_MAX], v[OBJ_REC_LEN];
	int rc;

	r->ctime_ns = now_ns();
	rec_encode(r, v);
	rocksdb_writebatch_put(b, (const char *)k, key_obj(k, id->partition, id->object),
			       (const char *)v, sizeof(v));
	if (ak && len)
		rocksdb_writebatch_put(b, (const char *)ak, KEY_MAX, val, len);
	else if (ak)
		rocksdb_writebatch_delete(b, (const char *)ak, KEY_MAX);
	rc = db_write(s, b);
	rocksdb_writebatch_destroy(b);
	return rc;
}

/* Changes the owner or the component, kept in the record. */
static int rec_set_field(struct objstore *s, const struct obj_id *id, uint32_t number, uint64_t val)
{
	struct obj_rec r;
	int rc;

	pthread_mutex_lock(&s->meta_lock);
	rc = rec_load(s, id, &r);
	if (!rc) {
		if (number == OBJ_ATTR_OWNER)
			r.owner_file = val;
		else
			r.component = (uint32_t)val;
		rc = rec_store(s, id, &r, NULL, NULL, 0);
	}
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

/* Moves the capability versions in the record and the cache: a fence sets
 * both to version, a revocation of writers raises cur alone (and only
 * upwards).  *old gets cur before. */
static int rec_set_caps(struct objstore *s, const struct obj_id *id, uint32_t version, bool fence,
			uint32_t *old)
{
	struct obj_rec r;
	int rc;

	pthread_mutex_lock(&s->meta_lock);
	rc = rec_load(s, id, &r);
	if (rc)
		goto out;
	*old = r.cap_version;
	if (!fence && version <= r.cap_version)
		goto out;
	r.cap_version = version;
	if (fence)
		r.read_floor = version;
	rc = rec_store(s, id, &r, NULL, NULL, 0);
	/* Under meta_lock, so that racing changes reach the cache in order. */
	if (!rc)
		cache_set_caps(s, id, r.read_floor, r.cap_version);
out:
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

/* Under the object's cap_lock, taken before meta_lock as requests take
 * them: the requests holding the old versions finish first. */
static int cap_change(struct objstore *s, const struct obj_id *id, uint32_t version, bool fence,
		      uint32_t *old)
{
	struct obj_ref *ref;
	uint32_t prev = 0;
	int rc;

	if (!id->partition || !id->object)
		return -EINVAL;
	rc = objstore_get(s, id, &ref);
	if (rc)
		return rc;
	pthread_rwlock_wrlock(&ref->cap_lock);
	rc = rec_set_caps(s, id, version, fence, &prev);
	pthread_rwlock_unlock(&ref->cap_lock);
	objstore_put(s, ref);
	if (!rc && old)
		*old = prev;
	return rc;
}

static int length_set(struct objstore *s, const struct obj_id *id, uint64_t length)
{
	struct obj_ref *ref;
	int rc;

	if (length > OBJSTORE_MAX_OFFSET)
		return -EFBIG;
	rc = objstore_get(s, id, &ref);
	if (rc)
		return rc;
	rc = ref_truncate(ref, length);
	objstore_put(s, ref);
	return rc;
}

static int info_set(struct objstore *s, const struct obj_id *id, uint32_t number, const void *val,
		    size_t len)
{
	size_t width = info_width(number);
	uint64_t v;

	/* Width 0 is an unknown number: with an empty value it would match. */
	if (!width || len != width)
		return -EINVAL;
	v = len == 4 ? get_be32(val) : get_be64(val);
	switch (number) {
	case OBJ_ATTR_LENGTH:
		return length_set(s, id, v);
	case OBJ_ATTR_OWNER:
	case OBJ_ATTR_COMPONENT:
		return rec_set_field(s, id, number, v);
	case OBJ_ATTR_CAP_VERSION: /* a fence, as SET_CAP_VERSION */
		return cap_change(s, id, (uint32_t)v, true, NULL);
	default:
		return -EINVAL;
	}
}

/* ---- user pages ------------------------------------------------------ */

static int user_get(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		    void *buf, size_t cap, size_t *len)
{
	uint8_t k[KEY_MAX];
	size_t vlen;
	char *v;
	int rc = db_get(s, k, key_attr(k, id, page, number), &v, &vlen);

	if (rc)
		return rc;
	if (!v)
		return -ENOENT;
	if (vlen > cap) {
		rc = -EINVAL;
	} else {
		memcpy(buf, v, vlen);
		*len = vlen;
	}
	rocksdb_free(v);
	return rc;
}

/* The record is rewritten too, to move ctime, and its presence is what
 * keeps an attribute from outliving its object. */
static int user_set(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		    const void *val, size_t len)
{
	uint8_t ak[KEY_MAX];
	struct obj_rec r;
	int rc;

	if (len > OBJSTORE_ATTR_MAX_LEN)
		return -EINVAL;
	key_attr(ak, id, page, number);
	pthread_mutex_lock(&s->meta_lock);
	rc = rec_load(s, id, &r);
	if (!rc)
		rc = rec_store(s, id, &r, ak, val, len);
	pthread_mutex_unlock(&s->meta_lock);
	return rc;
}

/* ---- entry points ---------------------------------------------------- */

int objstore_attr_get(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		      void *buf, size_t cap, size_t *len)
{
	if (!id->partition || !id->object)
		return -EINVAL;
	if (page == OBJSTORE_ATTR_PAGE_INFO)
		return info_get(s, id, number, buf, cap, len);
	if (page >= OBJSTORE_ATTR_PAGE_USER_MIN)
		return user_get(s, id, page, number, buf, cap, len);
	return -EINVAL;
}

int objstore_attr_set(struct objstore *s, const struct obj_id *id, uint32_t page, uint32_t number,
		      const void *val, size_t len)
{
	if (!id->partition || !id->object)
		return -EINVAL;
	if (page == OBJSTORE_ATTR_PAGE_INFO)
		return info_set(s, id, number, val, len);
	if (page >= OBJSTORE_ATTR_PAGE_USER_MIN)
		return user_set(s, id, page, number, val, len);
	return -EINVAL;
}

int objstore_attr_list(struct objstore *s, const struct obj_id *id, uint32_t *pages,
		       uint32_t *numbers, size_t max, size_t *n)
{
	struct db_iter i;
	struct obj_rec r;
	int rc;

	if (!id->partition || !id->object)
		return -EINVAL;
	rc = rec_load(s, id, &r);
	if (rc)
		return rc;
	*n = 0;
	for (iter_open_attrs(s, &i, id); iter_valid(&i) && *n < max; rocksdb_iter_next(i.it)) {
		size_t klen;
		const uint8_t *k = iter_key(&i, &klen);

		if (klen != KEY_MAX)
			continue;
		pages[*n] = get_be32(k + 17);
		numbers[(*n)++] = get_be32(k + 21);
	}
	return iter_close(&i);
}

int objstore_set_cap_version(struct objstore *s, const struct obj_id *id, uint32_t version,
			     uint32_t *old)
{
	return cap_change(s, id, version, true, old);
}

int objstore_revoke_writers(struct objstore *s, const struct obj_id *id, uint32_t version,
			    uint32_t *old)
{
	return cap_change(s, id, version, false, old);
}
