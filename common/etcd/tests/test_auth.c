/* etcd users against a fake gateway that authenticates as etcd 3.4 does
 * (simple tokens): the password file read once and refused when others
 * may read it, the token got on the first call and sent on every one, a
 * token etcd no longer takes replaced once and the call retried once, a
 * permission or a password refused as -EACCES, and no token at all while
 * etcd's authentication is off. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "etcd_client.h"
#include "fake_gateway.h"

#define OK_BODY "{\"header\":{\"revision\":\"4\"}}"
#define GRANT_BODY "{\"header\":{\"revision\":\"4\"},\"ID\":\"7\",\"TTL\":\"5\"}"
/* etcd 3.4's answers, as its gateway writes them */
#define USER_EMPTY \
	"{\"error\":\"etcdserver: user name is empty\",\"code\":3," \
	"\"message\":\"etcdserver: user name is empty\"}"
#define INVALID_TOKEN \
	"{\"error\":\"etcdserver: invalid auth token\",\"code\":16," \
	"\"message\":\"etcdserver: invalid auth token\"}"
#define DENIED \
	"{\"error\":\"etcdserver: permission denied\",\"code\":7," \
	"\"message\":\"etcdserver: permission denied\"}"
#define AUTH_FAILED \
	"{\"error\":\"etcdserver: authentication failed, invalid user ID or " \
	"password\",\"code\":3}"
#define AUTH_OFF "{\"error\":\"etcdserver: authentication is not enabled\",\"code\":9}"

/* What the fake etcd knows and saw; under the fake's lock. */
struct gate {
	const char *password; /* osd.1's */
	int auth_off;         /* authentication is not enabled */
	int stale;            /* this many calls answered "invalid auth token" */
	int deny;             /* every call refused: permission denied */
	int authenticates, calls;
	char token[32];  /* the one given last */
	char body[512];  /* of the last authenticate */
	char authz[128]; /* Authorization of the last call; "" without */
};

static char dir[64];

static void header(const char *req, const char *name, char *out, size_t cap)
{
	const char *end = strstr(req, "\r\n\r\n"), *h = strcasestr(req, name);

	out[0] = '\0';
	if (h && h < end && h[-1] == '\n' && h[strlen(name)] == ':')
		snprintf(out, cap, "%.*s", (int)strcspn(h + strlen(name) + 2, "\r"),
			 h + strlen(name) + 2);
}

static void authenticate(struct gate *g, const char *body, char *out, size_t cap)
{
	char want[256], ok[128];

	g->authenticates++;
	snprintf(g->body, sizeof(g->body), "%s", body);
	snprintf(want, sizeof(want), "{\"name\":\"osd.1\",\"password\":\"%s\"}", g->password);
	if (g->auth_off) {
		fake_reply(out, cap, "412 Precondition Failed", AUTH_OFF);
	} else if (strcmp(body, want)) {
		fake_reply(out, cap, "400 Bad Request", AUTH_FAILED);
	} else {
		snprintf(g->token, sizeof(g->token), "tok%d.%d", g->authenticates, 7);
		snprintf(ok, sizeof(ok), "{\"header\":{\"revision\":\"4\"},\"token\":\"%s\"}",
			 g->token);
		fake_reply(out, cap, "200 OK", ok);
	}
}

static void respond(struct fake *f, const char *req, char *out, size_t cap)
{
	struct gate *g = f->arg;

	if (!strncmp(req, "POST /v3/auth/authenticate ", 27)) {
		authenticate(g, strstr(req, "\r\n\r\n") + 4, out, cap);
		return;
	}
	g->calls++;
	header(req, "Authorization", g->authz, sizeof(g->authz));
	if (g->auth_off) {
		fake_reply(out, cap, "200 OK", OK_BODY);
	} else if (!g->authz[0]) {
		fake_reply(out, cap, "400 Bad Request", USER_EMPTY);
	} else if (g->stale > 0 || strcmp(g->authz, g->token)) {
		g->stale -= g->stale > 0;
		fake_reply(out, cap, "401 Unauthorized", INVALID_TOKEN);
	} else if (g->deny && !strncmp(req, "POST /v3/kv/", 12)) {
		fake_reply(out, cap, "403 Forbidden", DENIED);
	} else if (!strncmp(req, "POST /v3/lease/grant ", 21)) {
		fake_reply(out, cap, "200 OK", GRANT_BODY);
	} else if (!strncmp(req, "POST /v3/lease/keepalive ", 25)) {
		fake_reply(out, cap, "200 OK", "{\"result\":" GRANT_BODY "}");
	} else {
		fake_reply(out, cap, "200 OK", OK_BODY);
	}
}

