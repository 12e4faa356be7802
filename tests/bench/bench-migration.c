/*
 * Hot-desking, in the manner of SLIM section 2.4 and the Sun Ray: a card
 * taken to another console brings the session with it. Timed from the
 * console sending CARD to the session manager to that console having
 * presented the first complete picture of the session (every pixel of the
 * screen painted since its display association began), at 1920x1080 over
 * loopback.
 *
 * Everything is real but the two consoles, which this process plays with
 * the console's control association (console/manager.c) and a console
 * core each (managed.c): slimland-sessiond as root with a configuration of
 * its own, a throwaway user and PAM service (pam_unix) for the session and
 * a throwaway greeter user, greeter compositors running slimland-greeter,
 * and the session's compositor running slim-echo (one still window).
 *
 * The login goes through the real greeter on console A, typed as keys on
 * its display association after a tap of the card, still unknown, so that
 * the session is bound to it. Then the card goes from console to console:
 * by default it is taken off the old console first (card_removal = detach:
 * the old console gets a greeter, the session is detached) and, once that
 * has settled, put on the new one, which is timed: a pure attach, as when
 * someone walks over. With --takeover it is put on the new console while
 * still "on" the old one, and the move (old console to a greeter, new one
 * to the session) is timed in one.
 *
 * Where the time goes, from timestamps on one clock: manager = CARD sent ->
 * REDIRECT received; attach = REDIRECT -> the compositor's first datagram
 * (HELLO with the token, the compositor attaching and rendering, the first
 * datagram of the repaint); picture = first datagram -> the complete frame
 * presented.
 *
 * Both transports in the same run, one after the other with a manager of
 * their own: clear, and DTLS (slim-secure.h: the control association's
 * handshake with keys, and at every migration the display association's
 * ECDHE-PSK handshake with the per-attach key, which falls in "attach").
 * The bar: DTLS may add at most 10% to the p50.
 *
 * With --group the same run also measures hot-desking across a server
 * group (session-manager.md section 9, migration-group.c): an etcd member
 * of its own on loopback, two managers A and B in one group, the session
 * on A. After the migrations between two consoles of A's (the figures
 * above), the card is tapped at a console managed by B: B knows no binding
 * for it, finds the session's server in the registry and MOVEs the
 * console's control association to A, which the console's code
 * (console/manager.c) follows, telling the card again; A shows it the
 * session. Timed the same way, the MOVE's parts apart; the two side by
 * side, with their ratio. The bar: p50 at most 50 ms.
 *
 * With --desks, after the migrations between two consoles that say no
 * keyboard and have one head each (the session types with its own keymap),
 * as many between a console A that says `de` and has two heads side by
 * side (half as wide each) and a console B that says `us` with one head:
 * each one changes the session's keymap (compiled once each, then kept)
 * and its outputs (one made or removed, the other resized, the windows
 * laid out again). The two side by side, with their ratio. The bar: at
 * most 1.3 times the p50.
 *
 * Needs root (users, PAM, the manager); exits 77 (skipped) otherwise, and
 * never for want of etcd: --group fails without it (etcd-server). The
 * users, the PAM file, the processes of the users, etcd and the temporary
 * files are removed at exit, on failure and on SIGINT/SIGTERM/SIGHUP.
 *
 *   bench-migration [--json] [--quick] [--migrations N] [--takeover | --group | --desks] [-v]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input-event-codes.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "managed-rig.h"
#include "migration.h"
#include "run-tag.h"
#include "session.h"
#include "slim-log.h"

#define WIDTH MIG_WIDTH
#define HEIGHT MIG_HEIGHT
#define MAX_MIGRATIONS MIG_MAX_MIGRATIONS
#define TARGET_P50_MS 100.0
/* What encryption may add to the p50 (issue: no more than 10%). */
#define DTLS_MAX_RATIO 1.10
/* Across a server group (issue: p50 at most 50 ms on loopback). */
#define GROUP_TARGET_P50_MS 50.0
/* --desks: a change of keymap and of heads at each migration, over none, p50 */
#define DESKS_MAX_RATIO 1.30

static const uint8_t card_token[] = { 0x04, 0xb3, 0x1e, 0x5a, 0x72, 0x80, 0x01 };

/* the login's user (the run's own name) */
char mig_user[48];
/* --desks: the migrations again between a de console of two heads and a us one of one */
static bool desks;

struct bench_console mig_a, mig_b;

