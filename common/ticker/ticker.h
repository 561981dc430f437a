/* A background thread that calls fn(arg) at once, then again after each
 * period for as long as fn returns true, and whenever kicked; stopped
 * and joined by pando_ticker_stop.  The layout watcher (every second:
 * deadlines, OSD probes) and the FSAL's reaper (when kicked, and every
 * few seconds while removals must be retried) run on one. */
#ifndef PANDO_TICKER_H
#define PANDO_TICKER_H

#include <stdbool.h>
#include <stdint.h>

struct pando_ticker;

/* fn returns true to run again after period_ms, false to wait for a kick. */
typedef bool (*pando_tick_fn)(void *arg);

int pando_ticker_start(pando_tick_fn fn, void *arg, uint32_t period_ms, struct pando_ticker **out);
void pando_ticker_kick(struct pando_ticker *t);
void pando_ticker_stop(struct pando_ticker *t);

#endif
