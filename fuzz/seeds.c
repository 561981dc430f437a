/* Writes the seed corpora (fuzz/corpus/<target>/) from the real encoders:
 * small valid inputs, one or a few per shape each decoder knows, so the
 * fuzzers start past the first length checks.  Run by hand when a format
 * changes (README.md):  build-fuzz/fuzz/fuzz_seeds fuzz/corpus */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl_auth.h"
#include "ctl_server.h"
#include "group_snapshot.h"
#include "journal_record.h"
#include "journal_segment.h"
#include "handover.h"
#include "junction.h"
#include "reclaim.h"
#include "snapshot_pack.h"
#include "nfs3.h"
#include "osd_fixture.h"
#include "pando/ff_xdr.h"
#include "pando/policy.h"
#include "pando/storage_map.h"

#define SEED_MAX 4096

static const char *root;
static struct cluster_key key;

static void seed(const char *target, const char *name, const void *data, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void must(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "fuzz_seeds: %s: %s\n", what, strerror(-rc));
		exit(1);
	}
}

/* The selector byte some targets take first, then the bytes. */
static void seed_sel(const char *target, const char *name, uint8_t sel, const void *data,
		     size_t len)
{
	uint8_t buf[SEED_MAX];

	buf[0] = sel;
	memcpy(buf + 1, data, len);
	seed(target, name, buf, len + 1);
}

/* ---- the OSD: RPC, NFSv3, control protocol, capabilities ---- */

static void mint(uint8_t fh[CAPABILITY_SIZE])
{
	struct capability cap = { .rights = CAP_RIGHTS_RW,
				  .osd_id = FUZZ_OSD_ID,
				  .partition = FUZZ_PARTITION,
				  .object = FUZZ_OBJECT,
				  .cap_version = 1 };

	capability_mint(&key, &cap, fh);
}

/* An AUTH_SYS NFSv3 call of proc with args[len] after its header. */
static size_t nfs3_call(uint8_t *buf, uint32_t proc, const uint8_t *args, size_t len)
{
	static const uint32_t gids[] = { 100 };
	struct xdr_w w, cred;
	uint8_t body[64];

	xw_init(&cred, body, sizeof(body));
	xw_u32(&cred, 0); /* stamp */
	xw_string(&cred, "client");
	xw_u32(&cred, 1000);
	xw_u32(&cred, 100);
	xw_u32(&cred, 1);
	xw_u32(&cred, gids[0]);
	xw_init(&w, buf, SEED_MAX);
	xw_u32(&w, 0x1000 + proc); /* xid */
	xw_u32(&w, 0);             /* CALL */
	xw_u32(&w, 2);
	xw_u32(&w, NFS3_PROGRAM);
	xw_u32(&w, NFS3_VERSION);
	xw_u32(&w, proc);
	xw_u32(&w, RPC_AUTH_SYS);
	xw_opaque(&w, body, (uint32_t)cred.len);
	xw_u32(&w, RPC_AUTH_NONE);
	xw_opaque(&w, "", 0);
	xw_fixed(&w, args, len);
	return w.len;
}

/* NFSv3 arguments of each decoder; returns the nfs3_args selector. */
static size_t nfs3_args(int which, uint8_t *buf)
{
	uint8_t fh[CAPABILITY_SIZE];
	struct xdr_w w;

	mint(fh);
	xw_init(&w, buf, SEED_MAX);
	xw_opaque(&w, fh, sizeof(fh));
	switch (which) {
	case NFSPROC3_ACCESS:
		xw_u32(&w, ACCESS3_READ | ACCESS3_MODIFY);
		break;
	case NFSPROC3_READ:
	case NFSPROC3_COMMIT:
		xw_u64(&w, 4096);
		xw_u32(&w, 8192);
		break;
	case NFSPROC3_WRITE:
		xw_u64(&w, 4096);
		xw_u32(&w, 5);
		xw_u32(&w, NFS3_FILE_SYNC);
		xw_opaque(&w, "hello", 5);
		break;
	}
	return w.len;
}