void mig_placement_user(int i, char *name, size_t size)
{
	char label[16];
	snprintf(label, sizeof(label), "pl%02d", i + 1);
	run_tag_name(name, size, label);
}

bool mig_placement_users(void)
{
	for (int i = 0; i < MIG_PLACEMENT_LOGINS; i++) {
		char label[16], name[48];
		snprintf(label, sizeof(label), "pl%02d", i + 1);
		if (!rig_add_user(label, name, sizeof(name))) {
			return false;
		}
	}
	return true;
}

/* Results */

/* In the tables' order: the MOVE's parts within card -> REDIRECT. */
static const enum mig_part part_order[MIG_PARTS] = {
	MIG_TOTAL, MIG_MANAGER, MIG_MOVE, MIG_ANSWER, MIG_RETOLD, MIG_ATTACH, MIG_PICTURE,
};
static const char *const part_keys[MIG_PARTS] = {
	[MIG_TOTAL] = "migration",
	[MIG_MANAGER] = "card_to_redirect",
	[MIG_ATTACH] = "redirect_to_first_datagram",
	[MIG_PICTURE] = "first_datagram_to_presented",
	[MIG_MOVE] = "card_to_move",
	[MIG_ANSWER] = "move_to_new_manager_answer",
	[MIG_RETOLD] = "answer_to_redirect",
};
static const char *const part_names[MIG_PARTS] = {
	[MIG_TOTAL] = "card -> picture (total)",
	[MIG_MANAGER] = "card -> REDIRECT",
	[MIG_ATTACH] = "REDIRECT -> 1st datagram",
	[MIG_PICTURE] = "1st datagram -> presented",
	[MIG_MOVE] = "  card -> MOVE (B)",
	[MIG_ANSWER] = "  MOVE -> A answers",
	[MIG_RETOLD] = "  A answers -> REDIRECT",
};
/* The parts of a migration within one server. */
#define SINGLE_PARTS (MIG_PICTURE + 1)

static struct mig_sample samples[MAX_MIGRATIONS];
static size_t n_samples;

void mig_record(const struct mig_sample *s)
{
	if (n_samples < MAX_MIGRATIONS) {
		samples[n_samples++] = *s;
	}
}

void mig_sample_of(const struct bench_console *c, uint64_t t0, uint64_t t3, bool moved,
		bool first_only, struct mig_sample *s)
{
	*s = (struct mig_sample){ .bytes = c->bytes, .first_only = first_only,
		.copies = c->copies };
	s->us[MIG_TOTAL] = t3 - t0;
	s->us[MIG_MANAGER] = c->redirect_us - t0;
	s->us[MIG_ATTACH] = c->first_rx_us - c->redirect_us;
	s->us[MIG_PICTURE] = t3 - c->first_rx_us;
	if (moved) {
		s->us[MIG_MOVE] = c->mgr_connect_us - t0;
		s->us[MIG_ANSWER] = c->mgr_attached_us - c->mgr_connect_us;
		s->us[MIG_RETOLD] = c->redirect_us - c->mgr_attached_us;
	}
}

static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? v[(size_t)(p * (double)(n - 1))] : 0;
}

static double ms(uint64_t us)
{
	return (double)us / 1000.0;
}

/* One set of migrations' figures. */
struct result {
	enum slim_sec_mode mode;
	size_t n, failed, first_only, copies;
	uint64_t p50[MIG_PARTS], p99[MIG_PARTS], min, max, bytes_p50;
	uint64_t setup_greeters_us, setup_login_us;
	uint32_t refusals;
	uint32_t bounces; /* group: MOVEs beyond the one expected */
};

/* The samples recorded since the last call, summed up (and forgotten). */
static void summarize(struct result *res)
{
	static uint64_t v[MAX_MIGRATIONS];
	size_t n = n_samples;
	res->n = n;
	for (size_t i = 0; i < n; i++) {
		v[i] = samples[i].bytes;
		res->first_only += samples[i].first_only;
		res->copies += samples[i].copies;
	}
	res->bytes_p50 = percentile(v, n, 0.5);
	for (int p = 0; p < MIG_PARTS; p++) {
		for (size_t i = 0; i < n; i++) {
			v[i] = samples[i].us[p];
		}
		res->p50[p] = percentile(v, n, 0.5);
		res->p99[p] = percentile(v, n, 0.99);
		if (p == MIG_TOTAL && n) {
			res->min = v[0];
			res->max = v[n - 1];
		}
	}
	n_samples = 0;
}

