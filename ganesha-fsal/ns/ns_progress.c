/* The progress hook of the whole-store walks (ns_check, ns_repair,
 * ns_map_list): told every NS_PROGRESS_EVERY keys of one type. */
#include "ns_internal.h"

static const char *kind_of(uint8_t type)
{
	switch (type) {
	case K_INODE:
		return "inodes";
	case K_DIRENT:
		return "entries";
	case K_INDEX:
		return "index entries";
	case K_DATA:
		return "inline data";
	case K_SYMLINK:
		return "symlink targets";
	case K_MAP:
		return "maps";
	case K_INTENT:
		return "intents";
	default:
		return "keys";
	}
}

void walk_progress(struct ns_store *s, uint8_t type, uint64_t n)
{
	if (s->progress && n % NS_PROGRESS_EVERY == 0)
		s->progress(s->progress_arg, kind_of(type), n);
}

void ns_set_progress(struct ns_store *s, ns_progress_fn fn, void *arg)
{
	s->progress = fn;
	s->progress_arg = arg;
}
