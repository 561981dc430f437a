/* The client against a real etcd 3.4 (/usr/bin/etcd) that serves https
 * with a certificate of a throwaway CA, both made by the openssl CLI in a
 * folder of the test's own: the right CA connects (and a keepalive stream
 * is read over TLS); a wrong CA and the system's store are refused with
 * -EPROTO; plain http to the https port gets a connection etcd closes
 * without a word, -EHOSTUNREACH.  Then, with authentication enabled
 * (etcdctl): a user reaches the keys its role grants, and -EACCES for the
 * others, a wrong password or no user; a role granted more applies at
 * once; a new token is got, unseen by the caller, when the token expires
 * (--auth-token-ttl 2) and when etcd restarts.  etcd listens on 127.0.0.1
 * only and is stopped by its pid.  Skipped (77) without etcd, etcdctl or
 * openssl. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "etcd_client.h"

#define ETCD_BIN "/usr/bin/etcd"
#define SKIP 77

struct real {
	char dir[64];
	char url[64]; /* https://127.0.0.1:PORT */
	char ca[128], other_ca[128];
	char pw[128], bad_pw[128]; /* osd.1's password file, and a wrong one */
	int auth_on;
	int port, peer_port;
	pid_t pid;
};

static struct real real;

/* Runs a shell command made of fmt; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* A port free on loopback now (bound, then let go). */
static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &len);
	close(fd);
	return ntohs(sa.sin_port);
}

/* ca.crt signs server.crt (for IP 127.0.0.1); other.crt signs nothing. */
static int make_certs(const char *d)
{
	const char *key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

	return sh(
		"cd %s && exec >openssl.log 2>&1 && "
		"openssl req -x509 %s -days 1 -subj /CN=pando-test-ca -keyout ca.key -out ca.crt && "
		"openssl req -x509 %s -days 1 -subj /CN=pando-other-ca -keyout other.key "
		"-out other.crt && "
		"openssl req %s -subj /CN=127.0.0.1 -keyout server.key -out server.csr && "
		"printf 'subjectAltName=IP:127.0.0.1\\n' >san.ext && "
		"openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		"-days 1 -extfile san.ext -out server.crt",
		d, key, key, key);
}