/*
 * Migrations between consoles A and B of one manager, the session at
 * session_port shown on *shows at first; *shows: where it is at the end.
 */
static void migrate_within(size_t migrations, bool takeover, uint16_t session_port,
		struct bench_console **shows, struct result *res)
{
	struct bench_console *from = *shows, *to = from == &mig_a ? &mig_b : &mig_a;
	for (size_t i = 0; i < migrations; i++) {
		if (!takeover) {
			/* taken off the old console: it goes to a greeter, the session waits */
			uint32_t r = from->redirects;
			bench_console_card(from, false, card_token, sizeof(card_token));
			if (!rig_wait_greeter(from, r, 10000)) {
				fprintf(stderr, "bench-migration: no greeter after the card left console %s\n",
					from->id);
				res->failed++;
			}
		}
		/* all quiet: the tap */
		rig_settle(to, 100, 2000);
		uint32_t r = to->redirects, r_from = from->redirects;
		uint64_t t0 = bench_now_us();
		bench_console_card(to, true, card_token, sizeof(card_token));
		bool alone = false;
		uint64_t t3 = rig_wait_session(to, r, session_port, 5000, &alone);
		if (t3 == 0) {
			fprintf(stderr, "bench-migration: migration %zu to console %s: %s\n", i + 1, to->id,
				to->redirects > r && bench_console_port(to) != session_port ?
				"shown something else than the session" : "no complete frame within 5 s");
			res->failed++;
		} else {
			struct mig_sample s;
			mig_sample_of(to, t0, t3, false, alone, &s);
			mig_record(&s);
		}
		if (takeover) {
			/* the old console shows its greeter by now: the removal changes nothing */
			bench_console_card(from, false, card_token, sizeof(card_token));
			rig_wait_greeter(from, r_from, 10000);
		}
		if (res->failed > 3) {
			break;
		}
		struct bench_console *t = from;
		from = to;
		to = t;
	}
	*shows = from;
}

/*
 * A manager of this transport (with --group: servers A and B of a group),
 * both consoles on A's greeters, a login on console A, then `migrations`
 * moves of the card between them; with `group`, as many from a console of
 * B's, then (`placement`) logins placed across A, B and a third server C.
 * False if it could not even begin.
 */
static bool measure(enum slim_sec_mode mode, size_t migrations, bool takeover, bool group,
		struct result *res, struct result *res_group, struct mig_placement *placement)
{
	*res = (struct result){ .mode = mode };
	*res_group = (struct result){ .mode = mode };
	const char *name = slim_sec_mode_name(mode);
	uint16_t port = 0, port_b = 0;
	char key_dir[128];
	snprintf(key_dir, sizeof(key_dir), "%s/keys", rig_tmpdir);
	if (group ? !mig_group_start(mode, &port, &port_b) :
			(port = bench_free_port(SOCK_DGRAM)) == 0 ||
			!rig_start_sessiond(name, port, mode, key_dir, NULL)) {
		fprintf(stderr, "bench-migration: slimland-sessiond did not start (%s)\n", name);
		return false;
	}
	char manager[32], key_a[160], key_b[160];
	snprintf(manager, sizeof(manager), "127.0.0.1:%u", port);
	snprintf(key_a, sizeof(key_a), "%s/console-a.key", rig_tmpdir);
	snprintf(key_b, sizeof(key_b), "%s/console-b.key", rig_tmpdir);
	if (!bench_console_start(&mig_a, manager, "bench-a", WIDTH, HEIGHT, mode, key_a) ||
			!bench_console_start(&mig_b, manager, "bench-b", WIDTH, HEIGHT, mode, key_b)) {
		fprintf(stderr, "bench-migration: cannot start the consoles\n");
		return false;
	}

	/* Both consoles get a greeter. */
	uint64_t t_start = bench_now_us();
	if (!rig_wait_greeter(&mig_a, 0, 20000) || !rig_wait_greeter(&mig_b, 0, 20000)) {
		fprintf(stderr, "bench-migration: no greeter on the consoles (A: %u redirects, "
			"%u frames; B: %u, %u)\n", mig_a.redirects, mig_a.frames, mig_b.redirects,
			mig_b.frames);
		return false;
	}
	if (mig_a.manager_changes || mig_b.manager_changes) {
		fprintf(stderr, "bench-migration: a console was moved to %s before the login\n",
			mig_a.manager_changes ? mig_a.manager : mig_b.manager);
		return false;
	}
	uint64_t t_greeters = bench_now_us();

