/* Data through the MDS: NFSv4.1 WRITE and READ, for files without a layout. */
#include <errno.h>
#include <inttypes.h>

#include "pnfsload.h"

int mds_write(struct client *cl, unsigned slot, const struct open_file *f, const char *name,
	      uint64_t off, const uint8_t *buf, uint32_t count, uint32_t stable, uint8_t *rbuf)
{
	uint32_t got, committed;
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, CTL_BUF);
	c4_putfh(&c.w, &f->fh);
	c4_write_head(&c.w, &f->open_sid, off, stable, count);
	c.payload = buf;
	c.payload_len = count;
	if (cl_call(cl, &c, "WRITE") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_WRITE, 0);
	cl_check(cl, d4_write(&c.r, &got, &committed), OP_WRITE);
	if (got != count || committed < stable)
		cl_die(cl, "WRITE %s offset %" PRIu64 ": %u of %u bytes, committed %u", name, off,
		       got, count, committed);
	return 0;
}

int mds_read(struct client *cl, unsigned slot, const struct open_file *f, uint64_t off,
	     uint32_t count, uint8_t *rbuf, const uint8_t **data, uint32_t *len, bool *eof)
{
	struct compound c;

	cl_begin(cl, &c, slot, 2, rbuf, count + REPLY_SLACK);
	c4_putfh(&c.w, &f->fh);
	c4_read(&c.w, &f->open_sid, off, count);
	if (cl_call(cl, &c, "READ") == CL_LOST)
		return -ESTALE;
	cl_op(cl, &c, OP_PUTFH, 0);
	cl_op(cl, &c, OP_READ, 0);
	cl_check(cl, d4_read(&c.r, eof, data, len), OP_READ);
	return 0;
}
