/* The pNFS metadata server: LAYOUTGET (flexfiles layouts over the OSDs,
 * the shape each client can handle), LAYOUTRETURN (the flexfiles error
 * and statistics body), LAYOUTCOMMIT (size and mtime), GETDEVICEINFO
 * (an OSD's data-server address), and the export's pNFS limits.
 *
 * Shapes (docs/architecture.md, "Stock Linux clients"): a file whose
 * map has one data column gets ONE whole-file segment with one data
 * server per mirror, which every Linux kernel handles.  Several columns:
 * clients named in Striped_Clients (Linux 6.18+) get one whole-file
 * striped layout; other clients get stripe-unit segments only when the
 * file has one mirror, and no layout at all (I/O through the manager)
 * when it has several, because every tested kernel misdirects mirror 0
 * of multi-segment mirrored layouts, silently. */
#include "pando_fsal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostport.h"
#include "idset.h"
#include "layouts.h"
#include "objio.h"
#include "pando/capability.h"
#include "pando/ff_xdr.h"
#include "pando/inline_policy.h"
#include "pando/stripe.h"
#include "pnfs_utils.h"
#include "view.h"

#define DS_RWSIZE (1u << 20)
/* An encoded ff_layout4: stripe unit 8, mirror count 4, flags 4, stats
 * hint 4; per mirror its data-server count 4; per data server deviceid
 * 16, efficiency 4, stateid 16, fh count 4, fh length 4 + 56, user and
 * group (ids of up to 10 digits) 16 each. */
#define FF_HEADER_BYTES 20
#define FF_MIRROR_BYTES 4
#define FF_DS_BYTES 132

/* Clients cache a device for the whole mount (Ganesha promises device
 * notifications, patch 0004), so the address behind a device id never
 * changes: the id carries a hash of the OSD's advertised address, and an
 * OSD that moves gets a new id. */
struct pando_devid {
	uint8_t fsal_id;
	uint8_t zero1;
	uint16_t export_id;
	uint32_t addr_tag; /* FNV-1a of the advertised address */
	uint64_t osd_id;
};

static uint32_t addr_tag(const char *advertised)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *)advertised; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

static void make_devid(uint16_t export_id, const struct cluster_map_osd *osd, uint8_t out[16])
{
	struct pando_devid d = { .fsal_id = FSAL_ID_EXPERIMENTAL,
				 .export_id = export_id,
				 .addr_tag = addr_tag(osd->advertise),
				 .osd_id = osd->id };

	memcpy(out, &d, sizeof(d));
}

/* The caller's address as admins write it: IPv4 plainly, also when
 * Ganesha's socket shows it IPv4-mapped (::ffff:a.b.c.d). */
static void caller_address(char *buf, size_t cap)
{
	const struct sockaddr_storage *sa = (const void *)op_ctx->caller_addr;
	const struct sockaddr_in6 *s6 = (const void *)sa;

	buf[0] = 0;
	if (!sa)
		return;
	if (sa->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, cap);
	else if (sa->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, cap);
	else if (sa->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, cap);
}

static bool striped_client(const struct pando_export *exp)
{
	char addr[INET6_ADDRSTRLEN] = "";
	const char *list = exp->mds.cfg.striped_clients;
	size_t n;

	if (!list || !*list)
		return false;
	if (!strcmp(list, "*"))
		return true;
	caller_address(addr, sizeof(addr));
	n = strlen(addr);
	for (const char *p = strstr(list, addr); n && p; p = strstr(p + 1, addr))
		if ((p == list || p[-1] == ',' || p[-1] == ' ') &&
		    (p[n] == 0 || p[n] == ',' || p[n] == ' '))
			return true;
	return false;
}

/* The segment this client gets, or -EOPNOTSUPP for none (UNAVAILABLE).
 * RS files: no client computes parity, so writes always go through the
 * manager; clients that take striped layouts read the k data components
 * directly (the code is systematic), others read through the manager. */
static int choose_segment(const struct pando_export *exp, const struct pando_storage_map *map,
			  uint64_t offset, bool write, struct pando_segment *seg)
{
	uint32_t copies = map->shape.raid == PANDO_RAID1 ? map->shape.copies : 1;

	if (map->shape.raid == PANDO_RS)
		return write || !striped_client(exp) ? -EOPNOTSUPP
						     : pando_stripe_striped(map, offset, seg);
	if (map->shape.data > 1 && striped_client(exp))
		return pando_stripe_striped(map, offset, seg);
	/* Mirrored layouts must be one whole-file segment. */
	if (copies > 1 && (map->shape.data > 1 || map->groups > 1))
		return -EOPNOTSUPP;
	return pando_stripe_segment(map, offset, seg);
}

