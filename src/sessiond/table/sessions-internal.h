/*
 * What the files of the session manager's table share among themselves
 * (sessions.h is what the rest of slimland-sessiond sees):
 *
 *   sessions.c       the manager and its sessions: compositors come and go
 *   console-table.c  consoles: known, heard, forgotten, revoked, HELLO
 *   showing.c        which console shows which session: REDIRECT, greeters,
 *                    what compositors report
 *   launch.c         starting compositors: a user's session, a greeter
 *   cards.c          card tokens: their hashes, what a tap does
 *   logins.c         a login at a greeter, from the form to the session
 *   choices.c        what a greeter offers to choose, and what each choice does
 *   console-send.c   what the manager says to consoles (console-send.h)
 *   enroll.c         which consoles it serves at all (enroll.h)
 *
 * A console and the session it shows point at each other, as do a console
 * and its greeter: only the link and unlink functions below set or clear
 * those pairs, so neither side is ever left pointing at a freed object.
 */
#ifndef SLIM_SESSIOND_SESSIONS_INTERNAL_H
#define SLIM_SESSIOND_SESSIONS_INTERNAL_H

#include "sessions.h"

/* A greeter that would not start is tried again after 2 s, doubling up to 60 s. */
#define SLIM_GREETER_RETRY_FIRST_MS 2000
#define SLIM_GREETER_RETRY_MAX_MS 60000

/* showing.c */
/* console->shows and session->console, together. */
void slim_show_link(struct slim_console *console, struct slim_session *session);
void slim_show_unlink(struct slim_console *console);
/* console->greeter and greeter->greeter_for, together. */
void slim_greeter_link(struct slim_console *console, struct slim_session *greeter);
void slim_greeter_unlink(struct slim_console *console);
/* The console shows nothing now: its session (if a user's) is detached and runs on. */
void slim_console_unshow(struct slim_console *console);
/* The REDIRECTs stop, and the attach's key is wiped. */
void slim_console_stop_redirect(struct slim_console *console);
/* Sends `expect` and starts the REDIRECTs, once both ends can take them. */
void slim_console_maybe_redirect(struct slim_console *console);
/* A greeter could not be had: try again later, backing off. */
void slim_console_greeter_retry_later(struct slim_console *console);
/* The greeter_retry timer. */
int slim_console_greeter_retry(void *data);

/* What its compositor says on the control socket (compositor-control.h). */
extern const struct slim_compositor_control_handler slim_session_control;

/* sessions.c */
/* The detached_timeout clock starts (a user's session that lost its console). */
void slim_session_now_detached(struct slim_session *session);

/* console-table.c */
/* The console leaves the table: its session is detached and runs on, its greeter ends. */
void slim_console_forget(struct slim_console *console);
/* Frees the console and unlinks it; nothing else. */
void slim_console_destroy(struct slim_console *console);

/* logins.c */
/* The login at the console (running, or held for its card's claim) is forgotten. */
void slim_console_login_forget(struct slim_console *console);
/* A held login goes on (`start`) or ends without a word (the greeter asks something else). */
void slim_console_login_proceed(struct slim_console *console, bool start);

/* cards.c */
/* The console goes to the server of `where` (MOVE), as a tap found it there. */
void slim_console_move_to(struct slim_console *console, const struct slim_card_session *where,
		const char *why);
/*
 * A console whose person waits for the card's session goes there if it can
 * now (the registry changed, or the server it could not reach may be tried).
 */
void slim_console_retry_wait(struct slim_console *console);
/* The card's session `session` here: shown (after its password, if reauth asks it). */
void slim_console_open(struct slim_console *console, struct slim_session *session);
/*
 * The card's session is on `where`, which cannot be reached (`why`: "cannot
 * be reached from here now"): wait, or a new session here (`takeover`:
 * taking the card from a server gone from the registry).
 */
void slim_console_away(struct slim_console *console, const struct slim_card_session *where,
		bool takeover, const char *why);

/* launch.c */
struct slim_launch_bufs {
	char listen[80], log_path[400], cgroup[128], video_budget[16], size[16];
};
/*
 * What starting a compositor for `user` as session `id` takes (its strings in
 * `b`), at the size of `console` if it is known.
 */
struct slim_spawn_request slim_launch_request(struct slim_manager *mgr, uint32_t id,
		const char *user, const char *startup, char *const *env, const char *log_name,
		bool greeter, const struct slim_console *console, struct slim_launch_bufs *b);
/*
 * The console's greeter compositor, linked to it, as a uid of its own;
 * NULL if it could not be started.
 */
struct slim_session *slim_launch_greeter(struct slim_console *console);
/*
 * A greeter is gone (out of the table already): what still runs as its uid
 * is ended and its runtime directory removed; the uid is free once nothing
 * of it runs.
 */
void slim_launch_greeter_ended(struct slim_session *greeter);
/* The uid timer: the ENDING uids are cleared again. */
int slim_launch_uid_retry(void *data);

#endif
