/* Whether a LAYOUTGET on a file may move it from inline data (kept in the
 * namespace store) to objects, decided from what the client asks and what
 * the file holds.  Pure: no I/O, no Ganesha types.
 *
 * Linux asks for a write layout in every OPEN for writing (offset 0, all
 * ones, minlength one page), which says nothing of the file's size: it is
 * refused, and the client goes on.  At writeback it asks again, with the
 * first page or large folio it is about to write, but only for a file at
 * least as big as the FATTR4_MDSTHRESHOLD the manager gives (Inline_Max +
 * 1, Ganesha patch 0120): smaller files it writes through the manager
 * without asking.  So a ranged write ask moves the file to objects; the
 * whole-file ask only when its minlength already reaches past Inline_Max
 * (ganesha-fsal/README.md, "Small files over pNFS").
 *
 * All of that holds for a client that fetched FATTR4_MDSTHRESHOLD.  One
 * that never did cannot know a file is kept inline, and asks for layouts
 * it means to use: any ask moves the file to objects and is granted. */
#ifndef PANDO_INLINE_POLICY_H
#define PANDO_INLINE_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* One LAYOUTGET's ask: loga_offset, loga_length, loga_minlength, iomode. */
struct pando_layout_ask {
	uint64_t offset;
	uint64_t length; /* UINT64_MAX: to the end of the file */
	uint64_t minlength;
	bool write;
	bool knows_threshold; /* the client has fetched FATTR4_MDSTHRESHOLD */
};

/* What the file holds now. */
struct pando_inline_file {
	bool objects;        /* its data is on objects (a storage map) */
	uint64_t inline_max; /* the export's Inline_Max: the most it keeps inline */
};

enum pando_inline_verdict {
	PANDO_INLINE_GRANT,       /* on objects already: hand out the layout */
	PANDO_INLINE_MOVE,        /* move it to objects, then hand out the layout */
	PANDO_INLINE_REFUSE,      /* no layout for this I/O: through the manager */
	PANDO_INLINE_UNAVAILABLE, /* no layout for this file and iomode for a while */
};

/* The byte the ask reaches (exclusive), saturating: offset + length, or
 * offset + minlength for a whole-file ask (all the client promises). */
uint64_t pando_ask_reach(const struct pando_layout_ask *ask);

enum pando_inline_verdict pando_inline_decide(const struct pando_layout_ask *ask,
					      const struct pando_inline_file *file);

#endif
