/*
 * slimlandctl: asks slimland-sessiond (§4 of session-manager.md).
 *
 *   slimlandctl [--socket PATH] list | detach SESSION | end SESSION | why CONSOLE
 *               | consoles | approve CONSOLE [NAME] | revoke CONSOLE | key | classes
 *               | audio | link | video | group | drain SERVER | undrain SERVER | top
 *               | shadow SESSION CONSOLE [--control] | shadow --stop SESSION
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "top.h"

/* How long `shadow` waits for the user's answer and the console: past the question's 30 s. */
#define SHADOW_WAIT_S 50

static void usage(FILE *f)
{
	fprintf(f, "usage: slimlandctl [--socket PATH] REQUEST\n"
		"  list                     consoles and sessions now\n"
		"  detach SESSION           its console goes to the greeter; it runs on\n"
		"  end SESSION              SIGTERM to its compositor\n"
		"  why CONSOLE              why a console shows the greeter\n"
		"  consoles                 enrolled, revoked and waiting consoles\n"
		"  approve CONSOLE [NAME]   a waiting (or revoked) console may connect\n"
		"  revoke CONSOLE           a console may connect no more\n"
		"  key                      the host key consoles pin (for --server-key)\n"
		"  classes                  each session's processes by cgroup class\n"
		"                           (compositor, interactive, background, hidden)\n"
		"                           and the CPU each class used, ms\n"
		"  audio                    per console showing a session: the sound's\n"
		"                           codec, kbit/s, the console's jitter buffer (ms),\n"
		"                           the packets lost on the way and those lost in\n"
		"                           every copy (%%)\n"
		"  link                     per console showing a session: what its pacer\n"
		"                           knows of the link: the estimated and the paced\n"
		"                           rate (kbit/s, 0: nothing held back), the round\n"
		"                           trip and its minimum (ms), the bytes waiting at\n"
		"                           the server and the datagrams dropped there\n"
		"  video                    per console showing a session's video as H.264:\n"
		"                           the encoder (software and its x264 preset, or\n"
		"                           vaapi and its render node), kbit/s, the encode\n"
		"                           time p50 and p99 (ms) and the picture's size\n"
		"  group                    the server group: each server's load and room,\n"
		"                           where each session runs, where a login goes\n"
		"  drain SERVER             no new sessions on SERVER (its own run on)\n"
		"  undrain SERVER           new sessions may go to SERVER again\n"
		"  metrics                  the Prometheus text metrics_listen serves\n"
		"  top                      consoles and sessions live, every second: state,\n"
		"                           round trip, link rate, kB/s sent, keys/s and\n"
		"                           keystroke to pixels (ms), CPU %% and memory;\n"
		"                           q or Ctrl-C quits\n"
		"  shadow SESSION CONSOLE [--control]\n"
		"                           CONSOLE (enrolled, showing nothing or its\n"
		"                           greeter) watches SESSION once its user says yes\n"
		"                           (slimland.conf's shadow); --control: with its\n"
		"                           keyboard and mouse; waits for the answer\n"
		"  shadow --stop SESSION    the console watching SESSION goes back\n"
		"More in slimlandctl(8).\n");
}

int slimlandctl_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "slimlandctl: socket path too long\n");
		return -1;
	}
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (errno == EACCES) {
			fprintf(stderr, "slimlandctl: %s: permission denied: the session manager "
				"takes requests from root only\n", path);
		} else {
			perror(path);
		}
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	/*
	 * Peer check: the manager is root (or, unprivileged, ourselves): the
	 * answers of anyone else who put a socket at --socket's path are not
	 * its.
	 */
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t cred_len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 ||
			(cred.uid != 0 && cred.uid != getuid())) {
		fprintf(stderr, "slimlandctl: %s is not slimland-sessiond's (uid %d)\n", path,
			(int)cred.uid);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One request's answer: every line but the last to `line_out` (NULL:
 * stdout), then true for ok; an error is said on stderr.
 */
static bool ask(FILE *in, int fd, const char *request, size_t len,
		void (*line_out)(void *data, const char *line), void *data)
{
	if (write(fd, request, len) != (ssize_t)len) {
		perror("write");
		return false;
	}
	char line[2048];
	while (fgets(line, sizeof(line), in)) {
		if (strcmp(line, "ok\n") == 0) {
			return true;
		}
		if (strncmp(line, "error ", 6) == 0) {
			fprintf(stderr, "slimlandctl: %s", line + 6);
			return false;
		}
		if (line_out) {
			line_out(data, line);
		} else {
			fputs(line, stdout);
		}
	}
	fprintf(stderr, "slimlandctl: the session manager hung up\n");
	return false;
}

