/* A client's etcd credentials: the user, the password read once from a
 * file only the caller may read, and the token etcd gave for them.  The
 * password stays in memory for the new tokens etcd asks for (its simple
 * tokens expire, and a member forgets them when it restarts), and is
 * zeroed before it is freed. */
#include "etcd_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* No password of etcd's comes near this.  The file is read up to a byte
 * past the longest line, newline included, to tell a longer one. */
#define PASSWORD_MAX 4096
#define READ_MAX (PASSWORD_MAX + 2)

/* A file of the caller's alone: regular (not a FIFO or a device a read
 * could hang on), owned by us, neither readable nor writable by group or
 * others. */
static int check_file(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* Up to READ_MAX bytes of fd into buf; how many, or -errno. */
static ssize_t read_some(int fd, char *buf)
{
	ssize_t n = 0, got = 1;

	while (got > 0 && n < READ_MAX) {
		got = read(fd, buf + n, (size_t)(READ_MAX - n));
		n += got > 0 ? got : 0;
	}
	return got < 0 ? -errno : n;
}

/* One line, its newline left out; no NUL in it. */
static int one_line(char *buf, ssize_t n)
{
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n == 0 || n > PASSWORD_MAX || memchr(buf, '\n', (size_t)n) ||
	    memchr(buf, '\0', (size_t)n))
		return -EBADMSG;
	buf[n] = '\0';
	return 0;
}

static int read_password(const char *path, char **out)
{
	/* No symlink followed; O_NONBLOCK so that a FIFO there cannot hang
	 * the open (check_file refuses it). */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	char *buf = NULL;
	ssize_t n;
	int rc;

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	rc = check_file(fd);
	if (!rc && !(buf = malloc(READ_MAX + 1)))
		rc = -ENOMEM;
	if (!rc) {
		n = read_some(fd, buf);
		rc = n < 0 ? (int)n : one_line(buf, n);
	}
	close(fd);
	if (rc && buf) {
		explicit_bzero(buf, READ_MAX + 1);
		free(buf);
		buf = NULL;
	}
	*out = buf;
	return rc;
}

int etcd_auth_init(struct etcd_auth *a, const char *user, const char *password_file)
{
	int has_user = user && *user, has_file = password_file && *password_file;
	int rc;

	memset(a, 0, sizeof(*a));
	if (has_user != has_file)
		return -EINVAL;
	if (!has_user)
		return 0;
	a->user = strdup(user);
	if (!a->user)
		return -ENOMEM;
	rc = read_password(password_file, &a->password);
	if (rc)
		etcd_auth_free(a);
	return rc;
}

static void free_secret(char **s)
{
	if (*s)
		explicit_bzero(*s, strlen(*s));
	free(*s);
	*s = NULL;
}

void etcd_auth_set_token(struct etcd_auth *a, char *token)
{
	free_secret(&a->token);
	a->token = token;
}

void etcd_auth_free(struct etcd_auth *a)
{
	free_secret(&a->password);
	free_secret(&a->token);
	free(a->user);
	a->user = NULL;
}
