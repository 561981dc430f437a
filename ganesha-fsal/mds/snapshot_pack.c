/* A snapshot's bytes (snapshot_pack.h). */
#include "snapshot_pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "mds_alloc.h"
#include "byteorder.h"

#define CHUNK (1u << 20)

bool snapshot_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > SNAPSHOT_NAME_MAX || (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The names in dir, each a plain file's, sorted. */
static int list_files(int dfd, char ***out, size_t *n)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *e;
	char **names = NULL;
	int rc = d ? 0 : -errno;

	*n = 0;
	while (!rc && (e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			rc = -errno;
		else if (!S_ISREG(st.st_mode) || !snapshot_name_ok(e->d_name, strlen(e->d_name)))
			rc = -EINVAL;
		else if (*n == SNAPSHOT_FILES_MAX)
			rc = -E2BIG;
		if (rc)
			break;
		names = mds_realloc(names, (*n + 1) * sizeof(*names));
		names[(*n)++] = mds_strdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (rc) {
		names_free(names, *n);
		return rc;
	}
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	*out = names;
	return 0;
}

/* One file's bytes at off + its header and name, then its header. */
static int pack_file(int dfd, const char *name, snapshot_write_fn w, void *arg, uint64_t *off,
		     uint8_t *buf)
{
	size_t len = strlen(name);
	uint64_t data = *off + SNAPSHOT_FILE_HEADER + len, size = 0;
	uint32_t crc = 0;
	uint8_t h[SNAPSHOT_FILE_HEADER];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW), rc = fd < 0 ? -errno : 0;

	while (!rc) {
		ssize_t got = read(fd, buf, CHUNK);

		if (got <= 0) {
			rc = got < 0 ? -errno : 0;
			break;
		}
		crc = crc32c(crc, buf, (size_t)got);
		rc = w(arg, data + size, buf, (size_t)got);
		size += (uint64_t)got;
	}
	if (fd >= 0)
		close(fd);
	if (rc)
		return rc;
	put_be32(h, (uint32_t)len);
	put_be64(h + 4, size);
	put_be32(h + 12, crc);
	put_be32(h + 16, crc32c(crc32c(0, h, 16), name, len));
	rc = w(arg, *off, h, sizeof(h));
	if (!rc)
		rc = w(arg, *off + sizeof(h), name, len);
	*off = data + size;
	return rc;
}

int snapshot_pack(const char *dir, uint64_t seq, snapshot_write_fn w, void *arg, uint64_t *total)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	uint8_t h[SNAPSHOT_PACK_HEADER], *buf = NULL;
	uint64_t off = SNAPSHOT_PACK_HEADER;
	char **names = NULL;
	size_t n = 0;
	int rc = dfd < 0 ? -errno : list_files(dfd, &names, &n);

	if (!rc)
		buf = mds_malloc(CHUNK);
	for (size_t i = 0; !rc && i < n; i++)
		rc = pack_file(dfd, names[i], w, arg, &off, buf);
	if (!rc) {
		put_be32(h, SNAPSHOT_PACK_MAGIC);
		put_be32(h + 4, 1);
		put_be64(h + 8, seq);
		put_be32(h + 16, (uint32_t)n);
		put_be32(h + 20, crc32c(0, h, 20));
		rc = w(arg, 0, h, sizeof(h));
	}
	*total = off;
	free(buf);
	names_free(names, n);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

struct parse {
	snapshot_read_fn r;
	void *arg;
	uint64_t total, off;
	uint8_t *buf;
	char name[2][SNAPSHOT_NAME_MAX + 1]; /* this file's, the one before */
};

static int take(struct parse *p, void *buf, size_t n)
{
	int rc;

	if (n > p->total - p->off)
		return -EINVAL;
	rc = p->r(p->arg, p->off, buf, n);
	p->off += n;
	return rc;
}

/* One file's header and name: the name must be allowed and come after
 * the one before, so none comes twice. */
static int parse_header(struct parse *p, uint64_t *size, uint32_t *crc, int k)
{
	uint8_t h[SNAPSHOT_FILE_HEADER];
	uint32_t len;
	int rc = take(p, h, sizeof(h));

	if (rc)
		return rc;
	len = get_be32(h);
	if (len == 0 || len > SNAPSHOT_NAME_MAX)
		return -EINVAL;
	rc = take(p, p->name[k], len);
	if (rc)
		return rc;
	p->name[k][len] = 0;
	if (crc32c(crc32c(0, h, 16), p->name[k], len) != get_be32(h + 16) ||
	    !snapshot_name_ok(p->name[k], len) ||
	    (p->name[!k][0] && strcmp(p->name[!k], p->name[k]) >= 0))
		return -EINVAL;
	*size = get_be64(h + 4);
	*crc = get_be32(h + 12);
	return *size > p->total - p->off ? -EINVAL : 0;
}

static int parse_file(struct parse *p, const struct snapshot_sink *sink, int k)
{
	uint64_t left = 0;
	uint32_t want = 0, crc = 0;
	int rc = parse_header(p, &left, &want, k);

	if (!rc)
		rc = sink->file(sink->arg, p->name[k], left);
	while (!rc && left) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;

		rc = take(p, p->buf, n);
		if (!rc) {
			crc = crc32c(crc, p->buf, n);
			rc = sink->data(sink->arg, p->buf, n);
		}
		left -= n;
	}
	if (!rc && crc != want)
		rc = -EINVAL;
	return rc ? rc : sink->done(sink->arg);
}

