/* The OSD's RPC transport (osd-target/src/rpc_server.c) as a client sees
 * it: record marking (fragments, the last-fragment bit, the record size
 * limit, the fragment count limit), the pooled and plain record buffers,
 * call decoding and reply writing.  One server runs on loopback for the
 * whole process with a program that echoes each call's arguments; every
 * input is sent on a fresh connection, which is then half-closed.  The
 * server must answer with whole records only and close the connection
 * within the timeout, whatever the bytes were. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "byteorder.h"
#include "fuzz.h"
#include "log.h"
#include "rpc_server.h"

#define ECHO_PROG 0x20000099u
#define ECHO_MAX 512           /* argument bytes echoed back */
#define MAX_RECORD (64u << 10) /* small, so inputs can exceed it */
#define CLOSE_TIMEOUT_MS 5000

static uint16_t port;

static enum rpc_outcome echo(void *ctx, const struct rpc_call *call, struct rpc_reply *reply)
{
	xw_opaque(&reply->res, call->args, call->args_len < ECHO_MAX ? call->args_len : ECHO_MAX);
	return RPC_OUT_SUCCESS;
}

static void start_server(void)
{
	static const struct rpc_program prog = { "fuzz", ECHO_PROG, 1, echo, NULL, NULL };
	struct rpc_server_config cfg = { .listen = "127.0.0.1:0",
					 .threads = 2,
					 .max_conns = 4,
					 .max_record = MAX_RECORD,
					 .max_inflight = 4 };
	struct rpc_server *srv;
	const char *why;

	log_init(LOG_ERROR, stderr);
	if (rpc_server_start(&cfg, &prog, &srv, &why)) {
		fprintf(stderr, "fuzz: rpc_server_start: %s\n", why);
		exit(1);
	}
	port = rpc_server_port(srv);
}

static int connect_loopback(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc = -1, err = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(err);

	if (fd >= 0)
		rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc && errno == EINTR) {
		/* Interrupted, the connect goes on: wait for its outcome. */
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		rc = err ? -1 : 0;
		errno = err;
	}
	if (rc) {
		perror("fuzz: connect to the server");
		exit(1);
	}
	return fd;
}

/* libFuzzer's -timeout alarm interrupts system calls: they are retried. */
static ssize_t read_more(int fd, uint8_t *buf, size_t cap)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ready;

	do
		ready = poll(&pfd, 1, CLOSE_TIMEOUT_MS);
	while (ready < 0 && errno == EINTR);
	fuzz_check(ready == 1, "server neither answers nor closes");
	do
		n = read(fd, buf, cap);
	while (n < 0 && errno == EINTR);
	fuzz_check(n >= 0 || errno == ECONNRESET, "read failed");
	return n;
}

/* Reads until the server closes; the bytes must be whole reply records. */
static void read_replies(int fd)
{
	uint8_t buf[4096];
	size_t have = 0;
	ssize_t n;

	while ((n = read_more(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		/* Consume every whole record at the start of buf. */
		while (have >= 4) {
			uint32_t mark = get_be32(buf);
			size_t len = mark & 0x7fffffffu;

			fuzz_check(mark & 0x80000000u, "reply in more than one fragment");
			fuzz_check(len >= 12 && len + 4 <= sizeof(buf), "reply of an odd size");
			if (have < len + 4)
				break;
			memmove(buf, buf + len + 4, have - len - 4);
			have -= len + 4;
		}
	}
	fuzz_check(have == 0, "connection closed inside a reply");
}

static void send_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t n = send(fd, data, size, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		/* A server that closed on a bad record mark refuses the rest. */
		if (n < 0) {
			fuzz_check(errno == EPIPE || errno == ECONNRESET, "send failed");
			return;
		}
		data += n;
		size -= (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd;

	if (!port)
		start_server();
	fd = connect_loopback();
	send_all(fd, data, size);
	shutdown(fd, SHUT_WR);
	read_replies(fd);
	close(fd);
	return 0;
}
