/* A snapshot's bytes (snapshot_pack.h): the known bytes of a pack of one
 * file (its CRCs computed apart, by a bitwise CRC32C), directories of
 * many files and sizes round trips, and every way a pack read off the
 * OSDs can be wrong refused with nothing left behind: cut short at every
 * byte, any bit flipped, bytes after the end, names out of order, twice
 * or not allowed, too many files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byteorder.h"
#include "check.h"
#include "crc32c.h"
#include "mds_alloc.h"
#include "snapshot_pack.h"

static const uint8_t known[] = {
	0x50, 0x53, 0x4e, 0x50, 0x00, 0x00, 0x00, 0x01, /* magic, version 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* seq 7 */
	0x00, 0x00, 0x00, 0x01, 0x23, 0xf8, 0x8d, 0xec, /* 1 file, crc */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* name_len 1, size... */
	0x00, 0x00, 0x00, 0x03, 0x25, 0x23, 0x68, 0x85, /* ...3, data_crc */
	0xe7, 0x9b, 0x92, 0xb7, 0x61, 0x78, 0x79, 0x7a, /* crc, "a", "xyz" */
};

/* A pack in memory, written and read through the callbacks. */
struct mem {
	uint8_t *b;
	size_t n, cap;
};

static int mem_write(void *arg, uint64_t off, const void *buf, size_t n)
{
	struct mem *m = arg;

	if (off + n > m->cap) {
		m->cap = (size_t)(off + n) * 2;
		m->b = mds_realloc(m->b, m->cap);
	}
	if (off > m->n)
		memset(m->b + m->n, 0, (size_t)off - m->n);
	memcpy(m->b + off, buf, n);
	if (off + n > m->n)
		m->n = (size_t)(off + n);
	return 0;
}

static int mem_read(void *arg, uint64_t off, void *buf, size_t n)
{
	struct mem *m = arg;

	if (off + n > m->n)
		return -EIO;
	memcpy(buf, m->b + off, n);
	return 0;
}

static char root[] = "/tmp/pando-snapshot-pack-XXXXXX";

static void path(char *buf, const char *name)
{
	snprintf(buf, 512, "%s/%s", root, name);
}

static void put_file(const char *dir, const char *name, const void *data, size_t n)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, n), (long long)n);
	close(fd);
}

static bool same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca = 0, cb = 0;

	while (fa && fb && (ca = fgetc(fa)) == (cb = fgetc(fb)) && ca != EOF)
		;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return fa && fb && ca == EOF && cb == EOF;
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static void test_a_pack_of_one_file_has_the_known_bytes(void)
{
	char dir[512], out[512], f[1024];
	struct mem m = { 0 };
	uint64_t total = 0, seq = 0;

	path(dir, "known");
	path(out, "known.out");
	CHECK_EQ(mkdir(dir, 0700), 0);
	put_file(dir, "a", "xyz", 3);
	CHECK_EQ(snapshot_pack(dir, 7, mem_write, &m, &total), 0);
	CHECK_EQ(total, sizeof(known));
	CHECK_EQ(m.n, sizeof(known));
	CHECK_MEM(m.b, known, sizeof(known));
	CHECK_EQ(snapshot_unpack(mem_read, &m, total, out, &seq), 0);
	CHECK_EQ(seq, 7);
	snprintf(f, sizeof(f), "%s/a", out);
	CHECK(same_file(f, strcat(dir, "/a")));
	free(m.b);
}

static void test_a_directory_of_many_sizes_round_trips(void)
{
	static const size_t sizes[] = { 0, 1, 4095, 1u << 20, (1u << 20) + 1, 3u << 20 };
	char dir[512], out[512], a[1024], b[1024], name[32];
	uint8_t *data = mds_malloc(3u << 20);
	struct mem m = { 0 };
	uint64_t total = 0, seq = 0;

	for (size_t i = 0; i < (3u << 20); i++)
		data[i] = (uint8_t)(i * 131 + (i >> 12));
	path(dir, "many");
	path(out, "many.out");
	CHECK_EQ(mkdir(dir, 0700), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(name, sizeof(name), "%06zu.sst", 10 - i); /* not in name order */
		put_file(dir, name, data, sizes[i]);
	}
	put_file(dir, "CURRENT", "MANIFEST-000005\n", 16);
	CHECK_EQ(snapshot_pack(dir, 1234567890123ull, mem_write, &m, &total), 0);
	CHECK_EQ(snapshot_unpack(mem_read, &m, total, out, &seq), 0);
	CHECK_EQ(seq, 1234567890123ull);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(a, sizeof(a), "%s/%06zu.sst", dir, 10 - i);
		snprintf(b, sizeof(b), "%s/%06zu.sst", out, 10 - i);
		CHECK(same_file(a, b));
	}
	snprintf(a, sizeof(a), "%s/CURRENT", dir);
	snprintf(b, sizeof(b), "%s/CURRENT", out);
	CHECK(same_file(a, b));
	CHECK_EQ(snapshot_unpack(mem_read, &m, total, out, &seq), -EEXIST);
	free(m.b);
	free(data);
}