static void seeds_nfs3(void)
{
	static const struct {
		const char *name;
		uint32_t proc;
		uint8_t sel;
	} procs[] = {
		{ "getattr", NFSPROC3_GETATTR, 0 }, { "access", NFSPROC3_ACCESS, 4 },
		{ "read", NFSPROC3_READ, 1 },       { "write", NFSPROC3_WRITE, 2 },
		{ "commit", NFSPROC3_COMMIT, 3 },   { "fsstat", NFSPROC3_FSSTAT, 0 },
		{ "fsinfo", NFSPROC3_FSINFO, 0 },   { "pathconf", NFSPROC3_PATHCONF, 0 },
		{ "lookup", NFSPROC3_LOOKUP, 0 },
	};
	uint8_t args[SEED_MAX], call[SEED_MAX], rec[SEED_MAX];
	size_t alen, clen;

	clen = nfs3_call(call, NFSPROC3_NULL, (const uint8_t *)"", 0);
	seed("fuzz_nfs3_call", "null", call, clen);
	seed("fuzz_rpc_call", "nfs3_null", call, clen);
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		alen = nfs3_args(procs[i].proc, args);
		clen = nfs3_call(call, procs[i].proc, args, alen);
		seed("fuzz_nfs3_call", procs[i].name, call, clen);
		if (procs[i].sel || procs[i].proc == NFSPROC3_GETATTR)
			seed_sel("fuzz_nfs3_args", procs[i].name, procs[i].sel, args, alen);
	}
	/* The transport: one record, the same in two fragments, two records. */
	clen = nfs3_call(call, NFSPROC3_GETATTR, args, nfs3_args(NFSPROC3_GETATTR, args));
	seed("fuzz_rpc_call", "nfs3_getattr", call, clen);
	put_be32(rec, 0x80000000u | (uint32_t)clen);
	memcpy(rec + 4, call, clen);
	seed("fuzz_rpc_record", "one", rec, clen + 4);
	memcpy(rec + 4 + clen, rec, clen + 4);
	seed("fuzz_rpc_record", "two", rec, 2 * (clen + 4));
	put_be32(rec, 16);
	memcpy(rec + 4, call, 16);
	put_be32(rec + 20, 0x80000000u | (uint32_t)(clen - 16));
	memcpy(rec + 24, call + 16, clen - 16);
	seed("fuzz_rpc_record", "fragments", rec, clen + 8);
}

static size_t xdr_encode(xdrproc_t proc, void *value, uint8_t *buf)
{
	XDR xdrs;
	size_t len;

	xdrmem_ncreate(&xdrs, (char *)buf, SEED_MAX, XDR_ENCODE);
	if (!proc(&xdrs, value)) {
		fprintf(stderr, "fuzz_seeds: an XDR encoder failed\n");
		exit(1);
	}
	len = xdr_getpos(&xdrs);
	XDR_DESTROY(&xdrs);
	return len;
}

/* A control call as fuzz_ctl_call takes it (procedure, arguments), the
 * same arguments as fuzz_ctl_args takes them (type, bytes), and the whole
 * signed call for fuzz_rpc_call. */
