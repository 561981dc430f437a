#include "bufpool.h"

#include <errno.h>
#include <stdlib.h>

int bufpool_init(struct bufpool *p, size_t size, unsigned max_free)
{
	pthread_mutex_init(&p->lock, NULL);
	p->size = size;
	p->max_free = max_free;
	p->nfree = 0;
	p->free = calloc(max_free ? max_free : 1, sizeof(void *));
	return p->free ? 0 : -ENOMEM;
}

void bufpool_destroy(struct bufpool *p)
{
	while (p->nfree)
		free(p->free[--p->nfree]);
	free(p->free);
	pthread_mutex_destroy(&p->lock);
}

void *bufpool_get(struct bufpool *p)
{
	void *buf = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->nfree)
		buf = p->free[--p->nfree];
	pthread_mutex_unlock(&p->lock);
	return buf ? buf : malloc(p->size);
}

void bufpool_put(struct bufpool *p, void *buf)
{
	if (!buf)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nfree < p->max_free) {
		p->free[p->nfree++] = buf;
		buf = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	free(buf);
}