struct shadow_wait {
	char prefix[64]; /* "shadow SESSION CONSOLE " */
	char state[128]; /* what follows it in `list`, "" if nothing */
};

static void shadow_line(void *data, const char *line)
{
	struct shadow_wait *w = data;
	size_t n = strlen(w->prefix);
	if (strncmp(line, w->prefix, n) == 0) {
		snprintf(w->state, sizeof(w->state), "%s", line + n);
		w->state[strcspn(w->state, "\n")] = '\0';
	}
}

/* After `shadow`: `list` until the console watches, or the watching is over (refused). */
static int wait_shadow(FILE *in, int fd, const char *session, const char *console)
{
	struct shadow_wait w = { 0 };
	snprintf(w.prefix, sizeof(w.prefix), "shadow %s %s ", session, console);
	printf("asked the user of session %s (up to %d s)\n", session, SHADOW_WAIT_S);
	fflush(stdout);
	for (int i = 0; i < SHADOW_WAIT_S * 5; i++) {
		w.state[0] = '\0';
		if (!ask(in, fd, "list\n", 5, shadow_line, &w)) {
			return 1;
		}
		if (strcmp(w.state, "watching") == 0) {
			printf("console %s watches session %s\n", console, session);
			return 0;
		}
		if (strncmp(w.state, "over ", 5) == 0) {
			const char *why = w.state + 5;
			fprintf(stderr, "slimlandctl: not watching: %s\n",
				strcmp(why, "refused") == 0 ? "the user refused" :
				strcmp(why, "timeout") == 0 ? "the user did not answer in 30 s" : why);
			return 1;
		}
		struct timespec pause = { 0, 200 * 1000000L };
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "slimlandctl: no answer from the session in %d s\n", SHADOW_WAIT_S);
	return 1;
}

/*
 * `shadow SESSION CONSOLE [--control]` and `shadow --stop SESSION` as the
 * manager's lines; argv's words as they are otherwise. 0, or 2 for usage.
 */
static int make_request(int argc, char *argv[], int i, char *request, size_t size,
		size_t *len, bool *shadow)
{
	*shadow = false;
	if (strcmp(argv[i], "shadow") == 0) {
		int n = argc - i;
		if (n == 3 && strcmp(argv[i + 1], "--stop") == 0) {
			*len = (size_t)snprintf(request, size, "unshadow %s\n", argv[i + 2]);
		} else if ((n == 3 || (n == 4 && strcmp(argv[i + 3], "--control") == 0)) &&
				argv[i + 1][0] != '-' && argv[i + 2][0] != '-') {
			*len = (size_t)snprintf(request, size, "shadow %s %s%s\n", argv[i + 1],
				argv[i + 2], n == 4 ? " control" : "");
			*shadow = true;
		} else {
			fprintf(stderr, "usage: slimlandctl shadow SESSION CONSOLE [--control]\n"
				"       slimlandctl shadow --stop SESSION\n");
			return 2;
		}
		if (*len >= size) {
			fprintf(stderr, "slimlandctl: request too long\n");
			return 2;
		}
		return 0;
	}
	*len = 0;
	for (; i < argc; i++) {
		int n = snprintf(request + *len, size - *len, "%s%s", *len ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= size - *len - 1) {
			fprintf(stderr, "slimlandctl: request too long\n");
			return 2;
		}
		*len += (size_t)n;
	}
	request[(*len)++] = '\n';
	return 0;
}

int main(int argc, char *argv[])
{
	const char *path = "/run/slimland/ctl.sock";
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "--socket") == 0) {
		path = argv[i + 1];
		i += 2;
	}
	if (i >= argc || strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
		usage(i >= argc ? stderr : stdout);
		return i >= argc ? 2 : 0;
	}
	if (strcmp(argv[i], "top") == 0 && i + 1 == argc) {
		return slimlandctl_top(path);
	}
	char request[1024];
	size_t len;
	bool shadow;
	int first = i;
	if (make_request(argc, argv, i, request, sizeof(request), &len, &shadow) != 0) {
		return 2;
	}

	int fd = slimlandctl_connect(path);
	if (fd < 0) {
		return 1;
	}
	FILE *in = fdopen(fd, "r");
	if (!in) {
		return 1;
	}
	int ret = ask(in, fd, request, len, shadow ? shadow_line : NULL,
		&(struct shadow_wait){ 0 }) ? 0 : 1;
	if (ret == 0 && shadow) {
		ret = wait_shadow(in, fd, argv[first + 1], argv[first + 2]);
	}
	fclose(in);
	return ret;
}