/* A write layout reaches no further than the quotas let the file grow:
 * its size plus the least that the store's, its user's and its group's
 * leave.  -EDQUOT when that
 * leaves the client less than its minlength from the offset it asked
 * for: it then writes through the manager, which refuses with EDQUOT. */
static int within_quota(struct pando_export *exp, const struct ns_attr *a,
			const struct pando_layout_ask *ask, struct pando_segment *seg)
{
	uint64_t end;
	int rc = pando_quota_end(&exp->mds, a, &end);

	if (rc || end == UINT64_MAX)
		return rc;
	if (end <= ask->offset || end - ask->offset < ask->minlength || end <= seg->offset)
		return -EDQUOT;
	if (seg->length == PANDO_LENGTH_EOF || seg->length > end - seg->offset)
		seg->length = end - seg->offset;
	return 0;
}

/* Neither this manager nor the cluster map says the OSD is down. */
static bool osd_reachable(struct pando_export *exp, uint32_t id)
{
	const struct cluster_map_osd *o = pando_view_osd(pando_view_get(&exp->mds), id);

	if (o && !o->up)
		return false;
	return osd_conns_reachable(exp->mds.conns, id);
}

/* Drops the mirrors a client must not use: those with a stale component
 * (it missed writes), and those on an OSD known to be down.  A write
 * layout without a mirror makes it stale first, durably, since the
 * client's writes will not reach it.  -EOPNOTSUPP when no mirror is left
 * (the client then goes through the manager, which says what it can). */
static int usable_mirrors(struct pando_export *exp, uint64_t ino,
			  const struct pando_storage_map *map, bool write,
			  struct pando_segment *seg)
{
	uint32_t stale[OBJIO_MAX_SKIP], keep = 0;
	size_t nstale = 0;
	int rc = pando_stale_osds(&exp->mds, ino, stale, &nstale);

	for (uint32_t m = 0; !rc && m < seg->mirrors; m++) {
		bool ok = true;

		for (uint32_t c = 0; ok && c < seg->columns; c++) {
			uint32_t osd = pando_map_component(map, seg->group,
							   seg->component[m * seg->columns + c])
					       ->osd_id;

			for (size_t s = 0; s < nstale; s++)
				ok &= stale[s] != osd;
			if (ok && !osd_reachable(exp, osd)) {
				ok = false;
				if (write)
					rc = ns_damage_add(exp->mds.ns, ino, osd, -EHOSTDOWN,
							   NFS4_OP_LAYOUTGET, true);
			}
		}
		if (ok) {
			memmove(&seg->component[keep * seg->columns],
				&seg->component[m * seg->columns],
				seg->columns * sizeof(seg->component[0]));
			keep++;
		}
	}
	if (rc)
		return rc;
	if (keep < seg->mirrors)
		LogInfo(COMPONENT_PNFS, "pando: inode %" PRIu64 ": layout with %u of %u mirrors",
			ino, keep, seg->mirrors);
	seg->mirrors = keep;
	return keep ? 0 : -EOPNOTSUPP;
}

/* The uid a client's handles are bound to, RFC 8435's synthetic ids: one
 * per client id, in [2^30, 2^31), never 0 (any caller).  The OSDs take
 * it as a token, not as a user: a real user with that uid gains nothing. */
static uint32_t holder_of(uint64_t clientid)
{
	return 0x40000000u | (uint32_t)((clientid * 0x9e3779b97f4a7c15ull) >> 34);
}

/* What every handle of a layout shares: rights, version, the lifetime of
 * the layout's handles and their holder (the caller, op_ctx). */
static struct capability layout_handle(const struct pando_export *exp, bool write,
				       uint32_t cap_version)
{
	return (struct capability){
		.rights = write ? CAP_RIGHTS_RW : CAP_RIGHTS_READ,
		.cap_version = cap_version,
		.expiry = (uint64_t)time(NULL) + exp->mds.cfg.capability_lifetime_s,
		.holder = holder_of(op_ctx->clientid ? *op_ctx->clientid : 0),
	};
}

