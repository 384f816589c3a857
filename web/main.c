/*
 * main.c — storm-web, the cluster's live dashboard: options, the
 * listening socket (bound before privileges are dropped, so a port
 * below 1024 works and nothing after runs as root), then the poll loop
 * on this thread while libmicrohttpd's threads serve the page, the
 * JSON view and its event stream (http.c).  Read-only: it sends the
 * manager nothing but reads.
 *
 * Exit status (storm-web(8)): 0 stopped by SIGTERM or SIGINT; 1 a
 * runtime failure (the address cannot be bound, the user cannot be
 * taken on); 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "web.h"

#define DEFAULT_CONFIG "/etc/storm/storm.conf"
#define DEFAULT_LISTEN "127.0.0.1:9180"
#define DEFAULT_USER "nobody"      /* when started as root */
#define DEFAULT_INTERVAL_MS 500
#define REQUEST_TIMEOUT_MS 3000    /* one request, failover included */

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: storm-web [--config FILE] [--socket PATH | --manager HOST:PORT"
	" | --managers H:P,...]\n"
	"                 [--listen ADDR:PORT] [--user NAME] "
	"[--interval-ms MS]\n"
	"  --config FILE      the cluster's storm.conf, to find the replicas"
	"\n                     (default $STORM_CONFIG, else " DEFAULT_CONFIG
	")\n"
	"  --socket PATH      one replica's unix socket\n"
	"  --manager H:P      one replica's TCP address (MUNGE)\n"
	"  --managers H:P,..  several\n"
	"  --listen ADDR:PORT where to serve (default " DEFAULT_LISTEN ")\n"
	"  --user NAME        the user to run as after binding (default "
	DEFAULT_USER " when started as root)\n"
	"  --interval-ms MS   how often to ask the manager (default 500, "
	"100..60000)\n"
	"exit status: 0 stopped by a signal, 1 runtime failure, 2 usage\n";

/* The one way out with a message: "storm-web: ..." and the status. */
static _Noreturn void die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("storm-web: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (code == EXIT_USAGE)
		fputs(usage_text, stderr);
	exit(code);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("storm-web: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct opts {
	const char *config, *socket, *manager, *managers, *listen, *user;
	long interval_ms;
};

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "manager", required_argument, NULL, 'm' },
		{ "managers", required_argument, NULL, 'M' },
		{ "listen", required_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("STORM_CONFIG");
	char *end;
	int c;

	*o = (struct opts){ .config = env && env[0] ? env : DEFAULT_CONFIG,
			    .listen = DEFAULT_LISTEN,
			    .interval_ms = DEFAULT_INTERVAL_MS };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 's': o->socket = optarg; break;
		case 'm': o->manager = optarg; break;
		case 'M': o->managers = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'u': o->user = optarg; break;
		case 'i':
			errno = 0;
			o->interval_ms = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg ||
			    o->interval_ms < 100 || o->interval_ms > 60000)
				die(EXIT_USAGE, "--interval-ms \"%s\": want "
				    "100 to 60000", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_OK);
		default:
			die(EXIT_USAGE, "%s: unknown option or missing "
			    "argument", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die(EXIT_USAGE, "unexpected argument \"%s\"", argv[optind]);
}

/* ADDR:PORT (or [V6]:PORT) bound and listening; dies naming the address,
 * the cause and what to do. */
static int listen_on(const char *at)
{
	const char *colon = strrchr(at, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST |
					      AI_NUMERICSERV },
			*ai = NULL;
	char host[256];
	size_t hl;
	int fd, e, one = 1;

	if (!colon || colon == at || !colon[1] ||
	    (hl = (size_t)(colon - at)) >= sizeof(host))
		die(EXIT_USAGE, "--listen \"%s\": want ADDR:PORT (an address "
		    "of this host, e.g. " DEFAULT_LISTEN ")", at);
	memcpy(host, at, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		memmove(host, host + 1, hl - 1);
	}
	if ((e = getaddrinfo(host, colon + 1, &hints, &ai)))
		die(EXIT_USAGE, "--listen \"%s\": %s (want a numeric ADDR:PORT)",
		    at, gai_strerror(e));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		e = errno;
		die(EXIT_RUNTIME, "cannot listen on %s: %s (%s)", at,
		    strerror(e),
		    e == EADDRINUSE ? "another process holds the port: stop "
		    "it, or give storm-web another with --listen" :
		    e == EADDRNOTAVAIL ? "not an address of this host: give "
		    "one of its addresses with --listen" :
		    e == EACCES ? "a port below 1024 needs root at start" :
		    "see --listen");
	}
	freeaddrinfo(ai);
	return fd;
}

