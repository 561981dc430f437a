/* objio_scrub against three real pando-osd processes on loopback (the
 * build's own, started here on ports the kernel picks): a clean file scrubs
 * clean; a byte flipped behind an OSD's back is found in exactly its
 * extent and repaired from the other mirror; a write one mirror missed is
 * repaired from the current mirror when the other is recorded stale, and
 * left alone as unrepairable when neither is; RAID-0 verifies only; a
 * mirror whose OSD is down is counted unreachable, not bad. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "objio.h"
#include "osd_pool.h"
#include "scrub_io.h"

#define NOSDS 3
#define EXT OBJIO_SCRUB_EXTENT
#define PART 7
#define SIZE (17 * EXT + 100)

static char root[] = "/tmp/pando-scrub-XXXXXX";
static char bindir[4096];
static struct cluster_key key = { .id = 1 };
static struct cluster_osd osds[NOSDS];
static pid_t pids[NOSDS];
static uint8_t data[SIZE];

/* ---- the OSDs ------------------------------------------------------------------ */

static int write_key_file(void)
{
	char path[256], text[128];
	FILE *f;

	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		key.secret[i] = (uint8_t)(i * 13 + 5);
	cluster_key_format(&key, text, sizeof(text));
	snprintf(path, sizeof(path), "%s/cluster.key", root);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		return -1;
	return 0;
}

/* The control port, from the "osdctl: listening on ... (port N)" line. */
static int wait_port(int i, char *out, size_t cap)
{
	char path[256], line[512];

	snprintf(path, sizeof(path), "%s/osd.%d.log", root, i + 1);
	for (int tries = 0; tries < 200; tries++) {
		FILE *f = fopen(path, "r");
		unsigned port = 0;

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "osdctl: listening on"))
				sscanf(strstr(line, "(port ") + 6, "%u", &port);
		if (f)
			fclose(f);
		if (port) {
			snprintf(out, cap, "127.0.0.1:%u", port);
			return 0;
		}
		usleep(50 * 1000);
	}
	return -1;
}

static int start_osd(int i)
{
	char exe[4200], id[8], dir[256], keyf[256], logf[256];

	snprintf(exe, sizeof(exe), "%s/../../osd-target/pando-osd", bindir);
	snprintf(id, sizeof(id), "%d", i + 1);
	snprintf(dir, sizeof(dir), "%s/osd.%d", root, i + 1);
	snprintf(keyf, sizeof(keyf), "%s/cluster.key", root);
	snprintf(logf, sizeof(logf), "%s/osd.%d.log", root, i + 1);
	pids[i] = fork();
	if (pids[i] == 0) {
		execl(exe, exe, "--osd-id", id, "--data-dir", dir, "--key-file", keyf, "--format",
		      "--nfs-listen", "127.0.0.1:0", "--ctl-listen", "127.0.0.1:0", "--threads", "2",
		      "--log-file", logf, (char *)NULL);
		_exit(127);
	}
	osds[i].id = (uint32_t)i + 1;
	strcpy(osds[i].nfs, "127.0.0.1:1");
	return pids[i] < 0 ? -1 : wait_port(i, osds[i].ctl, sizeof(osds[i].ctl));
}