	/* An unknown card, then the login it gets bound to. */
	bench_console_card(&mig_a, true, card_token, sizeof(card_token));
	rig_settle(&mig_a, 200, 1000);
	uint32_t before = mig_a.redirects;
	char login[128];
	snprintf(login, sizeof(login), "%s\n" RIG_PASSWORD "\n", mig_user);
	rig_type_text(&mig_a, login);
	if (!rig_wait_redirected(&mig_a, before, 1, 15000)) {
		fprintf(stderr, "bench-migration: the login on console A did not lead to a "
			"session\n");
		return false;
	}
	uint16_t session_port = bench_console_port(&mig_a);
	rig_settle(&mig_a, 300, 5000);
	uint64_t t_login = bench_now_us();

	struct bench_console *shows = &mig_a;
	migrate_within(migrations, takeover, session_port, &shows, res);
	summarize(res);
	res->setup_greeters_us = t_greeters - t_start;
	res->setup_login_us = t_login - t_greeters;
	res->refusals = mig_a.refusals + mig_b.refusals;

	if (desks && res->failed == 0) {
		/* from their next HELLO on: the greeter's and the session's */
		struct slim_desk two;
		slim_desk_single(&two, WIDTH / 2, HEIGHT);
		two.n_heads = 2;
		two.heads[1] = two.heads[0];
		two.heads[1].x = WIDTH / 2;
		two.heads[1].primary = false;
		snprintf(two.heads[1].name, sizeof(two.heads[1].name), "CONSOLE-2");
		slim_console_core_set_heads(mig_a.core, &two);
		slim_console_core_set_keyboard(mig_a.core, &(struct slim_keyboard){ .layout = "de" });
		slim_console_core_set_keyboard(mig_b.core, &(struct slim_keyboard){ .layout = "us" });
		migrate_within(migrations, takeover, session_port, &shows, res_group);
		summarize(res_group);
	}
	if (group && res->failed == 0) {
		struct mig_group_stats st = { 0 };
		mig_group_migrations(mode, port_b, migrations, session_port, &shows, &st);
		summarize(res_group);
		res_group->failed = st.failed;
		res_group->bounces = st.bounces;
		res_group->refusals = st.refusals;
		if (placement && st.failed == 0) {
			mig_placement_run(mode, port, port_b, placement);
		}
	}
	bench_console_stop(&mig_a);
	bench_console_stop(&mig_b);
	rig_stop_sessionds();
	return true;
}

