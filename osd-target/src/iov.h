/* Scatter-gather helpers shared by the server transport and the client. */
#ifndef PANDO_IOV_H
#define PANDO_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Steps an iovec array past `done` bytes after a short send. */
static inline void iov_advance(struct iovec **iov, int *n, size_t done)
{
	while (*n > 0 && done >= (*iov)->iov_len) {
		done -= (*iov)->iov_len;
		(*iov)++;
		(*n)--;
	}
	if (*n > 0) {
		(*iov)->iov_base = (uint8_t *)(*iov)->iov_base + done;
		(*iov)->iov_len -= done;
	}
}

#endif