static int fill_ds(struct pando_export *exp, const struct pando_storage_map *map,
		   const struct pando_segment *seg, uint32_t idx, const struct capability *shared,
		   struct pando_ff_data_server *ds)
{
	const struct pando_component *k = pando_map_component(map, seg->group, seg->component[idx]);
	struct capability cap = *shared;
	const struct cluster_map_osd *osd = pando_view_osd(pando_view_get(&exp->mds), k->osd_id);
	struct cluster_key key;

	if (!osd)
		return -EIO;
	cap.osd_id = k->osd_id;
	cap.partition = map->partition_id;
	cap.object = k->object_id;
	make_devid(exp->export.export_id, osd, ds->deviceid);
	ds->efficiency = 1;
	ds->fh_count = 1;
	ds->fh_vers = gsh_calloc(1, sizeof(*ds->fh_vers));
	ds->fh_vers->len = CAPABILITY_SIZE;
	pando_key_get(&exp->mds, &key);
	capability_mint(&key, &cap, ds->fh_vers->data);
	explicit_bzero(&key, sizeof(key));
	/* Linux sends these as AUTH_SYS to the OSDs, which refuse a handle
	 * whose holder is not the uid it comes with. */
	snprintf(ds->user, sizeof(ds->user), "%" PRIu32, cap.holder);
	snprintf(ds->group, sizeof(ds->group), "%" PRIu32, cap.holder);
	return 0;
}

static int encode_layout(struct pando_export *exp, const struct pando_storage_map *map,
			 const struct pando_segment *seg, bool write, uint32_t cap_version,
			 XDR *xdrs)
{
	const struct capability shared = layout_handle(exp, write, cap_version);
	struct pando_ff_layout ff = { .stripe_unit = seg->columns > 1 ? seg->stripe_unit : 0,
				      .mirror_count = seg->mirrors,
				      .flags = 0,
				      .stats_collect_hint = 0 };
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = 0;

	ff.mirrors = gsh_calloc(seg->mirrors, sizeof(*ff.mirrors));
	for (uint32_t m = 0; m < seg->mirrors; m++) {
		ff.mirrors[m].ds_count = seg->columns;
		ff.mirrors[m].ds = gsh_calloc(seg->columns, sizeof(*ff.mirrors[m].ds));
		for (uint32_t c = 0; !rc && c < seg->columns; c++)
			rc = fill_ds(exp, map, seg, m * seg->columns + c, &shared,
				     &ff.mirrors[m].ds[c]);
	}
	if (!rc) {
		rc = pando_ff_layout_encode(&ff, NULL, 0, &len);
		if (rc == -ENOSPC || rc == 0) {
			buf = gsh_malloc(len);
			rc = pando_ff_layout_encode(&ff, buf, len, &len);
		}
	}
	if (!rc && !xdr_putbytes(xdrs, (char *)buf, len))
		rc = -ENOSPC;
	gsh_free(buf);
	for (uint32_t m = 0; m < seg->mirrors; m++) {
		for (uint32_t c = 0; c < ff.mirrors[m].ds_count; c++)
			gsh_free(ff.mirrors[m].ds[c].fh_vers);
		gsh_free(ff.mirrors[m].ds);
	}
	gsh_free(ff.mirrors);
	return rc;
}

static const char *verdict_name(enum pando_inline_verdict v)
{
	switch (v) {
	case PANDO_INLINE_GRANT:
		return "grant";
	case PANDO_INLINE_MOVE:
		return "move";
	case PANDO_INLINE_REFUSE:
		return "refuse";
	case PANDO_INLINE_UNAVAILABLE:
		return "unavailable";
	}
	return "?";
}

/* The NFSv4 clients that have fetched FATTR4_MDSTHRESHOLD
 * (pando_mdsthreshold).  Only they know that a file below it is kept
 * inline and is to be written through the manager; one that never asked
 * (a conformance client) gets the layouts it asks for.  Client ids are
 * unique to this server instance; a client that falls out of the bounded
 * set only moves small files to objects. */
static struct pando_idset threshold_clients = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool knows_threshold(void)
{
	return op_ctx->clientid && pando_idset_has(&threshold_clients, *op_ctx->clientid);
}

