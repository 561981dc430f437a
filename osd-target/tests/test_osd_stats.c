/* The I/O counters: start at zero, adds by stable_how, the log line, and
 * STATS through ctl_dispatch() (signed as a client signs it) encoded byte
 * for byte as osd_ctl.x lays it out. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "byteorder.h"
#include "check.h"
#include "ctl_auth.h"
#include "ctl_server.h"
#include "log.h"
#include "osd_stats.h"

#define PROG 0x20504e44u

static void test_init_and_adds(void)
{
	struct osd_stats s;
	uint64_t v[OSD_STAT_COUNT];
	uint64_t before = (uint64_t)time(NULL) * 1000000000u;

	osd_stats_init(&s);
	CHECK(s.started_ns >= before && s.started_ns < before + 5000000000u);
	osd_stats_snapshot(&s, v);
	for (int i = 0; i < OSD_STAT_COUNT; i++) {
		CHECK_EQ(v[i], 0);
		CHECK(osd_stat_names[i] != NULL);
	}
	osd_stats_nfs_write(&s, 10, 0);
	osd_stats_nfs_write(&s, 20, 1);
	osd_stats_nfs_write(&s, 30, 2);
	osd_stats_nfs_write(&s, 40, 2);
	osd_stats_add(&s, OSD_STAT_CTL_READ_BYTES, 1ull << 40);
	osd_stats_add(&s, OSD_STAT_CTL_READ_BYTES, 1);
	osd_stats_snapshot(&s, v);
	CHECK_EQ(v[OSD_STAT_NFS_WRITE_OPS], 4);
	CHECK_EQ(v[OSD_STAT_NFS_WRITE_BYTES], 100);
	CHECK_EQ(v[OSD_STAT_NFS_WRITE_UNSTABLE], 1);
	CHECK_EQ(v[OSD_STAT_NFS_WRITE_DATA_SYNC], 1);
	CHECK_EQ(v[OSD_STAT_NFS_WRITE_FILE_SYNC], 2);
	CHECK_EQ(v[OSD_STAT_CTL_READ_BYTES], (1ull << 40) + 1);
	CHECK_EQ(v[OSD_STAT_NFS_READ_OPS], 0);
}

/* One info line, every counter as name=value in the enum's order, each
 * value whole even at its largest. */
static void test_log_line(void)
{
	uint64_t v[OSD_STAT_COUNT];
	char line[1024], want[1024];
	size_t n = 0;
	FILE *f = tmpfile();

	CHECK(f != NULL);
	if (!f)
		return;
	for (int i = 0; i < OSD_STAT_COUNT; i++) {
		v[i] = i == OSD_STAT_NFS_ERR_OTHER ? UINT64_MAX : (uint64_t)i * 1000;
		n += (size_t)snprintf(want + n, sizeof(want) - n, " %s=%llu", osd_stat_names[i],
				      (unsigned long long)v[i]);
	}
	log_init(LOG_INFO, f);
	osd_stats_log(v, "at shutdown");
	log_init(LOG_ERROR, stderr);
	rewind(f);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	CHECK(strstr(line, " info  counters at shutdown: nfs_read_ops=0 nfs_read_bytes=1000 ") !=
	      NULL);
	CHECK(strstr(line, "nfs_err_other=18446744073709551615 ") != NULL);
	line[strcspn(line, "\n")] = 0;
	CHECK(strstr(line, want) != NULL && strlen(strstr(line, want)) == strlen(want));
	CHECK(fgets(line, sizeof(line), f) == NULL);
	fclose(f);
}

