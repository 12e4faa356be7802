#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cgroup.h"
#include "group.h"
#include "metrics-render.h"
#include "placement.h"
#include "prom-text.h"
#include "sessions.h"

/* A console's figures as its session's compositor last reported them. */
struct showing {
	const struct slim_session *s;
	char session[16];
	struct slim_prom_label labels[3]; /* console, session, user */
};

static bool showing_of(const struct slim_session *s, const char *reported, struct showing *out)
{
	if (s->greeter || !s->console || strcmp(reported, s->console->id) != 0) {
		return false;
	}
	out->s = s;
	snprintf(out->session, sizeof(out->session), "%u", s->id);
	out->labels[0] = (struct slim_prom_label){ "console", s->console->id };
	out->labels[1] = (struct slim_prom_label){ "session", out->session };
	out->labels[2] = (struct slim_prom_label){ "user", s->user };
	return true;
}

/* One value of a console's report: which report, and the value in the family's unit. */
struct console_family {
	const char *name, *type, *help;
	const char *(*report)(const struct slim_session *s); /* its console field */
	double (*value)(const struct slim_session *s);
};

static const char *net_of(const struct slim_session *s) { return s->net.console; }
static const char *traffic_of(const struct slim_session *s) { return s->traffic.console; }
static const char *audio_of(const struct slim_session *s) { return s->audio.console; }

static double rtt(const struct slim_session *s) { return s->net.rtt_us / 1e6; }
static double min_rtt(const struct slim_session *s) { return s->net.min_rtt_us / 1e6; }
static double rate(const struct slim_session *s) { return s->net.rate_kbit * 125.0; }
static double pacing(const struct slim_session *s) { return s->net.pacing_kbit * 125.0; }
static double queue(const struct slim_session *s) { return (double)s->net.queue_bytes; }
static double dropped(const struct slim_session *s) { return (double)s->net.dropped; }
static double bytes(const struct slim_session *s) { return (double)s->traffic.bytes; }
static double datagrams(const struct slim_session *s) { return (double)s->traffic.datagrams; }
static double repaired(const struct slim_session *s) { return (double)s->traffic.repaired; }
static double resent(const struct slim_session *s) { return (double)s->traffic.resent; }
static double audio_rate(const struct slim_session *s) { return s->audio.kbit * 125.0; }
static double audio_depth(const struct slim_session *s) { return s->audio.depth_ms / 1e3; }
static double audio_loss(const struct slim_session *s) { return s->audio.loss_permille / 1e3; }
static double audio_lost(const struct slim_session *s) { return s->audio.lost_permille / 1e3; }

static const struct console_family console_families[] = {
	{ "slimland_console_round_trip_seconds", "gauge",
		"Round trip to the console, as its session's pacer last measured it.", net_of, rtt },
	{ "slimland_console_min_round_trip_seconds", "gauge",
		"Shortest round trip to the console the pacer has seen.", net_of, min_rtt },
	{ "slimland_console_link_rate_bytes_per_second", "gauge",
		"The console link's rate as the pacer learnt it (0: no bottleneck seen).", net_of, rate },
	{ "slimland_console_pacing_bytes_per_second", "gauge",
		"What the pacer sends to the console at (0: no limit).", net_of, pacing },
	{ "slimland_console_queue_bytes", "gauge",
		"Bytes waiting for the pacer to send them to the console.", net_of, queue },
	{ "slimland_console_dropped_datagrams_total", "counter",
		"Datagrams to the console dropped before sending, superseded by newer pixels.",
		net_of, dropped },
	{ "slimland_console_sent_bytes_total", "counter",
		"Bytes of display datagrams sent to the console in its association.", traffic_of, bytes },
	{ "slimland_console_sent_datagrams_total", "counter",
		"Display datagrams sent to the console in its association.", traffic_of, datagrams },
	{ "slimland_console_repaired_datagrams_total", "counter",
		"Datagrams the console reported lost, whose pixels were sent again.",
		traffic_of, repaired },
	{ "slimland_console_video_resent_fragments_total", "counter",
		"Compressed video fragments sent again after a loss.", traffic_of, resent },
	{ "slimland_console_audio_bytes_per_second", "gauge",
		"The rate of the sound sent to the console.", audio_of, audio_rate },
	{ "slimland_console_audio_buffer_seconds", "gauge",
		"Sound the console's jitter buffer holds.", audio_of, audio_depth },
	{ "slimland_console_audio_loss_ratio", "gauge",
		"Share of sound packets lost on the way to the console (repaired or not).",
		audio_of, audio_loss },
	{ "slimland_console_audio_lost_ratio", "gauge",
		"Share of sound packets lost and not repaired (concealed).", audio_of, audio_lost },
};

