/* The store directory: the superblock that says it is formatted, the shard
 * directories the data files live in, and how those files are named. */
#include "objstore_internal.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define SB_NAME "superblock"
#define SB_TMP "superblock.tmp"
#define SB_MAX 4096

/* ---- data file names ------------------------------------------------- */

/* splitmix64's finaliser, so that sequential ids spread evenly.  Its low
 * byte names the shard directory: part of the on-disk format, never change. */
uint64_t id_hash(uint64_t partition, uint64_t object)
{
	uint64_t h = partition * 0x9E3779B97F4A7C15ull ^ object;

	h ^= h >> 30;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBull;
	return h ^ h >> 31;
}

unsigned obj_shard(const struct obj_id *id)
{
	return id_hash(id->partition, id->object) & (SHARDS - 1);
}

void obj_path(char *buf, const struct obj_id *id)
{
	snprintf(buf, OBJ_PATH_LEN, "%02x/%016" PRIx64 ".%016" PRIx64, obj_shard(id), id->partition,
		 id->object);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parses a data file name "PPPPPPPPPPPPPPPP.OOOOOOOOOOOOOOOO". */
bool obj_name_parse(const char *name, struct obj_id *id)
{
	uint64_t v[2] = { 0, 0 };

	if (strlen(name) != 33 || name[16] != '.')
		return false;
	for (int i = 0; i < 33; i++) {
		int d = hex_digit(name[i]);

		if (i == 16)
			continue;
		if (d < 0)
			return false;
		v[i > 16] = v[i > 16] << 4 | (uint64_t)d;
	}
	id->partition = v[0];
	id->object = v[1];
	return true;
}

/* ---- directories ----------------------------------------------------- */

/* The store's directory, which holds the file system's data, made the
 * owner's alone if an admin made it wider: below it nothing is checked. */
int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		log_error("objstore: %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) == 0 && (st.st_mode & 077) && fchmod(fd, st.st_mode & 0700) == 0)
		log_warn("objstore: %s was mode %04o, now %04o", dir, st.st_mode & 07777,
			 st.st_mode & 0700);
	return fd;
}

int fsync_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fsync(fd) < 0) {
		log_error("objstore: fsync %s: %s", name, strerror(errno));
		rc = errno_io(errno);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int mkdir_at(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0700) == 0 || errno == EEXIST)
		return 0;
	log_error("objstore: mkdir %s: %s", name, strerror(errno));
	return errno_io(errno);
}

static int make_shards(int dirfd)
{
	char name[16];
	int rc = mkdir_at(dirfd, "objects");

	for (unsigned i = 0; !rc && i < SHARDS; i++) {
		snprintf(name, sizeof(name), "objects/%02x", i);
		rc = mkdir_at(dirfd, name);
	}
	return rc ? rc : fsync_at(dirfd, "objects");
}

