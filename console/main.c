/*
 * slimland-console: a stateless desk console. It says HELLO to the
 * server, paints what the server sends into a shadow framebuffer and
 * shows it through a backend, and sends input back. Everything runs in
 * one poll() loop over the UDP socket, stdin (--control) and a signalfd;
 * the link's next retry or ping is the poll timeout.
 */
#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "backend.h"
#include "console-core.h"
#include "control.h"
#include "link.h"
#include "slim-log.h"

#define EXIT_USAGE 2

struct options {
	const char *server;
	uint32_t width, height;
	uint16_t mtu;
	char id[SLIM_CONSOLE_ID_LEN];
	const char *screenshot;
	bool control;
	bool verbose;
};

struct console {
	struct options opts;
	struct slim_console_backend *backend;
	struct slim_console_core *core;
	struct slim_link *link;
	struct slim_control *control;
	int signal_fd;
	bool busy_shown; /* "server busy" is said once per wait */
	bool quit;
};

static const char usage_text[] =
	"usage: slimland-console --server HOST:PORT [options]\n"
	"  --server HOST:PORT  the slimland server; [IPV6]:PORT for an IPv6 address\n"
	"  --output NAME       where the picture goes: headless (the only one in this build)\n"
	"  --size WxH          screen size (default 1280x720)\n"
	"  --id NAME           console id sent to the server (default: the host name)\n"
	"  --mtu N             largest datagram, 256..65000 (default 1400)\n"
	"  --control           commands on stdin, events on stdout, for tests\n"
	"  --screenshot PATH   where SIGUSR1 writes a PNG of the screen\n"
	"  -v, --verbose       debug messages\n"
	"  -h, --help\n";

static void status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr for what a person at the console may want to know. */
static void status(const char *fmt, ...)
{
	va_list args;
	va_start(args, fmt);
	fputs("slimland-console: ", stderr);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
	va_end(args);
}

static bool parse_uint(const char *s, unsigned long lo, unsigned long hi,
		unsigned long *out, char **end)
{
	if (*s < '0' || *s > '9') {
		return false; /* strtoul would take blanks and signs */
	}
	errno = 0;
	*out = strtoul(s, end, 10);
	return errno == 0 && *out >= lo && *out <= hi;
}

static bool parse_size(const char *s, uint32_t *width, uint32_t *height)
{
	unsigned long w, h;
	char *end;
	if (!parse_uint(s, 1, SLIM_MAX_DIM, &w, &end) || *end != 'x' ||
			!parse_uint(end + 1, 1, SLIM_MAX_DIM, &h, &end) || *end != '\0') {
		return false;
	}
	*width = (uint32_t)w;
	*height = (uint32_t)h;
	return true;
}

/* Returns -1 to go on, or the exit status. */
static int parse_options(int argc, char *argv[], struct options *o)
{
	enum { OPT_SERVER = 256, OPT_OUTPUT, OPT_SIZE, OPT_ID, OPT_MTU, OPT_CONTROL, OPT_SCREENSHOT };
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, OPT_SERVER },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "id", required_argument, NULL, OPT_ID },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "control", no_argument, NULL, OPT_CONTROL },
		{ "screenshot", required_argument, NULL, OPT_SCREENSHOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	*o = (struct options){ .width = 1280, .height = 720, .mtu = SLIM_DEFAULT_MTU };
	/* The host name tells the server's logs which desk this is; the core cuts it. */
	char host[256] = "slimland-console";
	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0') {
		strcpy(host, "slimland-console");
	}
	host[sizeof(host) - 1] = '\0';
	snprintf(o->id, sizeof(o->id), "%.*s", (int)sizeof(o->id) - 1, host);

	int opt;
	unsigned long mtu;
	char *end;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SERVER:
			o->server = optarg;
			break;
		case OPT_OUTPUT:
			/* drm and window come with their backends */
			if (strcmp(optarg, "headless") != 0) {
				status("output %s not available in this build", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SIZE:
			if (!parse_size(optarg, &o->width, &o->height)) {
				status("--size %s: expected WxH, each 1..%d", optarg, SLIM_MAX_DIM);
				return EXIT_USAGE;
			}
			break;
		case OPT_ID:
			if (optarg[0] == '\0' || strlen(optarg) >= sizeof(o->id)) {
				status("--id: 1..%zu bytes", sizeof(o->id) - 1);
				return EXIT_USAGE;
			}
			strcpy(o->id, optarg);
			break;
		case OPT_MTU:
			if (!parse_uint(optarg, SLIM_MIN_MTU, SLIM_MAX_MTU, &mtu, &end) || *end != '\0') {
				status("--mtu %s: expected %d..%d", optarg, SLIM_MIN_MTU, SLIM_MAX_MTU);
				return EXIT_USAGE;
			}
			o->mtu = (uint16_t)mtu;
			break;
		case OPT_CONTROL:
			o->control = true;
			break;
		case OPT_SCREENSHOT:
			o->screenshot = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		default:
			/* getopt said what was wrong */
			fputs("usage: slimland-console --server HOST:PORT [options] (--help)\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		status("unexpected argument %s", argv[optind]);
		return EXIT_USAGE;
	}
	if (!o->server) {
		status("--server HOST:PORT is required");
		return EXIT_USAGE;
	}
	return -1;
}

static void on_connecting(void *data, const char *why)
{
	struct console *c = data;
	c->busy_shown = false;
	if (why) {
		status("%s; connecting to %s again", why, c->opts.server);
	} else {
		status("connecting to %s", c->opts.server);
	}
	if (c->control) {
		slim_control_connecting(c->control, c->opts.server);
	}
}

static void on_attached(void *data, uint32_t assoc)
{
	struct console *c = data;
	c->busy_shown = false;
	status("attached to %s (association %08x)", c->opts.server, assoc);
	if (c->control) {
		slim_control_attached(c->control, assoc);
	}
}

static void on_refused(void *data, uint16_t reason, const char *text)
{
	struct console *c = data;
	if (reason == SLIM_REFUSE_BUSY && !c->busy_shown) {
		c->busy_shown = true;
		status("server busy: %s", text);
	}
	if (c->control) {
		slim_control_refused(c->control, reason, text);
	}
}

static void on_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct console *c = data;
	if (c->control) {
		slim_control_frame(c->control, frame, applied_us);
	}
}

