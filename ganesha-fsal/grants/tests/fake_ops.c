/* Recording callbacks and a fake clock (fake_ops.h). */
#include "fake_ops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fake_now(void *arg)
{
	struct fake *fk = arg;
	uint64_t now;

	pthread_mutex_lock(&fk->lock);
	now = fk->now;
	pthread_mutex_unlock(&fk->lock);
	return now;
}

static void fake_recall(void *arg, const struct pando_recall *r)
{
	struct fake *fk = arg;

	pthread_mutex_lock(&fk->lock);
	if (fk->nrecalls < FAKE_MAX)
		fk->recalls[fk->nrecalls++] = *r;
	pthread_mutex_unlock(&fk->lock);
}

static int fake_fence(void *arg, uint64_t ino, uint32_t cur, uint32_t *next, uint32_t *failed)
{
	struct fake *fk = arg;
	int rc;

	pthread_mutex_lock(&fk->lock);
	rc = fk->fence_rc;
	if (!rc && fk->nfences < FAKE_MAX) {
		fk->fenced_ino[fk->nfences] = ino;
		fk->fenced_cur[fk->nfences++] = cur;
	}
	*next = ++fk->next_version;
	*failed = 0;
	pthread_mutex_unlock(&fk->lock);
	return rc;
}

static int fake_revoke_writers(void *arg, uint64_t ino, uint32_t cur, uint32_t *next)
{
	struct fake *fk = arg;
	void (*hook)(struct fake * fk, uint64_t ino);
	int rc;

	pthread_mutex_lock(&fk->lock);
	rc = fk->revoke_rc;
	if (fk->nrevokes < FAKE_MAX) {
		fk->revoked_ino[fk->nrevokes] = ino;
		fk->revoked_cur[fk->nrevokes++] = cur;
	}
	*next = ++fk->next_version;
	hook = fk->during_revoke;
	fk->during_revoke = NULL;
	pthread_mutex_unlock(&fk->lock);
	if (hook)
		hook(fk, ino);
	return rc;
}

static int fake_mark(void *arg, uint64_t ino)
{
	struct fake *fk = arg;
	int rc;

	void (*hook)(struct fake * fk, uint64_t ino);

	pthread_mutex_lock(&fk->lock);
	rc = fk->mark_rc;
	if (!rc) {
		/* A key put, as the store's: idempotent. */
		fk->marked[ino % FAKE_MAX] = 1;
		fk->nmarks++;
	}
	hook = fk->during_mark;
	fk->during_mark = NULL;
	pthread_mutex_unlock(&fk->lock);
	if (hook)
		hook(fk, ino);
	return rc;
}

static int fake_unmark(void *arg, uint64_t ino)
{
	struct fake *fk = arg;

	pthread_mutex_lock(&fk->lock);
	fk->marked[ino % FAKE_MAX] = 0;
	pthread_mutex_unlock(&fk->lock);
	return 0;
}

static void fake_settle(void *arg, uint64_t ino)
{
	struct fake *fk = arg;

	pthread_mutex_lock(&fk->lock);
	fk->settles[ino % FAKE_MAX]++;
	pthread_mutex_unlock(&fk->lock);
}

static bool fake_uses_osd(void *arg, uint64_t ino, uint32_t osd_id)
{
	struct fake *fk = arg;

	return osd_id == fk->down_osd && ino < 100;
}

static void fake_log(void *arg, enum pando_grants_level level, const char *msg)
{
	struct fake *fk = arg;

	fk->logs++;
	if (getenv("GRANTS_TEST_LOG"))
		fprintf(stderr, "log %d: %s\n", level, msg);
}

struct pando_grants *fake_grants(struct fake *fk)
{
	struct pando_grants_ops ops = {
		.arg = fk,
		.now = fake_now,
		.recall = fake_recall,
		.fence = fake_fence,
		.revoke_writers = fake_revoke_writers,
		.mark_writer = fake_mark,
		.unmark_writer = fake_unmark,
		.settle = fake_settle,
		.uses_osd = fake_uses_osd,
		.log = fake_log,
	};

	memset(fk, 0, sizeof(*fk));
	pthread_mutex_init(&fk->lock, NULL);
	fk->now = 1000;
	fk->next_version = 1;
	if (pando_grants_new(&ops, 10, &fk->g) != 0) {
		fprintf(stderr, "pando_grants_new failed\n");
		exit(2);
	}
	return fk->g;
}

void fake_free(struct fake *fk)
{
	pando_grants_free(fk->g);
	pthread_mutex_destroy(&fk->lock);
}

int fake_grant(struct fake *fk, uint64_t ino, uint64_t clientid, bool write,
	       struct pando_grant **out)
{
	char client[32];
	struct pando_grant_ask ask = { .ino = ino,
				       .gen = 7,
				       .write = write,
				       .cap_version = 1,
				       .clientid = clientid,
				       .client = client };

	snprintf(client, sizeof(client), "10.0.0.%" PRIu64, clientid);
	return pando_grants_grant(fk->g, &ask, out);
}

struct pando_layout_stats fake_stats(struct fake *fk)
{
	struct pando_layout_stats st;

	pando_grants_stats(fk->g, &st);
	return st;
}