static void render_console_family(struct slim_prom *p, struct slim_manager *mgr,
		const struct console_family *f)
{
	slim_prom_family(p, f->name, f->type, f->help);
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		struct showing sh;
		if (showing_of(s, f->report(s), &sh)) {
			slim_prom_f64(p, f->name, sh.labels, 3, f->value(s));
		}
	}
}

static void render_key_latency(struct slim_prom *p, struct slim_manager *mgr)
{
	static const char name[] = "slimland_console_key_to_pixels_seconds";
	slim_prom_family(p, name, "histogram", "From the datagram that carried a key press "
		"to the presentation of the frame that answered it, on the console's clock.");
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		struct showing sh;
		if (!showing_of(s, s->keys.console, &sh)) {
			continue;
		}
		const struct slim_key_latency *k = &s->keys.latency;
		struct slim_prom_label labels[4] = { sh.labels[0], sh.labels[1], sh.labels[2] };
		char le[24];
		uint64_t below = 0;
		for (int i = 0; i < SLIM_KEY_BUCKETS; i++) {
			below += k->buckets[i];
			snprintf(le, sizeof(le), "%g", slim_key_bucket_us[i] / 1e6);
			labels[3] = (struct slim_prom_label){ "le", le };
			slim_prom_u64(p, "slimland_console_key_to_pixels_seconds_bucket", labels, 4,
				below);
		}
		labels[3] = (struct slim_prom_label){ "le", "+Inf" };
		slim_prom_u64(p, "slimland_console_key_to_pixels_seconds_bucket", labels, 4, k->count);
		slim_prom_f64(p, "slimland_console_key_to_pixels_seconds_sum", sh.labels, 3,
			k->sum_us / 1e6);
		slim_prom_u64(p, "slimland_console_key_to_pixels_seconds_count", sh.labels, 3,
			k->count);
	}
}

static void render_video(struct slim_prom *p, struct slim_manager *mgr)
{
	static const struct {
		const char *name, *help;
	} families[] = {
		{ "slimland_console_video_bytes_per_second",
			"The rate of the console's busiest compressed video stream." },
		{ "slimland_console_video_encode_p50_seconds",
			"Median time to encode a picture of that stream." },
		{ "slimland_console_video_encode_p99_seconds",
			"99th percentile of the time to encode a picture of that stream." },
		{ "slimland_console_video_pixels",
			"The coded size of that stream's pictures, in pixels." },
	};
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		slim_prom_family(p, families[f].name, "gauge", families[f].help);
		struct slim_session *s;
		wl_list_for_each(s, &mgr->sessions, link) {
			struct showing sh;
			if (!showing_of(s, s->video.console, &sh)) {
				continue;
			}
			const struct slim_session_video *v = &s->video;
			struct slim_prom_label labels[5] = { sh.labels[0], sh.labels[1], sh.labels[2],
				{ "encoder", v->kind }, { "device", v->device } };
			double value[] = { v->kbit * 125.0, v->encode_p50_us / 1e6,
				v->encode_p99_us / 1e6, (double)v->width * v->height };
			slim_prom_f64(p, families[f].name, labels, 5, value[f]);
		}
	}
}

