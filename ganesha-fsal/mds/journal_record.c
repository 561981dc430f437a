/* The journal's record format (journal_record.h). */
#include "journal_record.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "byteorder.h"
#include "crc32c.h"

static uint32_t pad8(uint32_t len)
{
	return (8 - (len & 7)) & 7;
}

size_t journal_record_size(uint32_t len)
{
	return JOURNAL_RECORD_HEADER + (size_t)len + pad8(len);
}

static uint32_t record_crc(const uint8_t *hdr, const void *payload, uint32_t len)
{
	return crc32c(crc32c(0, hdr, 24), payload, len);
}

int journal_record_encode(uint64_t seq, uint64_t term, const void *payload, uint32_t len,
			  uint8_t *out, size_t cap, size_t *used)
{
	size_t size = journal_record_size(len);

	if (seq == 0 || len > JOURNAL_RECORD_MAX)
		return -EINVAL;
	if (cap < size)
		return -ENOSPC;
	put_be32(out, JOURNAL_RECORD_MAGIC);
	put_be32(out + 4, len);
	put_be64(out + 8, seq);
	put_be64(out + 16, term);
	memmove(out + JOURNAL_RECORD_HEADER, payload, len);
	put_be32(out + 24, record_crc(out, out + JOURNAL_RECORD_HEADER, len));
	put_be32(out + 28, 0);
	memset(out + JOURNAL_RECORD_HEADER + len, 0, pad8(len));
	*used = size;
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The header's own checks, before the payload is there to read. */
static int check_header(const uint8_t *buf, size_t avail)
{
	size_t n = avail < JOURNAL_RECORD_HEADER ? avail : JOURNAL_RECORD_HEADER;

	if (all_zero(buf, n))
		return n == JOURNAL_RECORD_HEADER ? -ENODATA : -EAGAIN;
	if (avail < 4)
		return memcmp(buf, "PJRN", avail) ? -EINVAL : -EAGAIN;
	if (get_be32(buf) != JOURNAL_RECORD_MAGIC)
		return -EINVAL;
	if (avail < 8)
		return -EAGAIN;
	if (get_be32(buf + 4) > JOURNAL_RECORD_MAX)
		return -EINVAL;
	return avail < JOURNAL_RECORD_HEADER ? -EAGAIN : 0;
}

int journal_record_decode(const uint8_t *buf, size_t avail, struct journal_record *out,
			  size_t *used)
{
	int rc = check_header(buf, avail);
	uint32_t len;
	size_t size;

	if (rc)
		return rc;
	len = get_be32(buf + 4);
	size = journal_record_size(len);
	if (get_be64(buf + 8) == 0 || get_be32(buf + 28) != 0)
		return -EINVAL;
	if (avail < size)
		return -EAGAIN;
	if (get_be32(buf + 24) != record_crc(buf, buf + JOURNAL_RECORD_HEADER, len) ||
	    !all_zero(buf + JOURNAL_RECORD_HEADER + len, pad8(len)))
		return -EINVAL;
	*out = (struct journal_record){ .seq = get_be64(buf + 8),
					.term = get_be64(buf + 16),
					.payload = buf + JOURNAL_RECORD_HEADER,
					.len = len };
	*used = size;
	return 0;
}
