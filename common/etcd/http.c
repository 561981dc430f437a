/* One HTTP exchange over a fresh TCP connection, all of it within a
 * deadline: a peer that is away, stopped (SIGSTOP) or silent costs the
 * caller at most timeout_ms, never a hang. */
#include "etcd_http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the deadline; -EHOSTUNREACH past it. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int rc;

	do {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -EHOSTUNREACH;
		rc = poll(&pfd, 1, (int)left);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc == 0 ? -EHOSTUNREACH : 0;
}

static int connect_addr(const struct addrinfo *ai, int64_t deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int err = 0;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -EHOSTUNREACH;
	}
	if (wait_fd(fd, POLLOUT, deadline) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
		close(fd);
		return -EHOSTUNREACH;
	}
	return fd;
}

/* A connected non-blocking socket to host:port, or -EHOSTUNREACH.  A host
 * name is resolved outside the deadline (getaddrinfo cannot be bounded):
 * give IP addresses, or names in /etc/hosts. */
static int connect_host(const char *host, int port, int64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char portstr[16];
	int fd = -EHOSTUNREACH;

	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(host, portstr, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = connect_addr(ai, deadline);
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	return fd;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = wait_fd(fd, POLLOUT, deadline);
			if (rc)
				return rc;
			continue;
		}
		if (w < 0)
			return -EHOSTUNREACH;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int http_format_post(const char *host, int port, const char *path, const char *body,
		     size_t len, char **out, size_t *outlen)
{
	const char *v6 = strchr(host, ':') ? "[" : "";	/* an IPv6 literal */
	char *req = NULL;
	int n = asprintf(&req,
			 "POST %s HTTP/1.1\r\n"
			 "Host: %s%s%s:%d\r\n"
			 "Content-Type: application/json\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: close\r\n"
			 "\r\n", path, v6, host, *v6 ? "]" : "", port, len);
	char *full;

	if (n < 0)
		return -ENOMEM;
	full = realloc(req, (size_t)n + len + 1);
	if (!full) {
		free(req);
		return -ENOMEM;
	}
	memcpy(full + n, body, len);
	full[(size_t)n + len] = '\0';
	*out = full;
	*outlen = (size_t)n + len;
	return 0;
}

/* Reads until the answer is complete, the peer closes, or the deadline. */
static int read_response(int fd, int64_t deadline, struct http_response *r)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int rc = -EAGAIN;

	if (!buf)
		return -ENOMEM;
	while (rc == -EAGAIN) {
		if (len == cap) {
			char *nb;
			if (cap >= HTTP_MAX_BODY + HTTP_MAX_HEADER) {
				rc = -EPROTO;	/* more than any answer of etcd's */
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t got = recv(fd, buf + len, cap - len, 0);
		if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
			rc = wait_fd(fd, POLLIN, deadline);
			rc = rc ? rc : -EAGAIN;
			continue;
		}
		if (got < 0)	/* reset: an answer cut short is not etcd's */
			got = 0;
		len += (size_t)got;
		rc = http_parse_response(buf, len, got == 0, HTTP_MAX_BODY, r);
		if (got == 0 && len == 0)
			rc = -EHOSTUNREACH;	/* closed without a word */
	}
	free(buf);
	return rc;
}

int http_post(const char *host, int port, const char *path, const char *body,
	      size_t len, int timeout_ms, struct http_response *r)
{
	int64_t deadline = now_ms() + timeout_ms;
	char *req;
	size_t reqlen;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	rc = http_format_post(host, port, path, body, len, &req, &reqlen);
	if (rc)
		return rc;
	fd = connect_host(host, port, deadline);
	if (fd < 0) {
		free(req);
		return fd;
	}
	rc = send_all(fd, req, reqlen, deadline);
	free(req);
	if (rc == 0)
		rc = read_response(fd, deadline, r);
	close(fd);
	return rc;
}
