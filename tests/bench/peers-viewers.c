/*
 * bench-peers' processes and viewers: starting and stopping the programs
 * it measures, attaching and detaching each viewer.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "peers-relay.h"
#include "peers-vnc.h"
#include "peers.h"

/* Whether `name` is a program on $PATH. */
bool peers_have(const char *name)
{
	const char *path = getenv("PATH");
	char dir[512], file[600];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		snprintf(file, sizeof(file), "%s/%s", dir, name);
		if (access(file, X_OK) == 0) {
			return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

/*
 * Starts `argv` in a process group of its own (so that it is stopped with
 * whatever it started: waypipe's connection handlers, the shell in foot),
 * in the session's runtime directory; with `out`, its stdout is there.
 */
pid_t peers_spawn(struct peers_bench *b, char *const argv[], int *out)
{
	int p[2] = { -1, -1 };
	if (out && pipe2(p, O_CLOEXEC) != 0) {
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (out) {
			dup2(p[1], STDOUT_FILENO);
		}
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDERR_FILENO);
		if (!out) {
			dup2(null, STDOUT_FILENO);
		}
		if (chdir(b->s.runtime_dir) != 0) {
			_exit(127);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0) {
		setpgid(pid, pid);
	}
	if (out) {
		close(p[1]);
		*out = p[0];
	}
	return pid;
}

/* Stops a process group, the console fed meanwhile: a client may ask for a last frame. */
void peers_stop_group(struct peers_bench *b, pid_t pid)
{
	if (pid <= 0) {
		return;
	}
	kill(-pid, SIGTERM);
	uint64_t end = bench_now_us() + 3000000;
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (bench_now_us() > end) {
			kill(-pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		bench_session_wait_frame(&b->s, 10);
	}
	/* what else was in the group (foot's shell, waypipe's handler) */
	kill(-pid, SIGKILL);
}

/* Keeps the console fed for `ms`. */
void peers_pump(struct peers_bench *b, int ms)
{
	uint64_t end = bench_now_us() + (uint64_t)ms * 1000;
	for (uint64_t now; (now = bench_now_us()) < end;) {
		bench_session_wait_frame(&b->s, (int)((end - now + 999) / 1000));
	}
}

/* waypipe's server side: the process started and the connection handlers it forked. */
uint64_t peers_waypipe_cpu_us(pid_t server)
{
	uint64_t us = bench_process_cpu_us(server);
	DIR *dir = opendir("/proc");
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = e->d_name[0] >= '0' && e->d_name[0] <= '9' ? fopen(path, "re") : NULL;
		size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f) {
			fclose(f);
		}
		buf[len] = '\0';
		int pid, ppid;
		char comm[32];
		if (sscanf(buf, "%d (%31[^)]) %*c %d", &pid, comm, &ppid) == 3 &&
				ppid == server && strcmp(comm, "waypipe") == 0) {
			us += bench_process_cpu_us(pid);
		}
	}
	if (dir) {
		closedir(dir);
	}
	return us;
}

static bool port_open(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0) {
		close(fd);
	}
	return ok;
}

static bool wayvnc_start(struct peers_bench *b, enum viewer_id i)
{
	struct peers_viewer *v = &b->v[i];
	uint16_t port = bench_free_port(SOCK_STREAM);
	char port_arg[8];
	snprintf(port_arg, sizeof(port_arg), "%u", port);
	char *argv[] = { "wayvnc", "127.0.0.1", port_arg, NULL };
	v->server = port ? peers_spawn(b, argv, NULL) : -1;
	uint64_t end = bench_now_us() + 10000000;
	while (v->server > 0 && !port_open(port) && bench_now_us() < end) {
		peers_pump(b, 50);
	}
	char err[128] = "wayvnc did not start";
	v->vnc = v->server > 0 && port_open(port) ?
		bench_vnc_connect(port, i == VIEWER_ZRLE ? "zrle" : "tight", err, sizeof(err)) :
		NULL;
	/* the first update is the whole screen */
	while (v->vnc && bench_vnc_updates(v->vnc) == 0 && bench_now_us() < end + 10000000) {
		peers_pump(b, 20);
	}
	if (!v->vnc || bench_vnc_updates(v->vnc) == 0) {
		fprintf(stderr, "bench-peers: %s: %s\n", peers_viewer_names[i],
			v->vnc ? "no first picture" : err);
		return false;
	}
	return true;
}

static bool waypipe_start(struct peers_bench *b)
{
	struct peers_viewer *v = &b->v[VIEWER_WAYPIPE];
	snprintf(v->client_sock, sizeof(v->client_sock), "%s/waypipe-client.sock",
		b->s.runtime_dir);
	snprintf(v->relay_sock, sizeof(v->relay_sock), "%s/waypipe-relay.sock", b->s.runtime_dir);
	/* waypipe does not replace a socket left behind */
	unlink(v->client_sock);
	char *argv[] = { "waypipe", "--compress", "lz4", "-s", v->client_sock, "client", NULL };
	v->server = peers_spawn(b, argv, NULL);
	struct stat st;
	uint64_t end = bench_now_us() + 10000000;
	while (v->server > 0 && stat(v->client_sock, &st) != 0 && bench_now_us() < end) {
		peers_pump(b, 20);
	}
	v->relay = stat(v->client_sock, &st) == 0 ?
		bench_relay_start(v->relay_sock, v->client_sock) : NULL;
	if (!v->relay) {
		fprintf(stderr, "bench-peers: waypipe client did not start\n");
	}
	return v->relay != NULL;
}

void peers_viewer_stop(struct peers_bench *b, enum viewer_id i)
{
	struct peers_viewer *v = &b->v[i];
	bench_vnc_destroy(v->vnc);
	bench_relay_stop(v->relay);
	peers_stop_group(b, v->server);
	v->vnc = NULL;
	v->relay = NULL;
	v->server = 0;
	v->active = v->record = false;
}

/* Attaches a viewer (slimland's console always is); false if it cannot run. */
bool peers_viewer_start(struct peers_bench *b, enum viewer_id i)
{
	struct peers_viewer *v = &b->v[i];
	if (v->missing || v->failed) {
		return false;
	}
	bool ok = i == VIEWER_SLIM || (i == VIEWER_WAYPIPE ? waypipe_start(b) : wayvnc_start(b, i));
	if (!ok) {
		v->failed = true;
		peers_viewer_stop(b, i);
		return false;
	}
	v->active = v->record = true;
	return true;
}

/* A peer whose connection went during a pass failed it. */
void peers_viewer_check(struct peers_bench *b, enum viewer_id i)
{
	struct peers_viewer *v = &b->v[i];
	if (v->vnc && !bench_vnc_alive(v->vnc)) {
		fprintf(stderr, "bench-peers: %s: the connection ended\n", peers_viewer_names[i]);
		v->failed = true;
	}
}
