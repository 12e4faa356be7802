/*
 * The manager's sessions: compositors that close their control socket,
 * cannot be watched or stay detached, what they report, greeters' uids.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>
#include "manager-harness.h"
#include "slim-codec.h"
#include "slim-hex.h"

static pid_t paused_child(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		for (;;) {
			pause();
		}
	}
	return pid;
}

static bool fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/*
 * A report line of the compositor's (`audio`, `link`): kept for the
 * console shown and listed by `slimlandctl WORD` as `listed`; each of the
 * bad lines changes nothing; a report of another console is not listed.
 */
static struct slim_session *check_report(const char *word, const char *good,
		const char *listed, const char *const *bad, const char *other)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_session *session = slim_manager_console(t.mgr, "c1")->shows;
	char prefix[32], want[160];
	snprintf(prefix, sizeof(prefix), "%s c1", word);
	assert_null(strstr(ctl_says(word), prefix));
	comp_say(s, good);
	snprintf(want, sizeof(want), "%s c1 %u %s\n", word, session->id, listed);
	assert_non_null(strstr(ctl_says(word), want));
	for (; *bad; bad++) {
		comp_say(s, *bad);
	}
	assert_non_null(strstr(ctl_says(word), want));
	comp_say(s, other);
	snprintf(prefix, sizeof(prefix), "%s c", word);
	assert_null(strstr(ctl_says(word), prefix));
	return session;
}

/* `audio` lines: how sound fares, listed by `slimlandctl audio`. */

static void test_control_closed(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	int comps = fake.n_comps;
	close(s->fd);
	s->fd = -1;
	settle();
	/* gone from the table, SIGTERMed, tokens freed, the console on a new greeter */
	assert_int_equal(wl_list_length(&t.mgr->bindings), 0);
	assert_int_equal(c1->why, SLIM_WHY_SESSION_ENDED);
	assert_int_equal(fake.n_comps, comps + 1);
	wait_gone(s->pid);
}

/*
 * A compositor whose control socket or exit the manager cannot watch (epoll
 * takes no memfd) is not added: it is ended, and the fds it came with are
 * closed, as slim_session_add promises.
 */
static void test_unwatchable(void **state)
{
	int sessions = wl_list_length(&t.mgr->sessions);
	pid_t pid = paused_child();
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int control = memfd_create("not a socket", MFD_CLOEXEC);
	assert_true(pidfd >= 0 && control >= 0);
	assert_null(slim_session_add(t.mgr, 0, "alice", getuid(), pid, pidfd, NULL, control,
		false));
	assert_true(fd_closed(pidfd) && fd_closed(control));
	assert_int_equal(waitpid(pid, NULL, 0), pid); /* SIGTERMed */

	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	int not_pidfd = memfd_create("not a pidfd", MFD_CLOEXEC);
	assert_null(slim_session_add(t.mgr, 0, "alice", getuid(), -1, not_pidfd, NULL, sv[0],
		false));
	assert_true(fd_closed(not_pidfd) && fd_closed(sv[0]));
	close(sv[1]);
	assert_int_equal(wl_list_length(&t.mgr->sessions), sessions);
}

static void test_detached_timeout(void **state)
{
	struct fake_compositor *s = alice_with_card();
	t.mgr->config.detached_timeout_s = 1;
	card(1, 0x111, 3, false, 7);
	advance_ms(999);
	assert_true(alive(s->pid));
	advance_ms(1);
	wait_gone(s->pid);
}

/* `audio` lines: how sound fares, listed by `slimlandctl audio`. */
static void test_audio_report(void **state)
{
	static const char *const bad[] = {
		"audio 6331 mp3 64 30 0 0", "audio 6331 opus 64 30 1001 0",
		"audio 6331 opus 64 30 0", "audio zz opus 64 30 0 0", NULL,
	};
	struct slim_session *session = check_report("audio", "audio 6331 opus 64 30 52 3",
		"opus 64 30 5.2 0.3", bad, "audio 6332 pcm 1536 20 0 0");
	assert_string_equal(session->audio.codec, "pcm");
}