static void print_json(const struct result *res, const struct result *grp, size_t count,
		bool takeover, bool group, const struct mig_placement *pl)
{
	printf("{\"width_px\": %d, \"height_px\": %d, \"takeover\": %s, \"target_p50_ms\": %.0f",
		WIDTH, HEIGHT, takeover ? "true" : "false", TARGET_P50_MS);
	if (group) {
		printf(", \"group\": true, \"group_target_p50_ms\": %.0f", GROUP_TARGET_P50_MS);
	}
	for (size_t i = 0; i < count; i++) {
		for (int g = 0; g < (group ? 2 : 1); g++) {
			const struct result *r = g ? &grp[i] : &res[i];
			char m[32];
			snprintf(m, sizeof(m), "%s%s", slim_sec_mode_name(r->mode), g ? "_group" : "");
			printf(", \"%s_migrations\": %zu, \"%s_failed\": %zu", m, r->n, m, r->failed);
			for (int p = 0; p < (g ? MIG_PARTS : SINGLE_PARTS); p++) {
				printf(", \"%s_%s_p50_ms\": %.3f, \"%s_%s_p99_ms\": %.3f", m, part_keys[p],
					ms(r->p50[p]), m, part_keys[p], ms(r->p99[p]));
			}
			printf(", \"%s_migration_min_ms\": %.3f, \"%s_migration_max_ms\": %.3f, "
				"\"%s_first_frame_complete\": %zu, \"%s_picture_bytes_p50\": %llu",
				m, ms(r->min), m, ms(r->max), m, r->first_only, m,
				(unsigned long long)r->bytes_p50);
			if (g) {
				printf(", \"%s_bounces\": %u", m, r->bounces);
			}
		}
		if (group && res[i].p50[MIG_TOTAL] && grp[i].n) {
			printf(", \"%s_group_over_one_server_p50_ratio\": %.3f",
				slim_sec_mode_name(res[i].mode),
				(double)grp[i].p50[MIG_TOTAL] / (double)res[i].p50[MIG_TOTAL]);
		}
	}
	for (size_t i = 0; desks && i < count; i++) {
		const char *m = slim_sec_mode_name(res[i].mode);
		printf(", \"%s_desks_migrations\": %zu, \"%s_desks_failed\": %zu, "
			"\"%s_desks_p50_ms\": %.3f, \"%s_desks_p99_ms\": %.3f", m, grp[i].n, m,
			grp[i].failed, m, ms(grp[i].p50[MIG_TOTAL]), m, ms(grp[i].p99[MIG_TOTAL]));
		if (res[i].p50[MIG_TOTAL]) {
			printf(", \"%s_desks_over_one_p50_ratio\": %.3f", m,
				(double)grp[i].p50[MIG_TOTAL] / (double)res[i].p50[MIG_TOTAL]);
		}
	}
	if (count == 2 && res[0].p50[MIG_TOTAL]) {
		printf(", \"dtls_over_clear_p50_ratio\": %.3f",
			(double)res[1].p50[MIG_TOTAL] / (double)res[0].p50[MIG_TOTAL]);
	}
	if (pl && pl->done) {
		printf(", \"placement_logins\": %zu, \"placement_failed\": %zu, "
			"\"placement_sessions\": {\"A\": %u, \"B\": %u, \"C\": %u}, "
			"\"placement_spread_sessions\": %u, \"placement_even_sessions\": %.1f, "
			"\"placement_moved_consoles\": %u, \"placement_login_p50_ms\": %.1f, "
			"\"placement_weights\": \"%s\"",
			pl->logins, pl->failed, pl->sessions[0], pl->sessions[1], pl->sessions[2],
			pl->spread, (double)pl->logins / MIG_PLACEMENT_SERVERS, pl->moved,
			ms(pl->login_p50_us), pl->weights);
	}
	printf("}\n");
}

static void print_summary(const char *what, const struct result *r, double target_ms)
{
	double miss = ms(r->p50[MIG_TOTAL]) - target_ms;
	printf("\n%s: %zu migrations, %zu failed; min %.1f ms, max %.1f ms; target p50 <= "
		"%.0f ms: %s", what, r->n, r->failed, ms(r->min), ms(r->max),
		target_ms, r->n == 0 ? "no data" : miss <= 0 ? "ok" : "MISSED");
	printf("\n  the first frame was complete on its own in %zu of %zu; %llu bytes (p50), "
		"%zu COPY commands; %u REFUSEs on display associations", r->first_only, r->n,
		(unsigned long long)r->bytes_p50, r->copies, r->refusals);
}

static void print_table(const struct result *res, size_t count, bool takeover)
{
	printf("Card tap to the session's first complete frame on the other console, "
		"%dx%d, loopback\n%s\n\n", WIDTH, HEIGHT,
		takeover ? "put on the new console while the old one shows the session" :
		"taken off the old console first, then put on the new one");
	printf("%-27s", "");
	for (size_t i = 0; i < count; i++) {
		printf(" %9s-p50 %9s-p99", slim_sec_mode_name(res[i].mode),
			slim_sec_mode_name(res[i].mode));
	}
	printf("\n");
	for (int p = 0; p < SINGLE_PARTS; p++) {
		printf("%-27s", part_names[p]);
		for (size_t i = 0; i < count; i++) {
			printf(" %10.1f ms %10.1f ms", ms(res[i].p50[p]), ms(res[i].p99[p]));
		}
		printf("\n");
	}
	for (size_t i = 0; i < count; i++) {
		const struct result *r = &res[i];
		print_summary(slim_sec_mode_name(r->mode), r, TARGET_P50_MS);
		printf("; setup: greeters %.1f s, login %.1f s\n", ms(r->setup_greeters_us) / 1000,
			ms(r->setup_login_us) / 1000);
	}
	if (count == 2 && res[0].p50[MIG_TOTAL]) {
		double ratio = (double)res[1].p50[MIG_TOTAL] / (double)res[0].p50[MIG_TOTAL];
		printf("\nDTLS / clear, p50: %.2f (bar: at most %.2f): %s\n", ratio, DTLS_MAX_RATIO,
			ratio <= DTLS_MAX_RATIO ? "ok" : "MISSED");
	}
}

