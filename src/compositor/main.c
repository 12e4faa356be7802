/*
 * slimland: one user's Wayland session, streamed to a console.
 *
 *   slimland [--listen ADDRESS:PORT] [--managed] [--size WxH] [-s COMMAND] [-v]
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wlr/util/log.h>
#include "server.h"
#include "slim-log.h"

#define DEFAULT_LISTEN "127.0.0.1:5555"

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--listen ADDRESS:PORT] [--managed] [--size WxH] [-s COMMAND] [-v]\n"
		"  --listen  where consoles reach this session (default %s; port 0: any)\n"
		"  --managed only consoles the session manager sends are shown; it connects\n"
		"            to $XDG_RUNTIME_DIR/slimland-control\n"
		"  --size    the screen until a console says otherwise (default 1280x720)\n"
		"  -s        a command to start once the session runs (sh -c)\n"
		"  -v        more logging\n", prog, DEFAULT_LISTEN);
}

/* slim-log messages (encoder, link) go to wlroots' log, so there is one log. */
__attribute__((format(printf, 2, 0)))
static void log_to_wlr(enum slim_log_level level, const char *fmt, va_list args)
{
	static const enum wlr_log_importance map[] = {
		[SLIM_LOG_ERROR] = WLR_ERROR, [SLIM_LOG_INFO] = WLR_INFO,
		[SLIM_LOG_DEBUG] = WLR_DEBUG,
	};
	_wlr_vlog(map[level], fmt, args);
}

static int handle_signal(int sig, void *data)
{
	wl_display_terminate(data);
	return 0;
}

static int handle_child(int sig, void *data)
{
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	return 0;
}

static bool spawn(const char *cmd, bool managed)
{
	pid_t pid = fork();
	if (pid < 0) {
		return false;
	}
	if (pid == 0) {
		/* The child must not inherit our blocked signals or our session's end. */
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		/*
		 * Managed, we lead a session of our own, without a terminal (the
		 * manager's setsid): the child stays in it, which is how the
		 * manager knows that a greeter talking to it runs in this compositor.
		 */
		if (!managed) {
			setsid();
		}
		execl("/bin/sh", "/bin/sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return true;
}

static bool parse_size(const char *s, uint32_t *w, uint32_t *h)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10);
	if (*end != 'x') {
		return false;
	}
	unsigned long b = strtoul(end + 1, &end, 10);
	if (*end || a == 0 || b == 0 || a > SLIM_MAX_DIM || b > SLIM_MAX_DIM) {
		return false;
	}
	*w = (uint32_t)a;
	*h = (uint32_t)b;
	return true;
}

int main(int argc, char *argv[])
{
	const char *listen = DEFAULT_LISTEN, *startup = NULL;
	uint32_t width = 1280, height = 720;
	bool managed = false;
	enum wlr_log_importance verbosity = WLR_INFO;
	static const struct option options[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 'S' },
		{ "managed", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:vh", options, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'S':
			if (!parse_size(optarg, &width, &height)) {
				fprintf(stderr, "slimland: --size wants WxH, at most %ux%u, not '%s'\n",
					SLIM_MAX_DIM, SLIM_MAX_DIM, optarg);
				return 2;
			}
			break;
		case 'M':
			managed = true;
			break;
		case 's':
			startup = optarg;
			break;
		case 'v':
			verbosity = WLR_DEBUG;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	wlr_log_init(verbosity, NULL);
	slim_log_init(verbosity == WLR_DEBUG ? SLIM_LOG_DEBUG : SLIM_LOG_INFO, log_to_wlr);

	int status = 1;
	struct slim_server server = { 0 };
	struct wl_event_source *sigint = NULL, *sigterm = NULL, *sigchld = NULL;
	if (!server_init(&server, width, height, listen, managed)) {
		goto out;
	}
	sigint = wl_event_loop_add_signal(server.loop, SIGINT, handle_signal, server.display);
	sigterm = wl_event_loop_add_signal(server.loop, SIGTERM, handle_signal, server.display);
	sigchld = wl_event_loop_add_signal(server.loop, SIGCHLD, handle_child, NULL);
	const char *socket = wl_display_add_socket_auto(server.display);
	if (!socket) {
		wlr_log(WLR_ERROR, "cannot open a Wayland socket");
		goto out;
	}
	setenv("WAYLAND_DISPLAY", socket, true);
	unsetenv("DISPLAY");
	wlr_log(WLR_INFO, "slimland on WAYLAND_DISPLAY=%s", socket);
	if (startup && !spawn(startup, managed)) {
		wlr_log(WLR_ERROR, "cannot start '%s'", startup);
		goto out;
	}
	wl_display_run(server.display);
	status = 0;
out:
	if (sigint) {
		wl_event_source_remove(sigint);
		wl_event_source_remove(sigterm);
		wl_event_source_remove(sigchld);
	}
	server_finish(&server);
	return status;
}