static int stop_osd(int i)
{
	int status = -1;

	if (pids[i] <= 0)
		return 0;
	kill(pids[i], SIGTERM);
	waitpid(pids[i], &status, 0);
	pids[i] = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Flips one byte of an object's data file behind the OSD's back. */
static int corrupt(uint32_t osd, uint64_t object, uint64_t off)
{
	char path[512];
	uint8_t b;

	for (int shard = 0; shard < 256; shard++) {
		int fd;

		snprintf(path, sizeof(path), "%s/osd.%u/objects/%02x/%016x.%016llx", root, osd, shard,
			 PART, (unsigned long long)object);
		fd = open(path, O_RDWR);
		if (fd < 0)
			continue;
		if (pread(fd, &b, 1, (off_t)off) != 1)
			b = 0;
		b ^= 0x5a;
		if (pwrite(fd, &b, 1, (off_t)off) != 1)
			b = 0;
		close(fd);
		return 0;
	}
	return -1;
}

/* ---- what the scrub reports ------------------------------------------------------ */

#define MAX_SEEN 16

struct seen {
	size_t n;
	struct objio_scrub_problem p[MAX_SEEN];
};

static void remember(void *arg, const struct objio_scrub_problem *p)
{
	struct seen *s = arg;

	if (s->n < MAX_SEEN)
		s->p[s->n] = *p;
	s->n++;
}

static int scrub(struct objio *io, const struct pando_storage_map *map, uint64_t size,
		 struct objio_scrub_result *res, struct seen *seen)
{
	memset(seen, 0, sizeof(*seen));
	memset(res, 0, sizeof(*res));
	res->report = remember;
	res->report_arg = seen;
	return objio_scrub(io, map, size, res);
}

static struct pando_storage_map *make_map(uint8_t raid, uint8_t copies, const uint32_t *osd,
					  uint64_t object)
{
	struct pando_map_shape shape = { .raid = raid, .copies = copies, .data = 1,
					 .stripe_unit = 1u << 20, .visit_rows = 1024 };
	struct pando_storage_map *m = NULL;

	CHECK_EQ(pando_map_new(&shape, 1, 0, &m), 0);
	if (!m)
		return NULL;
	m->partition_id = PART;
	for (uint32_t c = 0; c < copies; c++)
		*pando_map_component(m, 0, c) = (struct pando_component){ osd[c], object };
	return m;
}

/* ---- tests ------------------------------------------------------------------------- */

static void check_reads_back(struct objio *io, const struct pando_storage_map *map)
{
	static uint8_t got[SIZE];
	size_t n = 0;

	memset(got, 0, sizeof(got));
	CHECK_EQ(objio_read(io, map, SIZE, 0, got, SIZE, &n), 0);
	CHECK_EQ(n, SIZE);
	CHECK_MEM(got, data, SIZE);
}

static void test_clean_then_rot_repaired(struct objio *io, const struct pando_storage_map *map)
{
	struct objio_scrub_result r;
	struct seen seen;

	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.extents_checked, 18);
	CHECK_EQ(r.bytes_read, 2 * SIZE);
	CHECK_EQ(r.mismatches + r.unreachable + seen.n, 0);

	CHECK_EQ(corrupt(2, 1, 5 * EXT + 777), 0);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.repaired, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].osd_id, 2);
	CHECK_EQ(seen.p[0].copy, 1);
	CHECK_EQ(seen.p[0].extent, 5);
	CHECK_EQ(seen.p[0].what, OBJIO_SCRUB_MISMATCH);
	CHECK_EQ(seen.p[0].outcome, OBJIO_SCRUB_REPAIRED);
	CHECK_EQ(seen.p[0].source_osd, 1);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	io->skip[0] = 1;                /* read mirror 2 alone: it holds the data again */
	io->nskip = 1;
	check_reads_back(io, map);
	io->nskip = 0;
}

/* Mirror 1 misses a write that mirror 2 took: both verify, CRCs differ. */
static void test_missed_write(struct objio *io, struct pando_storage_map *map)
{
	struct osd_ctl_obj_id id = { PART, 1 };
	struct objio_scrub_result r;
	struct seen seen;
	struct osd_ctl_client *c;
	int err = 0;

	memset(data + 3 * EXT + 10, 'n', 300);
	c = osd_pool_get(io->pool, 2, &err);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ(osd_ctl_write(c, &id, 3 * EXT + 10, data + 3 * EXT + 10, 300, OSD_CTL_FILE_SYNC,
			       NULL), 0);
	/* neither recorded stale: nothing tells which is right */
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.unrepairable, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].what, OBJIO_SCRUB_DIVERGED);
	CHECK_EQ(seen.p[0].outcome, OBJIO_SCRUB_UNREPAIRABLE);
	CHECK_EQ(seen.p[0].extent, 3);
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);   /* nothing was changed */
	CHECK_EQ(r.unrepairable, 1);
	/* mirror 1 recorded stale: repaired from mirror 2 */
	io->skip[0] = 1;
	io->nskip = 1;
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.repaired, 1);
	CHECK_EQ(seen.n, 1);
	CHECK_EQ(seen.p[0].osd_id, 1);
	CHECK_EQ(seen.p[0].source_osd, 2);
	io->nskip = 0;
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	check_reads_back(io, map);
}