/* Opens one shard directory for listing; closedir() closes both. */
DIR *shard_open(struct objstore *s, unsigned shard)
{
	char name[4];
	int fd;
	DIR *d;

	snprintf(name, sizeof(name), "%02x", shard);
	fd = openat(s->objfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		log_error("objstore: open objects/%s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return d;
}

/* ---- superblock ------------------------------------------------------ */

static int sb_format(char *buf, size_t cap, const struct objstore_superblock *sb)
{
	char uuid[33];

	for (int i = 0; i < 16; i++)
		snprintf(uuid + 2 * i, 3, "%02x", sb->uuid[i]);
	return snprintf(buf, cap,
			"format = 1\nuuid = %s\nosd_id = %" PRIu32 "\nkey_id = %" PRIu32
			"\ncreated_ns = %" PRIu64 "\n",
			uuid, sb->osd_id, sb->key_id, sb->created_ns);
}

static bool parse_u64(const char *v, uint64_t max, uint64_t *out)
{
	char *end;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return !errno && !*end && *out <= max;
}

static bool parse_uuid(const char *v, uint8_t *uuid)
{
	if (strlen(v) != 32)
		return false;
	for (int i = 0; i < 16; i++) {
		int hi = hex_digit(v[2 * i]), lo = hex_digit(v[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		uuid[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* One "key = value" line; returns the bit of the key it set, 0 if bad. */
static unsigned sb_line(char *line, struct objstore_superblock *sb)
{
	char *eq = strchr(line, '='), *k = line, *v;
	uint64_t n;

	if (!eq)
		return 0;
	*eq = 0;
	v = eq + 1;
	k[strcspn(k, " \t")] = 0;
	v += strspn(v, " \t");
	v[strcspn(v, " \t\r")] = 0;
	if (!strcmp(k, "format"))
		return parse_u64(v, 1, &n) && n == 1 ? 1 : 0;
	if (!strcmp(k, "uuid"))
		return parse_uuid(v, sb->uuid) ? 2 : 0;
	if (!strcmp(k, "osd_id") && parse_u64(v, UINT32_MAX, &n)) {
		sb->osd_id = (uint32_t)n;
		return 4;
	}
	if (!strcmp(k, "key_id") && parse_u64(v, UINT32_MAX, &n)) {
		sb->key_id = (uint32_t)n;
		return 8;
	}
	if (!strcmp(k, "created_ns") && parse_u64(v, UINT64_MAX, &sb->created_ns))
		return 16;
	return 0;
}

static int sb_parse(char *text, struct objstore_superblock *sb)
{
	unsigned seen = 0;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned bit;

		line += strspn(line, " \t");
		if (!*line || *line == '#')
			continue;
		bit = sb_line(line, sb);
		if (!bit)
			return -EINVAL;
		seen |= bit;
	}
	return seen == 31 ? 0 : -EINVAL;
}

int sb_read(int dirfd, struct objstore_superblock *sb)
{
	char buf[SB_MAX + 1];
	ssize_t len;
	int fd = openat(dirfd, SB_NAME, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, SB_MAX);
	rc = len < 0 ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	buf[len] = 0;
	rc = sb_parse(buf, sb);
	if (rc)
		log_error("objstore: superblock is malformed or of an unknown format");
	return rc;
}

/* tmp file, fsync, rename (over the old one only when asked), fsync the
 * directory: either the whole new superblock is there after a crash or
 * the whole old one. */
static int sb_write(int dirfd, const struct objstore_superblock *sb, bool replace)
{
	char buf[SB_MAX];
	int len = sb_format(buf, sizeof(buf), sb), rc = 0;
	int fd = openat(dirfd, SB_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return errno_io(errno);
	w = write(fd, buf, (size_t)len);
	if (w != len || fsync(fd) < 0)
		rc = w >= 0 && w < len ? -EIO : errno_io(errno);
	close(fd);
	if (!rc && renameat2(dirfd, SB_TMP, dirfd, SB_NAME, replace ? 0 : RENAME_NOREPLACE) < 0)
		rc = errno == EEXIST ? -EEXIST : errno_io(errno);
	if (rc) {
		unlinkat(dirfd, SB_TMP, 0);
		return rc;
	}
	return fsync_at(dirfd, ".");
}

int objstore_set_key_id(struct objstore *s, uint32_t key_id)
{
	struct objstore_superblock sb = s->sb;
	int rc;

	sb.key_id = key_id;
	rc = sb_write(s->dirfd, &sb, true);
	if (!rc)
		s->sb = sb;
	return rc;
}

/* ---- format ---------------------------------------------------------- */

int objstore_format(const char *dir, uint32_t osd_id, uint32_t key_id)
{
	struct objstore_superblock sb = { .osd_id = osd_id, .key_id = key_id };
	int dirfd, rc;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("objstore: mkdir %s: %s", dir, strerror(errno));
		return -errno;
	}
	dirfd = open_dir(dir);
	if (dirfd < 0)
		return dirfd;
	if (faccessat(dirfd, SB_NAME, F_OK, 0) == 0) {
		close(dirfd);
		return -EEXIST;
	}
	if (getrandom(sb.uuid, sizeof(sb.uuid), 0) != sizeof(sb.uuid)) {
		close(dirfd);
		return -EIO;
	}
	sb.created_ns = now_ns();
	/* The superblock goes last: it is what says the directory is formatted. */
	rc = make_shards(dirfd);
	if (!rc)
		rc = db_create(dir);
	if (!rc)
		rc = sb_write(dirfd, &sb, false);
	close(dirfd);
	return rc;
}
