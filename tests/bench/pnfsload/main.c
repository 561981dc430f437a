/*
 * pnfsload: a pNFS client load generator that speaks NFSv4.1 and flexfiles
 * by itself.  N clients in one process, each with its own client id,
 * session and connections; IOR-like and mdtest-like workloads; one JSON
 * line of results on stdout.  Options: README.md in tests/bench.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pnfsload.h"

static struct options opt = {
	.port = "2049",
	.export_path = "/pando",
	.clients = 1,
	.depth = 8,
	.transfer = 1u << 20,
	.block = 64ull << 20,
	.files = 1000,
	.timeout_s = 600,
};

struct run {
	struct stats st;
	struct client *clients;
	pthread_barrier_t ready;
	bool done;
};

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		die("bad %s: %s", what, s);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	end += strspn(end, "iB");
	if (*end)
		die("bad %s: %s", what, s);
	return v;
}

static void parse_mds(const char *arg)
{
	const char *colon = strrchr(arg, ':');
	const char *host = arg;
	size_t hl = colon && !strchr(colon, ']') ? (size_t)(colon - arg) : strlen(arg);

	if (colon && hl < strlen(arg)) {
		if (strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof(opt.port))
			die("bad --mds (want HOST[:PORT]): %s", arg);
		strcpy(opt.port, colon + 1);
	}
	if (host[0] == '[' && hl >= 2 && host[hl - 1] == ']') {
		host++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(opt.host))
		die("bad --mds (want HOST[:PORT]): %s", arg);
	memcpy(opt.host, host, hl);
	opt.host[hl] = 0;
}

static void copy_arg(char *dst, size_t cap, const char *src, const char *what)
{
	if (strlen(src) >= cap)
		die("%s too long: %s", what, src);
	strcpy(dst, src);
}

static void usage(FILE *f)
{
	fputs("usage: pnfsload --mds HOST[:PORT] [--export PATH] --dir NAME --clients N\n"
	      "         [--client-base B] [--depth D] [--start-at T] [--no-layouts] [--progress]\n"
	      "         [--timeout SEC] [--uid N] [--gid N] [--ds-host HOST]\n"
	      "  IOR:    --ior write|read [--shared [--interleave CLIENTS]] [--transfer SIZE]\n"
	      "          [--block SIZE] [--verify]\n"
	      "          [--fsync] [--stonewall SEC]\n"
	      "  mdtest: --mdtest create|stat|remove [--files N] [--unique-dir] [--write-bytes W]\n"
	      "  --layoutget N [--block SIZE] [--transfer SIZE]: N READ LAYOUTGETs of ior.<client>\n"
	      "  --writer [--shared] [--block SIZE] [--transfer SIZE] [--pace MS]: FILE_SYNC +\n"
	      "          LAYOUTCOMMIT per transfer, a progress line each, riding through failures\n"
	      "  --verifier [--shared] [--block SIZE] [--transfer SIZE]: reads what --writer\n"
	      "          left, riding through failures; a verified line per client\n"
	      "  --find [--find-size SIZE]: READDIR the tree under --dir with --depth workers;\n"
	      "          files of SIZE bytes match\n"
	      "Sizes take K/M/G suffixes (powers of 2). Prints one JSON line of results.\n",
	      f);
}

static void set_workload(enum workload wl, enum phase phase)
{
	if (opt.workload != WL_NONE)
		die("give one of --ior, --mdtest, --layoutget, --writer, --verifier and --find");
	opt.workload = wl;
	opt.phase = phase;
}

static void set_phase(enum workload wl, const char *arg)
{
	static const char *names[] = { "write", "read", "create", "stat", "remove" };
	unsigned first = wl == WL_IOR ? PH_WRITE : PH_CREATE,
		 last = wl == WL_IOR ? PH_READ : PH_REMOVE;

	for (unsigned p = first; p <= last; p++) {
		if (!strcmp(arg, names[p])) {
			set_workload(wl, (enum phase)p);
			return;
		}
	}
	die("bad --%s: %s", wl == WL_IOR ? "ior" : "mdtest", arg);
}

static void check_args(bool have_dir)
{
	if (!opt.host[0] || !have_dir || opt.workload == WL_NONE) {
		usage(stderr);
		exit(2);
	}
	if (opt.clients == 0 || opt.clients > MAX_CLIENTS)
		die("--clients must be 1..%u", MAX_CLIENTS);
	if (opt.depth == 0 || opt.depth > MAX_DEPTH)
		die("--depth must be 1..%u", MAX_DEPTH);
	if (opt.transfer == 0 || opt.transfer > MAX_TRANSFER || opt.transfer % 8)
		die("--transfer must be a multiple of 8 up to %u", MAX_TRANSFER);
	if (opt.block == 0)
		die("--block must be > 0");
	if (opt.files == 0)
		die("--files must be > 0");
	if (opt.workload == WL_LAYOUTGET && opt.layoutgets == 0)
		die("--layoutget must be > 0");
	if (opt.client_base > UINT32_MAX - MAX_CLIENTS)
		die("--client-base too large");
	if (opt.workload == WL_FIND && opt.clients != 1)
		die("--find walks the tree with one client (--clients 1; --depth workers)");
	if (opt.interleave && (!opt.shared || opt.workload != WL_IOR))
		die("--interleave is for --ior --shared");
	if (opt.interleave && opt.interleave < opt.client_base + opt.clients)
		die("--interleave %u: fewer than the clients up to this process's (%u)",
		    opt.interleave, opt.client_base + opt.clients);
	if (opt.interleave && opt.block % opt.transfer)
		die("--interleave needs --block a multiple of --transfer");
}

enum {
	O_MDS = 1,
	O_EXPORT,
	O_DIR,
	O_CLIENTS,
	O_BASE,
	O_DEPTH,
	O_START,
	O_NOLAYOUTS,
	O_PROGRESS,
	O_IOR,
	O_FIND,
	O_FIND_SIZE,
	O_SHARED,
	O_INTERLEAVE,
	O_TRANSFER,
	O_BLOCK,
	O_VERIFY,
	O_FSYNC,
	O_MDTEST,
	O_FILES,
	O_UNIQUE,
	O_TIMEOUT,
	O_UID,
	O_GID,
	O_DS_HOST,
	O_STONEWALL,
	O_WRITE_BYTES,
	O_LAYOUTGET,
	O_WRITER,
	O_VERIFIER,
	O_PACE,
	O_HELP
};
static const struct option longopts[] = {
	{ "mds", required_argument, NULL, O_MDS },
	{ "export", required_argument, NULL, O_EXPORT },
	{ "dir", required_argument, NULL, O_DIR },
	{ "clients", required_argument, NULL, O_CLIENTS },
	{ "client-base", required_argument, NULL, O_BASE },
	{ "depth", required_argument, NULL, O_DEPTH },
	{ "start-at", required_argument, NULL, O_START },
	{ "no-layouts", no_argument, NULL, O_NOLAYOUTS },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "ior", required_argument, NULL, O_IOR },
	{ "find", no_argument, NULL, O_FIND },
	{ "find-size", required_argument, NULL, O_FIND_SIZE },
	{ "shared", no_argument, NULL, O_SHARED },
	{ "interleave", required_argument, NULL, O_INTERLEAVE },
	{ "transfer", required_argument, NULL, O_TRANSFER },
	{ "block", required_argument, NULL, O_BLOCK },
	{ "verify", no_argument, NULL, O_VERIFY },
	{ "fsync", no_argument, NULL, O_FSYNC },
	{ "mdtest", required_argument, NULL, O_MDTEST },
	{ "files", required_argument, NULL, O_FILES },
	{ "unique-dir", no_argument, NULL, O_UNIQUE },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "uid", required_argument, NULL, O_UID },
	{ "gid", required_argument, NULL, O_GID },
	{ "ds-host", required_argument, NULL, O_DS_HOST },
	{ "stonewall", required_argument, NULL, O_STONEWALL },
	{ "write-bytes", required_argument, NULL, O_WRITE_BYTES },
	{ "layoutget", required_argument, NULL, O_LAYOUTGET },
	{ "writer", no_argument, NULL, O_WRITER },
	{ "pace", required_argument, NULL, O_PACE },
	{ "verifier", no_argument, NULL, O_VERIFIER },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv)
{
	bool have_dir = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_MDS:
			parse_mds(optarg);
			break;
		case O_EXPORT:
			copy_arg(opt.export_path, sizeof(opt.export_path), optarg, "--export");
			break;
		case O_DIR:
			copy_arg(opt.dir, sizeof(opt.dir), optarg, "--dir");
			have_dir = true;
			break;
		case O_CLIENTS:
			opt.clients = (unsigned)parse_size(optarg, "--clients");
			break;
		case O_BASE:
			opt.client_base = (unsigned)parse_size(optarg, "--client-base");
			break;
		case O_DEPTH:
			opt.depth = (unsigned)parse_size(optarg, "--depth");
			break;
		case O_START:
			opt.start_at = strtod(optarg, &end);
			if (*end || end == optarg || !isfinite(opt.start_at))
				die("bad --start-at: %s", optarg);
			break;
		case O_STONEWALL:
			opt.stonewall_s = strtod(optarg, &end);
			if (*end || end == optarg || !(opt.stonewall_s > 0) ||
			    !isfinite(opt.stonewall_s))
				die("bad --stonewall: %s (seconds > 0)", optarg);
			break;
		case O_NOLAYOUTS:
			opt.no_layouts = true;
			break;
		case O_PROGRESS:
			opt.progress = true;
			break;
		case O_IOR:
			set_phase(WL_IOR, optarg);
			break;
		case O_FIND:
			set_workload(WL_FIND, PH_FIND);
			break;
		case O_FIND_SIZE:
			opt.find_size = parse_size(optarg, "--find-size");
			break;
		case O_SHARED:
			opt.shared = true;
			break;
		case O_INTERLEAVE:
			opt.interleave = (unsigned)parse_size(optarg, "--interleave");
			if (opt.interleave == 0 || opt.interleave > UINT32_MAX / 2)
				die("bad --interleave: %s (clients in all, > 0)", optarg);
			break;
		case O_TRANSFER:
			opt.transfer = (uint32_t)parse_size(optarg, "--transfer");
			break;
		case O_BLOCK:
			opt.block = parse_size(optarg, "--block");
			break;
		case O_VERIFY:
			opt.verify = true;
			break;
		case O_FSYNC:
			opt.fsync = true;
			break;
		case O_MDTEST:
			set_phase(WL_MDTEST, optarg);
			break;
		case O_FILES:
			opt.files = (unsigned)parse_size(optarg, "--files");
			break;
		case O_WRITE_BYTES:
			if (parse_size(optarg, "--write-bytes") > MAX_TRANSFER)
				die("--write-bytes must be at most %u", MAX_TRANSFER);
			opt.write_bytes = (uint32_t)parse_size(optarg, "--write-bytes");
			break;
		case O_UNIQUE:
			opt.unique_dir = true;
			break;
		case O_LAYOUTGET:
			set_workload(WL_LAYOUTGET, PH_READ);
			opt.layoutgets = parse_size(optarg, "--layoutget");
			break;
		case O_WRITER:
			set_workload(WL_WRITER, PH_WRITE);
			break;
		case O_VERIFIER:
			set_workload(WL_VERIFIER, PH_READ);
			break;
		case O_PACE:
			opt.pace_ms = (unsigned)parse_size(optarg, "--pace");
			break;
		case O_TIMEOUT:
			opt.timeout_s = (unsigned)parse_size(optarg, "--timeout");
			break;
		case O_UID:
			opt.uid = (uint32_t)parse_size(optarg, "--uid");
			break;
		case O_GID:
			opt.gid = (uint32_t)parse_size(optarg, "--gid");
			break;
		case O_DS_HOST:
			copy_arg(opt.ds_host, sizeof(opt.ds_host), optarg, "--ds-host");
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc)
		die("unexpected argument: %s", argv[optind]);
	check_args(have_dir);
}

static void on_alarm(int sig)
{
	static const char msg[] = "pnfsload: timed out (--timeout)\n";
	ssize_t ignored = write(2, msg, sizeof(msg) - 1);

	(void)sig;
	(void)ignored;
	_exit(1);
}

static void wait_until(double t)
{
	double left = t - realtime_now();

	if (left <= 0)
		return;
	struct timespec ts = { (time_t)left, (long)((left - floor(left)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const struct workload_ops {
	const char *name;
	void *(*setup)(struct client *cl);
	void (*run)(struct client *cl, void *state);
} workloads[] = {
	[WL_IOR] = { "ior", ior_setup, ior_run },
	[WL_MDTEST] = { "mdtest", mdtest_setup, mdtest_run },
	[WL_LAYOUTGET] = { "layoutget", layoutget_setup, layoutget_run },
	[WL_WRITER] = { "writer", writer_setup, writer_run },
	[WL_VERIFIER] = { "verifier", verifier_setup, verifier_run },
	[WL_FIND] = { "find", find_setup, find_run },
};

struct client_arg {
	struct run *run;
	struct client *cl;
};

static void *client_main(void *arg)
{
	struct client_arg *a = arg;
	struct client *cl = a->cl;
	const struct workload_ops *w = &workloads[opt.workload];
	/* A workload that rides renews its lease with its own calls, and it
	 * alone may make a lost session again. */
	bool renew = !cl_rides(cl);
	void *state;

	cl_setup(cl);
	ns_lookup_path(cl, &cl->root, opt.dir, true, &cl->dir);
	state = w->setup(cl);
	if (renew)
		cl_start_renewer(cl);
	pthread_barrier_wait(&a->run->ready);
	wait_until(opt.start_at);
	w->run(cl, state);
	stats_span(cl->st, cl->t_start, cl->t_end);
	if (renew)
		cl_stop_renewer(cl);
	cl_teardown(cl);
	return NULL;
}