/* `link` lines: the pacer's view of the link, listed by `slimlandctl link`. */
static void test_link_report(void **state)
{
	static const char *const bad[] = {
		"link 6331 1900 1805 1200 23450 3000 7",   /* minimum above the round trip */
		"link 6331 1900 1805 23450 1200 3000",      /* a field short */
		"link 6331 1900 1805 23450 1200 3000 -7",
		"link 6331 999999999 0 23450 1200 3000 7", /* past any link */
		"link zz 1900 1805 23450 1200 3000 7", NULL,
	};
	struct slim_session *session = check_report("link", "link 6331 1900 1805 23450 1200 3000 7",
		"1900 1805 23.450 1.200 3000 7", bad, "link 6332 0 0 300 200 0 0");
	assert_int_equal(session->net.rtt_us, 300);
}

/* `video` lines: the console's H.264 stream, listed by `slimlandctl video`. */
static void test_video_report(void **state)
{
	static const char *const bad[] = {
		"video 6331 software superfast 5500 12000 3600 1280 720", /* p50 above p99 */
		"video 6331 hardware superfast 5500 3600 12000 1280 720",
		"video 6331 software super$fast 5500 3600 12000 1280 720",
		"video 6331 software superfast 5500 3600 12000 9000 720", /* past any screen */
		"video 6331 software superfast 5500 3600 12000 1280",
		"video zz software superfast 5500 3600 12000 1280 720", NULL,
	};
	struct slim_session *session = check_report("video",
		"video 6331 software superfast 5500 3600 12000 1280 720",
		"software superfast 5500 3.600 12.000 1280x720", bad,
		"video 6332 vaapi /dev/dri/renderD128 8000 2000 4000 1920 1080");
	assert_string_equal(session->video.device, "/dev/dri/renderD128");
}

/*
 * `traffic` and `keys` lines: what went to the console and its keystrokes
 * to pixels, in the metrics (slimlandctl metrics, metrics_listen) as
 * counters and a histogram with the console's, session's and user's labels.
 */
static void test_traffic_and_keys(void **state)
{
	struct fake_compositor *s = alice_with_card();
	struct slim_session *session = slim_manager_console(t.mgr, "c1")->shows;
	char labels[64], want[256];
	snprintf(labels, sizeof(labels), "console=\"c1\",session=\"%u\",user=\"alice\"",
		session->id);
	snprintf(want, sizeof(want), "slimland_console_sent_bytes_total{%s}", labels);
	assert_null(strstr(ctl_says("metrics"), want));
	comp_say(s, "traffic 6331 123456 100 3 1");
	comp_say(s, "keys 6331 12 240000 1 2 3 4 1 0 0 0 0 0");
	static const char *const bad[] = {
		"traffic 6331 1 2 3",                        /* a field short */
		"traffic 6331 1 2 3 -4",
		"traffic 6331 9007199254740993 1 1 1",        /* past 2^53 */
		"keys 6331 2 240000 1 2 0 0 0 0 0 0 0 0",     /* more in the buckets than keys */
		"keys 6331 12 240000 1 2 3 4 1 0 0 0 0",      /* a bucket short */
		"keys zz 12 240000 1 2 3 4 1 0 0 0 0 0", NULL,
	};
	for (const char *const *b = bad; *b; b++) {
		comp_say(s, *b);
	}
	const char *text = ctl_says("metrics");
	static const char *const lines[][3] = {
		{ "slimland_console_sent_bytes_total", "", "123456" },
		{ "slimland_console_sent_datagrams_total", "", "100" },
		{ "slimland_console_repaired_datagrams_total", "", "3" },
		{ "slimland_console_video_resent_fragments_total", "", "1" },
		{ "slimland_console_key_to_pixels_seconds_bucket", ",le=\"0.005\"", "1" },
		{ "slimland_console_key_to_pixels_seconds_bucket", ",le=\"0.03\"", "10" },
		{ "slimland_console_key_to_pixels_seconds_bucket", ",le=\"0.5\"", "11" },
		{ "slimland_console_key_to_pixels_seconds_bucket", ",le=\"+Inf\"", "12" },
		{ "slimland_console_key_to_pixels_seconds_sum", "", "0.24" },
		{ "slimland_console_key_to_pixels_seconds_count", "", "12" },
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(want, sizeof(want), "%s{%s%s} %s\n", lines[i][0], labels, lines[i][1],
			lines[i][2]);
		if (!strstr(text, want)) {
			fail_msg("no %s in:\n%s", want, text);
		}
	}
	assert_non_null(strstr(text, "# TYPE slimland_console_key_to_pixels_seconds histogram\n"));
	/* about another console: nothing of c1's is said */
	comp_say(s, "traffic 6332 1 1 0 0");
	comp_say(s, "keys 6332 0 0 0 0 0 0 0 0 0 0 0 0");
	assert_null(strstr(ctl_says("metrics"), "slimland_console_sent_bytes_total{"));
	assert_null(strstr(ctl_says("metrics"), "slimland_console_key_to_pixels_seconds_count{"));
}