/* Small files stay inline (layout/include/pando/inline_policy.h): a file
 * moves to objects on a ranged write ask (Linux sends one only for a file
 * past the MDS threshold, pando_mdsthreshold) or a whole-file ask whose
 * minlength reaches past Inline_Max; the whole-file ask in every OPEN of
 * a file that fits inline is refused.  The refusal is what RFC 8881 18.43.3
 * gives a layout that cannot cover loga_minlength: NFS4ERR_BADLAYOUT, or
 * NFS4ERR_LAYOUTTRYLATER when minlength is 0.  Linux turns both into
 * -EOVERFLOW (nfs4_layoutget_handle_exception), which pnfs_update_layout
 * takes as "through the MDS this time" and clears the inode's fail bit;
 * LAYOUTUNAVAILABLE would keep it off pNFS for the file for 120 s, even
 * after the gateway moved the file to objects; it is kept for reads of
 * inline data (one refusal instead of one per readahead window).  In an
 * OPEN compound any of these is ignored (pnfs_parse_lgopen).  A refused
 * write leaves set-id bits to the manager's WRITE path (setid.c).
 * *a: the file's attributes; *fresh: the file had no objects a moment ago,
 * so whatever it has now was just made (by this call or a concurrent one)
 * and never fenced. */
static nfsstat4 ensure_objects(struct pando_handle *h, const struct pando_layout_ask *ask,
			       struct ns_attr *a, bool *fresh)
{
	struct pando_inline_file file;
	enum pando_inline_verdict v;
	nfsstat4 st;
	int rc = ns_getattr(h->exp->mds.ns, h->ino, a);

	*fresh = false;
	if (rc)
		return posix2nfs4_error(-rc);
	file.objects = a->objects;
	file.inline_max = ns_inline_max(h->exp->mds.ns);
	v = pando_inline_decide(ask, &file);
	LogDebug(COMPONENT_PNFS,
		 "pando: LAYOUTGET inode %" PRIu64 " %s offset %" PRIu64 " length %" PRIu64
		 " minlength %" PRIu64 " size %" PRIu64 ": %s",
		 h->ino, ask->write ? "rw" : "read", ask->offset, ask->length, ask->minlength,
		 a->size, verdict_name(v));
	if (v == PANDO_INLINE_UNAVAILABLE)
		return NFS4ERR_LAYOUTUNAVAILABLE;
	if (v == PANDO_INLINE_REFUSE)
		return ask->minlength ? NFS4ERR_BADLAYOUT : NFS4ERR_LAYOUTTRYLATER;
	/* Only a write layout bypasses the manager's own set-id clearing. */
	st = ask->write ? pando_setid_layoutget(h) : NFS4_OK;
	if (st != NFS4_OK || v == PANDO_INLINE_GRANT)
		return st;
	rc = pando_move_to_objects(h);
	*fresh = rc == 0;
	/* A move that failed for want of OSDs would fail each retry the
	 * same: the client goes through the manager, which says so at once
	 * (Linux retried LAYOUTTRYLATER for 98 s before its write failed). */
	if (rc == -EAGAIN)
		return NFS4ERR_LAYOUTTRYLATER;
	return rc ? NFS4ERR_LAYOUTUNAVAILABLE : NFS4_OK;
}

/* The capability version the file's handles must carry: the grants keep
 * it while layouts are out, else the OSDs are asked.  fresh: the file
 * just got its objects, so they carry OBJIO_CAP_VERSION_NEW. */
static int cap_version(struct pando_export *exp, uint64_t ino, const struct pando_storage_map *map,
		       bool fresh, uint32_t *ver)
{
	uint32_t v = pando_grants_cap_version(exp->mds.grants, ino);
	int rc;

	if (v) {
		*ver = v;
		return 0;
	}
	if (fresh)
		v = OBJIO_CAP_VERSION_NEW;
	else if ((rc = pando_objects_cap_version(&exp->mds, map, &v)) != 0)
		return rc;
	return pando_grants_set_cap_version(exp->mds.grants, ino, v, ver);
}

/* Records the segment granted to the caller (op_ctx); -EAGAIN while the
 * file is being recalled or is frozen (LAYOUTTRYLATER).  Ganesha gives it
 * back with pando_grant_end or pando_grant_revoked (layoutreturn). */
