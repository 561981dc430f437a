/* Background scrub of the engine's files (scrub.c). */
#ifndef PANDO_SCRUB_H
#define PANDO_SCRUB_H

#include <stdbool.h>

struct pando_mds;
struct pando_scrub;

/* Resumes a pass a stop left unfinished; passes every Scrub_Interval
 * hours (0: only when asked), at most Scrub_Bandwidth_Mb MiB/s read. */
int pando_scrub_start(struct pando_mds *mds, struct pando_scrub **out);
void pando_scrub_stop(struct pando_scrub *s);
/* Starts a pass now (start) or stops the one running, within a second. */
void pando_scrub_request(struct pando_scrub *s, bool start);
/* The progress JSON (mgr/README.md, "Rebuild and scrub"), malloc'd. */
char *pando_scrub_progress(struct pando_scrub *s);

#endif
