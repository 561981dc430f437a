/* pando_grants from many threads at once: grants, returns, commits,
 * recalls, fences, freezes and gateway writes racing on a few files.
 * Whatever the interleaving, everything granted is returned once, the
 * counts add up, every write-layout record goes, and nothing is left. */
#include "check.h"
#include "fake_ops.h"

#include <errno.h>
#include <stdatomic.h>

#define FILES 4
#define CLIENTS 4
#define ROUNDS 100000

static atomic_bool stop;
static atomic_long refused;

struct client {
	struct fake *fk;
	unsigned seed;
	uint64_t id;
};

/* Grants and returns; keeps a few segments out at a time. */
static void *client_main(void *arg)
{
	struct client *c = arg;
	struct pando_grant *held[8] = { 0 };

	for (int i = 0; i < ROUNDS; i++) {
		int k = rand_r(&c->seed) % 8;
		uint64_t ino = 1 + (uint64_t)(rand_r(&c->seed) % FILES);

		if (held[k]) {
			if (rand_r(&c->seed) % 2)
				pando_grants_committed(c->fk->g, held[k]->ino);
			pando_grant_end(held[k]);
			held[k] = NULL;
		} else if (fake_grant(c->fk, ino, c->id, rand_r(&c->seed) % 2, &held[k]) != 0) {
			held[k] = NULL;
			refused++;
		}
	}
	for (int k = 0; k < 8; k++)
		if (held[k])
			pando_grant_end(held[k]);
	return NULL;
}

/* Recalls, freezes and writes through the gateway. */
static void *manager_main(void *arg)
{
	struct fake *fk = arg;
	unsigned seed = 1;

	while (!stop) {
		uint64_t ino = 1 + (uint64_t)(rand_r(&seed) % FILES);

		switch (rand_r(&seed) % 4) {
		case 0:
			pando_grants_recall_file(fk->g, ino, 0, rand_r(&seed) % 2, "race");
			break;
		case 1:
			if (pando_grants_write_begin(fk->g, ino) == 0)
				pando_grants_write_end(fk->g, ino);
			break;
		case 2:
			pando_grants_recall_client(fk->g, "10.0.0.2", "race");
			break;
		default:
			if (pando_grants_freeze(fk->g, ino, "race") == 0)
				pando_grants_thaw(fk->g, ino);
		}
	}
	return NULL;
}

/* The deadline watcher, on a clock that runs fast. */
static void *tick_main(void *arg)
{
	struct fake *fk = arg;

	while (!stop) {
		pthread_mutex_lock(&fk->lock);
		fk->now += 5;
		pthread_mutex_unlock(&fk->lock);
		pando_grants_tick(fk->g);
	}
	return NULL;
}

/* Settles whatever size checks the returns asked for. */
static void settle_all(struct fake *fk)
{
	for (uint64_t ino = 1; ino <= FILES; ino++) {
		int n;

		pthread_mutex_lock(&fk->lock);
		n = fk->settles[ino];
		fk->settles[ino] = 0;
		pthread_mutex_unlock(&fk->lock);
		while (n--)
			pando_grants_settled(fk->g, ino, true);
	}
}

int main(void)
{
	struct fake fk;
	struct client c[CLIENTS];
	pthread_t ct[CLIENTS], mt, tt;
	struct pando_layout_stats st;

	fake_grants(&fk);
	pthread_create(&mt, NULL, manager_main, &fk);
	pthread_create(&tt, NULL, tick_main, &fk);
	for (int i = 0; i < CLIENTS; i++) {
		c[i] = (struct client){ .fk = &fk, .seed = (unsigned)i + 7, .id = (uint64_t)i + 1 };
		pthread_create(&ct[i], NULL, client_main, &c[i]);
	}
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(ct[i], NULL);
	stop = true;
	pthread_join(mt, NULL);
	pthread_join(tt, NULL);
	pando_grants_tick(fk.g);
	settle_all(&fk);
	st = fake_stats(&fk);
	CHECK_EQ(st.segments, 0);
	CHECK_EQ(st.granted, st.returned);
	CHECK(st.granted > 0 && refused > 0);
	CHECK(st.recalls > 0);
	CHECK(st.fenced <= st.granted);
	CHECK_EQ(st.files, 0);
	for (uint64_t ino = 1; ino <= FILES; ino++)
		CHECK_EQ(fk.marked[ino], 0);
	CHECK_EQ(pando_grants_holders(fk.g), 0);
	printf("granted %llu, refused %ld, recalls %llu, fenced %llu\n",
	       (unsigned long long)st.granted, (long)refused, (unsigned long long)st.recalls,
	       (unsigned long long)st.fenced);
	fake_free(&fk);
	CHECK_DONE();
}
