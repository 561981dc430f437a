/* Real pando-osd processes for tests (osd_fixture.h). */
#include "osd_fixture.h"

#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_key_file(struct osd_fixture *f, const struct cluster_key *key)
{
	char path[256], text[CLUSTER_KEY_TEXT_MAX];
	FILE *fp;

	cluster_key_format(key, text, sizeof(text));
	snprintf(path, sizeof(path), "%s/cluster.key", f->root);
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	if (fputs(text, fp) < 0) {
		fclose(fp);
		return -1;
	}
	return fclose(fp) ? -1 : 0;
}

/* The control port, from the "osdctl: listening on ... (port N)" line
 * of the log the OSD writes from its start (restarts append). */
static int wait_port(struct osd_fixture *f, int i, long from)
{
	char path[256], line[512];

	snprintf(path, sizeof(path), "%s/osd.%d.log", f->root, i + 1);
	for (int tries = 0; tries < 200; tries++) {
		FILE *fp = fopen(path, "r");
		unsigned port = 0;

		if (fp && fseek(fp, from, SEEK_SET) == 0)
			while (fgets(line, sizeof(line), fp))
				if (strstr(line, "osdctl: listening on"))
					sscanf(strstr(line, "(port ") + 6, "%u", &port);
		if (fp)
			fclose(fp);
		if (port) {
			snprintf(f->osds[i].ctl, sizeof(f->osds[i].ctl), "127.0.0.1:%u", port);
			return 0;
		}
		usleep(50 * 1000);
	}
	return -1;
}

static long log_size(struct osd_fixture *f, int i)
{
	char path[256];
	FILE *fp;
	long n = 0;

	snprintf(path, sizeof(path), "%s/osd.%d.log", f->root, i + 1);
	fp = fopen(path, "r");
	if (fp && fseek(fp, 0, SEEK_END) == 0)
		n = ftell(fp);
	if (fp)
		fclose(fp);
	return n < 0 ? 0 : n;
}