/*
 * Each greeter a uid of its own from greeter_uids, its runtime directory
 * named after it; a uid goes back to the pool only once nothing of it
 * runs; after a restart each greeter found again has its own uid back, and
 * one whose uid is taken already or is none of the pool's is ended.
 */
static void test_greeter_uids(void **state)
{
	struct slim_uid_pool *pool = &t.mgr->greeters.uids;
	struct fake_compositor *g1 = console_on_greeter(1, 0x111, "c1");
	struct fake_compositor *g2 = console_on_greeter(2, 0x222, "c2");
	struct slim_console *c1 = slim_manager_console(t.mgr, "c1");
	assert_true(slim_uid_pool_has(pool, g1->uid));
	assert_true(slim_uid_pool_has(pool, g2->uid));
	assert_int_not_equal(g1->uid, g2->uid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_USED);
	assert_int_equal(c1->greeter.session->uid, g1->uid);
	assert_string_equal(g1->user, "slimland-greeter"); /* its name, group and home */
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/greeter-%u", (unsigned)g1->uid);
	assert_string_equal(g1->runtime, dir);
	/* whatever ran as it before was ended first */
	assert_int_equal(times_cleared(g1->uid), 1);

	/* c1's greeter dies and something of its uid takes a while: the uid waits */
	fake.lingering = g1->uid;
	kill(g1->pid, SIGKILL);
	wait_gone(g1->pid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_ENDING);
	/* tried again meanwhile; c1's next greeter, after its pause, has another uid */
	advance_ms(2100); /* SLIM_GREETER_RETRY_FIRST_MS, and a little */
	assert_true(times_cleared(g1->uid) > 3);
	struct fake_compositor *g3 = last_comp();
	assert_true(g3->greeter);
	assert_string_equal(g3->console_env, "c1");
	assert_int_not_equal(g3->uid, g1->uid);
	assert_int_not_equal(g3->uid, g2->uid);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_ENDING);
	/* nothing of it runs any more: free */
	fake.lingering = 0;
	advance_ms(300);
	assert_int_equal(slim_uid_pool_state(pool, g1->uid), SLIM_UID_FREE);
	comp_start(g3, 7003, "c1");
	attach(g3, "c1");

	/*
	 * A restart, with two greeters more in the state file: one runs as
	 * c2's greeter's uid, one as a uid outside greeter_uids.
	 */
	struct slim_spawn_request req = { .user = "slimland-greeter" };
	struct slim_spawn_result res;
	int fds[2];
	fake_spawn(NULL, &req, &res, &fds[0]);
	struct fake_compositor *same = last_comp();
	close(res.pidfd);
	fake_spawn(NULL, &req, &res, &fds[1]);
	struct fake_compositor *outside = last_comp();
	close(res.pidfd);
	close(fds[0]);
	close(fds[1]);
	size_t len;
	char *text = slim_state_format(t.mgr, &len);
	assert_non_null(text);
	char extra[512];
	snprintf(extra, sizeof(extra), "%s"
		"session 90 %u slimland-greeter %d 7090 /tmp/x/slimland-control\nconsole c9 90\n"
		"session 91 1000 slimland-greeter %d 7091 /tmp/y/slimland-control\nconsole c8 91\n",
		text, (unsigned)g2->uid, (int)same->pid, (int)outside->pid);
	free(text);
	struct slim_state st;
	assert_true(slim_state_parse(extra, strlen(extra), "t", &st));
	struct slim_manager *old = t.mgr;
	struct slim_config config;
	test_config(&config);
	t.mgr = create_manager(&config);
	slim_state_apply(t.mgr, &st, false);
	slim_state_finish(&st);
	pool = &t.mgr->greeters.uids;
	assert_int_equal(slim_uid_pool_state(pool, g2->uid), SLIM_UID_USED);
	assert_int_equal(slim_uid_pool_state(pool, g3->uid), SLIM_UID_USED);
	assert_int_equal(slim_manager_console(t.mgr, "c1")->greeter.session->uid, g3->uid);
	struct slim_session *dup = slim_manager_session(t.mgr, 90);
	assert_true(dup->ending);
	assert_true(slim_manager_session(t.mgr, 91)->ending);
	wait_gone(same->pid);
	wait_gone(outside->pid);
	/* the one that shared a uid ends without taking it from the greeter that has it */
	slim_session_destroy(dup);
	assert_int_equal(slim_uid_pool_state(pool, g2->uid), SLIM_UID_USED);
	slim_manager_destroy(t.mgr);
	t.mgr = old;
}