/* Each console the manager knows, a series per state: 1 for the one it is in. */
static void render_console_states(struct slim_prom *p, struct slim_manager *mgr)
{
	static const char name[] = "slimland_console_state";
	static const char *const states[] = { "greeter", "session", "waiting", "away" };
	slim_prom_family(p, name, "gauge", "The state a console is in (1) and is not in (0).");
	struct slim_console *c;
	wl_list_for_each(c, &mgr->consoles, link) {
		const char *now = c->heard.away ? "away" : slim_console_state_str(c->state);
		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
			struct slim_prom_label labels[2] = { { "console", c->id }, { "state", states[i] } };
			slim_prom_u64(p, name, labels, 2, strcmp(now, states[i]) == 0);
		}
	}
	slim_prom_family(p, "slimland_consoles_pending", "gauge",
		"Consoles waiting to be approved (slimlandctl approve).");
	slim_prom_u64(p, "slimland_consoles_pending", NULL, 0, mgr->enroll.n_pending);
}

static const char *session_state(const struct slim_session *s)
{
	if (s->ending) {
		return "ending";
	}
	if (!s->console) {
		return "detached";
	}
	return s->attached ? "attached" : "attaching";
}

static void render_sessions(struct slim_prom *p, struct slim_manager *mgr)
{
	slim_prom_family(p, "slimland_session_info", "gauge",
		"A user's session, its state and the console showing it (\"\" for none).");
	struct slim_session *s;
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter) {
			continue;
		}
		char id[16];
		snprintf(id, sizeof(id), "%u", s->id);
		struct slim_prom_label labels[4] = { { "session", id }, { "user", s->user },
			{ "state", session_state(s) }, { "console", s->console ? s->console->id : "" } };
		slim_prom_u64(p, "slimland_session_info", labels, 4, 1);
	}
	struct slim_cgroup_fs fs;
	char why[256];
	if (!slim_cgroup_fs_detect(&fs, "/sys/fs/cgroup", why, sizeof(why))) {
		return;
	}
	slim_prom_family(p, "slimland_session_cpu_seconds_total", "counter",
		"CPU time used by the processes of each class of a session's cgroup.");
	wl_list_for_each(s, &mgr->sessions, link) {
		if (s->greeter) {
			continue;
		}
		char rel[SLIM_CGROUP_PATH], id[16];
		slim_cgroup_path(rel, sizeof(rel), s->uid, s->id);
		snprintf(id, sizeof(id), "%u", s->id);
		for (int class = 0; class < SLIM_CGROUP_CLASSES; class++) {
			uint64_t cpu_us;
			if (slim_cgroup_class_read(&fs, rel, class, NULL, 0, &cpu_us) < 0) {
				continue;
			}
			struct slim_prom_label labels[3] = { { "session", id }, { "user", s->user },
				{ "class", slim_cgroup_class_name(class) } };
			slim_prom_f64(p, "slimland_session_cpu_seconds_total", labels, 3, cpu_us / 1e6);
		}
	}
	slim_prom_family(p, "slimland_session_memory_bytes", "gauge",
		"Memory a session's cgroup uses (memory.current).");
	wl_list_for_each(s, &mgr->sessions, link) {
		char rel[SLIM_CGROUP_PATH], id[16];
		uint64_t used;
		slim_cgroup_path(rel, sizeof(rel), s->uid, s->id);
		if (s->greeter || !slim_cgroup_memory_read(&fs, rel, &used)) {
			continue;
		}
		snprintf(id, sizeof(id), "%u", s->id);
		struct slim_prom_label labels[2] = { { "session", id }, { "user", s->user } };
		slim_prom_u64(p, "slimland_session_memory_bytes", labels, 2, used);
	}
}

/* The group's servers: one family at a time, so the registry is read once for each. */
struct group_render {
	struct slim_prom *p;
	int field;
};