static void ctl_seed(const char *name, uint32_t proc, uint8_t type, xdrproc_t xdr, void *args)
{
	struct ctl_auth_cred cred = {
		.key_id = FUZZ_KEY_ID, .osd_id = FUZZ_OSD_ID, .time_s = 1700000000, .nonce = 9
	};
	struct ctl_auth_hdr hdr = { 7, PANDO_OSD_CTL, PANDO_OSD_CTL_V1, proc };
	uint8_t bytes[SEED_MAX], buf[SEED_MAX], c[CTL_AUTH_CRED_LEN], v[CTL_AUTH_VERF_LEN];
	size_t len = xdr_encode(xdr, args, bytes);
	struct hmac_piece piece = { bytes, len };
	struct ctl_auth_key ctl_key;
	struct xdr_w w;

	put_be32(buf, proc);
	memcpy(buf + 4, bytes, len);
	if (proc != OSDCTL_NULL) /* results are for fuzz_ctl_args only */
		seed("fuzz_ctl_call", name, buf, len + 4);
	seed_sel("fuzz_ctl_args", name, type, bytes, len);
	if (proc != OSDCTL_READ)
		return;
	must(ctl_auth_derive(key.id, key.secret, FUZZ_OSD_ID, &ctl_key), "control key");
	must(ctl_auth_sign(&ctl_key, &hdr, &cred, &piece, 1, c, v), "signing");
	xw_init(&w, buf, sizeof(buf));
	xw_u32(&w, 7);
	xw_u32(&w, 0);
	xw_u32(&w, 2);
	xw_u32(&w, PANDO_OSD_CTL);
	xw_u32(&w, PANDO_OSD_CTL_V1);
	xw_u32(&w, proc);
	xw_u32(&w, CTL_AUTH_FLAVOR);
	xw_opaque(&w, c, sizeof(c));
	xw_u32(&w, CTL_AUTH_FLAVOR);
	xw_opaque(&w, v, sizeof(v));
	xw_fixed(&w, bytes, len);
	seed("fuzz_rpc_call", "ctl_read", buf, w.len);
	/* xid, proc, credential, verifier of a call without arguments, signed
	 * as fuzz_capability's second reading has it (prog AUTH_PANDO, vers 1) */
	hdr = (struct ctl_auth_hdr){ 7, CTL_AUTH_FLAVOR, 1, proc };
	must(ctl_auth_sign(&ctl_key, &hdr, &cred, NULL, 0, c, v), "signing");
	put_be32(buf, 7);
	put_be32(buf + 4, proc);
	memcpy(buf + 8, c, sizeof(c));
	memcpy(buf + 8 + sizeof(c), v, sizeof(v));
	seed("fuzz_capability", "credential", buf, 8 + sizeof(c) + sizeof(v));
}

static void seeds_ctl(void)
{
	osd_obj_id id = { FUZZ_PARTITION, FUZZ_OBJECT };
	osd_create_item item = { .object = FUZZ_OBJECT + 1, .cap_version = 1 };
	osd_create_args create = { FUZZ_PARTITION, { 1, &item } };
	osd_read_args read = { id, 0, 4096 };
	char data[] = "payload";
	osd_write_args write = { id, 0, OSD_FILE_SYNC, { sizeof(data) - 1, data } };
	osd_attr_key keys[] = { { 1, 1 }, { 0x10000, 1 } };
	osd_getattr_args getattr = { id, { 2, keys } };
	char value[] = "v";
	osd_attr attr = { 0x10000, 1, { 1, value } };
	osd_setattr_args setattr = { id, { 1, &attr } };
	osd_list_args list = { FUZZ_PARTITION, 0, 16 };
	osd_flush_args flush = { id };
	osd_setcap_args setcap = { id, 1 };
	osd_checksums_args csums = { id, 0, 4, TRUE };
	osd_partition_args part = { FUZZ_PARTITION + 1 };
	uint64_t objects[] = { FUZZ_OBJECT + 1 };
	osd_remove_args remove = { FUZZ_PARTITION, { 1, objects } };
	osd_read_res read_res = { .status = OSD_OK };
	osd_checksums_res csums_res = { .status = OSD_OK };
	osd_extent_csum extent = { 0x1234, TRUE, OSD_CSUM_OK };
	uint8_t fh[CAPABILITY_SIZE];

	/* Type numbers: the index in fuzz_ctl_args.c's table. */
	ctl_seed("create_partition", OSDCTL_CREATE_PARTITION, 4,
		 CTL_XDRPROC(xdr_osd_partition_args), &part);
	ctl_seed("create", OSDCTL_CREATE_OBJECTS, 5, CTL_XDRPROC(xdr_osd_create_args), &create);
	ctl_seed("remove", OSDCTL_REMOVE_OBJECTS, 7, CTL_XDRPROC(xdr_osd_remove_args), &remove);
	ctl_seed("read", OSDCTL_READ, 9, CTL_XDRPROC(xdr_osd_read_args), &read);
	ctl_seed("write", OSDCTL_WRITE, 11, CTL_XDRPROC(xdr_osd_write_args), &write);
	ctl_seed("getattr", OSDCTL_GETATTR, 13, CTL_XDRPROC(xdr_osd_getattr_args), &getattr);
	ctl_seed("setattr", OSDCTL_SETATTR, 15, CTL_XDRPROC(xdr_osd_setattr_args), &setattr);
	ctl_seed("list", OSDCTL_LIST, 17, CTL_XDRPROC(xdr_osd_list_args), &list);
	ctl_seed("flush", OSDCTL_FLUSH, 19, CTL_XDRPROC(xdr_osd_flush_args), &flush);
	ctl_seed("setcap", OSDCTL_SET_CAP_VERSION, 20, CTL_XDRPROC(xdr_osd_setcap_args), &setcap);
	ctl_seed("revoke", OSDCTL_REVOKE_WRITERS, 20, CTL_XDRPROC(xdr_osd_setcap_args), &setcap);
	ctl_seed("checksums", OSDCTL_CHECKSUMS, 22, CTL_XDRPROC(xdr_osd_checksums_args), &csums);
	ctl_seed("stats", OSDCTL_STATS, 0, CTL_XDRPROC(xdr_void), NULL);
	read_res.osd_read_res_u.ok = (osd_read_res_ok){ TRUE, { sizeof(data) - 1, data } };
	ctl_seed("read_res", OSDCTL_NULL, 10, CTL_XDRPROC(xdr_osd_read_res), &read_res);
	csums_res.osd_checksums_res_u.ok = (osd_checksums_res_ok){ 65536, { 1, &extent } };
	ctl_seed("checksums_res", OSDCTL_NULL, 23, CTL_XDRPROC(xdr_osd_checksums_res), &csums_res);
	mint(fh);
	seed("fuzz_capability", "handle", fh, sizeof(fh));
}

