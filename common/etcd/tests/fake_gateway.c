/* The fake gateway of fake_gateway.h: one thread accepts and serves one
 * connection at a time, reading each request whole (head, then its
 * Content-Length of body) before it answers. */
#include "fake_gateway.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fake_reply(char *out, size_t cap, const char *status, const char *body)
{
	snprintf(out, cap,
		 "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
		 "Content-Length: %zu\r\n\r\n%s",
		 status, strlen(body), body);
}

/* One whole request (its head, then Content-Length bytes), kept in buf
 * as far as it fits; its length, or 0 when the peer closed first. */
static size_t read_request(int c, char *buf, size_t cap)
{
	size_t len = 0, got = 0, want = 0;
	const char *end = NULL, *cl;
	char sink[65536];

	while (!end || got < want) {
		ssize_t n = len < cap - 1 ? recv(c, buf + len, cap - 1 - len, 0)
					  : recv(c, sink, sizeof(sink), 0);
		if (n <= 0)
			return 0;
		got += (size_t)n;
		len = got < cap - 1 ? got : cap - 1;
		buf[len] = '\0';
		if (!end && (end = strstr(buf, "\r\n\r\n"))) {
			cl = strcasestr(buf, "\r\nContent-Length:");
			want = (size_t)(end + 4 - buf) +
			       (cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0);
		}
	}
	return len;
}

static void answer(struct fake *f, int c, const char *ans)
{
	size_t len = strlen(ans);

	if (f->silent)
		return;
	if (!f->dribble) {
		send(c, ans, len, MSG_NOSIGNAL);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		send(c, ans + i, 1, MSG_NOSIGNAL);
		sleep_ms(1);
	}
}

static void serve(struct fake *f, int c)
{
	char buf[sizeof(f->request)], made[4096];
	const char *ans;
	size_t len;
	int more = 1;

	while (more && (len = read_request(c, buf, sizeof(buf)))) {
		pthread_mutex_lock(&f->lock);
		memcpy(f->request, buf, len + 1);
		f->requests++;
		ans = f->answer;
		if (f->respond) {
			f->respond(f, buf, made, sizeof(made));
			ans = made;
		}
		pthread_mutex_unlock(&f->lock);
		answer(f, c, ans);
		more = f->keep;
	}
	if (f->hold_ms)
		sleep_ms(f->hold_ms);
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;
	int c;

	while ((c = accept(f->fd, NULL, NULL)) >= 0) {
		pthread_mutex_lock(&f->lock);
		f->conns++;
		pthread_mutex_unlock(&f->lock);
		serve(f, c);
		close(c);
	}
	return NULL;
}

void fake_start(struct fake *f)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);

	pthread_mutex_init(&f->lock, NULL);
	f->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f->fd, 8) ||
	    getsockname(f->fd, (struct sockaddr *)&sa, &len)) {
		perror("fake gateway");
		abort();
	}
	f->port = ntohs(sa.sin_port);
	pthread_create(&f->thread, NULL, fake_thread, f);
}

void fake_stop(struct fake *f)
{
	shutdown(f->fd, SHUT_RDWR); /* ends the accept */
	pthread_join(f->thread, NULL);
	close(f->fd);
	pthread_mutex_destroy(&f->lock);
}

void fake_seen(struct fake *f, char *request, size_t cap, int *conns, int *requests)
{
	pthread_mutex_lock(&f->lock);
	snprintf(request, cap, "%s", f->request);
	*conns = f->conns;
	*requests = f->requests;
	pthread_mutex_unlock(&f->lock);
}

int closed_port(void)
{
	struct fake f = { .answer = "" };

	fake_start(&f);
	fake_stop(&f);
	return f.port;
}
