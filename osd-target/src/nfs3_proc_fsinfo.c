/* FSINFO: the transfer sizes clients size their READs and WRITEs by. */
#include "nfs3.h"

#define FSINFO_PREF_IO (1u << 20)
#define FSINFO_MULT 4096u
#define FSINFO_DTPREF 4096u

static void encode_fsinfo_ok(struct xdr_out *out)
{
	xout_u32(out, OSD_NFS_MAX_IO);		/* rtmax */
	xout_u32(out, FSINFO_PREF_IO);		/* rtpref */
	xout_u32(out, FSINFO_MULT);		/* rtmult */
	xout_u32(out, OSD_NFS_MAX_IO);		/* wtmax */
	xout_u32(out, FSINFO_PREF_IO);		/* wtpref */
	xout_u32(out, FSINFO_MULT);		/* wtmult */
	xout_u32(out, FSINFO_DTPREF);		/* dtpref */
	xout_u64(out, OBJSTORE_MAX_OFFSET);	/* maxfilesize */
	xout_u32(out, 0);			/* time_delta: nanoseconds */
	xout_u32(out, 1);
	xout_u32(out, FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
}

enum rpc_outcome nfs3_proc_fsinfo(const struct osd_ctx *ctx, struct xdr_in *args,
				  struct rpc_reply *reply)
{
	return nfs3_reply_static_info(ctx, args, reply, encode_fsinfo_ok);
}