static void gate_start(struct fake *f, struct gate *g)
{
	memset(f, 0, sizeof(*f));
	f->respond = respond;
	f->arg = g;
	f->keep = 1;
	fake_start(f);
}

static struct gate gate_seen(struct fake *f)
{
	struct gate g;

	pthread_mutex_lock(&f->lock);
	g = *(struct gate *)f->arg;
	pthread_mutex_unlock(&f->lock);
	return g;
}

static void gate_set(struct fake *f, int *field, int value)
{
	pthread_mutex_lock(&f->lock);
	*field = value;
	pthread_mutex_unlock(&f->lock);
}

/* dir/name holding text, of mode; its path (static, one at a time). */
static const char *file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	CHECK_EQ(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static int client_as(int port, const char *user, const char *pwfile, struct etcd_client **c)
{
	struct etcd_options o = { .timeout_ms = 2000, .user = user, .password_file = pwfile };
	char eps[64];

	snprintf(eps, sizeof(eps), "127.0.0.1:%d", port);
	o.endpoints = eps;
	return etcd_client_new(&o, c);
}

static void the_token_is_got_once_and_sent_on_every_call(void)
{
	struct gate g = { .password = "s3\\\"c\\\\ret" }; /* s3"c\ret, escaped */
	struct fake f;
	struct etcd_client *c;
	struct gate seen;

	gate_start(&f, &g);
	CHECK_EQ(client_as(f.port, "osd.1", file("pw", "s3\"c\\ret\n", 0600), &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 1);
	CHECK_EQ(seen.calls, 2);
	CHECK(!strcmp(seen.body, "{\"name\":\"osd.1\",\"password\":\"s3\\\"c\\\\ret\"}"));
	CHECK(!strcmp(seen.authz, "tok1.7"));
	etcd_client_free(c);
	fake_stop(&f);
}

static void a_token_etcd_no_longer_takes_is_replaced_once(void)
{
	struct gate g = { .password = "pw" };
	struct fake f;
	struct etcd_client *c;
	struct gate seen;

	gate_start(&f, &g);
	CHECK_EQ(client_as(f.port, "osd.1", file("pw", "pw\n", 0400), &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	/* Expired, or its member restarted: one new token, one retry. */
	gate_set(&f, &g.stale, 1);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 2);
	CHECK_EQ(seen.calls, 3);
	CHECK(!strcmp(seen.authz, "tok2.7"));
	/* Never taken: one new token, one retry, then -EACCES. */
	gate_set(&f, &g.stale, 100);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), -EACCES);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 3);
	CHECK_EQ(seen.calls, 5);
	etcd_client_free(c);
	fake_stop(&f);
}

static void refusals_are_eacces(void)
{
	struct gate g = { .password = "pw" };
	struct fake f;
	struct etcd_client *c;
	struct gate seen;

	gate_start(&f, &g);
	/* A permission refused: a new token would not change it. */
	gate_set(&f, &g.deny, 1);
	CHECK_EQ(client_as(f.port, "osd.1", file("pw", "pw", 0600), &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), -EACCES);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 1);
	CHECK_EQ(seen.calls, 1);
	etcd_client_free(c);
	/* A wrong password: the call is never made. */
	CHECK_EQ(client_as(f.port, "osd.1", file("pw", "wrong\n", 0600), &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), -EACCES);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 2);
	CHECK_EQ(seen.calls, 1);
	etcd_client_free(c);
	/* No user, with authentication on: refused too. */
	CHECK_EQ(client_as(f.port, NULL, NULL, &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), -EACCES);
	etcd_client_free(c);
	fake_stop(&f);
}

/* Users given before etcd's authentication is enabled keep working, and
 * authenticate once it is. */
static void no_token_while_authentication_is_off(void)
{
	struct gate g = { .password = "pw", .auth_off = 1 };
	struct fake f;
	struct etcd_client *c;
	struct gate seen;

	gate_start(&f, &g);
	CHECK_EQ(client_as(f.port, "osd.1", file("pw", "pw\n", 0600), &c), 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 1);
	CHECK(!strcmp(seen.authz, ""));
	gate_set(&f, &g.auth_off, 0);
	CHECK_EQ(etcd_put(c, "k", "v", 1, 0), 0);
	seen = gate_seen(&f);
	CHECK_EQ(seen.authenticates, 2);
	CHECK(!strcmp(seen.authz, "tok2.7"));
	etcd_client_free(c);
	fake_stop(&f);
}