static void test_a_pack_cut_short_at_any_byte_is_refused_and_leaves_nothing(void)
{
	struct mem m = { .b = (uint8_t *)known, .n = sizeof(known) };
	char out[512];
	uint64_t seq;

	path(out, "cut.out");
	for (size_t n = 0; n < sizeof(known); n++) {
		CHECK_EQ(snapshot_unpack(mem_read, &m, n, out, &seq), -EINVAL);
		CHECK(!exists(out));
	}
}

static void test_any_bit_flipped_is_refused_and_leaves_nothing(void)
{
	uint8_t bad[sizeof(known)];
	struct mem m = { .b = bad, .n = sizeof(bad) };
	char out[512];
	uint64_t seq;

	path(out, "flip.out");
	for (size_t i = 0; i < sizeof(known); i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, known, sizeof(bad));
			bad[i] ^= (uint8_t)(1u << bit);
			CHECK_EQ(snapshot_unpack(mem_read, &m, sizeof(bad), out, &seq), -EINVAL);
			CHECK(!exists(out));
		}
	}
}

static void test_bytes_after_the_last_file_are_refused(void)
{
	uint8_t more[sizeof(known) + 1];
	struct mem m = { .b = more, .n = sizeof(more) };
	char out[512];
	uint64_t seq;

	memcpy(more, known, sizeof(known));
	more[sizeof(known)] = 0;
	path(out, "more.out");
	CHECK_EQ(snapshot_unpack(mem_read, &m, sizeof(more), out, &seq), -EINVAL);
	CHECK(!exists(out));
}

/* A pack made by hand: header for files, then each (name, "data"). */
static void hand_pack(struct mem *m, const char *const *names, size_t n, uint32_t files)
{
	uint8_t h[SNAPSHOT_PACK_HEADER], f[SNAPSHOT_FILE_HEADER];

	m->n = 0;
	put_be32(h, SNAPSHOT_PACK_MAGIC);
	put_be32(h + 4, 1);
	put_be64(h + 8, 1);
	put_be32(h + 16, files);
	put_be32(h + 20, crc32c(0, h, 20));
	mem_write(m, 0, h, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		put_be32(f, (uint32_t)len);
		put_be64(f + 4, 4);
		put_be32(f + 12, crc32c(0, "data", 4));
		put_be32(f + 16, crc32c(crc32c(0, f, 16), names[i], len));
		mem_write(m, m->n, f, sizeof(f));
		mem_write(m, m->n, names[i], len);
		mem_write(m, m->n, "data", 4);
	}
}

static void test_names_out_of_order_twice_or_not_allowed_are_refused(void)
{
	static const char *const ordered[] = { "a", "b" }, *const reversed[] = { "b", "a" },
				 *const twice[] = { "a", "a" }, *const up[] = { ".." },
				 *const slash[] = { "x/y" }, *const dot[] = { "." };
	struct mem m = { 0 };
	char out[512];
	uint64_t seq;

	path(out, "names.out");
	hand_pack(&m, ordered, 2, 2);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), 0);
	snapshot_dir_remove(out);
	CHECK(!exists(out));
	hand_pack(&m, reversed, 2, 2);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	hand_pack(&m, twice, 2, 2);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	hand_pack(&m, up, 1, 1);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	hand_pack(&m, slash, 1, 1);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	hand_pack(&m, dot, 1, 1);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	CHECK(!exists(out));
	/* More files than the bound, and fewer than the header says. */
	hand_pack(&m, ordered, 0, SNAPSHOT_FILES_MAX + 1);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	hand_pack(&m, ordered, 2, 3);
	CHECK_EQ(snapshot_unpack(mem_read, &m, m.n, out, &seq), -EINVAL);
	CHECK(!exists(out));
	free(m.b);
}

static void test_a_directory_a_pack_cannot_carry_is_refused(void)
{
	char dir[512], sub[1024];
	struct mem m = { 0 };
	uint64_t total;

	path(dir, "odd");
	CHECK_EQ(mkdir(dir, 0700), 0);
	put_file(dir, "a b", "x", 1);
	CHECK_EQ(snapshot_pack(dir, 1, mem_write, &m, &total), -EINVAL);
	snprintf(sub, sizeof(sub), "%s/a b", dir);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	CHECK_EQ(mkdir(sub, 0700), 0);
	CHECK_EQ(snapshot_pack(dir, 1, mem_write, &m, &total), -EINVAL);
	rmdir(sub);
	CHECK_EQ(snapshot_pack(dir, 1, mem_write, &m, &total), 0);
	CHECK_EQ(total, SNAPSHOT_PACK_HEADER);
	CHECK(!snapshot_name_ok("", 0));
	CHECK(!snapshot_name_ok("a\0b", 3));
	CHECK(snapshot_name_ok("OPTIONS-000007", 14));
	free(m.b);
}

int main(void)
{
	char cmd[600];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_a_pack_of_one_file_has_the_known_bytes();
	test_a_directory_of_many_sizes_round_trips();
	test_a_pack_cut_short_at_any_byte_is_refused_and_leaves_nothing();
	test_any_bit_flipped_is_refused_and_leaves_nothing();
	test_bytes_after_the_last_file_are_refused();
	test_names_out_of_order_twice_or_not_allowed_are_refused();
	test_a_directory_a_pack_cannot_carry_is_refused();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(system(cmd), 0);
	CHECK_DONE();
}