static int grant_to_caller(struct pando_handle *h, bool write, uint32_t ver,
			   struct pando_grant **out)
{
	char client[sizeof((*out)->client)];
	struct pando_grant_ask ask = { .ino = h->ino,
				       .gen = h->gen,
				       .write = write,
				       .cap_version = ver,
				       .client = client,
				       .clientid = op_ctx->clientid ? *op_ctx->clientid : 0 };

	caller_address(client, sizeof(client));
	return pando_grants_grant(h->exp->mds.grants, &ask, out);
}

/* What a failed LAYOUTGET answers: a layout the client cannot use, come
 * back later (a recall or a move under way), or a reply buffer too small. */
static nfsstat4 layoutget_status(uint64_t ino, int rc)
{
	switch (rc) {
	case -EOPNOTSUPP:
	case -EDQUOT:
		return NFS4ERR_LAYOUTUNAVAILABLE;
	case -EAGAIN:
		return NFS4ERR_LAYOUTTRYLATER;
	case -ENOSPC:
		return NFS4ERR_TOOSMALL;
	default:
		LogMajor(COMPONENT_PNFS, "pando: LAYOUTGET of inode %" PRIu64 " failed: %d", ino,
			 rc);
		return NFS4ERR_LAYOUTTRYLATER;
	}
}

static nfsstat4 pando_layoutget(struct fsal_obj_handle *o, XDR *loc_body,
				const struct fsal_layoutget_arg *arg,
				struct fsal_layoutget_res *res)
{
	struct pando_handle *h = to_handle(o);
	struct pando_export *exp = h->exp;
	bool write = res->segment.io_mode == LAYOUTIOMODE4_RW;
	struct pando_layout_ask ask = { .offset = res->segment.offset,
					.length = res->segment.length,
					.minlength = arg->minlength,
					.write = write,
					.knows_threshold = knows_threshold() };
	struct pando_storage_map *map = NULL;
	struct pando_segment seg;
	struct pando_grant *granted = NULL;
	struct ns_attr a;
	uint32_t ver = 0;
	bool fresh;
	nfsstat4 st;
	int rc;