/* Become the unprivileged user (root only; before any thread starts:
 * set*id then apply to the whole process), and check that root cannot
 * be taken back. */
static void drop_to(const char *user)
{
	struct passwd *pw;

	if (geteuid() != 0) {
		if (user && (!(pw = getpwnam(user)) || pw->pw_uid != geteuid()))
			die(EXIT_RUNTIME, "--user %s: only root can become "
			    "another user; start storm-web as root, or "
			    "without --user", user);
		return;
	}
	if (!user)
		user = DEFAULT_USER;
	errno = 0;
	if (!(pw = getpwnam(user)))
		die(EXIT_RUNTIME, "--user %s: no such user (%s); create it, or "
		    "name another with --user", user,
		    errno ? strerror(errno) : "not in the user database");
	if (pw->pw_uid == 0)
		die(EXIT_USAGE, "--user %s: storm-web does not run as root; "
		    "name an unprivileged user", user);
	if (setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid))
		die(EXIT_RUNTIME, "cannot become user %s: %s", user,
		    strerror(errno));
	if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid ||
	    getgid() != pw->pw_gid || getegid() != pw->pw_gid ||
	    setuid(0) == 0)
		die(EXIT_RUNTIME, "became user %s but could still be root: "
		    "refusing to run", user);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct web_view view;
	struct web_poll poll = { 0 };
	struct web_http *http = NULL;
	struct timespec period;
	sigset_t sigs;
	char err[512];
	int lfd, sig = 0;

	parse(argc, argv, &o);
	lfd = listen_on(o.listen);
	drop_to(o.user);
	/* every thread started from here blocks them; this one takes them
	 * in sigtimedwait(), which is also its pause between rounds */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (web_view_init(&view))
		die(EXIT_RUNTIME, "out of memory");
	if (web_http_start(&http, lfd, &view, err, sizeof(err)))
		die(EXIT_RUNTIME, "%s", err);
	poll.c.config_path = o.config;
	poll.c.socket_path = o.socket;
	poll.c.manager = o.manager;
	poll.c.managers = o.managers;
	poll.c.timeout_ms = REQUEST_TIMEOUT_MS;
	if (getenv("STORM_MUNGE_SOCKET"))
		snprintf(poll.c.munge_socket, sizeof(poll.c.munge_socket),
			 "%s", getenv("STORM_MUNGE_SOCKET"));
	stc_init(&poll.c);
	say("serving http://%s/ (polling every %ld ms)", o.listen,
	    o.interval_ms);
	period.tv_sec = o.interval_ms / 1000;
	period.tv_nsec = (o.interval_ms % 1000) * 1000000L;
	char was[sizeof(poll.error)] = "";
	while (sig != SIGTERM && sig != SIGINT) {
		char *doc = web_poll_once(&poll);

		if (doc)
			web_view_publish(&view, doc);
		/* say so once per change of trouble, not every round */
		if (strcmp(was, poll.error)) {
			if (poll.error[0])
				say("%s", poll.error);
			else
				say("the manager answers again");
			snprintf(was, sizeof(was), "%s", poll.error);
		}
		sig = sigtimedwait(&sigs, NULL, &period);
	}
	say("stopping (%s)", strsignal(sig));
	web_http_stop(http);
	web_poll_fini(&poll);
	web_view_fini(&view);
	return EXIT_OK;
}
