/*
 * slimland-sessiond: the session manager (protocol/session-manager.md).
 *
 *   slimland-sessiond [--config PATH] [--state PATH] [--run-dir DIR] [-v]
 *   slimland-sessiond --check-config [PATH]
 *
 * Its rooms, each above the ones it uses; a lower one tells a higher one
 * only through what it was given (callbacks, handlers, signals):
 *
 *   main.c, daemon-ops.c  the daemon: makes the rooms and ties them together,
 *                         the real side effects (slim_manager_ops)
 *   front/                what speaks to the manager: consoles (UDP/DTLS),
 *                         greeters (greeter.sock), slimlandctl (ctl.sock)
 *   group/                a server group's registry in etcd: reads the
 *                         table, answers it through slim_manager_elsewhere
 *   metrics/              Prometheus metrics: reads the table and the group
 *                         (metrics-render.c), serves them over HTTP
 *                         (metrics-http.c, libmicrohttpd on the loop) and to
 *                         ctl.c's `metrics`
 *   state.c               the state file: the table written and restored
 *   table/                the decisions: consoles, sessions, what shows
 *                         where, cards, logins, enrolment, what the manager
 *                         says to consoles; its consoles' signals tell the
 *                         front what it is to hear
 *   worker/               what runs beside the manager: login workers (PAM),
 *                         compositors (spawn, their control sockets, which
 *                         report through a handler), greeters' uids
 *   config.c              slimland.conf
 */
#define _GNU_SOURCE /* getopt_long, explicit_bzero */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wayland-server-core.h>
#include "daemon-ops.h"
#include "config.h"
#include "consoles.h"
#include "ctl.h"
#include "greeter-socket.h"
#include "group.h"
#include "metrics-http.h"
#include "sessions.h"
#include "slim-log.h"
#include "slim-secure.h"
#include "state.h"

#define DEFAULT_RUN_DIR "/run/slimland"

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--config PATH] [--state PATH] [--run-dir DIR] [-v]\n"
		"       %s --check-config [PATH]\n"
		"  --config   the configuration (default %s)\n"
		"  --state    the state file (default: the config's `state`, else RUN-DIR/state)\n"
		"  --run-dir  greeter.sock, ctl.sock and the state file (default %s)\n"
		"  -v         more logging\n"
		"  --check-config  says what is wrong in PATH (default: --config's), line by\n"
		"             line; exits 0 if nothing, else 1, and starts nothing\n"
		"More in slimland-sessiond(8) and slimland.conf(5).\n", prog, prog,
		SLIM_CONFIG_DEFAULT_PATH, DEFAULT_RUN_DIR);
}

/* --check-config: FILE:LINE: WHAT, plain, as compilers say it */
__attribute__((format(printf, 2, 0)))
static void log_plain(enum slim_log_level level, const char *fmt, va_list args)
{
	slim_log_line("", fmt, args);
}

static int check_config(const char *path)
{
	slim_log_init(SLIM_LOG_ERROR, log_plain);
	struct slim_config config;
	slim_config_defaults(&config);
	int bad = slim_config_load(&config, path);
	if (bad >= 0) {
		bad += slim_config_check(&config, path);
	}
	if (bad != 0) {
		return 1;
	}
	printf("%s: fine\n", path);
	return 0;
}

static int handle_stop(int sig, void *data)
{
	bool *running = data;
	slim_log(SLIM_LOG_INFO, "signal %d: stopping; sessions keep running", sig);
	*running = false;
	return 0;
}

static int handle_child(int sig, void *data)
{
	/* compositors we started: their pidfds say they exited, this reaps them */
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	return 0;
}

/*
 * KEY_DIR's keys, made on the first start: the host key consoles pin
 * (DTLS only) and the key card tokens are hashed under. False: logged.
 */
static bool load_keys(const struct slim_config *config, struct slim_sec_identity **identity,
		uint8_t card_key[SLIM_SEC_KEY_LEN])
{
	char path[300], err[512];
	snprintf(path, sizeof(path), "%s/card.key", config->key_dir);
	if (!slim_sec_key_file_load(path, true, card_key, err, sizeof(err))) {
		slim_log(SLIM_LOG_ERROR, "card key: %s", err);
		return false;
	}
	*identity = NULL;
	if (config->transport == SLIM_SEC_CLEAR) {
		return true;
	}
	snprintf(path, sizeof(path), "%s/host.key", config->key_dir);
	*identity = slim_sec_identity_load(path, true, err, sizeof(err));
	if (!*identity) {
		slim_log(SLIM_LOG_ERROR, "host key: %s", err);
		return false;
	}
	char hex[65];
	slim_sec_fingerprint_hex(slim_sec_identity_fingerprint(*identity), hex);
	/* what consoles pin, and what --server-key wants */
	slim_log(SLIM_LOG_INFO, "host key sha256:%s", hex);
	return true;
}

/* Where sessions' cgroups go, said once; none: sessions run unprioritised. */
static void start_cgroups(const struct slim_cgroup_policy *policy)
{
	struct slim_cgroup_fs fs;
	char where[512];
	if (!policy->enabled) {
		slim_log(SLIM_LOG_INFO, "cgroups = off: sessions run unprioritised");
	} else if (!slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", where, sizeof(where))) {
		slim_log(SLIM_LOG_INFO, "cgroups: %s: sessions run unprioritised", where);
	} else {
		slim_cgroup_manager_base(&fs, policy->slice, where, sizeof(where));
		slim_log(SLIM_LOG_INFO, "cgroups: v%d, sessions in %s", fs.version, where);
	}
}

