/* A listening TCP socket on 127.0.0.1 at a port the kernel picks, for
 * the unit tests that play a target to the control client. */
#ifndef PANDO_TEST_LOOPBACK_H
#define PANDO_TEST_LOOPBACK_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

/* The socket (its port in *port), or -1. */
static inline int listen_loopback(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

#endif