/* --desks: per transport, consoles of one keyboard and head beside de and us ones. */
static void print_desks_table(const struct result *res, const struct result *kbd,
		size_t count)
{
	printf("Card tap to the session's first complete frame on the other console, %dx%d, "
		"loopback; the card taken off the old console first, then put on the new one\n"
		"same desk: neither console says a keyboard, both have one head\nde / us: console "
		"A says de and has two heads of %dx%d, B says us and has one: each migration\n"
		"changes the session's keymap and its outputs\n", WIDTH, HEIGHT, WIDTH / 2, HEIGHT);
	for (size_t i = 0; i < count; i++) {
		const char *m = slim_sec_mode_name(res[i].mode);
		printf("\n%-27s %23s %23s\n%-27s %11s %11s %11s %11s\n", m, "same desk",
			"de / us", "", "p50", "p99", "p50", "p99");
		for (int p = 0; p < SINGLE_PARTS; p++) {
			printf("%-27s %8.1f ms %8.1f ms %8.1f ms %8.1f ms\n", part_names[p],
				ms(res[i].p50[p]), ms(res[i].p99[p]), ms(kbd[i].p50[p]),
				ms(kbd[i].p99[p]));
		}
		print_summary("same desk", &res[i], TARGET_P50_MS);
		printf("\n");
		print_summary("de / us", &kbd[i], TARGET_P50_MS);
		printf("\n");
		if (res[i].p50[MIG_TOTAL] && kbd[i].n) {
			double ratio = (double)kbd[i].p50[MIG_TOTAL] / (double)res[i].p50[MIG_TOTAL];
			printf("\n%s: de / us over the same desk, p50: %.2f (bar: at most %.2f): %s\n",
				m, ratio, DESKS_MAX_RATIO, ratio <= DESKS_MAX_RATIO ? "ok" : "MISSED");
		}
	}
}

/* --group: per transport, one server beside the group, the MOVE's parts apart. */
/* --group, full run: where the logins went. */
static void print_placement(const struct mig_placement *pl)
{
	if (!pl || !pl->done) {
		return;
	}
	double even = (double)pl->logins / MIG_PLACEMENT_SERVERS;
	printf("\nPlacement: %zu logins (%zu failed), each at a new console (%dx%d) saying "
		"HELLO to A, clear\nweights %s\n\n", pl->logins, pl->failed, MIG_PLACEMENT_WIDTH,
		MIG_PLACEMENT_HEIGHT, pl->weights);
	printf("%-10s %10s %10s\n", "server", "sessions", "landed");
	for (int s = 0; s < MIG_PLACEMENT_SERVERS; s++) {
		printf("%-10c %10u %10u\n", 'A' + s, pl->sessions[s], pl->landed[s]);
	}
	printf("\nspread (max - min): %u sessions, even: %.1f each; target within 1 of even: "
		"%s\nconsoles moved by placement at HELLO: %u of %zu; HELLO -> session shown, p50: "
		"%.0f ms", pl->spread, even, pl->spread <= 2 && pl->failed == 0 &&
		(double)pl->sessions[0] >= even - 1 && (double)pl->sessions[0] <= even + 1 &&
		(double)pl->sessions[1] >= even - 1 && (double)pl->sessions[1] <= even + 1 &&
		(double)pl->sessions[2] >= even - 1 && (double)pl->sessions[2] <= even + 1 ?
		"ok" : "MISSED", pl->moved, pl->logins, ms(pl->login_p50_us));
	if (pl->registry_lag) {
		printf("; %u times A's copy of the registry lagged more than 3 s", pl->registry_lag);
	}
	printf("\n");
}

