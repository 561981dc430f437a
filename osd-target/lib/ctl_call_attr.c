/* Object attributes and capability versions: GETATTR, SETATTR,
 * SET_CAP_VERSION (ctl_proc_getattr.c, _setattr.c, _setcap.c on the
 * server). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_client.h"

struct getattr_out {
	struct osd_ctl_attr *attrs;
	size_t max;
	size_t *n;
};

static int take_getattr(const void *res, int rc, void *arg)
{
	const osd_getattr_res_ok *ok = &((const osd_getattr_res *)res)->osd_getattr_res_u.ok;
	struct getattr_out *out = arg;

	if (!rc && ok->attrs.attrs_len > out->max)
		rc = -EPROTO;
	for (size_t i = 0; !rc && i < ok->attrs.attrs_len; i++) {
		const osd_attr *a = &ok->attrs.attrs_val[i];

		out->attrs[i].page = a->page;
		out->attrs[i].number = a->number;
		out->attrs[i].len = a->value.value_len;
		/* An unset attribute has no buffer at all after XDR. */
		if (a->value.value_len)
			memcpy(out->attrs[i].value, a->value.value_val, a->value.value_len);
	}
	if (!rc)
		*out->n = ok->attrs.attrs_len;
	return rc;
}

/* The arguments' key array (n + 1 items, freed by the caller). */
static osd_attr_key *getattr_keys(const struct osd_ctl_attr_key *keys, size_t n)
{
	osd_attr_key *v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = (osd_attr_key){ keys[i].page, keys[i].number };
	return v;
}

int osd_ctl_getattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr_key *keys, size_t nkeys, struct osd_ctl_attr *attrs,
		    size_t max, size_t *n)
{
	struct getattr_out out = { attrs, max, n };
	osd_getattr_args args = { .id = { id->partition, id->object } };
	osd_getattr_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_getattr_res, take_getattr, &out);
	int rc;

	if (nkeys > OSD_CTL_MAX_ATTRS)
		return -EINVAL;
	args.keys.keys_val = getattr_keys(keys, nkeys);
	if (!args.keys.keys_val)
		return -ENOMEM;
	args.keys.keys_len = (u_int)nkeys;
	rc = ctl_call_result(c, OSDCTL_GETATTR, CTL_XDRPROC(xdr_osd_getattr_args), &args, &res);
	free(args.keys.keys_val);
	return rc;
}

/* The failed index comes back whatever the status: it names the attribute
 * that failed. */
static int take_setattr(const void *res, int rc, void *arg)
{
	size_t *failed_index = arg;

	if (failed_index)
		*failed_index = ((const osd_setattr_res *)res)->failed_index;
	return rc;
}

/* The arguments' attribute array (n + 1 items, freed by the caller), or
 * NULL with *rc set. */
static osd_attr *setattr_items(const struct osd_ctl_attr *attrs, size_t n, int *rc)
{
	osd_attr *v = calloc(n + 1, sizeof(*v));

	*rc = v ? 0 : -ENOMEM;
	for (size_t i = 0; v && i < n; i++) {
		if (attrs[i].len > OSD_CTL_MAX_ATTR_LEN) {
			free(v);
			*rc = -EINVAL;
			return NULL;
		}
		v[i] = (osd_attr){
			.page = attrs[i].page,
			.number = attrs[i].number,
			.value = { attrs[i].len, (char *)attrs[i].value },
		};
	}
	return v;
}

int osd_ctl_setattr(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
		    const struct osd_ctl_attr *attrs, size_t n, size_t *failed_index)
{
	osd_setattr_args args = { .id = { id->partition, id->object } };
	osd_setattr_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_setattr_res, take_setattr, failed_index);
	int rc;

	if (n > OSD_CTL_MAX_ATTRS)
		return -EINVAL;
	args.attrs.attrs_len = (u_int)n;
	args.attrs.attrs_val = setattr_items(attrs, n, &rc);
	if (!args.attrs.attrs_val)
		return rc;
	rc = ctl_call_result(c, OSDCTL_SETATTR, CTL_XDRPROC(xdr_osd_setattr_args), &args, &res);
	free(args.attrs.attrs_val);
	return rc;
}

static int take_setcap(const void *res, int rc, void *arg)
{
	uint32_t *old = arg;

	if (!rc && old)
		*old = ((const osd_setcap_res *)res)->old_version;
	return rc;
}

/* SET_CAP_VERSION and REVOKE_WRITERS share their arguments and result. */
static int setcap_call(struct osd_ctl_client *c, uint32_t proc, const struct osd_ctl_obj_id *id,
		       uint32_t version, uint32_t *old)
{
	osd_setcap_args args = { .id = { id->partition, id->object }, .cap_version = version };
	osd_setcap_res r = { 0 };
	struct ctl_result res = CTL_RESULT(r, xdr_osd_setcap_res, take_setcap, old);

	return ctl_call_result(c, proc, CTL_XDRPROC(xdr_osd_setcap_args), &args, &res);
}

int osd_ctl_set_cap_version(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
			    uint32_t version, uint32_t *old)
{
	return setcap_call(c, OSDCTL_SET_CAP_VERSION, id, version, old);
}

int osd_ctl_revoke_writers(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id,
			   uint32_t version, uint32_t *old)
{
	return setcap_call(c, OSDCTL_REVOKE_WRITERS, id, version, old);
}