static void test_raid0_verifies_only(struct objio *io)
{
	static const uint32_t on[1] = { 3 };
	struct pando_storage_map *m = make_map(PANDO_RAID0, 1, on, 2);
	struct objio_scrub_result r;
	struct seen seen;

	if (!m)
		return;
	CHECK_EQ(objio_create(io, m), 0);
	CHECK_EQ(objio_write(io, m, 0, data, SIZE, true), 0);
	CHECK_EQ(corrupt(3, 2, 16 * EXT + 1), 0);
	CHECK_EQ(scrub(io, m, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 1);
	CHECK_EQ(r.unrepairable, 1);
	CHECK_EQ(seen.n == 1 && seen.p[0].extent == 16, 1);
	pando_map_free(m);
}

static void test_down_mirror_is_unreachable(struct objio *io, const struct pando_storage_map *map)
{
	struct objio_scrub_result r;
	struct seen seen;

	CHECK_EQ(stop_osd(1), 0);                        /* OSD 2: exits 0 on SIGTERM */
	CHECK_EQ(scrub(io, map, SIZE, &r, &seen), 0);
	CHECK_EQ(r.mismatches, 0);
	CHECK_EQ(r.unreachable, 18);
	CHECK_EQ(seen.n == 1 && seen.p[0].what == OBJIO_SCRUB_UNREACHABLE, 1);
	CHECK_EQ(r.extents_checked, 18);                 /* mirror 1 still was */
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void run(void)
{
	static const uint32_t mirrors[2] = { 1, 2 };
	struct cluster_desc desc = { .partition = PART, .nosds = NOSDS, .osds = osds };
	struct osd_pool_options opt = { .conns_per_osd = 1, .timeout_ms = 5000, .backoff_ms = 100 };
	struct pando_storage_map *map = make_map(PANDO_RAID1, 2, mirrors, 1);
	struct osd_pool *pool = NULL;
	struct objio io = { 0 };

	desc.key = key;
	CHECK_EQ(osd_pool_new(&desc, &opt, &pool), 0);
	if (!pool || !map)
		return;
	io.pool = pool;
	io.owner = 99;
	for (size_t i = 0; i < SIZE; i++)
		data[i] = (uint8_t)(i * 31 + (i >> 12));
	CHECK_EQ(objio_create(&io, map), 0);
	CHECK_EQ(objio_write(&io, map, 0, data, SIZE, true), 0);
	test_clean_then_rot_repaired(&io, map);
	test_missed_write(&io, map);
	test_raid0_verifies_only(&io);
	test_down_mirror_is_unreachable(&io, map);
	osd_pool_free(pool);
	pando_map_free(map);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0 || !mkdtemp(root))
		return 1;
	self[n] = 0;
	snprintf(bindir, sizeof(bindir), "%s", dirname(self));
	signal(SIGPIPE, SIG_IGN);
	CHECK_EQ(write_key_file(), 0);
	for (int i = 0; i < NOSDS; i++)
		CHECK_EQ(start_osd(i), 0);
	if (!check_failures)
		run();
	for (int i = 0; i < NOSDS; i++)
		CHECK_EQ(stop_osd(i), 0);
	if (!check_failures)
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "logs kept in %s\n", root);
	CHECK_DONE();
}