int snapshot_parse(snapshot_read_fn r, void *arg, uint64_t total, const struct snapshot_sink *sink,
		   uint64_t *seq)
{
	struct parse p = { .r = r, .arg = arg, .total = total };
	uint8_t h[SNAPSHOT_PACK_HEADER];
	uint32_t files = 0;
	int rc = take(&p, h, sizeof(h));

	if (!rc && (get_be32(h) != SNAPSHOT_PACK_MAGIC || get_be32(h + 4) != 1 ||
		    get_be32(h + 20) != crc32c(0, h, 20) || get_be32(h + 16) > SNAPSHOT_FILES_MAX))
		rc = -EINVAL;
	if (!rc) {
		files = get_be32(h + 16);
		*seq = get_be64(h + 8);
		p.buf = mds_malloc(CHUNK);
	}
	for (uint32_t i = 0; !rc && i < files; i++)
		rc = parse_file(&p, sink, (int)(i & 1));
	if (!rc && p.off != total)
		rc = -EINVAL;
	free(p.buf);
	return rc;
}

/* The sink snapshot_unpack parses into: one file at a time in dir. */
struct dir_sink {
	int dfd, fd;
};

static int dir_file(void *arg, const char *name, uint64_t size)
{
	struct dir_sink *d = arg;

	(void)size;
	d->fd = openat(d->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	return d->fd < 0 ? -errno : 0;
}

static int dir_data(void *arg, const void *buf, size_t n)
{
	struct dir_sink *d = arg;

	while (n) {
		ssize_t put = write(d->fd, buf, n);

		if (put < 0)
			return -errno;
		buf = (const uint8_t *)buf + put;
		n -= (size_t)put;
	}
	return 0;
}

static int dir_done(void *arg)
{
	struct dir_sink *d = arg;
	int rc = fsync(d->fd) ? -errno : 0;

	close(d->fd);
	d->fd = -1;
	return rc;
}

void snapshot_dir_remove(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dfd, e->d_name, 0);
	if (d)
		closedir(d);
	else if (dfd >= 0)
		close(dfd);
	rmdir(dir);
}

int snapshot_unpack(snapshot_read_fn r, void *arg, uint64_t total, const char *dir, uint64_t *seq)
{
	struct dir_sink d = { .fd = -1 };
	struct snapshot_sink sink = {
		.file = dir_file, .data = dir_data, .done = dir_done, .arg = &d
	};
	int rc = mkdir(dir, 0700) ? -errno : 0;

	if (rc)
		return rc;
	d.dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (d.dfd < 0) {
		rc = -errno;
		rmdir(dir);
		return rc;
	}
	rc = snapshot_parse(r, arg, total, &sink, seq);
	if (d.fd >= 0)
		close(d.fd);
	if (!rc && fsync(d.dfd))
		rc = -errno;
	close(d.dfd);
	if (rc)
		snapshot_dir_remove(dir);
	return rc;
}