static void print_result(const struct stats *st)
{
	static const char *phases[] = { "write", "read", "create", "stat", "remove", "find" };
	double secs = st->t_end - st->t_start;

	if (secs <= 0)
		secs = 1e-9;
	printf("{\"workload\": \"%s\", \"phase\": \"%s\", \"clients\": %u, \"depth\": %u, "
	       "\"bytes\": %" PRIu64 ", \"ops\": %" PRIu64 ", \"seconds\": %.6f, \"mib_s\": %.2f, "
	       "\"ops_s\": %.1f, \"t_start\": %.6f, \"t_end\": %.6f, \"layouts\": %" PRIu64 ", "
	       "\"mds_io_bytes\": %" PRIu64 ", \"ds_io_bytes\": %" PRIu64 ", \"errors\": %" PRIu64
	       ", \"recoveries\": %" PRIu64 ", \"ds_errors\": %" PRIu64 ", \"matches\": %" PRIu64
	       "}\n",
	       workloads[opt.workload].name, phases[opt.phase], opt.clients, opt.depth, st->bytes,
	       st->ops, secs, (double)st->bytes / secs / 1048576.0, (double)st->ops / secs,
	       st->t_start, st->t_end, st->layouts, st->mds_io_bytes, st->ds_io_bytes, st->errors,
	       st->recoveries, st->ds_errors, st->matches);
	fflush(stdout);
}

