/* The control calls gateway I/O makes on one OSD (objio_internal.h):
 * each through the connection pool, tried again over a lost connection
 * (osd_conns_call), its arguments carried to the call in a struct of
 * its own. */
#include "objio_internal.h"

struct create_args {
	uint64_t partition;
	struct osd_ctl_create_item *it;
	int *res;
};

static int create_fn(struct osd_ctl_client *c, void *arg)
{
	struct create_args *a = arg;

	return osd_ctl_objects_create(c, a->partition, a->it, 1, a->res);
}

int objio_osd_create(struct objio *io, uint32_t osd, uint64_t partition,
		     struct osd_ctl_create_item *it, int *res)
{
	struct create_args a = { partition, it, res };

	return osd_conns_call(io->conns, osd, create_fn, &a);
}

static int partition_create_fn(struct osd_ctl_client *c, void *arg)
{
	const uint64_t *partition = arg;

	return osd_ctl_partition_create(c, *partition);
}

int objio_osd_partition_create(struct objio *io, uint32_t osd, uint64_t partition)
{
	return osd_conns_call(io->conns, osd, partition_create_fn, &partition);
}

struct remove_args {
	uint64_t partition;
	uint64_t object;
	int *res;
};

static int remove_fn(struct osd_ctl_client *c, void *arg)
{
	struct remove_args *a = arg;

	return osd_ctl_objects_remove(c, a->partition, &a->object, 1, a->res);
}

int objio_osd_remove(struct objio *io, uint32_t osd, uint64_t partition, uint64_t object, int *res)
{
	struct remove_args a = { partition, object, res };

	return osd_conns_call(io->conns, osd, remove_fn, &a);
}

struct read_args {
	const struct osd_ctl_obj_id *id;
	uint64_t off;
	void *buf;
	size_t len;
	size_t *n;
	bool *eof;
};

static int read_fn(struct osd_ctl_client *c, void *arg)
{
	struct read_args *a = arg;

	return osd_ctl_read(c, a->id, a->off, a->buf, a->len, a->n, a->eof);
}

int objio_osd_read(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id, uint64_t off,
		   void *buf, size_t len, size_t *n, bool *eof)
{
	struct read_args a = { id, off, buf, len, n, eof };

	return osd_conns_call(io->conns, osd, read_fn, &a);
}

struct write_args {
	const struct osd_ctl_obj_id *id;
	uint64_t off;
	const void *buf;
	size_t len;
	enum osd_ctl_stable stable;
	uint8_t *verf;
};

static int write_fn(struct osd_ctl_client *c, void *arg)
{
	struct write_args *a = arg;

	return osd_ctl_write(c, a->id, a->off, a->buf, a->len, a->stable, a->verf);
}

int objio_osd_write(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id, uint64_t off,
		    const void *buf, size_t len, enum osd_ctl_stable stable, uint8_t verf[8])
{
	struct write_args a = { id, off, buf, len, stable, verf };

	return osd_conns_call(io->conns, osd, write_fn, &a);
}

struct length_args {
	const struct osd_ctl_obj_id *id;
	uint64_t *len;
};

/* An answer that is not one 8-byte length is -EPROTO, as a garbled reply
 * is, and tried again as one (osd_conns_lost_connection). */
static int length_fn(struct osd_ctl_client *c, void *arg)
{
	static const struct osd_ctl_attr_key key = { .page = 1, .number = 1 };
	struct length_args *a = arg;
	struct osd_ctl_attr attr;
	size_t n = 0;
	int rc = osd_ctl_getattr(c, a->id, &key, 1, &attr, 1, &n);

	if (!rc && (n != 1 || attr.len != 8))
		rc = -EPROTO;
	*a->len = 0;
	for (int i = 0; !rc && i < 8; i++)
		*a->len = *a->len << 8 | attr.value[i];
	return rc;
}

int objio_osd_length(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id, uint64_t *len)
{
	struct length_args a = { id, len };

	return osd_conns_call(io->conns, osd, length_fn, &a);
}

struct truncate_args {
	const struct osd_ctl_obj_id *id;
	struct osd_ctl_attr len;
};

static int truncate_fn(struct osd_ctl_client *c, void *arg)
{
	struct truncate_args *a = arg;
	int rc = osd_ctl_setattr(c, a->id, &a->len, 1, NULL);

	return rc ? rc : osd_ctl_flush(c, a->id);
}

int objio_osd_truncate(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
		       uint64_t len)
{
	struct truncate_args a = { id, { .page = 1, .number = 1, .len = 8 } };

	for (int i = 0; i < 8; i++)
		a.len.value[i] = (uint8_t)(len >> (56 - 8 * i));
	return osd_conns_call(io->conns, osd, truncate_fn, &a);
}

struct checksums_args {
	const struct osd_ctl_obj_id *id;
	uint64_t first;
	size_t count;
	bool verify;
	struct osd_ctl_extent_csum *out;
	size_t *n;
};

static int checksums_fn(struct osd_ctl_client *c, void *arg)
{
	struct checksums_args *a = arg;

	return osd_ctl_checksums(c, a->id, a->first, a->count, a->verify, a->out, a->n, NULL);
}

int objio_osd_checksums(struct objio *io, uint32_t osd, const struct osd_ctl_obj_id *id,
			uint64_t first, size_t count, bool verify, struct osd_ctl_extent_csum *out,
			size_t *n)
{
	struct checksums_args a = { id, first, count, verify, out, n };

	return osd_conns_call(io->conns, osd, checksums_fn, &a);
}
