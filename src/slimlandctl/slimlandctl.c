/*
 * slimlandctl: asks slimland-sessiond (§4 of session-manager.md).
 *
 *   slimlandctl [--socket PATH] list | detach SESSION | end SESSION | why CONSOLE
 *               | consoles | approve CONSOLE [NAME] | revoke CONSOLE | key | classes
 *               | audio | link | video | group | drain SERVER | undrain SERVER | top
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "top.h"

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
		perror(path);
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
	size_t len = 0;
	for (; i < argc; i++) {
		int n = snprintf(request + len, sizeof(request) - len, "%s%s",
			len ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= sizeof(request) - len - 1) {
			fprintf(stderr, "slimlandctl: request too long\n");
			return 2;
		}
		len += (size_t)n;
	}
	request[len++] = '\n';

	int fd = slimlandctl_connect(path);
	if (fd < 0) {
		return 1;
	}
	if (write(fd, request, len) != (ssize_t)len) {
		perror("write");
		return 1;
	}
	FILE *in = fdopen(fd, "r");
	if (!in) {
		return 1;
	}
	char line[2048];
	while (fgets(line, sizeof(line), in)) {
		if (strcmp(line, "ok\n") == 0) {
			fclose(in);
			return 0;
		}
		if (strncmp(line, "error ", 6) == 0) {
			fprintf(stderr, "slimlandctl: %s", line + 6);
			fclose(in);
			return 1;
		}
		fputs(line, stdout);
	}
	fprintf(stderr, "slimlandctl: the session manager hung up\n");
	fclose(in);
	return 1;
}