static const struct slim_link_listener link_listener = {
	.connecting = on_connecting,
	.attached = on_attached,
	.refused = on_refused,
	.presented = on_presented,
};

/* Blocked, the signals wait in a file descriptor for the loop to read. */
static int open_signals(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	/* a reader of stdout that went away must not kill the console */
	sigaction(SIGPIPE, &ign, NULL);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0) {
		return -1;
	}
	return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void screenshot(struct console *c)
{
	if (!c->opts.screenshot) {
		status("SIGUSR1: no --screenshot PATH to write to");
	} else if (slim_png_write(c->opts.screenshot, slim_console_core_fb(c->core))) {
		status("screenshot written to %s", c->opts.screenshot);
	} else {
		status("screenshot: cannot write %s", c->opts.screenshot);
	}
}

static void handle_signals(struct console *c)
{
	struct signalfd_siginfo si;
	while (read(c->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			screenshot(c);
		} else {
			c->quit = true;
		}
	}
}

static bool run(struct console *c)
{
	enum { FD_SIGNAL, FD_LINK, FD_CONTROL, FD_COUNT };
	struct pollfd fds[FD_COUNT] = {
		[FD_SIGNAL] = { .fd = c->signal_fd, .events = POLLIN },
		[FD_LINK] = { .fd = slim_link_fd(c->link), .events = POLLIN },
		/* poll() skips a negative fd: without --control stdin is not read */
		[FD_CONTROL] = { .fd = c->control ? slim_control_fd(c->control) : -1,
			.events = POLLIN },
	};
	while (!c->quit) {
		slim_link_tick(c->link, slim_now_us());
		if (poll(fds, FD_COUNT, slim_link_timeout_ms(c->link, slim_now_us())) < 0) {
			if (errno == EINTR) {
				continue;
			}
			status("poll: %s", strerror(errno));
			return false;
		}
		/* Signals first: a SIGUSR1 sent before a command is served before it. */
		if (fds[FD_SIGNAL].revents) {
			handle_signals(c);
		}
		if (fds[FD_LINK].revents) {
			slim_link_dispatch(c->link);
		}
		if (fds[FD_CONTROL].revents && !slim_control_dispatch(c->control)) {
			c->quit = true;
		}
	}
	return true;
}

int main(int argc, char *argv[])
{
	struct console c = { .signal_fd = -1 };
	int ret = parse_options(argc, argv, &c.opts);
	if (ret >= 0) {
		return ret;
	}
	slim_log_init(c.opts.verbose ? SLIM_LOG_DEBUG : SLIM_LOG_INFO, NULL);

	char err[512];
	ret = EXIT_USAGE;
	c.link = slim_link_create(c.opts.server, err, sizeof(err));
	if (!c.link) {
		status("%s", err);
		goto out;
	}
	ret = EXIT_FAILURE;
	c.backend = slim_headless_backend_create();
	if (!c.backend) {
		status("cannot create the headless output");
		goto out;
	}
	c.core = slim_console_core_create(c.opts.width, c.opts.height, c.opts.mtu, c.backend,
		slim_link_send, c.link);
	if (!c.core) {
		status("cannot create a %ux%u screen", c.opts.width, c.opts.height);
		goto out;
	}
	if (c.opts.control) {
		c.control = slim_control_create(STDIN_FILENO, stdout, c.core, c.link);
		if (!c.control) {
			status("out of memory");
			goto out;
		}
	}
	c.signal_fd = open_signals();
	if (c.signal_fd < 0) {
		status("signalfd: %s", strerror(errno));
		goto out;
	}
	slim_link_start(c.link, c.core, c.opts.id, &link_listener, &c);
	ret = run(&c) ? EXIT_SUCCESS : EXIT_FAILURE;

out:
	slim_control_destroy(c.control);
	/* before the core: the link lets go of the core's events */
	slim_link_destroy(c.link);
	slim_console_core_destroy(c.core);
	if (c.backend) {
		c.backend->impl->destroy(c.backend);
	}
	if (c.signal_fd >= 0) {
		close(c.signal_fd);
	}
	return ret;
}