int main(int argc, char *argv[])
{
	const char *config_path = NULL, *state_path = NULL, *run_dir = DEFAULT_RUN_DIR;
	enum slim_log_level verbosity = SLIM_LOG_INFO;
	bool check = false;
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state", required_argument, NULL, 's' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "check-config", no_argument, NULL, 'C' },
		{ 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "c:s:r:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 's':
			state_path = optarg;
			break;
		case 'r':
			run_dir = optarg;
			break;
		case 'v':
			verbosity = SLIM_LOG_DEBUG;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'C':
			check = true;
			break;
		default:
			usage(stderr, argv[0]);
			return 1;
		}
	}
	if (check && optind + 1 >= argc) {
		return check_config(optind < argc ? argv[optind] :
			config_path ? config_path : SLIM_CONFIG_DEFAULT_PATH);
	}
	if (optind != argc) {
		usage(stderr, argv[0]);
		return 1;
	}
	slim_log_init(verbosity, NULL);

	struct slim_config config;
	slim_config_defaults(&config);
	if (config_path) {
		if (slim_config_load(&config, config_path) < 0) {
			return 1;
		}
	} else if (access(SLIM_CONFIG_DEFAULT_PATH, F_OK) == 0) {
		slim_config_load(&config, SLIM_CONFIG_DEFAULT_PATH);
	}

	struct slim_backend backend = { 0 };
	if (state_path) {
		snprintf(backend.state_path, sizeof(backend.state_path), "%s", state_path);
	} else if (config.state_set) {
		snprintf(backend.state_path, sizeof(backend.state_path), "%s", config.state);
	} else {
		snprintf(backend.state_path, sizeof(backend.state_path), "%s/state", run_dir);
	}
	if (mkdir(run_dir, 0755) < 0 && errno != EEXIST) {
		slim_log(SLIM_LOG_ERROR, "%s: %s", run_dir, strerror(errno));
		return 1;
	}
	/* the compositors we start must not die with a signal meant for us */
	signal(SIGPIPE, SIG_IGN);

	int ret = 1;
	bool running = true;
	char ctl_path[256], enroll_path[300];
	snprintf(ctl_path, sizeof(ctl_path), "%s/ctl.sock", run_dir);
	snprintf(enroll_path, sizeof(enroll_path), "%s/consoles", config.key_dir);
	struct slim_sec_identity *identity = NULL;
	uint8_t card_key[SLIM_SEC_KEY_LEN];
	struct wl_event_loop *loop = NULL;
	struct wl_event_source *sigs[3] = { NULL };
	struct slim_manager *mgr = NULL;
	struct slim_greeter_server *greeter = NULL;
	struct slim_ctl_server *ctl = NULL;
	struct slim_group *group = NULL;
	struct slim_metrics_server *metrics = NULL;
	if (!load_keys(&config, &identity, card_key)) {
		goto out;
	}
	start_cgroups(&config.cgroups);
	loop = wl_event_loop_create();
	if (!loop) {
		goto out;
	}
	sigs[0] = wl_event_loop_add_signal(loop, SIGTERM, handle_stop, &running);
	sigs[1] = wl_event_loop_add_signal(loop, SIGINT, handle_stop, &running);
	sigs[2] = wl_event_loop_add_signal(loop, SIGCHLD, handle_child, NULL);
	if (!sigs[0] || !sigs[1] || !sigs[2]) {
		goto out;
	}
	mgr = slim_manager_create(loop, &config, run_dir, card_key, enroll_path,
		identity ? slim_sec_identity_fingerprint(identity) : NULL, &slim_backend_ops, &backend);
	explicit_bzero(card_key, sizeof(card_key));
	if (!mgr) {
		goto out;
	}
	backend.udp = slim_udp_create(mgr, config.listen, identity);
	greeter = backend.udp ? slim_greeter_server_create(mgr) : NULL;
	if (!greeter) {
		goto out;
	}
	if (config.group.etcd[0]) {
		group = slim_group_create(mgr, &config.group);
		if (!group) {
			goto out;
		}
	}
	ctl = slim_ctl_server_create(mgr, group, ctl_path);
	if (!ctl) {
		goto out;
	}
	backend.mgr = mgr;
	backend.group = group;
	/* metrics that cannot listen are said in the log; the sessions do not wait for them */
	if (config.metrics_listen[0]) {
		metrics = slim_metrics_server_create(mgr, group, config.metrics_listen);
	}
	slim_state_restore(mgr, backend.state_path);
	slim_state_write(mgr, backend.state_path);
	slim_log(SLIM_LOG_INFO, "slimland-sessiond: running (state %s)", backend.state_path);
	/* a child that exited before the SIGCHLD source existed is reaped here */
	handle_child(SIGCHLD, NULL);

	while (running) {
		if (wl_event_loop_dispatch(loop, -1) < 0 && errno != EINTR) {
			slim_log(SLIM_LOG_ERROR, "event loop: %s", strerror(errno));
			break;
		}
	}
	ret = 0;
out:
	/* in the reverse order of their making; each destroy(NULL) does nothing */
	explicit_bzero(card_key, sizeof(card_key)); /* a start that failed before the manager */
	slim_metrics_server_destroy(metrics);
	slim_ctl_server_destroy(ctl);
	backend.group = NULL;
	slim_group_destroy(group);
	slim_greeter_server_destroy(greeter);
	slim_udp_destroy(backend.udp);
	backend.mgr = NULL;
	slim_manager_destroy(mgr);
	for (int i = 0; i < 3; i++) {
		if (sigs[i]) {
			wl_event_source_remove(sigs[i]);
		}
	}
	if (loop) {
		wl_event_loop_destroy(loop);
	}
	slim_sec_identity_destroy(identity);
	return ret;
}