/* The presence thread's log lines, as a daemon would get them. */
struct said {
	pthread_mutex_t lock;
	char lines[2048];
};

static void log_line(void *arg, int level, const char *msg)
{
	struct said *s = arg;

	pthread_mutex_lock(&s->lock);
	snprintf(s->lines + strlen(s->lines), sizeof(s->lines) - strlen(s->lines), "%d %s\n", level,
		 msg);
	pthread_mutex_unlock(&s->lock);
}

static char *fill(void *arg)
{
	return strdup("{\"id\":1}");
}

/* Waits up to 3 s for what in the lines; how many times it is there. */
static int said_count(struct said *s, const char *what)
{
	int n = 0;

	for (int i = 0; i < 30 && !n; i++) {
		pthread_mutex_lock(&s->lock);
		for (const char *p = s->lines; (p = strstr(p, what)); p++)
			n++;
		pthread_mutex_unlock(&s->lock);
		if (!n)
			sleep_ms(100);
	}
	return n;
}

/* A refusal is said once, as a refusal (not as etcd lost), and again
 * only when things change. */
static void the_presence_says_once_that_etcd_refuses_it(void)
{
	struct gate g = { .password = "pw", .deny = 1 };
	struct said s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct fake f;
	struct etcd_presence *p;
	char eps[64];
	struct etcd_options eo = { .endpoints = eps, .user = "osd.1" };
	struct etcd_presence_options o = { .etcd = &eo,
					   .key = "/pando/osd/1",
					   .ttl_s = 5,
					   .interval_s = 1,
					   .fill = fill,
					   .log = log_line,
					   .arg = &s };

	gate_start(&f, &g);
	snprintf(eps, sizeof(eps), "127.0.0.1:%d", f.port);
	eo.password_file = file("pw", "pw\n", 0600);
	CHECK_EQ(etcd_presence_start(&o, &p), 0);
	CHECK_EQ(said_count(&s, "1 etcd refused putting /pando/osd/1 as etcd user osd.1: "
				"permission denied, or credentials refused"),
		 1);
	sleep_ms(2500); /* two retries more, not said */
	CHECK_EQ(said_count(&s, "refused putting"), 1);
	CHECK_EQ(said_count(&s, "lost etcd"), 0);
	gate_set(&f, &g.deny, 0);
	CHECK_EQ(said_count(&s, "0 registered /pando/osd/1 in etcd"), 1);
	etcd_presence_stop(p);
	fake_stop(&f);
	pthread_mutex_destroy(&s.lock);
}

static void unsafe_or_empty_password_files_are_refused(void)
{
	struct etcd_client *c;
	char link[128], fifo[128];

	CHECK_EQ(client_as(1, "osd.1", file("pw", "pw\n", 0644), &c), -EPERM);
	CHECK(c == NULL);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "pw\n", 0640), &c), -EPERM);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "pw\n", 0604), &c), -EPERM);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK_EQ(symlink(file("pw", "pw\n", 0600), link), 0);
	CHECK_EQ(client_as(1, "osd.1", link, &c), -EPERM);
	CHECK_EQ(client_as(1, "osd.1", dir, &c), -EPERM);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(client_as(1, "osd.1", fifo, &c), -EPERM); /* and does not wait */
	if (geteuid() == 0) {                              /* a file of another user's */
		const char *pw = file("pw", "pw\n", 0600);
		CHECK_EQ(chown(pw, 65534, 65534), 0);
		CHECK_EQ(client_as(1, "osd.1", pw, &c), -EPERM);
	}
	CHECK_EQ(client_as(1, "osd.1", "/nonexistent/pw", &c), -ENOENT);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "", 0600), &c), -EBADMSG);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "\n", 0600), &c), -EBADMSG);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "pw\nmore\n", 0600), &c), -EBADMSG);
	CHECK_EQ(client_as(1, "osd.1", file("pw", "pw\n\n", 0600), &c), -EBADMSG);
	CHECK_EQ(client_as(1, "osd.1", NULL, &c), -EINVAL);
	CHECK_EQ(client_as(1, "", file("pw", "pw\n", 0600), &c), -EINVAL);
	unlink(link);
	unlink(fifo);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pando-etcd-auth.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	the_token_is_got_once_and_sent_on_every_call();
	a_token_etcd_no_longer_takes_is_replaced_once();
	refusals_are_eacces();
	no_token_while_authentication_is_off();
	the_presence_says_once_that_etcd_refuses_it();
	unsafe_or_empty_password_files_are_refused();
	unlink(file("pw", "", 0600));
	rmdir(dir);
	CHECK_DONE();
}