static void print_group_table(const struct result *res, const struct result *grp,
		size_t count)
{
	printf("Card tap to the session's first complete frame, %dx%d, loopback; the card "
		"taken off the old console first, then put on the new one\n"
		"one server: between two consoles of the session's manager A\n"
		"group: at a console of B's, a server of the same group (etcd), which MOVEs "
		"it to A\n", WIDTH, HEIGHT);
	for (size_t i = 0; i < count; i++) {
		const char *m = slim_sec_mode_name(res[i].mode);
		printf("\n%-27s %23s %23s\n%-27s %11s %11s %11s %11s\n", m, "one server",
			"group (MOVE)", "", "p50", "p99", "p50", "p99");
		for (int k = 0; k < MIG_PARTS; k++) {
			enum mig_part p = part_order[k];
			printf("%-27s", part_names[p]);
			if (p < SINGLE_PARTS) {
				printf(" %8.1f ms %8.1f ms", ms(res[i].p50[p]), ms(res[i].p99[p]));
			} else {
				printf(" %11s %11s", "-", "-");
			}
			printf(" %8.1f ms %8.1f ms\n", ms(grp[i].p50[p]), ms(grp[i].p99[p]));
		}
		print_summary("one server", &res[i], TARGET_P50_MS);
		printf("\n");
		print_summary("group", &grp[i], GROUP_TARGET_P50_MS);
		printf("; consoles sent back to B: %u\n", grp[i].bounces);
		if (res[i].p50[MIG_TOTAL] && grp[i].n) {
			printf("\n%s: group / one server, p50: %.2f (+%.1f ms)\n", m,
				(double)grp[i].p50[MIG_TOTAL] / (double)res[i].p50[MIG_TOTAL],
				ms(grp[i].p50[MIG_TOTAL]) - ms(res[i].p50[MIG_TOTAL]));
		}
	}
}

int main(int argc, char *argv[])
{
	bool json = false, takeover = false, group = false, quick = false;
	size_t migrations = 50;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			migrations = 6;
			quick = true;
		} else if (strcmp(argv[i], "--takeover") == 0 && !group && !desks) {
			takeover = true;
		} else if (strcmp(argv[i], "--group") == 0 && !takeover && !desks) {
			group = true;
		} else if (strcmp(argv[i], "--desks") == 0 && !takeover && !group) {
			desks = true;
		} else if (strcmp(argv[i], "-v") == 0) {
			rig_verbose = true;
		} else if (strcmp(argv[i], "--migrations") == 0 && i + 1 < argc) {
			migrations = strtoul(argv[++i], NULL, 10);
			migrations = migrations < 1 ? 1 : migrations > MAX_MIGRATIONS ?
				MAX_MIGRATIONS : migrations;
		} else {
			fprintf(stderr, "usage: %s [--json] [--quick] [--migrations N] "
				"[--takeover | --group | --desks] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-migration: needs root (users, PAM, the session manager): "
			"skipped\n");
		return 77;
	}
	if (access("/usr/sbin/useradd", X_OK) != 0 || access("/usr/sbin/chpasswd", X_OK) != 0) {
		fprintf(stderr, "bench-migration: needs useradd and chpasswd: skipped\n");
		return 77;
	}
	slim_log_init(rig_verbose ? SLIM_LOG_DEBUG : SLIM_LOG_ERROR, NULL);
	rig_at_cleanup = mig_etcd_stop;
	if (!rig_setup("bench-migration", "mig") ||
			!rig_add_user("mig", mig_user, sizeof(mig_user))) {
		fprintf(stderr, "bench-migration: cannot create the test users or PAM service\n");
		return 1;
	}
	rig_consoles_add(&mig_a);
	rig_consoles_add(&mig_b);
	bool ok = !group || mig_etcd_start();
	static const enum slim_sec_mode modes[] = { SLIM_SEC_CLEAR, SLIM_SEC_DTLS };
	struct result res[2], grp[2];
	/* full --group runs: the placement, once (clear) */
	struct mig_placement placement = { 0 };
	size_t count = 0;
	for (size_t i = 0; i < 2 && ok; i++) {
		ok = measure(modes[i], migrations, takeover, group, &res[count], &grp[count],
			group && !quick && i == 0 ? &placement : NULL);
		if (ok) {
			count++;
		}
		ok = ok && res[count - 1].n > 0 && res[count - 1].failed == 0 &&
			(!(group || desks) || (grp[count - 1].n > 0 && grp[count - 1].failed == 0)) &&
			(!group || quick || i > 0 || (placement.done && placement.failed == 0));
	}
	if (count > 0) {
		if (json) {
			print_json(res, grp, count, takeover, group, &placement);
		} else if (group) {
			print_group_table(res, grp, count);
			print_placement(&placement);
		} else if (desks) {
			print_desks_table(res, grp, count);
		} else {
			print_table(res, count, takeover);
		}
	}
	if (!ok) {
		rig_show_logs();
	}
	bench_console_stop(&mig_a);
	bench_console_stop(&mig_b);
	rig_cleanup();
	return ok ? 0 : 1;
}
