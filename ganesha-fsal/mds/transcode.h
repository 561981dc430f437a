/* Transcoding mirrored files to RS(k,m) once cold (transcode.c). */
#ifndef PANDO_TRANSCODE_H
#define PANDO_TRANSCODE_H

#include <stdint.h>

struct pando_mds;
struct pando_transcode;

/* A pass over the files every Transcode_Interval seconds (0: none). */
int pando_transcode_start(struct pando_mds *mds, struct pando_transcode **out);
void pando_transcode_stop(struct pando_transcode *t);
/* The counters as JSON (malloc'd): passes, files and bytes transcoded,
 * failures, the file being transcoded and how far. */
char *pando_transcode_status(struct pando_transcode *t);

/* One file now, whatever its age: 0 done (or nothing to do: not
 * mirrored, no cold rule, too small), -EAGAIN busy (try later). */
int pando_transcode_file(struct pando_mds *mds, uint64_t ino, void *buf, size_t cap,
			 uint64_t *copied);

#endif
