/* FSINFO: the transfer sizes clients size their READs and WRITEs by. */
#include "nfs3.h"

#define FSINFO_PREF_IO (1u << 20)
#define FSINFO_MULT 4096u
#define FSINFO_DTPREF 4096u

static void encode_fsinfo_ok(struct xdr_w *out)
{
	xw_u32(out, OSD_NFS_MAX_IO);      /* rtmax */
	xw_u32(out, FSINFO_PREF_IO);      /* rtpref */
	xw_u32(out, FSINFO_MULT);         /* rtmult */
	xw_u32(out, OSD_NFS_MAX_IO);      /* wtmax */
	xw_u32(out, FSINFO_PREF_IO);      /* wtpref */
	xw_u32(out, FSINFO_MULT);         /* wtmult */
	xw_u32(out, FSINFO_DTPREF);       /* dtpref */
	xw_u64(out, OBJSTORE_MAX_OFFSET); /* maxfilesize */
	xw_u32(out, 0);                   /* time_delta: nanoseconds */
	xw_u32(out, 1);
	xw_u32(out, FSF3_HOMOGENEOUS | FSF3_CANSETTIME);
}

enum rpc_outcome nfs3_proc_fsinfo(const struct osd_ctx *ctx, const struct nfs3_caller *who,
				  struct xdr_r *args, struct rpc_reply *reply)
{
	return nfs3_reply_static_info(ctx, who, args, reply, encode_fsinfo_ok);
}