/* ---- the layout engine ---- */

static void seeds_layout(void)
{
	uint8_t buf[SEED_MAX];
	size_t len;
	struct pando_storage_map *map;
	struct pando_map_shape rs = { .raid = PANDO_RS,
				      .copies = 1,
				      .data = 4,
				      .parity = 2,
				      .stripe_unit = 65536,
				      .visit_rows = 1024 };
	struct pando_map_shape mirror = { .raid = PANDO_RAID1,
					  .copies = 2,
					  .data = 1,
					  .stripe_unit = 1 << 20,
					  .visit_rows = 1024 };
	struct pando_policy rs_cold = { .scheme = PANDO_RS,
					.k = 8,
					.m = 2,
					.stripe_unit = 1 << 20,
					.cold_after_s = 86400,
					.cold_k = 10,
					.cold_m = 2 };
	struct pando_policy mirror3 = { .scheme = PANDO_RAID1, .copies = 3, .width = 2 };
	struct pando_policy pooled = { .scheme = PANDO_RAID1, .copies = 2, .pool = "fast" };

	must(pando_map_new(&rs, 2, 1, &map), "pando_map_new");
	map->seed = 42;
	map->partition_id = 5;
	for (uint32_t i = 0; i < 12; i++)
		map->comp[i] = (struct pando_component){ 1 + i % 6 + 6 * (i / 6), 100 + i };
	map->spares[0] = 20;
	must(pando_map_encode(map, buf, sizeof(buf), &len), "pando_map_encode");
	seed("fuzz_map_codec", "rs_4_2_two_groups", buf, len);
	pando_map_free(map);
	must(pando_map_new(&mirror, 1, 0, &map), "pando_map_new");
	map->partition_id = 1;
	map->comp[0] = (struct pando_component){ 3, 7 };
	map->comp[1] = (struct pando_component){ 9, 8 };
	must(pando_map_encode(map, buf, sizeof(buf), &len), "pando_map_encode");
	seed("fuzz_map_codec", "mirror", buf, len);
	pando_map_free(map);

	must(pando_policy_encode(&rs_cold, buf, sizeof(buf), &len), "pando_policy_encode");
	seed("fuzz_policy", "rs_cold", buf, len);
	must(pando_policy_encode(&mirror3, buf, sizeof(buf), &len), "pando_policy_encode");
	seed("fuzz_policy", "mirror3", buf, len);
	must(pando_policy_encode(&pooled, buf, sizeof(buf), &len), "pando_policy_encode");
	seed("fuzz_policy", "pooled", buf, len);
}

