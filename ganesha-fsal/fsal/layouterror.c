/* NFSv4.2 LAYOUTERROR (RFC 7862 15.6): a client reports I/O errors it met
 * on the OSDs of a layout it keeps using.  Each error counts exactly as
 * one in a LAYOUTRETURN's flexfiles error body (mds.c):
 * pando_layouts_note_io_error() tells a refused handle (a recall, a fence)
 * from damage and records the damage.
 *
 * Ganesha hands every error's device id over as its struct pnfs_deviceid,
 * which is how mds.c lays out Pando's ids: byte 0 our FSAL id, devid the
 * OSD id.  An id that is not ours (a client bug, or garbage) is skipped:
 * it must not put damage records on an OSD it never named. */
#include "pando_fsal.h"

#include "layouts.h"

static bool pando_osd_devid(const struct pnfs_deviceid *d)
{
	return d->fsal_id == FSAL_ID_EXPERIMENTAL && d->devid <= UINT32_MAX;
}

fsal_status_t pando_layouterror(struct fsal_obj_handle *o, layouttype4 type,
				const struct fsal_layouterror_arg *arg)
{
	struct pando_handle *h = to_handle(o);

	if (type != LAYOUT4_FLEX_FILES)
		return fsalstat(ERR_FSAL_NOTSUPP, 0);
	for (uint32_t i = 0; i < arg->nerrors; i++) {
		const struct fsal_device_error *e = &arg->errors[i];

		if (!pando_osd_devid(&e->deviceid)) {
			if (pando_client_may_log())
				LogInfo(COMPONENT_PNFS,
					"pando: LAYOUTERROR on inode %" PRIu64
					" names device %u/%" PRIu64 ", not one of ours; ignored",
					h->ino, e->deviceid.fsal_id, e->deviceid.devid);
			continue;
		}
		pando_layouts_note_io_error(h->exp, h->ino, (uint32_t)e->deviceid.devid, e->status,
					    e->opnum);
	}
	return fsalstat(ERR_FSAL_NO_ERROR, 0);
}
