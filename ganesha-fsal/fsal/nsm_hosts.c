/* The NFSv3 hosts of a manager group (patches/0146): every host NLM
 * monitors is a record in etcd (../mds/reclaim.h, "nsm"), so the member
 * that takes over knows the hosts that held locks on the old active.
 * When its grace period starts it writes them, as statd would, into
 * NSM_Notify_Dir (statd's sm.bak), where the grace period waits for them
 * (patches/0140); once the server serves it runs sm-notify on that
 * directory, which tells each host to reclaim its locks and removes it
 * from the list as it answers.  Records of earlier terms go when the
 * grace period ends: a host that reclaimed is monitored, so recorded,
 * again in this term. */
#include "pando_fsal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etcd_client.h"
#include "gsh_config.h"
#include "log.h"
#include "nfs_core.h"
#include "reclaim.h"

#define SM_NOTIFY "/usr/sbin/sm-notify"

extern char **environ;

static struct pando_reclaim *hosts;
static char source[NI_MAXHOST]; /* Nsm_Source, "" when not set */
static pthread_mutex_t notifier_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t notifier; /* sm-notify while it runs, under notifier_lock */
static pthread_t reaper;
static bool reaping;

int pando_nsm_hosts_open(struct pando_mds *mds)
{
	int rc = pando_group_reclaim_open(mds, "nsm", &hosts);

	snprintf(source, sizeof(source), "%s", mds->cfg.nsm_source ? mds->cfg.nsm_source : "");
	if (rc)
		LogCrit(COMPONENT_FSAL, "pando: group %s: the records of NFSv3 hosts: %s",
			mds->cfg.mds_group, etcd_strerror(rc));
	return rc;
}

bool pando_nsm_monitor(const char *mon_name)
{
	int rc;

	/* The name is the client's own words: logged only once checked. */
	if (!pando_reclaim_host_name_ok(mon_name)) {
		if (pando_client_may_log())
			LogWarn(COMPONENT_NLM, "pando: an NFSv3 host whose name statd could not "
					       "file is refused its locks");
		return false;
	}
	rc = hosts ? pando_reclaim_add(hosts, pando_reclaim_host_id(mon_name), mon_name) : -ENOENT;
	if (rc && pando_client_may_log())
		LogWarn(COMPONENT_NLM, "pando: NFSv3 host %s: no record (%s): its locks refused",
			mon_name, etcd_strerror(rc));
	return rc == 0;
}

void pando_nsm_unmonitor(const char *mon_name)
{
	int rc = hosts ? pando_reclaim_remove(hosts, pando_reclaim_host_id(mon_name)) : -ENOENT;

	/* Only a name checked at monitor time was recorded, so logged. */
	if (rc && pando_reclaim_host_name_ok(mon_name) && pando_client_may_log())
		LogWarn(COMPONENT_NLM, "pando: NFSv3 host %s: its record stays (%s)", mon_name,
			etcd_strerror(rc));
}

/* The name statd would give this server in its records. */
static void my_name(char *buf, size_t len)
{
	struct utsname u;

	if (uname(&u) == 0 && pando_reclaim_host_name_ok(u.nodename))
		snprintf(buf, len, "%s", u.nodename);
	else
		snprintf(buf, len, "pando");
}

struct listing {
	const char *dir;
	char my_name[RECLAIM_HOST_MAX + 1];
	size_t written, failed;
};

static int write_host(void *arg, const char *tag, const char *const *revoked, size_t n_revoked)
{
	struct listing *l = arg;
	char path[PATH_MAX], line[2 * RECLAIM_HOST_MAX + 80];
	int n = pando_reclaim_host_record(tag, l->my_name, line, sizeof(line)), fd = -1;

	(void)revoked, (void)n_revoked;
	if (n > 0 && snprintf(path, sizeof(path), "%s/%s", l->dir, tag) < (int)sizeof(path))
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && write(fd, line, (size_t)n) == n && close(fd) == 0) {
		l->written++;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	l->failed++;
	return 0;
}

void pando_nsm_hosts_list(void)
{
	struct listing l = { .dir = nfs_param.core_param.nsm_notify_dir };
	size_t skipped = 0;
	int rc;

	if (!hosts)
		return;
	if (!l.dir) {
		LogWarn(COMPONENT_NLM, "pando: no NSM_Notify_Dir: the NFSv3 hosts of the group's "
				       "earlier actives are not told to reclaim their locks");
		return;
	}
	my_name(l.my_name, sizeof(l.my_name));
	rc = pando_reclaim_read(hosts, write_host, &l, &skipped);
	if (rc)
		LogCrit(COMPONENT_NLM,
			"pando: the records of NFSv3 hosts cannot be read (%s): "
			"they are not told to reclaim their locks",
			etcd_strerror(rc));
	else
		LogEvent(COMPONENT_NLM,
			 "pando: %zu NFSv3 hosts to tell in %s (%zu not written, %zu malformed)",
			 l.written, l.dir, l.failed, skipped);
}

void pando_nsm_hosts_end_grace(void)
{
	size_t removed = 0;
	int rc = hosts ? pando_reclaim_end_grace(hosts, &removed) : -ENOENT;

	if (rc)
		LogWarn(COMPONENT_NLM, "pando: the NFSv3 host records of earlier terms stay (%s)",
			etcd_strerror(rc));
	else
		LogEvent(COMPONENT_NLM, "pando: grace over: %zu NFSv3 host records removed",
			 removed);
}