static void seeds_ff(void)
{
	struct pando_ff_fh fh = { .len = 56 };
	struct pando_ff_data_server ds[2] = {
		{ .efficiency = 1, .fh_count = 1, .fh_vers = &fh, .user = "1000", .group = "100" },
		{ .efficiency = 1, .fh_count = 1, .fh_vers = &fh, .user = "1000", .group = "100" },
	};
	struct pando_ff_mirror mirrors[2] = { { 2, ds }, { 2, ds } };
	struct pando_ff_layout layout = { .stripe_unit = 65536,
					  .mirror_count = 2,
					  .mirrors = mirrors,
					  .stats_collect_hint = 30 };
	struct pando_netaddr na = { "tcp", "127.0.0.1.8.1" };
	struct pando_ff_device_version ver = { 3, 0, 1 << 20, 1 << 20, false };
	struct pando_ff_device_addr dev = { 1, &na, 1, &ver };
	struct pando_device_error err = { .status = 5, .opnum = 38 };
	struct pando_ff_ioerr ioerr = {
		.length = UINT64_MAX, .stateid = { .seqid = 2 }, .error_count = 1, .errors = &err
	};
	struct pando_ff_iostats stats = { .offset = 4096,
					  .length = 8192,
					  .read = { 3, 12288 },
					  .layoutupdate = { .addr = na, .fhandle = fh } };
	struct pando_ff_layoutreturn ret = { 1, &ioerr, 1, &stats };
	uint8_t buf[SEED_MAX];
	size_t len;

	memset(fh.data, 0xab, fh.len);
	must(pando_ff_layout_encode(&layout, buf, sizeof(buf), &len), "pando_ff_layout_encode");
	seed_sel("fuzz_ff_layout", "layout_2x2", 0, buf, len);
	must(pando_ff_device_addr_encode(&dev, buf, sizeof(buf), &len),
	     "pando_ff_device_addr_encode");
	seed_sel("fuzz_ff_layout", "device_addr", 1, buf, len);
	must(pando_ff_layoutreturn_encode(&ret, buf, sizeof(buf), &len),
	     "pando_ff_layoutreturn_encode");
	seed("fuzz_ff_layoutreturn", "ioerr_iostats", buf, len);
	ret = (struct pando_ff_layoutreturn){ 0 };
	must(pando_ff_layoutreturn_encode(&ret, buf, sizeof(buf), &len),
	     "pando_ff_layoutreturn_encode");
	seed("fuzz_ff_layoutreturn", "empty", buf, len);
}

/* ---- Ganesha's NFSv4.1 layout arguments (RFC 7862, RFC 5661) ---- */

#define LAYOUT4_FLEX_FILES 4
#define LAYOUTIOMODE4_RW 2
#define LAYOUTRETURN4_FILE 1

static void put_stateid(struct xdr_w *w)
{
	xw_u32(w, 1);
	xw_fixed(w, "layoutstate!", 12);
}

static void seeds_nfs41(void)
{
	uint8_t body[SEED_MAX], buf[SEED_MAX];
	struct pando_ff_layoutreturn ret = { 0 };
	size_t blen;
	struct xdr_w w;

	xw_init(&w, buf, sizeof(buf)); /* LAYOUTERROR4args */
	xw_u64(&w, 0);
	xw_u64(&w, 65536);
	put_stateid(&w);
	xw_u32(&w, 1); /* lea_errors<> */
	xw_fixed(&w, "osd-0000000000a\1", 16);
	xw_u32(&w, 5);  /* NFS4ERR_IO */
	xw_u32(&w, 38); /* OP_WRITE */
	seed_sel("fuzz_nfs41_layout", "layouterror", 0, buf, w.len);

	xw_init(&w, buf, sizeof(buf)); /* LAYOUTSTATS4args */
	xw_u64(&w, 0);
	xw_u64(&w, 65536);
	put_stateid(&w);
	xw_u64(&w, 3); /* lsa_read */
	xw_u64(&w, 12288);
	xw_u64(&w, 1); /* lsa_write */
	xw_u64(&w, 4096);
	xw_fixed(&w, "osd-0000000000a\1", 16);
	xw_u32(&w, LAYOUT4_FLEX_FILES); /* lsa_layoutupdate */
	xw_opaque(&w, "flexfiles", 9);
	seed_sel("fuzz_nfs41_layout", "layoutstats", 1, buf, w.len);

	must(pando_ff_layoutreturn_encode(&ret, body, sizeof(body), &blen),
	     "pando_ff_layoutreturn_encode");
	xw_init(&w, buf, sizeof(buf)); /* LAYOUTRETURN4args */
	xw_bool(&w, false);            /* lora_reclaim */
	xw_u32(&w, LAYOUT4_FLEX_FILES);
	xw_u32(&w, LAYOUTIOMODE4_RW);
	xw_u32(&w, LAYOUTRETURN4_FILE);
	xw_u64(&w, 0);
	xw_u64(&w, UINT64_MAX);
	put_stateid(&w);
	xw_opaque(&w, body, (uint32_t)blen); /* lrf_body: ff_layoutreturn4 */
	seed_sel("fuzz_nfs41_layout", "layoutreturn", 2, buf, w.len);
}