static int spawn(struct osd_fixture *f, int i)
{
	char exe[4200], id[16], dir[256], keyf[256], logf[256], ctl[64];
	char *argv[20];
	int a = 0;
	long from = log_size(f, i);

	snprintf(exe, sizeof(exe), "%s/../../osd-target/pando-osd", f->bindir);
	snprintf(id, sizeof(id), "%d", i + 1);
	snprintf(dir, sizeof(dir), "%s/osd.%d", f->root, i + 1);
	snprintf(keyf, sizeof(keyf), "%s/cluster.key", f->root);
	snprintf(logf, sizeof(logf), "%s/osd.%d.log", f->root, i + 1);
	argv[a++] = exe;
	argv[a++] = "--osd-id", argv[a++] = id;
	argv[a++] = "--data-dir", argv[a++] = dir;
	argv[a++] = "--key-file", argv[a++] = keyf;
	argv[a++] = "--format"; /* only formats an empty directory */
	argv[a++] = "--nfs-listen", argv[a++] = "127.0.0.1:0";
	/* A restart keeps its control port: pools know the OSD by it. */
	snprintf(ctl, sizeof(ctl), "%s", f->osds[i].ctl[0] ? f->osds[i].ctl : "127.0.0.1:0");
	argv[a++] = "--ctl-listen", argv[a++] = ctl;
	argv[a++] = "--threads", argv[a++] = "2";
	argv[a++] = "--log-file", argv[a++] = logf;
	argv[a] = NULL;
	f->pids[i] = fork();
	if (f->pids[i] == 0) {
		/* A test that dies (a failed CHECK, a sanitizer report) takes its
		 * OSDs along: left running they would hold ctest's output pipe
		 * open and hang it until its timeout. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(exe, argv);
		_exit(127);
	}
	f->osds[i].id = (uint32_t)i + 1;
	strcpy(f->osds[i].nfs, "127.0.0.1:1");
	strcpy(f->osds[i].advertise, f->osds[i].nfs);
	f->osds[i].weight = 1ull << 40;
	f->osds[i].up = f->osds[i].in = true;
	return f->pids[i] < 0 ? -1 : wait_port(f, i, from);
}

int osd_fixture_start(struct osd_fixture *f, int n, uint64_t partition)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > OSD_FIXTURE_MAX || len <= 0)
		return -1;
	memset(f, 0, sizeof(*f));
	self[len] = 0;
	snprintf(f->bindir, sizeof(f->bindir), "%s", dirname(self));
	snprintf(f->root, sizeof(f->root), "/tmp/pando-osdfix-XXXXXX");
	f->key.id = 1;
	for (int i = 0; i < CLUSTER_KEY_SECRET_LEN; i++)
		f->key.secret[i] = (uint8_t)(i * 13 + 5);
	if (!mkdtemp(f->root) || write_key_file(f, &f->key))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	f->n = n;
	f->partition = partition;
	for (int i = 0; i < n; i++)
		if (spawn(f, i))
			return -1;
	return 0;
}

int osd_fixture_stop(struct osd_fixture *f, int i)
{
	int status = -1;

	if (f->pids[i] <= 0)
		return 0;
	kill(f->pids[i], SIGTERM);
	waitpid(f->pids[i], &status, 0);
	f->pids[i] = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int osd_fixture_restart(struct osd_fixture *f, int i)
{
	return f->pids[i] > 0 ? -1 : spawn(f, i);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

int osd_fixture_finish(struct osd_fixture *f, int keep)
{
	int bad = 0;

	for (int i = 0; i < f->n; i++)
		bad |= osd_fixture_stop(f, i) != 0;
	if (keep || bad)
		fprintf(stderr, "OSD logs kept in %s\n", f->root);
	else
		nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return bad ? -1 : 0;
}

struct cluster_map osd_fixture_cluster_map(struct osd_fixture *f)
{
	return (struct cluster_map){
		.epoch = 1, .partition = f->partition, .nosds = (size_t)f->n, .osds = f->osds
	};
}

int osd_fixture_corrupt(struct osd_fixture *f, uint32_t osd, uint64_t object, uint64_t off)
{
	char path[512];
	uint8_t b;

	for (int shard = 0; shard < 256; shard++) {
		int fd;

		snprintf(path, sizeof(path), "%s/osd.%u/objects/%02x/%016llx.%016llx", f->root, osd,
			 shard, (unsigned long long)f->partition, (unsigned long long)object);
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

int osd_fixture_set_key(struct osd_fixture *f, const struct cluster_key *key)
{
	if (write_key_file(f, key))
		return -1;
	for (int i = 0; i < f->n; i++)
		if (f->pids[i] > 0 && kill(f->pids[i], SIGHUP))
			return -1;
	return 0;
}

int osd_fixture_pool(struct osd_fixture *f, struct osd_conns **out)
{
	struct osd_conns_options opt = { .conns_per_osd = 1,
					 .timeout_ms = 5000,
					 .backoff_ms = 100 };

	f->map = osd_fixture_cluster_map(f);
	return osd_conns_new(&f->key, &f->map, &opt, out);
}

int osd_fixture_start_io(struct osd_fixture *f, int n, uint64_t partition, struct objio *io)
{
	io->conns = NULL;
	if (osd_fixture_start(f, n, partition))
		return -1;
	return osd_fixture_pool(f, &io->conns) ? -1 : 0;
}

int osd_fixture_finish_io(struct osd_fixture *f, struct objio *io, int keep)
{
	osd_conns_free(io->conns);
	io->conns = NULL;
	return osd_fixture_finish(f, keep);
}

struct pando_storage_map *osd_fixture_map(const struct osd_fixture *f,
					  const struct pando_map_shape *shape, uint32_t groups,
					  uint32_t osds, uint64_t first_object)
{
	struct pando_storage_map *map = NULL;
	uint32_t width = pando_shape_width(shape);

	if (pando_map_new(shape, groups, 0, &map))
		return NULL;
	map->partition_id = f->partition;
	for (uint32_t g = 0; g < groups; g++)
		for (uint32_t c = 0; c < width; c++)
			*pando_map_component(map, g, c) =
				(struct pando_component){ 1 + (c + 3 * g) % osds,
							  first_object + g * width + c };
	if (pando_map_validate(map)) {
		pando_map_free(map);
		return NULL;
	}
	return map;
}

struct pando_storage_map *osd_fixture_rs_map(const struct osd_fixture *f, uint8_t k, uint8_t m,
					     uint32_t stripe_unit, uint32_t visit_rows,
					     uint32_t groups, uint32_t osds)
{
	struct pando_map_shape shape = { .raid = PANDO_RS,
					 .copies = 1,
					 .data = k,
					 .parity = m,
					 .stripe_unit = stripe_unit,
					 .visit_rows = visit_rows };

	return osd_fixture_map(f, &shape, groups, osds, 100);
}

int osd_fixture_back_in_pool(struct osd_conns *conns, uint32_t id)
{
	for (int tries = 0; tries < 100; tries++) {
		if (osd_conns_ping(conns, id) == 0)
			return 0;
		usleep(50 * 1000);
	}
	return -1;
}

void osd_fixture_fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}
