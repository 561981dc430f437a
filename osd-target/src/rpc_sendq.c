#include "rpc_sendq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "bufpool.h"
#include "byteorder.h"
#include "iov.h"

#define LAST_FRAGMENT 0x80000000u

static const uint8_t zeros[4];

void rpc_out_init(struct rpc_out *out, const uint8_t *hdr, size_t hdr_len)
{
	out->next = NULL;
	memcpy(out->head + 4, hdr, hdr_len);
	out->head_len = 4 + hdr_len;
	out->res = NULL;
	out->res_len = 0;
	out->payload = NULL;
	out->payload_len = 0;
	out->pad = 0;
	out->pool = NULL;
	out->payload_pooled = false;
	out->payload_free = NULL;
	out->sent = 0;
}

size_t rpc_out_size(const struct rpc_out *out)
{
	return out->head_len + out->res_len + out->payload_len + out->pad;
}

void rpc_out_release(struct rpc_out *out)
{
	free(out->res);
	out->res = NULL;
	if (out->payload_pooled)
		bufpool_put(out->pool, out->payload);
	else if (out->payload && out->payload_free)
		out->payload_free(out->payload);
	out->payload = NULL;
}

/* The unsent part of a reply as an iovec (at most four pieces). */
static int out_iov(struct rpc_out *out, struct iovec iov[4])
{
	int n = 0;

	put_be32(out->head, LAST_FRAGMENT | (uint32_t)(rpc_out_size(out) - 4));
	iov[n++] = (struct iovec){ out->head, out->head_len };
	if (out->res_len)
		iov[n++] = (struct iovec){ out->res, out->res_len };
	if (out->payload_len)
		iov[n++] = (struct iovec){ out->payload, out->payload_len };
	if (out->pad)
		iov[n++] = (struct iovec){ (void *)zeros, out->pad };
	return n;
}

/* Writes what the socket takes of one reply: its bytes left, or -errno. */
static ssize_t write_out(int fd, struct rpc_out *out)
{
	struct iovec iov_buf[4], *iov = iov_buf;
	int n = out_iov(out, iov_buf);

	iov_advance(&iov, &n, out->sent);
	while (n > 0) {
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w < 0)
			return -errno;
		out->sent += (size_t)w;
		iov_advance(&iov, &n, (size_t)w);
	}
	return (ssize_t)(rpc_out_size(out) - out->sent);
}

void rpc_sendq_init(struct rpc_sendq *q, int fd)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	q->fd = fd;
}

void rpc_sendq_destroy(struct rpc_sendq *q)
{
	rpc_sendq_drop(q);
	pthread_mutex_destroy(&q->lock);
}

static void enqueue(struct rpc_sendq *q, struct rpc_out *out)
{
	out->next = NULL;
	if (q->tail)
		q->tail->next = out;
	else
		q->head = out;
	q->tail = out;
	q->bytes += rpc_out_size(out) - out->sent;
}

/* Called with q->lock held: a reply that has to wait moves to the heap. */
static int queue_copy(struct rpc_sendq *q, struct rpc_out *out, uint64_t now_ms)
{
	struct rpc_out *copy = malloc(sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	*copy = *out;
	if (!q->head)
		q->progress_ms = now_ms;
	enqueue(q, copy);
	return 1;
}

int rpc_sendq_send(struct rpc_sendq *q, struct rpc_out *out, uint64_t now_ms)
{
	ssize_t left = 0;
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	if (q->broken)
		goto release;
	if (!q->head)
		left = write_out(q->fd, out);
	if (left < 0) {
		q->broken = true;
		rc = (int)left;
	} else if (left > 0 || q->head) {
		rc = queue_copy(q, out, now_ms);
		if (rc > 0) {
			pthread_mutex_unlock(&q->lock);
			return rc;
		}
		/* No memory for the rest of a reply: the stream cannot go on. */
		q->broken = true;
	}
release:
	pthread_mutex_unlock(&q->lock);
	rpc_out_release(out);
	return rc;
}

int rpc_sendq_flush(struct rpc_sendq *q, uint64_t now_ms)
{
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	while (q->head && !q->broken) {
		struct rpc_out *out = q->head;
		size_t before = out->sent;
		ssize_t left = write_out(q->fd, out);

		if (left < 0) {
			q->broken = true;
			rc = (int)left;
			break;
		}
		q->bytes -= out->sent - before;
		if (out->sent != before)
			q->progress_ms = now_ms;
		if (left > 0)
			break;
		q->head = out->next;
		if (!q->head)
			q->tail = NULL;
		rpc_out_release(out);
		free(out);
	}
	if (q->broken && !rc)
		rc = -EPIPE;
	pthread_mutex_unlock(&q->lock);
	return rc;
}

size_t rpc_sendq_pending(struct rpc_sendq *q, uint64_t *progress_ms)
{
	size_t bytes;

	pthread_mutex_lock(&q->lock);
	bytes = q->bytes;
	*progress_ms = q->progress_ms;
	pthread_mutex_unlock(&q->lock);
	return bytes;
}

void rpc_sendq_drop(struct rpc_sendq *q)
{
	struct rpc_out *out;

	pthread_mutex_lock(&q->lock);
	q->broken = true;
	out = q->head;
	q->head = q->tail = NULL;
	q->bytes = 0;
	pthread_mutex_unlock(&q->lock);
	while (out) {
		struct rpc_out *next = out->next;

		rpc_out_release(out);
		free(out);
		out = next;
	}
}