/* ---- etcd's JSON gateway, as the client receives it ---- */

static void seeds_etcd(void)
{
	/* The body sink: the selector gives pieces of (sel >> 1) + 1 bytes,
	 * and the 64-byte limit when odd. */
	static const struct {
		const char *name;
		uint8_t sel;
		const char *body;
	} bodies[] = {
		{ "unary", 0xfe, "{\"header\":{\"revision\":\"5\"}}" },
		{ "error", 0x0e,
		  "{\"error\":\"etcdserver: requested lease not found\",\"code\":5}" },
		{ "keepalive_stream", 0x10,
		  "{\"result\":{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}}\n"
		  "{\"result\":{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}}\n" },
		{ "escaped_brackets", 0x02, " {\"a\":\"}\\\"]\",\"b\":[{}]}x" },
		{ "not_json", 0x04, "Client sent an HTTP request to an HTTPS server.\n" },
		{ "over_limit", 0x21,
		  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]" },
	};
	static const char *const json[][2] = {
		{ "range",
		  "{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"L3BhbmRvL29zZC8x\","
		  "\"value\":\"eyJpZCI6MX0=\",\"mod_revision\":\"8\"}],\"count\":\"1\"}" },
		{ "grant", "{\"header\":{},\"ID\":\"7587868541352345861\",\"TTL\":\"5\"}" },
		{ "keepalive", "{\"result\":{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}}" },
		{ "txn", "{\"header\":{},\"succeeded\":true}" },
		{ "deleted", "{\"header\":{},\"deleted\":\"1\"}" },
		{ "error", "{\"error\":\"etcdserver: requested lease not found\",\"code\":5}" },
		{ "token", "{\"header\":{\"revision\":\"4\"},\"token\":\"KGvRkmrlGZkKkoVj.42\"}" },
		{ "denied", "{\"error\":\"etcdserver: permission denied\",\"code\":7,"
			    "\"message\":\"etcdserver: permission denied\"}" },
	};
	uint8_t buf[SEED_MAX];

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		seed_sel("fuzz_etcd_body", bodies[i].name, bodies[i].sel, bodies[i].body,
			 strlen(bodies[i].body));
	for (size_t i = 0; i < sizeof(json) / sizeof(json[0]); i++) {
		uint16_t status = !strcmp(json[i][0], "error")    ? 404
				  : !strcmp(json[i][0], "denied") ? 403
								  : 200;
		buf[0] = (uint8_t)(status >> 8);
		buf[1] = (uint8_t)status;
		memcpy(buf + 2, json[i][1], strlen(json[i][1]));
		seed("fuzz_etcd_json", json[i][0], buf, strlen(json[i][1]) + 2);
	}
	seed("fuzz_etcd_json", "base64", "\0\310L3BhbmRvL29zZC8x", 18);
}