static void *reap(void *arg)
{
	siginfo_t info;
	int status = 0;

	(void)arg;
	/* Wait without reaping, so that a SIGTERM under the lock never
	 * reaches another process that got the pid. */
	while (waitid(P_PID, (id_t)notifier, &info, WEXITED | WNOWAIT) && errno == EINTR)
		;
	pthread_mutex_lock(&notifier_lock);
	if (waitpid(notifier, &status, 0) == notifier && WIFEXITED(status))
		LogEvent(COMPONENT_NLM, "pando: sm-notify exited %d", WEXITSTATUS(status));
	else
		LogEvent(COMPONENT_NLM, "pando: sm-notify ended (wait status %d)", status);
	notifier = 0;
	pthread_mutex_unlock(&notifier_lock);
	return NULL;
}

/* -v, what the hosts mounted: Nsm_Source (a floating address), else
 * the address the server is bound to; none when that is every address
 * (sm-notify then names the server by its host name, and sends from the
 * address the route gives). */
static bool source_of(char *buf, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)&nfs_param.core_param.bind_addr;
	socklen_t sl = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);

	if (source[0]) {
		snprintf(buf, len, "%s", source);
		return true;
	}
	if (getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
		return false;
	return strcmp(buf, "0.0.0.0") && strcmp(buf, "::");
}

/* sm-notify wants a host name for an address it sends from (it asks the
 * resolver with NI_NAMEREQD) and tells nobody without one.  A floating
 * address seldom has one: no PTR record, no line in /etc/hosts.  So the
 * notifier gets, in a mount namespace of its own, the machine's
 * /etc/hosts with one more line that names the address by itself (the
 * machine's own name for it, if any, still comes first): it sends from
 * the address, and names the server by it, as each host mounted it
 * (statd matches the sender's address or that name). */
static bool write_hosts(const char *path, const char *from)
{
	char buf[4096];
	ssize_t n;
	bool ok;
	int in = open("/etc/hosts", O_RDONLY | O_CLOEXEC), out;

	/* A new file: statd's directory may belong to statd's user. */
	(void)unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	ok = out >= 0;
	while (ok && in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	n = snprintf(buf, sizeof(buf), "\n%s\t%s\n", from, from);
	ok = ok && write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = false;
	return ok;
}

static bool numeric(const char *host)
{
	struct addrinfo hint = { .ai_flags = AI_NUMERICHOST }, *ai = NULL;
	bool yes = getaddrinfo(host, NULL, &hint, &ai) == 0;

	if (ai)
		freeaddrinfo(ai);
	return yes;
}

/* The child of a fork in a threaded process: system calls only. */
static void exec_notifier(char *const argv[], const char *hosts_file)
{
	static const char failed[] = "pando: sm-notify keeps the machine's /etc/hosts\n";

	if (hosts_file &&
	    (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	     mount(hosts_file, "/etc/hosts", NULL, MS_BIND, NULL)))
		(void)!write(STDERR_FILENO, failed, sizeof(failed) - 1);
	execve(SM_NOTIFY, argv, environ);
	_exit(127);
}

static int spawn_notifier(char *const argv[], const char *hosts_file)
{
	pid_t pid = fork();

	if (pid == 0)
		exec_notifier(argv, hosts_file);
	if (pid < 0)
		return errno;
	notifier = pid;
	return 0;
}

void pando_nsm_notify(void)
{
	const char *list = nfs_param.core_param.nsm_notify_dir;
	char dir[PATH_MAX], from[NI_MAXHOST], hosts_file[PATH_MAX + 8];
	char *argv[] = { SM_NOTIFY, "-d", "-f", "-P", dir, "-v", from, NULL };
	bool named = false;
	int rc;

	if (!hosts || !list || snprintf(dir, sizeof(dir), "%s", list) >= (int)sizeof(dir) ||
	    !strrchr(dir, '/'))
		return;
	*strrchr(dir, '/') = 0; /* statd's directory, above its sm.bak */
	if (!source_of(from, sizeof(from))) {
		argv[5] = NULL;
		snprintf(from, sizeof(from), "(its host name)");
	} else if (numeric(from)) {
		snprintf(hosts_file, sizeof(hosts_file), "%s/hosts", dir);
		named = write_hosts(hosts_file, from);
		if (!named)
			LogWarn(COMPONENT_NLM, "pando: %s: %s: sm-notify needs a host name for %s",
				hosts_file, strerror(errno), from);
	}
	pthread_mutex_lock(&notifier_lock);
	rc = spawn_notifier(argv, named ? hosts_file : NULL);
	if (!rc)
		reaping = pthread_create(&reaper, NULL, reap, NULL) == 0;
	pthread_mutex_unlock(&notifier_lock);
	if (rc)
		LogCrit(COMPONENT_NLM,
			"pando: %s: %s: NFSv3 hosts are not told to reclaim their locks", SM_NOTIFY,
			strerror(rc));
	else
		LogEvent(COMPONENT_NLM,
			 "pando: sm-notify tells the hosts in %s to reclaim, from %s", list, from);
}

void pando_nsm_hosts_close(void)
{
	pthread_mutex_lock(&notifier_lock);
	if (notifier)
		kill(notifier, SIGTERM);
	pthread_mutex_unlock(&notifier_lock);
	if (reaping)
		pthread_join(reaper, NULL);
	reaping = false;
	pando_reclaim_close(hosts);
	hosts = NULL;
}
