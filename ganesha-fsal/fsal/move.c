/* Moving a file to objects and cutting them, per handle: the engine's
 * pando_objects_move under the handle's move_lock, and a truncate inside
 * the RS write-hole marks (write_hole.c). */
#include "pando_fsal.h"

#include "objio.h"

int pando_move_to_objects(struct pando_handle *h)
{
	int rc;

	pthread_mutex_lock(&h->move_lock);
	rc = pando_objects_move(&h->exp->mds, h->ino);
	pthread_mutex_unlock(&h->move_lock);
	return rc;
}

int pando_truncate_objects(struct pando_handle *h, uint64_t size)
{
	struct pando_storage_map *map;
	struct objio io;
	int rc = pando_objects_open(&h->exp->mds, h->ino, &io, &map);
	bool rs = !rc && map->shape.raid == PANDO_RS;

	if (rs)
		rc = pando_write_hole_begin(h, true);
	if (!rc)
		rc = objio_truncate(&io, map, size);
	if (rs)
		pando_write_hole_end(h, rc);
	if (map)
		pando_map_free(map);
	return rc;
}
