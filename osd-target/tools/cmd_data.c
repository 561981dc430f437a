/* pando-osd-tool's data commands: put and get an object's bytes. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byteorder.h"
#include "osd_tool.h"

/* Reads until buf is full or the input ends, so writes go in whole chunks. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int write_full(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static int set_length(struct osd_ctl_client *c, const struct osd_ctl_obj_id *id, uint64_t len)
{
	struct osd_ctl_attr a = { .page = 1, .number = 1, .len = 8 };

	put_be64(a.value, len);
	return osd_ctl_setattr(c, id, &a, 1, NULL);
}

/* Writes the input over the object, then cuts the object to its length.
 * UNSTABLE writes are made durable by one FLUSH at the end; a verifier
 * that changes on the way means the target restarted and lost some. */
static int put_stream(struct tool *t, const struct osd_ctl_obj_id *id, int fd, bool sync,
		      uint8_t *buf)
{
	enum osd_ctl_stable stable = sync ? OSD_CTL_FILE_SYNC : OSD_CTL_UNSTABLE;
	uint8_t verf[8], first_verf[8];
	uint64_t off = 0;
	int rc;

	for (;;) {
		ssize_t n = read_full(fd, buf, CHUNK);

		if (n < 0)
			return fail(t, "reading input: %s", strerror((int)-n));
		if (n == 0)
			break;
		rc = osd_ctl_write(t->client, id, off, buf, (size_t)n, stable, verf);
		if (rc)
			return fail(t, "write at offset %" PRIu64 ": %s", off, strerror(-rc));
		if (off == 0)
			memcpy(first_verf, verf, sizeof(verf));
		else if (memcmp(verf, first_verf, sizeof(verf)) != 0)
			return fail(t, "the target restarted during the upload; run put again");
		off += (uint64_t)n;
	}
	rc = set_length(t->client, id, off);
	if (!rc && !sync)
		rc = osd_ctl_flush(t->client, id);
	return rc ? fail(t, "finishing the upload: %s", strerror(-rc)) : 0;
}

int cmd_put(struct tool *t, int argc, char **argv)
{
	static const struct option opts[] = { { "sync", no_argument, NULL, 's' },
					      COMMON_OPTIONS,
					      { 0 } };
	bool sync = false;
	struct osd_ctl_obj_id id;
	const char *path;
	uint8_t *buf;
	int first = parse_options(t, argc, argv, "", opts, opt_flag, &sync);
	int fd, rc;

	if (first < 0 || positional(t, argc, argv, first, 3, 3) < 0 ||
	    arg_obj(t, argv + first, &id))
		return 1;
	path = argv[first + 2];
	fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(t, "cannot open %s: %s", path, strerror(errno));
	buf = malloc(CHUNK);
	if (!buf)
		rc = fail(t, "out of memory");
	else
		rc = connect_target(t) ? 1 : put_stream(t, &id, fd, sync, buf);
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return rc;
}

static int get_stream(struct tool *t, const struct osd_ctl_obj_id *id, int fd, uint8_t *buf)
{
	uint64_t off = 0;
	bool eof = false;

	while (!eof) {
		size_t n = 0;
		int rc = osd_ctl_read(t->client, id, off, buf, CHUNK, &n, &eof);

		if (rc)
			return fail(t, "read at offset %" PRIu64 ": %s", off, strerror(-rc));
		if (n == 0 && !eof)
			return fail(t, "the target sent no data before the end of the object");
		rc = write_full(fd, buf, n);
		if (rc)
			return fail(t, "writing output: %s", strerror(-rc));
		off += n;
	}
	return 0;
}

int cmd_get(struct tool *t, int argc, char **argv)
{
	struct osd_ctl_obj_id id;
	const char *path;
	uint8_t *buf;
	int first, fd, rc;

	if (plain_args(t, argc, argv, 2, 3, &first) || arg_obj(t, argv + first, &id) ||
	    connect_target(t))
		return 1;
	path = argc - first == 3 ? argv[first + 2] : "-";
	fd = strcmp(path, "-") == 0 ? STDOUT_FILENO
				    : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(t, "cannot create %s: %s", path, strerror(errno));
	buf = malloc(CHUNK);
	rc = buf ? get_stream(t, &id, fd, buf) : fail(t, "out of memory");
	free(buf);
	if (fd != STDOUT_FILENO && close(fd) && !rc)
		rc = fail(t, "writing %s: %s", path, strerror(errno));
	return rc;
}