static void etcd_exec(const struct real *r)
{
	char listen[64], peer[64], cluster[80], data[96], cert[96], key[96], log[96];

	snprintf(listen, sizeof(listen), "https://127.0.0.1:%d", r->port);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", r->peer_port);
	snprintf(cluster, sizeof(cluster), "t=%s", peer);
	snprintf(data, sizeof(data), "%s/data", r->dir);
	snprintf(cert, sizeof(cert), "%s/server.crt", r->dir);
	snprintf(key, sizeof(key), "%s/server.key", r->dir);
	snprintf(log, sizeof(log), "%s/etcd.log", r->dir);
	/* Gone with the test, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (!freopen(log, "a", stdout) || !freopen(log, "a", stderr))
		_exit(127);
	execl(ETCD_BIN, ETCD_BIN, "--name", "t", "--data-dir", data, "--listen-client-urls", listen,
	      "--advertise-client-urls", listen, "--listen-peer-urls", peer,
	      "--initial-advertise-peer-urls", peer, "--initial-cluster", cluster, "--cert-file",
	      cert, "--key-file", key, "--auth-token-ttl", "2", (char *)NULL);
	_exit(127);
}

static int client(const char *url, const char *ca, struct etcd_client **c)
{
	struct etcd_options o = { .endpoints = url, .timeout_ms = 2000, .ca_file = ca };

	return etcd_client_new(&o, c);
}

static int client_as(const char *user, const char *pwfile, struct etcd_client **c)
{
	struct etcd_options o = { .endpoints = real.url,
				  .timeout_ms = 2000,
				  .ca_file = real.ca,
				  .user = user,
				  .password_file = pwfile };

	return etcd_client_new(&o, c);
}

/* Starts etcd and waits until it answers (up to 20 s); once
 * authentication is on, a refusal is an answer. */
static int etcd_start(struct real *r)
{
	struct etcd_client *c;
	int rc = -EHOSTUNREACH;

	r->pid = fork();
	if (r->pid == 0)
		etcd_exec(r);
	if (r->pid < 0 || client(r->url, r->ca, &c))
		return -1;
	for (int i = 0; i < 200 && (rc == -EHOSTUNREACH || rc == -EPROTO); i++) {
		char *v = NULL;

		rc = etcd_get(c, "/ready", &v, NULL, NULL);
		free(v);
		if (rc == -EHOSTUNREACH || rc == -EPROTO)
			sleep_ms(100);
	}
	etcd_client_free(c);
	return rc == 0 || rc == -ENOENT || rc == -EACCES ? 0 : -1;
}

static void etcd_stop(struct real *r)
{
	if (r->pid <= 0)
		return;
	kill(r->pid, SIGTERM);
	waitpid(r->pid, NULL, 0);
	r->pid = 0;
}

static int setup(struct real *r)
{
	snprintf(r->dir, sizeof(r->dir), "/tmp/pando-etcd-test.XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	snprintf(r->ca, sizeof(r->ca), "%s/ca.crt", r->dir);
	snprintf(r->other_ca, sizeof(r->other_ca), "%s/other.crt", r->dir);
	r->port = free_port();
	r->peer_port = free_port();
	snprintf(r->url, sizeof(r->url), "https://127.0.0.1:%d", r->port);
	if (make_certs(r->dir) || etcd_start(r)) {
		fprintf(stderr, "could not start etcd with TLS; logs in %s\n", r->dir);
		return -1;
	}
	return 0;
}

/* etcdctl against the member, as root once authentication is on. */
static int ctl(const char *args)
{
	return sh("etcdctl --endpoints %s --cacert %s %s %s >>%s/etcdctl.log 2>&1", real.url,
		  real.ca, real.auth_on ? "--user root:rootpw" : "", args, real.dir);
}

/* Writes text to path, mode 0600; 0 or -1. */
static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || chmod(path, 0600) || fputs(text, f) < 0) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/* root, and osd.1 (password pw1) whose role osd1 may write /pando/osd/1. */
static int enable_auth(struct real *r)
{
	snprintf(r->pw, sizeof(r->pw), "%s/pw", r->dir);
	snprintf(r->bad_pw, sizeof(r->bad_pw), "%s/bad_pw", r->dir);
	if (write_file(r->pw, "pw1\n") || write_file(r->bad_pw, "pw2\n") ||
	    ctl("user add root --new-user-password rootpw") || ctl("user grant-role root root") ||
	    ctl("role add osd1") || ctl("role grant-permission osd1 readwrite /pando/osd/1") ||
	    ctl("user add osd.1 --new-user-password pw1") || ctl("user grant-role osd.1 osd1") ||
	    ctl("auth enable"))
		return -1;
	r->auth_on = 1;
	return 0;
}

static void teardown(struct real *r)
{
	etcd_stop(r);
	if (!check_failures)
		sh("rm -rf %s", r->dir);
	else
		fprintf(stderr, "etcd's folder kept: %s\n", r->dir);
}

static void the_right_ca_connects(void)
{
	struct etcd_client *c;
	int64_t lease = 0, ttl = 0;
	char *v = NULL;
	size_t len;

	CHECK_EQ(client(real.url, real.ca, &c), 0);
	CHECK_EQ(etcd_put(c, "/tls/k", "v", 1, 0), 0);
	CHECK_EQ(etcd_get(c, "/tls/k", &v, &len, NULL), 0);
	CHECK(v && len == 1 && v[0] == 'v');
	free(v);
	/* A keepalive is a stream the client stops after its first message. */
	CHECK_EQ(etcd_lease_grant(c, 5, &lease), 0);
	CHECK_EQ(etcd_lease_keepalive(c, lease, &ttl), 0);
	CHECK(ttl > 0);
	CHECK_EQ(etcd_lease_revoke(c, lease), 0);
	CHECK(!strcmp(etcd_client_endpoint(c), real.url));
	etcd_client_free(c);
}

static void other_cas_and_plain_http_are_refused(void)
{
	struct etcd_client *c;
	char http[64];

	CHECK_EQ(client(real.url, real.other_ca, &c), 0);
	CHECK_EQ(etcd_put(c, "/tls/k", "v", 1, 0), -EPROTO);
	etcd_client_free(c);
	CHECK_EQ(client(real.url, NULL, &c), 0); /* the system's store */
	CHECK_EQ(etcd_put(c, "/tls/k", "v", 1, 0), -EPROTO);
	etcd_client_free(c);
	snprintf(http, sizeof(http), "http://127.0.0.1:%d", real.port);
	CHECK_EQ(client(http, real.ca, &c), 0);
	CHECK_EQ(etcd_put(c, "/tls/k", "v", 1, 0), -EHOSTUNREACH);
	etcd_client_free(c);
}

static void a_user_reaches_what_its_role_grants(void)
{
	struct etcd_client *c;
	int64_t lease = 0, ttl = 0;
	char *v = NULL;

	CHECK_EQ(client_as("osd.1", real.pw, &c), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), 0);
	CHECK_EQ(etcd_get(c, "/pando/osd/1", &v, NULL, NULL), 0);
	free(v);
	CHECK_EQ(etcd_put(c, "/pando/osd/2", "v", 1, 0), -EACCES);
	CHECK_EQ(etcd_get(c, "/pando/osd/2", &v, NULL, NULL), -EACCES);
	/* What the presence does. */
	CHECK_EQ(etcd_lease_grant(c, 5, &lease), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, lease), 0);
	CHECK_EQ(etcd_lease_keepalive(c, lease, &ttl), 0);
	CHECK(ttl > 0);
	CHECK_EQ(etcd_lease_revoke(c, lease), 0);
	etcd_client_free(c);
	CHECK_EQ(client_as("osd.1", real.bad_pw, &c), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), -EACCES);
	etcd_client_free(c);
	CHECK_EQ(client_as(NULL, NULL, &c), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), -EACCES);
	etcd_client_free(c);
}