static void seeds_cluster_map(void)
{
	static const char *maps[][2] = {
		{ "two", "{\"epoch\": 12, \"partition\": 1, \"osds\": ["
			 "{\"id\": 2, \"ctl\": \"127.0.0.1:20592\", \"nfs\": \"127.0.0.1:20492\","
			 " \"weight\": 1099511627776, \"domain\": \"host-a\", \"pool\": \"fast\","
			 " \"up\": true,"
			 " \"in\": true},"
			 "{\"id\": 1, \"ctl\": \"[::1]:20591\", \"nfs\": \"[::1]:20491\","
			 " \"advertise\": \"10.0.2.2:20491\", \"weight\": 0, \"up\": false,"
			 " \"in\": false, \"down_at\": 5}],"
			 " \"pools\": [], \"updated_by\": \"mgr-a\"}" },
		{ "empty", "{\"epoch\": 1, \"osds\": []}" },
	};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		seed("fuzz_cluster_map", maps[i][0], maps[i][1], strlen(maps[i][1]));
}

static void seeds_journal(void)
{
	uint8_t buf[256] = { 0 };
	size_t a = 0, b = 0;

	must(journal_record_encode(1, 2, "abc", 3, buf, sizeof(buf), &a), "journal record");
	seed("fuzz_journal_record", "one", buf, a);
	must(journal_record_encode(2, 2, "", 0, buf + a, sizeof(buf) - a, &b), "journal record");
	seed("fuzz_journal_record", "two_then_zeros", buf, a + b + 32);
}

/* fuzz_snapshot_pack: the packs of a store snapshot's directory, empty
 * and with two files, made by the real packer. */
struct seed_pack {
	uint8_t b[256];
	size_t n;
};

static int seed_pack_write(void *arg, uint64_t off, const void *buf, size_t n)
{
	struct seed_pack *p = arg;

	if (off + n > sizeof(p->b))
		return -ENOSPC;
	memcpy(p->b + off, buf, n);
	if (off + n > p->n)
		p->n = (size_t)(off + n);
	return 0;
}

static void seeds_snapshot(void)
{
	char dir[] = "/tmp/pando-fuzz-seeds-XXXXXX", f[64];
	struct seed_pack p = { .n = 0 };
	uint64_t total = 0;
	FILE *out;

	must(mkdtemp(dir) ? 0 : -errno, "a snapshot seed's directory");
	must(snapshot_pack(dir, 3, seed_pack_write, &p, &total), "an empty snapshot pack");
	seed("fuzz_snapshot_pack", "empty", p.b, p.n);
	snprintf(f, sizeof(f), "%s/CURRENT", dir);
	must((out = fopen(f, "w")) ? 0 : -errno, "a snapshot seed's file");
	fputs("MANIFEST-000005\n", out);
	fclose(out);
	snprintf(f, sizeof(f), "%s/000009.sst", dir);
	must((out = fopen(f, "w")) ? 0 : -errno, "a snapshot seed's file");
	fputs("table bytes", out);
	fclose(out);
	p.n = 0;
	must(snapshot_pack(dir, 41, seed_pack_write, &p, &total), "a snapshot pack");
	seed("fuzz_snapshot_pack", "two_files", p.b, p.n);
	unlink(f);
	snprintf(f, sizeof(f), "%s/CURRENT", dir);
	unlink(f);
	rmdir(dir);
}

/* fuzz_reclaim_record: the key's length, the key after the prefix, the
 * value, as the FSAL writes records (an NFSv4 client's, an NSM host's). */
static void seeds_reclaim(void)
{
	static const char *const records[][3] = {
		{ "new", "0000000000000029.0000000000000001",
		  "{\"tag\":\"10.0.0.1-(4:6f6e65)\",\"revoked\":[]}" },
		{ "revoked", "000000000000002a.00000000000000ff",
		  "{\"tag\":\"10.0.0.2-(3:616263)\",\"revoked\":[\"AAEC\",\"BBED\"]}" },
		{ "nsm_host", "0000000000000003.af63bd4c8601b7df",
		  "{\"tag\":\"127.0.0.2\",\"revoked\":[]}" },
	};
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		size_t klen = strlen(records[i][1]), vlen = strlen(records[i][2]);

		buf[0] = (uint8_t)klen;
		memcpy(buf + 1, records[i][1], klen);
		memcpy(buf + 1 + klen, records[i][2], vlen);
		seed("fuzz_reclaim_record", records[i][0], buf, 1 + klen + vlen);
	}
}