static void progress(struct run *run, pthread_t *tids)
{
	double t0 = realtime_now(), last = t0;
	unsigned joined = 0;

	for (;;) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		while (joined < opt.clients && pthread_tryjoin_np(tids[joined], NULL) == 0)
			joined++;
		if (joined == opt.clients)
			return;
		if (realtime_now() - last >= 1.0) {
			last = realtime_now();
			fprintf(stderr, "pnfsload: %.0f s  %" PRIu64 " MiB  %" PRIu64 " ops\n",
				last - t0, __atomic_load_n(&run->st.bytes, __ATOMIC_RELAXED) >> 20,
				__atomic_load_n(&run->st.ops, __ATOMIC_RELAXED));
		}
	}
}

int main(int argc, char **argv)
{
	static struct run run;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	pthread_t *tids;
	struct client_arg *args;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout_s);
	if (rpc_resolve(opt.host, opt.port, &addr, &addrlen))
		die("cannot resolve --mds %s:%s", opt.host, opt.port);
	pthread_mutex_init(&run.st.lock, NULL);
	pthread_barrier_init(&run.ready, NULL, opt.clients + 1);
	run.clients = calloc(opt.clients, sizeof(*run.clients));
	tids = calloc(opt.clients, sizeof(*tids));
	args = calloc(opt.clients, sizeof(*args));
	if (!run.clients || !tids || !args)
		die("out of memory");
	for (unsigned i = 0; i < opt.clients; i++) {
		struct client *cl = &run.clients[i];

		cl->idx = opt.client_base + i;
		cl->opt = &opt;
		cl->st = &run.st;
		cl->mds_addr = addr;
		cl->mds_addrlen = addrlen;
		cl->cred = (struct rpc_cred){ opt.uid, opt.gid };
		args[i] = (struct client_arg){ &run, cl };
		if (pthread_create(&tids[i], NULL, client_main, &args[i]))
			die("cannot start client %u", cl->idx);
	}
	pthread_barrier_wait(&run.ready);
	if (opt.start_at > 0 && opt.start_at < realtime_now())
		fprintf(stderr, "pnfsload: --start-at %.3f had passed when set-up ended\n",
			opt.start_at);
	if (opt.progress)
		progress(&run, tids);
	else
		for (unsigned i = 0; i < opt.clients; i++)
			pthread_join(tids[i], NULL);
	alarm(0);
	print_result(&run.st);
	free(args);
	free(tids);
	free(run.clients);
	return 0;
}