/* etcd refuses the token the client holds once it expired or its member
 * restarted.  A simple token carries no revision of the roles: one
 * granted more applies at once (a JWT would be refused as older than
 * the roles, "revision of auth store is old", and renewed the same). */
static void tokens_are_renewed_unseen(void)
{
	struct etcd_client *c;

	CHECK_EQ(client_as("osd.1", real.pw, &c), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), 0);
	CHECK_EQ(ctl("role grant-permission osd1 readwrite /pando/osd/3"), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/3", "v", 1, 0), 0);
	/* expired: --auth-token-ttl 2 */
	sleep_ms(3000);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), 0);
	/* forgotten: a member keeps its simple tokens in memory */
	etcd_stop(&real);
	CHECK_EQ(etcd_start(&real), 0);
	CHECK_EQ(etcd_put(c, "/pando/osd/1", "v", 1, 0), 0);
	etcd_client_free(c);
}

int main(void)
{
	if (access(ETCD_BIN, X_OK) ||
	    sh("command -v openssl >/dev/null && command -v etcdctl >/dev/null")) {
		printf("no %s, etcdctl or openssl: skipped\n", ETCD_BIN);
		return SKIP;
	}
	if (setup(&real)) {
		etcd_stop(&real);
		return 1;
	}
	the_right_ca_connects();
	other_cas_and_plain_http_are_refused();
	if (enable_auth(&real)) {
		fprintf(stderr, "could not enable authentication; logs in %s\n", real.dir);
		etcd_stop(&real);
		return 1;
	}
	a_user_reaches_what_its_role_grants();
	tokens_are_renewed_unseen();
	teardown(&real);
	CHECK_DONE();
}