	if (arg->type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	if (o->type != REGULAR_FILE)
		return NFS4ERR_WRONG_TYPE;
	st = ensure_objects(h, &ask, &a, &fresh);
	if (st != NFS4_OK)
		return st;
	rc = pando_map_load(&exp->mds, h->ino, &map);
	if (!rc)
		rc = choose_segment(exp, map, res->segment.offset, write, &seg);
	if (!rc && write)
		rc = within_quota(exp, &a, &ask, &seg);
	if (!rc)
		rc = usable_mirrors(exp, h->ino, map, write, &seg);
	if (!rc)
		rc = cap_version(exp, h->ino, map, fresh, &ver);
	if (!rc)
		rc = grant_to_caller(h, write, ver, &granted);
	if (!rc) {
		rc = encode_layout(exp, map, &seg, write, ver, loc_body);
		if (rc)
			pando_grants_ungrant(exp->mds.grants, granted);
	}
	pando_map_free(map);
	if (rc)
		return layoutget_status(h->ino, rc);
	res->segment.offset = seg.offset;
	res->segment.length = seg.length == PANDO_LENGTH_EOF ? NFS4_UINT64_MAX : seg.length;
	res->fsal_seg_data = granted;
	/* Not return-on-close: the client keeps the layout across opens
	 * (no LAYOUTGET, LAYOUTRETURN and GETDEVICEINFO per open) and sends
	 * its LAYOUTCOMMIT and LAYOUTRETURN whenever it likes, also after
	 * its CLOSE.  A CLOSE that dropped the layout would make those arrive
	 * for a stateid Ganesha no longer knows (a lost size).  Patch 0100
	 * keeps the client's layout stateid when its next OPEN asks again. */
	res->return_on_close = false;
	res->last_segment = true;
	return NFS4_OK;
}

static void note_return_body(struct pando_handle *h, XDR *body)
{
	struct pando_ff_layoutreturn ret;
	size_t len = xdr_size_inline(body);

	if (len == 0)
		return;
	if (pando_ff_layoutreturn_decode(body->x_data, len, &ret) != 0) {
		LogInfo(COMPONENT_PNFS,
			"pando: undecodable flexfiles LAYOUTRETURN body (%zu bytes)", len);
		return;
	}
	for (uint32_t i = 0; i < ret.ioerr_count; i++) {
		for (uint32_t e = 0; e < ret.ioerrs[i].error_count; e++) {
			const struct pando_device_error *de = &ret.ioerrs[i].errors[e];
			struct pando_devid d;

			memcpy(&d, de->deviceid, sizeof(d));
			/* Not ours, or 2^32 + an OSD id, which a cast would alias. */
			if (d.fsal_id != FSAL_ID_EXPERIMENTAL || d.osd_id > UINT32_MAX)
				continue;
			pando_layouts_note_io_error(h->exp, h->ino, (uint32_t)d.osd_id, de->status,
						    de->opnum);
		}
	}
	pando_ff_layoutreturn_release(&ret);
}

static nfsstat4 pando_layoutreturn(struct fsal_obj_handle *o, XDR *lrf_body,
				   const struct fsal_layoutreturn_arg *arg)
{
	struct pando_handle *h = to_handle(o);
	struct pando_grant *seg = arg->fsal_seg_data;

	if (arg->lo_type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	if (lrf_body)
		note_return_body(h, lrf_body);
	if (arg->dispose && seg && arg->circumstance == circumstance_revoke)
		pando_grant_revoked(seg);
	else if (arg->dispose && seg)
		pando_grant_end(seg);
	return NFS4_OK;
}

static nfsstat4 pando_layoutcommit(struct fsal_obj_handle *o, XDR *lou_body,
				   const struct fsal_layoutcommit_arg *arg,
				   struct fsal_layoutcommit_res *res)
{
	struct pando_handle *h = to_handle(o);
	struct pando_grant *seg = arg->fsal_seg_data;
	struct ns_setattr sa = { 0 };
	struct ns_attr a;
	int rc;

	/* A fenced segment, or one from before a recall (a truncate), must
	 * not grow the file back: its writes lost the race with the change.
	 * Ganesha offers the commit segment by segment until one says done,
	 * so a stale one passes it on to a segment granted since, which is
	 * where the client's writes went. */
	if (seg && pando_grants_stale(h->exp->mds.grants, seg)) {
		res->commit_done = false;
		return NFS4_OK;
	}
	if (arg->new_offset) {
		sa.mask |= NS_SET_SIZE | NS_SET_SIZE_GROW;
		sa.size = arg->last_write + 1;
	}
	if (arg->time_changed) {
		sa.mask |= NS_SET_MTIME;
		sa.mtime.tv_sec = arg->new_time.seconds;
		sa.mtime.tv_nsec = arg->new_time.nseconds;
	} else {
		sa.mask |= NS_SET_MTIME_NOW;
	}
	rc = ns_setattr(h->exp->mds.ns, h->ino, &sa, &a);
	if (rc)
		return posix2nfs4_error(-rc);
	pando_grants_committed(h->exp->mds.grants, h->ino);
	res->size_supplied = true;
	res->new_size = a.size;
	res->commit_done = true;
	return NFS4_OK;
}

static struct pando_export *export_by_id(uint16_t id)
{
	struct pando_export *found = NULL;
	struct glist_head *node;

	pthread_mutex_lock(&pando_exports_lock);
	glist_for_each(node, &pando_exports) {
		struct pando_export *exp = glist_entry(node, struct pando_export, node);

		if (exp->export.export_id == id)
			found = exp;
	}
	pthread_mutex_unlock(&pando_exports_lock);
	return found;
}

static int advertised_netaddr(const char *hostport, struct pando_netaddr *na)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	char host[INET6_ADDRSTRLEN], port[6];

	if (pando_hostport_split(hostport, host, sizeof(host), port, sizeof(port)))
		return -EINVAL;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		v4->sin_port = htons((uint16_t)atoi(port));
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)atoi(port));
	} else {
		return -EINVAL;
	}
	return pando_netaddr_from_sockaddr((struct sockaddr *)&ss, na);
}