static void group_server(void *data, const struct slim_place_server *server, bool self)
{
	struct group_render *r = data;
	struct slim_prom_label labels[2] = { { "server", server->name },
		{ "this", self ? "1" : "0" } };
	static const char *const names[] = { "slimland_group_server_sessions",
		"slimland_group_server_memory_available_bytes", "slimland_group_server_cpus",
		"slimland_group_server_load1", "slimland_group_server_draining" };
	double value[] = { server->sessions, server->mem_avail_mb * 1048576.0, server->cpus,
		server->load_pct / 100.0, server->drain };
	slim_prom_f64(r->p, names[r->field], labels, 2, value[r->field]);
}

static void render_group(struct slim_prom *p, struct slim_group *group)
{
	static const char *const families[][2] = {
		{ "slimland_group_server_sessions", "Sessions a server of the group runs." },
		{ "slimland_group_server_memory_available_bytes",
			"Memory available on a server of the group." },
		{ "slimland_group_server_cpus", "CPUs of a server of the group." },
		{ "slimland_group_server_load1", "1-minute load average of a server of the group." },
		{ "slimland_group_server_draining",
			"Whether a server of the group takes no new sessions (slimlandctl drain)." },
	};
	struct group_render r = { .p = p };
	bool reachable = true;
	for (r.field = 0; r.field < 5; r.field++) {
		slim_prom_family(p, families[r.field][0], "gauge", families[r.field][1]);
		reachable = slim_group_servers(group, group_server, &r);
	}
	slim_prom_family(p, "slimland_group_etcd_reachable", "gauge",
		"Whether the group's registry (etcd) answers this server.");
	slim_prom_u64(p, "slimland_group_etcd_reachable", NULL, 0, reachable);
}

/* The manager process, as every Prometheus client library names it. */
static void render_process(struct slim_prom *p)
{
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f) {
		fclose(f);
	}
	buf[n] = '\0';
	/* after the command's closing parenthesis: field 3 on */
	const char *rest = strrchr(buf, ')');
	unsigned long utime, stime, vsize;
	unsigned long long start;
	long rss;
	if (rest && tick > 0 && sscanf(rest + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			"%lu %lu %*d %*d %*d %*d %*d %*d %llu %lu %ld", &utime, &stime, &start,
			&vsize, &rss) == 5) {
		slim_prom_family(p, "process_cpu_seconds_total", "counter",
			"User and system CPU time the manager used.");
		slim_prom_f64(p, "process_cpu_seconds_total", NULL, 0,
			(double)(utime + stime) / (double)tick);
		slim_prom_family(p, "process_resident_memory_bytes", "gauge",
			"The manager's resident memory.");
		slim_prom_u64(p, "process_resident_memory_bytes", NULL, 0,
			(uint64_t)(rss > 0 ? rss : 0) * (uint64_t)page);
		slim_prom_family(p, "process_virtual_memory_bytes", "gauge",
			"The manager's virtual memory.");
		slim_prom_u64(p, "process_virtual_memory_bytes", NULL, 0, vsize);
	}
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		uint64_t fds = 0;
		struct dirent *e;
		while ((e = readdir(d))) {
			fds += e->d_name[0] != '.';
		}
		closedir(d);
		slim_prom_family(p, "process_open_fds", "gauge", "File descriptors the manager holds.");
		slim_prom_u64(p, "process_open_fds", NULL, 0, fds - 1); /* not opendir's own */
	}
}

char *slim_metrics_render(struct slim_manager *mgr, struct slim_group *group, size_t *len)
{
	struct slim_prom p;
	slim_prom_init(&p);
	render_console_states(&p, mgr);
	for (size_t i = 0; i < sizeof(console_families) / sizeof(console_families[0]); i++) {
		render_console_family(&p, mgr, &console_families[i]);
	}
	render_key_latency(&p, mgr);
	render_video(&p, mgr);
	render_sessions(&p, mgr);
	if (group) {
		render_group(&p, group);
	}
	render_process(&p);
	return slim_prom_take(&p, len);
}