/* With every uid of greeter_uids taken, a console waits for one to be free. */
static void test_greeter_uids_run_out(void **state)
{
	struct slim_uid_pool *pool = &t.mgr->greeters.uids;
	assert_int_equal(pool->count, 2);
	struct fake_compositor *g1 = console_on_greeter(1, 0x111, "c1");
	console_on_greeter(2, 0x222, "c2");
	int comps = fake.n_comps;
	hello(3, 0x333, "c3");
	struct slim_console *c3 = slim_manager_console(t.mgr, "c3");
	assert_non_null(c3);
	assert_null(c3->greeter.session);
	assert_int_equal(fake.n_comps, comps);
	/* c1's greeter is ended (its console is forgotten): c3's next try has its uid */
	slim_consoles_closed(t.mgr, fake_conn(1), true);
	wait_gone(g1->pid);
	advance_ms(2000); /* SLIM_GREETER_RETRY_FIRST_MS */
	assert_non_null(c3->greeter.session);
	assert_int_equal(c3->greeter.session->uid, g1->uid);
}

const struct CMUnitTest manager_sessions_tests[] = {
	cmocka_unit_test_setup_teardown(test_control_closed, setup, teardown),
	cmocka_unit_test_setup_teardown(test_unwatchable, setup, teardown),
	cmocka_unit_test_setup_teardown(test_detached_timeout, setup, teardown),
	cmocka_unit_test_setup_teardown(test_audio_report, setup, teardown),
	cmocka_unit_test_setup_teardown(test_link_report, setup, teardown),
	cmocka_unit_test_setup_teardown(test_video_report, setup, teardown),
	cmocka_unit_test_setup_teardown(test_traffic_and_keys, setup, teardown),
	cmocka_unit_test_setup_teardown(test_greeter_uids, setup, teardown),
	cmocka_unit_test_prestate_setup_teardown(test_greeter_uids_run_out, setup, teardown,
		"greeter_uids = 70000-70001\n"),
};
const size_t manager_sessions_tests_n = sizeof(manager_sessions_tests) / sizeof(manager_sessions_tests[0]);
