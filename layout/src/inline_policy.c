/* Small files over pNFS: when a LAYOUTGET moves an inline file to objects
 * (include/pando/inline_policy.h). */
#include "pando/inline_policy.h"

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t pando_ask_reach(const struct pando_layout_ask *ask)
{
	if (ask->length == UINT64_MAX)
		return add_sat(ask->offset, ask->minlength);
	return add_sat(ask->offset, ask->length);
}

enum pando_inline_verdict pando_inline_decide(const struct pando_layout_ask *ask,
					      const struct pando_inline_file *file)
{
	if (file->objects)
		return PANDO_INLINE_GRANT;
	/* A client that never fetched the threshold would be refused every
	 * layout of a small file, read or write (a conformance client asks
	 * for 8 KiB of a new file and has no other way to its data). */
	if (!ask->knows_threshold)
		return PANDO_INLINE_MOVE;
	/* Reads of inline data are served by the manager; moving a file
	 * because someone reads it would only cost.  Readahead asks once per
	 * window, so a file with data is off pNFS for reads a while (Linux:
	 * 120 s); a read past the client's end of file (minlength 0) only
	 * for that read, since the file may be about to get objects. */
	if (!ask->write)
		return ask->minlength ? PANDO_INLINE_UNAVAILABLE : PANDO_INLINE_REFUSE;
	/* An ask for a range is writeback's: the client sends it only for a
	 * file its FATTR4_MDSTHRESHOLD (Inline_Max + 1) says is too big for
	 * the manager, however small the range (a page, from 6.1).  The
	 * whole-file ask in OPEN says nothing of the size: it moves the file
	 * only if its minlength already reaches past Inline_Max. */
	if (ask->length != UINT64_MAX || pando_ask_reach(ask) > file->inline_max)
		return PANDO_INLINE_MOVE;
	return PANDO_INLINE_REFUSE;
}