/* fuzz_handover_request: the value `pando mds failover` puts, for the
 * target's active, for another, for an earlier term, at the size bound,
 * and no request. */
static void seeds_handover(void)
{
	static const char *const values[][2] = {
		{ "for_me", "{\"from\":\"mds-a\",\"term\":41}" },
		{ "for_another", "{\"from\":\"mds-b\",\"term\":41}" },
		{ "stale", "{\"from\":\"mds-a\",\"term\":40}" },
		{ "no_term", "{\"from\":\"mds-a\"}" },
	};

	char padded[PANDO_HANDOVER_VALUE_MAX + 1];
	int n;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		seed("fuzz_handover_request", values[i][0], values[i][1], strlen(values[i][1]));
	/* At the bound: a byte more is no request. */
	n = snprintf(padded, sizeof(padded), "{\"from\":\"mds-a\",\"term\":41,\"pad\":\"%0*d\"}",
		     PANDO_HANDOVER_VALUE_MAX - 35, 0);
	must(n != PANDO_HANDOVER_VALUE_MAX, "the padded handover request's size");
	seed("fuzz_handover_request", "at_the_bound", padded, (size_t)n);
}

/* fuzz_held_record: a record as held.c puts it, and one without "at". */
static void seeds_held(void)
{
	static const char *const values[][2] = {
		{ "record", "{\"at\":1796103442,\"seq\":409}" },
		{ "no_at", "{\"seq\":409}" },
	};

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		seed("fuzz_held_record", values[i][0], values[i][1], strlen(values[i][1]));
}

/* fuzz_junction: a volume on one server and one on a group of three. */
static void seeds_junction(void)
{
	const struct pando_junction one = {
		.volume = "vol1", .path = "/pando", .servers = 1, .server = { "10.77.0.3" }
	};
	const struct pando_junction group = { .volume = "scratch",
					      .path = "/pando/scratch",
					      .servers = 3,
					      .server = { "10.77.200.1", "mds-b.example.org",
							  "fd00::7" } };
	char buf[PANDO_JUNCTION_BLOB_MAX];
	size_t len;

	must(pando_junction_encode(&one, buf, sizeof(buf), &len), "pando_junction_encode");
	seed("fuzz_junction", "one_server", buf, len);
	must(pando_junction_encode(&group, buf, sizeof(buf), &len), "pando_junction_encode");
	seed("fuzz_junction", "group", buf, len);
}

/* fuzz_group_values: a segment and a snapshot listing as the journal
 * and the active write them. */
static void seeds_group_values(void)
{
	struct pando_map_shape shape = {
		.raid = PANDO_RAID1, .copies = 3, .data = 1, .stripe_unit = 1 << 20, .visit_rows = 1
	};
	struct pando_storage_map *map = NULL;
	char *value;

	must(pando_map_new(&shape, 1, 0, &map), "a journal object's map");
	for (uint32_t i = 0; i < 3; i++)
		map->comp[i] =
			(struct pando_component){ i + 1, PANDO_JOURNAL_OBJECT_BIT | (i + 9) };
	map->partition_id = 1;
	value = journal_segment_format(&(struct journal_segment){ 3, 2, 4096, map });
	must(value ? 0 : -EINVAL, "a segment's value");
	seed_sel("fuzz_group_values", "segment", 0, value, strlen(value));
	free(value);
	value = group_snapshot_listing_format(
		&(struct group_snapshot_listing){ 4, 472, 19480, 1796188628, map });
	must(value ? 0 : -EINVAL, "a snapshot listing's value");
	seed_sel("fuzz_group_values", "listing", 1, value, strlen(value));
	free(value);
	pando_map_free(map);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds CORPUS_DIR\n");
		return 2;
	}
	root = argv[1];
	fuzz_key(&key);
	seeds_nfs3();
	seeds_ctl();
	seeds_layout();
	seeds_ff();
	seeds_nfs41();
	seeds_etcd();
	seeds_cluster_map();
	seeds_journal();
	seeds_snapshot();
	seeds_reclaim();
	seeds_handover();
	seeds_held();
	seeds_group_values();
	seeds_junction();
	return 0;
}