static void test_stats_call_bytes(void)
{
	static const uint8_t want_head[] = { 0, 0, 0, 0 }; /* OSD_OK */
	struct cluster_key key = { .id = 9 };
	struct osd_stats s;
	struct osd_keys keys;
	struct osd_ctx ctx = { .keys = &keys, .osd_id = 1, .stats = &s };
	struct ctl_auth_cred cred = {
		.key_id = 9, .osd_id = 1, .time_s = (uint64_t)time(NULL), .nonce = 77
	};
	struct ctl_auth_hdr hdr = { 5, PROG, 1, 14 };
	uint8_t cred_body[CTL_AUTH_CRED_LEN], verf_body[CTL_AUTH_VERF_LEN];
	uint8_t res[RPC_REPLY_RES_CAP], want_verf[CTL_AUTH_REPLY_VERF_LEN];
	struct rpc_call call = { .xid = 5, .prog = PROG, .vers = 1, .proc = 14 };
	struct hmac_piece results;
	struct rpc_reply reply;

	memset(key.secret, 0x42, sizeof(key.secret));
	CHECK_EQ(osd_keys_init(&keys, &key, 1), 0);
	ctx.replay = ctl_replay_new(16, CTL_AUTH_MAX_SKEW_S);
	osd_stats_init(&s);
	s.started_ns = 0x1122334455667788ull;
	for (int i = 0; i < OSD_STAT_COUNT; i++)
		osd_stats_add(&s, (enum osd_stat)i, 0x0100000000000000ull * (uint64_t)(i + 1) + 7);
	/* the throttle waits and denials are not on the wire: STATS cannot grow */
	CHECK_EQ(OSD_STAT_WIRE_COUNT, 15);
	CHECK_EQ(ctl_auth_sign(&keys.ctl.keys[0], &hdr, &cred, NULL, 0, cred_body, verf_body), 0);
	call.cred = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_CRED_LEN, cred_body };
	call.verf = (struct rpc_opaque_auth){ CTL_AUTH_FLAVOR, CTL_AUTH_VERF_LEN, verf_body };
	memset(&reply, 0, sizeof(reply));
	xw_init(&reply.res, res, sizeof(res));

	CHECK_EQ(ctl_dispatch(&ctx, &call, &reply), RPC_OUT_SUCCESS);
	CHECK_EQ(reply.res.len, 4 + 16 * 8);
	CHECK_EQ(reply.payload_len, 0);
	CHECK_MEM(res, want_head, sizeof(want_head));
	CHECK_EQ(get_be64(res + 4), 0x1122334455667788ull); /* started_ns */
	/* then the counters in osd_ctl.x's order, which is the enum's */
	for (int i = 0; i < OSD_STAT_WIRE_COUNT; i++)
		CHECK_EQ(get_be64(res + 12 + 8 * i), 0x0100000000000000ull * (uint64_t)(i + 1) + 7);
	/* the reply's MAC covers these results */
	results = (struct hmac_piece){ res, reply.res.len };
	ctl_auth_reply_mac(&keys.ctl.keys[0], call.xid, cred.nonce, 0, &results, 1, want_verf);
	CHECK_EQ(reply.verf_flavor, CTL_AUTH_FLAVOR);
	CHECK_EQ(reply.verf_len, sizeof(want_verf));
	CHECK_MEM(reply.verf, want_verf, sizeof(want_verf));

	/* no arguments means none: a trailing word is GARBAGE_ARGS (a new
	 * call, its MAC over that word) */
	call.args = res;
	call.args_len = 4;
	results = (struct hmac_piece){ res, 4 };
	cred.nonce++;
	ctl_auth_sign(&keys.ctl.keys[0], &hdr, &cred, &results, 1, cred_body, verf_body);
	memset(&reply, 0, sizeof(reply));
	xw_init(&reply.res, res + 1024, sizeof(res) - 1024);
	CHECK_EQ(ctl_dispatch(&ctx, &call, &reply), RPC_OUT_GARBAGE_ARGS);
	ctl_replay_free(ctx.replay);
	osd_keys_destroy(&keys);
}

int main(void)
{
	log_init(LOG_ERROR, stderr);
	test_init_and_adds();
	test_log_line();
	test_stats_call_bytes();
	CHECK_DONE();
}
