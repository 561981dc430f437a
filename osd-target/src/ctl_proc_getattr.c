/* GETATTR: named attributes, or with an empty key list all of page 1 and
 * then the user attributes (as many as fit in OSD_CTL_MAX_ATTRS; ask for
 * the rest by key).  An unset user attribute reads as an empty value,
 * matching SETATTR where an empty value deletes. */
#include <errno.h>
#include <stdlib.h>

#include "ctl_server.h"

#define INFO_ATTRS OBJ_ATTR_READ_FLOOR /* page 1 numbers 1..9 */

struct attr_batch {
	osd_attr *attrs;
	char *values; /* OSD_CTL_MAX_ATTR_LEN bytes per attr */
	size_t n;
};

static int batch_alloc(struct attr_batch *b, size_t n)
{
	b->n = n;
	b->attrs = calloc(n + 1, sizeof(*b->attrs));
	b->values = malloc((n + 1) * OSD_CTL_MAX_ATTR_LEN);
	return b->attrs && b->values ? 0 : -ENOMEM;
}

static void batch_free(struct attr_batch *b)
{
	free(b->attrs);
	free(b->values);
}

static int keys_from_request(struct attr_batch *b, const osd_getattr_args *args)
{
	int err = batch_alloc(b, args->keys.keys_len);

	for (size_t i = 0; !err && i < b->n; i++) {
		b->attrs[i].page = args->keys.keys_val[i].page;
		b->attrs[i].number = args->keys.keys_val[i].number;
	}
	return err;
}

static int keys_all(struct attr_batch *b, struct objstore *store, const struct obj_id *id)
{
	uint32_t pages[OSD_CTL_MAX_ATTRS], numbers[OSD_CTL_MAX_ATTRS];
	size_t nuser = 0;
	int err = objstore_attr_list(store, id, pages, numbers, OSD_CTL_MAX_ATTRS - INFO_ATTRS,
				     &nuser);

	if (!err)
		err = batch_alloc(b, INFO_ATTRS + nuser);
	for (size_t i = 0; !err && i < INFO_ATTRS; i++) {
		b->attrs[i].page = OBJSTORE_ATTR_PAGE_INFO;
		b->attrs[i].number = (u_int)(i + 1);
	}
	for (size_t i = 0; !err && i < nuser; i++) {
		b->attrs[INFO_ATTRS + i].page = pages[i];
		b->attrs[INFO_ATTRS + i].number = numbers[i];
	}
	return err;
}

static int object_exists(struct objstore *store, const struct obj_id *id)
{
	uint8_t len[8];
	size_t n;

	return objstore_attr_get(store, id, OBJSTORE_ATTR_PAGE_INFO, OBJ_ATTR_LENGTH, len,
				 sizeof(len), &n);
}

static int read_value(struct objstore *store, const struct obj_id *id, osd_attr *a, char *buf)
{
	size_t len = 0;
	int err = objstore_attr_get(store, id, a->page, a->number, buf, OSD_CTL_MAX_ATTR_LEN, &len);

	if (err == -ENOENT && a->page >= OBJSTORE_ATTR_PAGE_USER_MIN)
		err = object_exists(store, id);
	a->value.value_len = (u_int)len;
	a->value.value_val = buf;
	return err;
}

static enum rpc_outcome getattr_reply(struct rpc_reply *reply, int err, const struct attr_batch *b)
{
	osd_getattr_res res = { .status = ctl_status(err) };
	size_t max_len = 8;

	if (!err) {
		res.osd_getattr_res_u.ok.attrs.attrs_len = (u_int)b->n;
		res.osd_getattr_res_u.ok.attrs.attrs_val = b->attrs;
		for (size_t i = 0; i < b->n; i++)
			max_len += 12 + RNDUP(b->attrs[i].value.value_len);
	}
	return ctl_reply_encode(reply, CTL_XDRPROC(xdr_osd_getattr_res), &res, max_len);
}

enum rpc_outcome ctl_proc_getattr(struct osd_ctx *ctx, void *argp, struct rpc_reply *reply)
{
	const osd_getattr_args *args = argp;
	const struct obj_id id = { args->id.partition, args->id.object };
	struct attr_batch b = { 0 };
	enum rpc_outcome out;
	int err;

	if (args->keys.keys_len)
		err = keys_from_request(&b, args);
	else
		err = keys_all(&b, ctx->store, &id);
	for (size_t i = 0; !err && i < b.n; i++)
		err = read_value(ctx->store, &id, &b.attrs[i], b.values + i * OSD_CTL_MAX_ATTR_LEN);
	out = getattr_reply(reply, err, &b);
	batch_free(&b);
	return out;
}
