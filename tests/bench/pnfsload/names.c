/* Names of NFSv4 statuses and operations, for messages. */
#include "nfs4_xdr.h"

struct name {
	uint32_t value;
	const char *name;
};

static const struct name statuses[] = {
	{ 0, "NFS4_OK" },
	{ 1, "NFS4ERR_PERM" },
	{ 2, "NFS4ERR_NOENT" },
	{ 5, "NFS4ERR_IO" },
	{ 6, "NFS4ERR_NXIO" },
	{ 13, "NFS4ERR_ACCESS" },
	{ 17, "NFS4ERR_EXIST" },
	{ 20, "NFS4ERR_NOTDIR" },
	{ 21, "NFS4ERR_ISDIR" },
	{ 22, "NFS4ERR_INVAL" },
	{ 27, "NFS4ERR_FBIG" },
	{ 28, "NFS4ERR_NOSPC" },
	{ 30, "NFS4ERR_ROFS" },
	{ 63, "NFS4ERR_NAMETOOLONG" },
	{ 66, "NFS4ERR_NOTEMPTY" },
	{ 70, "NFS4ERR_STALE" },
	{ 10001, "NFS4ERR_BADHANDLE" },
	{ 10004, "NFS4ERR_NOTSUPP" },
	{ 10005, "NFS4ERR_TOOSMALL" },
	{ 10006, "NFS4ERR_SERVERFAULT" },
	{ 10008, "NFS4ERR_DELAY" },
	{ 10011, "NFS4ERR_EXPIRED" },
	{ 10013, "NFS4ERR_GRACE" },
	{ 10016, "NFS4ERR_WRONGSEC" },
	{ 10018, "NFS4ERR_RESOURCE" },
	{ 10020, "NFS4ERR_NOFILEHANDLE" },
	{ 10021, "NFS4ERR_MINOR_VERS_MISMATCH" },
	{ 10022, "NFS4ERR_STALE_CLIENTID" },
	{ 10024, "NFS4ERR_OLD_STATEID" },
	{ 10025, "NFS4ERR_BAD_STATEID" },
	{ 10036, "NFS4ERR_BADXDR" },
	{ 10044, "NFS4ERR_OP_ILLEGAL" },
	{ 10050, "NFS4ERR_BADLAYOUT" },
	{ 10052, "NFS4ERR_BADSESSION" },
	{ 10053, "NFS4ERR_BADSLOT" },
	{ 10058, "NFS4ERR_LAYOUTTRYLATER" },
	{ 10059, "NFS4ERR_LAYOUTUNAVAILABLE" },
	{ 10060, "NFS4ERR_NOMATCHING_LAYOUT" },
	{ 10061, "NFS4ERR_RECALLCONFLICT" },
	{ 10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE" },
	{ 10063, "NFS4ERR_SEQ_MISORDERED" },
	{ 10065, "NFS4ERR_REQ_TOO_BIG" },
	{ 10066, "NFS4ERR_REP_TOO_BIG" },
	{ 10071, "NFS4ERR_OP_NOT_IN_SESSION" },
	{ 10078, "NFS4ERR_DEADSESSION" },
};

static const struct name ops[] = {
	{ OP_CLOSE, "CLOSE" },
	{ OP_COMMIT, "COMMIT" },
	{ OP_CREATE, "CREATE" },
	{ OP_GETATTR, "GETATTR" },
	{ OP_GETFH, "GETFH" },
	{ OP_LOOKUP, "LOOKUP" },
	{ OP_OPEN, "OPEN" },
	{ OP_PUTFH, "PUTFH" },
	{ OP_PUTROOTFH, "PUTROOTFH" },
	{ OP_READ, "READ" },
	{ OP_REMOVE, "REMOVE" },
	{ OP_WRITE, "WRITE" },
	{ OP_EXCHANGE_ID, "EXCHANGE_ID" },
	{ OP_CREATE_SESSION, "CREATE_SESSION" },
	{ OP_DESTROY_SESSION, "DESTROY_SESSION" },
	{ OP_GETDEVICEINFO, "GETDEVICEINFO" },
	{ OP_LAYOUTCOMMIT, "LAYOUTCOMMIT" },
	{ OP_LAYOUTGET, "LAYOUTGET" },
	{ OP_LAYOUTRETURN, "LAYOUTRETURN" },
	{ OP_SEQUENCE, "SEQUENCE" },
	{ OP_DESTROY_CLIENTID, "DESTROY_CLIENTID" },
	{ OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE" },
};

static const char *lookup(const struct name *t, size_t n, uint32_t v, const char *unknown)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == v)
			return t[i].name;
	return unknown;
}

const char *nfs4_status_name(uint32_t status)
{
	return lookup(statuses, sizeof(statuses) / sizeof(statuses[0]), status, "NFS4ERR_?");
}

const char *nfs4_op_name(uint32_t opnum)
{
	return lookup(ops, sizeof(ops) / sizeof(ops[0]), opnum, "OP_?");
}