static nfsstat4 pando_getdeviceinfo(struct fsal_module *m, XDR *da_addr_body,
				    const layouttype4 type, const struct pnfs_deviceid *id)
{
	struct pando_ff_device_version v = { .version = 3,
					     .minorversion = 0,
					     .rsize = DS_RWSIZE,
					     .wsize = DS_RWSIZE,
					     .tightly_coupled = false };
	struct pando_ff_device_addr addr = { .netaddr_count = 1,
					     .version_count = 1,
					     .versions = &v };
	struct pando_netaddr na;
	struct pando_devid d;
	struct pando_export *exp;
	const struct cluster_map_osd *osd;
	uint8_t buf[256];
	size_t len;

	if (type != LAYOUT4_FLEX_FILES)
		return NFS4ERR_UNKNOWN_LAYOUTTYPE;
	memcpy(&d, id, sizeof(d));
	exp = export_by_id(d.export_id);
	osd = exp && d.osd_id <= UINT32_MAX
		      ? pando_view_osd(pando_view_get(&exp->mds), (uint32_t)d.osd_id)
		      : NULL;
	/* An id from before the OSD moved names no device any more. */
	if (!osd || d.addr_tag != addr_tag(osd->advertise))
		return NFS4ERR_NOENT;
	if (advertised_netaddr(osd->advertise, &na) != 0)
		return NFS4ERR_SERVERFAULT;
	addr.netaddrs = &na;
	if (pando_ff_device_addr_encode(&addr, buf, sizeof(buf), &len) != 0)
		return NFS4ERR_SERVERFAULT;
	if (!xdr_putbytes(da_addr_body, (char *)buf, len))
		return NFS4ERR_TOOSMALL;
	return NFS4_OK;
}

static size_t pando_da_addr_size(struct fsal_module *m)
{
	return 256;
}

static const layouttype4 flexfiles[] = { LAYOUT4_FLEX_FILES };

/* An export with Pnfs = false lists no layout type, so clients never ask;
 * Ganesha's PNFS_MDS alone only changes the EXCHANGE_ID flags. */
static void pando_layouttypes(struct fsal_export *e, int32_t *count, const layouttype4 **types)
{
	*count = to_export(e)->mds.cfg.pnfs ? 1 : 0;
	*types = flexfiles;
}

static uint32_t pando_layout_blocksize(struct fsal_export *e)
{
	return to_export(e)->mds.cfg.stripe_unit;
}

/* 0 makes Ganesha refuse LAYOUTGET with LAYOUTUNAVAILABLE. */
static uint32_t pando_maximum_segments(struct fsal_export *e)
{
	return to_export(e)->mds.cfg.pnfs ? 1 : 0;
}

/* One buffer per LAYOUTGET segment, freed with its result (patch 0020). */
/* The widest layout any map can make: a storage policy may ask for more
 * copies or columns than the export's defaults. */
static size_t pando_loc_body_size(struct fsal_export *e)
{
	(void)e;
	return FF_HEADER_BYTES + 3 * FF_MIRROR_BYTES + (size_t)PANDO_MAP_MAX_WIDTH * FF_DS_BYTES;
}

void pando_mds_export_ops_init(struct export_ops *ops)
{
	ops->fs_layouttypes = pando_layouttypes;
	ops->fs_layout_blocksize = pando_layout_blocksize;
	ops->fs_maximum_segments = pando_maximum_segments;
	ops->fs_loc_body_size = pando_loc_body_size;
}

void pando_mds_module_ops_init(struct fsal_ops *ops)
{
	ops->getdeviceinfo = pando_getdeviceinfo;
	ops->fs_da_addr_size = pando_da_addr_size;
}

/* FATTR4_MDSTHRESHOLD (patch 0120): a file that fits inline is read and
 * written through the manager without a LAYOUTGET.  Linux asks for a
 * layout only once its own idea of the size passes this, so its one-page
 * writeback asks for large files can be granted (README, "Small files
 * over pNFS"). */
static bool pando_mdsthreshold(struct fsal_obj_handle *o, layouttype4 *type, uint64_t *read_size,
			       uint64_t *write_size)
{
	const struct pando_export *exp = to_handle(o)->exp;

	if (!exp->mds.cfg.pnfs)
		return false;
	if (op_ctx->clientid)
		pando_idset_add(&threshold_clients, *op_ctx->clientid);
	*type = LAYOUT4_FLEX_FILES;
	*read_size = (uint64_t)ns_inline_max(exp->mds.ns) + 1;
	*write_size = *read_size;
	return true;
}

void pando_mds_ops_init(struct fsal_obj_ops *ops)
{
	ops->layoutget = pando_layoutget;
	ops->layoutreturn = pando_layoutreturn;
	ops->layoutcommit = pando_layoutcommit;
	ops->mdsthreshold = pando_mdsthreshold;
}
