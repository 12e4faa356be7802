/*
 * The session manager's table and what it decides: which console shows
 * which session, what a card does, what a login does, what happens when a
 * compositor exits. Everything that reaches the outside world (PAM,
 * spawning, UDP) goes through slim_manager_ops, so that tests and fuzzers
 * drive the same code with fake compositors on socketpairs. Its files, one
 * section each, are listed in sessions-internal.h.
 *
 * The table is below the front, the group and the state file, which use
 * it, and above the workers and compositors' control sockets: it calls
 * none of the rooms above it, but tells them through what it was given
 * (slim_manager_ops, slim_manager_elsewhere) and through its signals.
 */
#ifndef SLIM_SESSIOND_SESSIONS_H
#define SLIM_SESSIOND_SESSIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <wayland-server-core.h>
#include "compositor-control.h"
#include "config.h"
#include "enroll.h"
#include "slim-log.h"
#include "slim-proto.h"
#include "slim-secure.h"
#include "login.h"
#include "spawn.h"
#include "uid-pool.h"


#define SLIM_REDIRECT_INTERVAL_MS 200
#define SLIM_REDIRECT_MAX 25
/* A HELLO for a known console id from elsewhere waits this long for the old one to fall silent. */
#define SLIM_CONSOLE_TAKEOVER_US 10000000ull
/* A console a server group's MOVE sent gets its greeter after this, unless its card comes. */
#define SLIM_MOVED_GREETER_MS 500
/*
 * The heartbeat (session-manager.md §1): a console that said HELLO hears
 * from us at least every second, so that it knows within a few seconds
 * when this server is gone. Looked at every SLIM_HEARTBEAT_TICK_MS, a
 * console we sent nothing for SLIM_HEARTBEAT_US gets an empty datagram.
 */
#define SLIM_HEARTBEAT_TICK_MS 250
#define SLIM_HEARTBEAT_US 750000ull
/* How long a HELLO's unreached manager (SLIM_CAP_UNREACHED) holds: the console's own time. */
#define SLIM_UNREACHED_US 15000000ull

struct slim_manager_ops {
	/*
	 * Starts a compositor. *control_fd may be set to a connected control
	 * socket (tests); left at -1, the manager connects to out->control_path.
	 */
	bool (*spawn)(void *data, const struct slim_spawn_request *req,
		struct slim_spawn_result *out, int *control_fd);
	/*
	 * A login, in a worker process (login.h): PAM and the user's
	 * compositor never run in the manager. NULL: it could not be begun.
	 */
	struct slim_login *(*login)(void *data, struct wl_event_loop *loop,
		const struct slim_login_request *req,
		const struct slim_login_callbacks *cb, void *cb_data);
	/* Forgets a login (slim_login_cancel): a started session's PAM stays open. */
	void (*login_cancel)(void *data, struct slim_login *login);
	/* A login held after it authenticated goes on, or not (slim_login_proceed). */
	void (*login_proceed)(void *data, struct slim_login *login, bool start);
	/* One datagram to a console, over its connection (one DTLS record). */
	void (*send)(void *data, struct slim_sec_conn *conn, const uint8_t *buf, size_t len);
	/* Ends a connection (a console revoked). NULL: nothing to end. */
	void (*close)(void *data, struct slim_sec_conn *conn);
	/*
	 * The connection is an enrolled console's (slim_sec_conn_admit): no
	 * connection of a key not enrolled may end it for room. NULL: no matter.
	 */
	void (*admit)(void *data, struct slim_sec_conn *conn);
	/* The state changed: write it out (NULL: nothing is kept). */
	void (*changed)(void *data);
	/*
	 * The clock consoles' silence is measured with, in µs (NULL:
	 * slim_now_us). Tests set it to move time on without sleeping.
	 */
	uint64_t (*now)(void *data);
	/*
	 * The cgroup policy's part in the manager (NULL: none): whether any of
	 * a user's sessions shows on a console now, and a session's end.
	 */
	void (*user_shown)(void *data, uid_t uid, bool shown);
	void (*session_ended)(void *data, uid_t uid, uint32_t id);
	/*
	 * A greeter's uid is to be had again (its greeter is gone, or a new
	 * greeter is about to get it): every process of `uid` is ended and
	 * `runtime_dir` removed with all in it. True once nothing of the uid
	 * runs; false while something still dies, asked again later. NULL:
	 * nothing to end.
	 */
	bool (*greeter_clear)(void *data, uid_t uid, const char *runtime_dir);
};

/*
 * What a server group's registry says of a card (slim_manager_elsewhere's
 * card_lookup): its record `cards/HASH` names the server and session the
 * card opens, and outlives that server's lease.
 */
enum slim_card_registry {
	SLIM_CARD_NONE,        /* no record (or one not of this version): unknown to the group */
	SLIM_CARD_HERE,        /* the record names this server */
	SLIM_CARD_SERVER,      /* it names another server of the registry: `move` goes there */
	SLIM_CARD_GONE,        /* it names a server the registry no longer has (its lease expired) */
	SLIM_CARD_UNREACHABLE, /* etcd does not answer: nobody can say */
};

/* A session a card opens, somewhere in the group. */
struct slim_card_session {
	char server[64];
	uint32_t id;
	bool movable;               /* its server is in the registry: `move` names it */
	struct slim_wire_move move;
};

#define SLIM_CARD_OTHERS_MAX 4

struct slim_card_where {
	enum slim_card_registry registry;
	struct slim_card_session holder; /* the record's (HERE, SERVER, GONE) */
	/*
	 * Sessions of other servers published with this card though the
	 * record names another (two sessions after a partition healed).
	 */
	struct slim_card_session others[SLIM_CARD_OTHERS_MAX];
	int n_others;
};

/* What a claim of a card before its session starts found (claim_card). */
enum slim_claim_result {
	SLIM_CLAIM_OURS,        /* the record names the new session now */
	SLIM_CLAIM_ELSEWHERE,   /* it names a session of a server in the registry */
	SLIM_CLAIM_GONE,        /* it names a server gone from the registry (no takeover asked) */
	SLIM_CLAIM_UNREACHABLE, /* etcd did not answer */
};
typedef void (*slim_claim_done)(void *data, enum slim_claim_result result,
	const struct slim_card_session *holder);
struct slim_card_claim;

/*
 * What a server group (group.h) answers the table, set as the group starts.
 * A server alone has none: every console is its own business.
 */
struct slim_manager_elsewhere {
	/* Everything the registry's copy says of the card whose hash is `hash`. */
	void (*card_lookup)(void *data, const uint8_t hash[32], struct slim_card_where *out);
	/*
	 * Claims the card for this server's session `id`, about to start
	 * (`takeover`: over a record naming a server gone from the registry,
	 * as the user chose). `done` comes later, from the event loop, unless
	 * cancelled first. NULL: it could not be asked (as UNREACHABLE).
	 */
	struct slim_card_claim *(*claim_card)(void *data, const uint8_t hash[32], uint32_t id,
		bool takeover, slim_claim_done done, void *done_data);
	void (*claim_cancel)(void *data, struct slim_card_claim *claim);
	/*
	 * A console about to be shown a greeter: true if its login belongs on
	 * another server.
	 */
	bool (*login_server)(void *data, struct slim_wire_move *move, char *server, size_t size);
};

/*
 * What the manager keeps of a card: HMAC-SHA256 of its token (kind,
 * length, bytes) under the card key, never the token itself, so that a
 * leaked state file lets nobody forge a tap.
 */
struct slim_card_hash {
	uint8_t bytes[32];
};

/* What a server group's registry says of a binding (the group keeps it: group-cards.c). */
enum slim_binding_state {
	SLIM_BINDING_UNCONFIRMED, /* not confirmed (yet, or any more): asked before opened */
	SLIM_BINDING_BOUND,       /* the registry names it and this server's lease lives */
	SLIM_BINDING_ELSEWHERE,   /* the registry names another session: the user chooses */
};

struct slim_binding {
	struct wl_list link; /* slim_manager.bindings */
	struct slim_card_hash token;
	struct slim_session *session;
	enum slim_binding_state state; /* BOUND without a group */
};

/* A console watching a session (shadowing.c): how far it got. */
enum slim_shadow_state {
	SLIM_SHADOW_ASKING,    /* the compositor asks its user */
	SLIM_SHADOW_ATTACHING, /* yes: the console is REDIRECTed to the shadow's port */
	SLIM_SHADOW_WATCHING,  /* the compositor says it is attached */
};

struct slim_shadow_watch {
	struct slim_session *session; /* session->shadow == this */
	struct slim_console *console; /* console->shadowed == this */
	enum slim_shadow_state state;
	bool control; /* its input reaches the session */
	uint16_t port;
	int sent; /* REDIRECTs */
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
	struct wl_event_source *timer;
	struct wl_listener session_destroy, console_destroy;
};

struct slim_session {
	struct wl_list link; /* slim_manager.sessions */
	struct slim_manager *mgr;
	uint32_t id;
	bool greeter;      /* a greeter compositor, for greeter_for */
	struct slim_console *greeter_for;
	char user[64];
	uid_t uid;
	pid_t pid;
	int pidfd;
	struct wl_event_source *pidfd_source;
	struct slim_compositor_control *control;
	char control_path[320];
	uint16_t port;     /* from `hello PORT PID`; 0 until then */
	/* The console it is shown on, or being moved to (console->shows == this). */
	struct slim_console *console;
	bool attached;     /* the compositor said `attached` for console */
	/* The login worker holding its PAM session (NULL after a restart). */
	struct slim_login *login;
	struct wl_event_source *detach_timer;
	/*
	 * Its idle clock (reauth = idle:N): the last moment someone used it,
	 * from its compositor's `active` (console input), a card showing it,
	 * and every moment it was shown while a client inhibited idle.
	 */
	uint64_t active_us;
	bool inhibited;    /* its compositor said `inhibit 1` */
	struct slim_session_audio audio; /* how sound fares on its console */
	struct slim_session_net net;     /* what its pacer knows of the console's link */
	struct slim_session_video video; /* its compressed stream to the console */
	struct slim_session_traffic traffic; /* what went to the console */
	struct slim_session_keys keys;   /* keystrokes to pixels there */
	bool ending;       /* SIGTERM sent */
	struct slim_shadow_watch *shadow; /* a console watching it, or asking to */
	char shadow_last[SLIM_CONSOLE_ID_LEN + 48]; /* how the last one ended: "CONSOLE over WHY" */
	struct {
		struct wl_signal destroy;
	} events;
};

/*
 * What a console shows, as `slimlandctl list` says it. It changes in
 * slim_console_transition alone, with what goes with each change.
 */
enum slim_console_state {
	SLIM_CONSOLE_GREETER, /* its greeter, or nothing while it waits for one */
	SLIM_CONSOLE_SESSION,
	SLIM_CONSOLE_WAITING, /* being redirected, or its compositor is starting */
};

/* What happens to a console (slim_console_transition). */
enum slim_console_event {
	/* what it shows */
	SLIM_CONSOLE_SHOWN,    /* it is being moved to console->shows: it waits for it */
	SLIM_CONSOLE_ATTACHED, /* console->shows has it (said so, or before a restart) */
	SLIM_CONSOLE_BLANK,    /* it shows nothing now, until a greeter comes */
	/* what is heard of it */
	SLIM_CONSOLE_HELLO,    /* a HELLO in a new association: known from now on */
	SLIM_CONSOLE_HEARD,    /* a HELLO, PING or CARD: alive */
	SLIM_CONSOLE_SILENT,   /* silent (or gone) while showing a user's session: away */
	SLIM_CONSOLE_GOODBYE,  /* it quit: its next HELLO is a new start */
	SLIM_CONSOLE_LOST,     /* lost without a word: its next HELLO is a new start */
};

/* Why a console shows the greeter (slimlandctl why). */
enum slim_why {
	SLIM_WHY_NO_CARD,
	SLIM_WHY_UNKNOWN_CARD,
	SLIM_WHY_CARD_REMOVED,
	SLIM_WHY_SESSION_ENDED,
	SLIM_WHY_ADMIN,
	SLIM_WHY_MOVED,
	SLIM_WHY_REAUTH,
	SLIM_WHY_LOST,
	/* a server group's (group.h): the greeter offers a choice (choices.c) */
	SLIM_WHY_SERVER_UNREACHABLE,   /* the card's session is on a server out of reach */
	SLIM_WHY_REGISTRY_UNREACHABLE, /* etcd does not answer: the card cannot be looked up */
	SLIM_WHY_CARD_ELSEWHERE,       /* a login here lost the card to one on another server */
	SLIM_WHY_UNCONFIRMED_LOGIN,    /* a login while etcd cannot confirm the card's claim */
	SLIM_WHY_SEVERAL_SESSIONS,     /* the card opens more than one session */
	SLIM_WHY_SHADOW_ENDED,         /* it watched a session (shadowing.c), and no longer */
};

/* What the console's greeter offers to choose (choices.c). */
enum slim_choice_kind {
	SLIM_CHOICE_NONE,
	SLIM_CHOICE_AWAY,        /* the card's session is out of reach: wait, or a new one here */
	SLIM_CHOICE_UNCONFIRMED, /* its session here is not confirmed: open it, or wait */
	SLIM_CHOICE_GO_THERE,    /* the card logged in elsewhere just now: go there */
	SLIM_CHOICE_ANYWAY,      /* a login etcd cannot confirm: start it anyway, or not */
	SLIM_CHOICE_SESSIONS,    /* one of the card's sessions */
};

#define SLIM_CHOICE_MAX 5

struct slim_console_choice {
	enum slim_choice_kind kind;
	char text[256];
	char labels[SLIM_CHOICE_MAX][80];
	int n_labels;
	/* SESSIONS: what each label opens (server "": this one); GO_THERE: [0] */
	struct slim_card_session sessions[SLIM_CHOICE_MAX];
	bool takeover; /* AWAY: a new session takes the card over from a server gone */
};

/* Its control association: where it said HELLO from, and what it said. */
struct slim_console_assoc {
	struct slim_sec_conn *conn; /* what reaches it; NULL while it has none */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct sockaddr_storage local; /* the address it reached us at */
	socklen_t local_len;
	uint32_t id;
	uint16_t width, height, mtu;
	uint32_t caps;
	uint64_t sent_us; /* slim_manager_now: the last datagram we sent it (the heartbeat's clock) */
};

/* What is heard of it (SLIM_CONSOLE_HELLO to LOST). */
struct slim_console_heard {
	uint64_t last_us; /* slim_manager_now: HELLO, PING or CARD */
	bool known;       /* said HELLO since this manager started (or since it quit) */
	bool away;        /* silent for console_timeout while showing a session */
	bool gone;        /* it said goodbye: the sweep need not wait for its silence */
};

/* The REDIRECT in flight: the attach token, and the key only it and the compositor get. */
struct slim_console_redirect {
	bool active;
	int sent;
	uint8_t token[SLIM_ATTACH_TOKEN_LEN];
	uint8_t key[SLIM_SEC_KEY_LEN];
	struct wl_event_source *timer;
};

/* Its greeter compositor, and what the greeter should show. */
struct slim_console_greeter {
	struct slim_session *session; /* if one runs */
	struct wl_event_source *retry;
	unsigned failures;
	char message[256]; /* kept for a greeter client that says hello later */
};

/* The last card tapped here, and what it asks of a login at the greeter. */
struct slim_console_card {
	uint32_t seq;                /* the last CARD datagram's seq: replays are older */
	bool unknown;                /* an unknown card: the next login here binds it */
	struct slim_card_hash hash;  /* that card's */
	struct slim_session *reauth; /* a known card's session: its password first */
	struct wl_listener reauth_destroy;
	bool takeover;               /* the next login takes the card from a server gone */
	bool waiting;                /* the person waits for the card's session: tried again
	                                when the registry changes */
};

/* The login in progress at its greeter, and the last one's outcome. */
struct slim_console_login {
	struct slim_login *worker; /* NULL: none runs */
	struct slim_card_claim *claim; /* the card being claimed before it starts */
	bool held;                 /* authenticated, waiting for the claim or a choice */
	char user[64];
	uint32_t id;               /* the session id it will have */
	bool ok;
	char error[128];
	unsigned failures;         /* in a row: each delays the next attempt */
	uint64_t blocked_until_us;
};

/* A login at the console's greeter ended (its login_done signal). */
struct slim_console_login_done {
	const char *error;   /* NULL: logged in */
	unsigned delay_ms;   /* the failure's delay before its `error` is told */
};

struct slim_console {
	struct wl_list link; /* slim_manager.consoles */
	struct slim_manager *mgr;
	char id[SLIM_CONSOLE_ID_LEN + 1];
	enum slim_console_state state;
	enum slim_why why;
	struct slim_session *shows; /* what it shows or is being moved to */
	struct slim_console_assoc assoc;
	struct slim_console_heard heard;
	struct slim_console_redirect redirect;
	struct slim_shadow_watch *shadowed; /* it watches a session (or is about to) */
	struct slim_console_greeter greeter;
	struct slim_console_card card;
	struct slim_console_login login;
	/*
	 * The manager of the group its HELLO said it could not reach
	 * (SLIM_CAP_UNREACHED): its host key's SHA-256, until unreached_until_us
	 * (slim_manager_now). No console is sent there (slim_console_unreached).
	 */
	uint8_t unreached[SLIM_UNREACHED_LEN];
	bool has_unreached;
	uint64_t unreached_until_us;
	struct slim_console_choice choice; /* what its greeter offers now */
	/* What its greeter's client (front/greeter-socket.c) is to hear. */
	struct {
		struct wl_signal destroy;
		struct wl_signal message;    /* const char *: a line for the greeter */
		struct wl_signal choice;     /* const struct slim_console_choice * */
		struct wl_signal login_done; /* struct slim_console_login_done */
	} events;
};

struct slim_manager {
	struct wl_event_loop *loop;
	struct slim_config config;
	const struct slim_manager_ops *ops;
	void *ops_data;
	char run_dir[200];
	struct {
		char socket[256];  /* greeter.sock (front/greeter-socket.c) */
		bool check_peer;   /* a greeter client must belong to its compositor */
		/* the uids greeters run as, one each (config.greeter_uids) */
		struct slim_uid_pool uids;
		struct wl_event_source *uid_timer; /* tries the ENDING uids again */
	} greeters;

	struct wl_list sessions;
	struct wl_list consoles;
	struct wl_list bindings;
	/* this server's name in its group (set by the group), for the person choosing */
	char server_name[64];
	struct slim_enroll enroll;
	/* a server group's answers (NULL: a server alone) */
	const struct slim_manager_elsewhere *elsewhere;
	void *elsewhere_data;
	/* the key card tokens are hashed under (KEY_DIR/card.key) */
	uint8_t card_key[SLIM_SEC_KEY_LEN];
	/* the host key's fingerprint, for slimlandctl key; zero over clear transport */
	uint8_t host_key[SLIM_SEC_FINGERPRINT_LEN];
	uint32_t next_session_id;
	bool restoring;

	struct slim_ratelimit log_rl;  /* network-provoked messages */
	struct slim_ratelimit login_rl;
	/* REFUSE UNKNOWN, per source (hashed) and in all, so it never becomes a flood */
	struct {
		struct slim_ratelimit source[64];
		struct slim_ratelimit all;
	} refuse;
	uint64_t dropped;  /* datagrams that failed validation or were not believed */
	/* Consoles silent for console_timeout are forgotten (slim_manager_console_sweep). */
	struct {
		struct wl_event_source *timer;
		bool armed;
	} sweep;
	/* The consoles' heartbeat (slim_manager_heartbeat): armed while one has a connection. */
	struct {
		struct wl_event_source *timer;
		bool armed;
	} heartbeat;
	struct {
		struct wl_signal destroy; /* the front's clients of it go first */
	} events;
};

/*
 * `card_key` hashes card tokens; `enroll_path` is KEY_DIR/consoles (NULL:
 * none on disk); `host_key` the host key's fingerprint (NULL: clear).
 */
struct slim_manager *slim_manager_create(struct wl_event_loop *loop,
		const struct slim_config *config, const char *run_dir,
		const uint8_t card_key[SLIM_SEC_KEY_LEN], const char *enroll_path,
		const uint8_t *host_key, const struct slim_manager_ops *ops, void *ops_data);
/* Ends nothing: compositors keep running for the next manager to find. */
void slim_manager_destroy(struct slim_manager *mgr);

/* Lookups. */
struct slim_session *slim_manager_session(struct slim_manager *mgr, uint32_t id);
struct slim_console *slim_manager_console(struct slim_manager *mgr, const char *id);
struct slim_console *slim_manager_console_create(struct slim_manager *mgr, const char *id);
const char *slim_why_str(enum slim_why why);
/* ops->now, or slim_now_us. */
uint64_t slim_manager_now(struct slim_manager *mgr);
const char *slim_console_state_str(enum slim_console_state state);
/* The one way a console's state changes (the events say what goes with each). */
void slim_console_transition(struct slim_console *console, enum slim_console_event event);

/*
 * Adds a running compositor (a new one, or one found again after a restart)
 * and takes ownership of pidfd and control_fd (-1: connect to control_path).
 */
struct slim_session *slim_session_add(struct slim_manager *mgr, uint32_t id,
		const char *user, uid_t uid, pid_t pid, int pidfd,
		const char *control_path, int control_fd, bool greeter);
/* The compositor is gone: tokens freed, console to the greeter, PAM closed. */
void slim_session_destroy(struct slim_session *session);
/* SIGTERM to the compositor; its exit destroys the session. */
void slim_session_end(struct slim_session *session);

/* What consoles.c reports. */
/* A HELLO, PING or CARD came from the console (its association): it is alive. */
void slim_console_heard(struct slim_console *console, uint64_t now);
/*
 * The sweep timer: a console silent for console_timeout (or gone at once,
 * slim_console_goodbye) that shows no user's session is dropped and its
 * greeter compositor ended; one that shows a session is only marked away
 * (the session keeps it, as with card_removal = keep). Re-arms itself for
 * the next deadline.
 */
int slim_manager_console_sweep(void *data);
/*
 * The heartbeat timer: an empty datagram to each console with a connection
 * that we sent nothing for SLIM_HEARTBEAT_US. Re-arms itself while there
 * is one.
 */
int slim_manager_heartbeat(void *data);
/*
 * Whether the console's HELLO said it cannot reach the manager whose host
 * key has this SHA-256 (and said so less than SLIM_UNREACHED_US ago): no
 * MOVE sends it there.
 */
bool slim_console_unreached(const struct slim_console *console,
		const uint8_t fingerprint[SLIM_UNREACHED_LEN]);
/* The console quit (its close_notify): gone at once, as if silent long enough. */
void slim_console_goodbye(struct slim_console *console);
void slim_console_hello(struct slim_console *console, bool new_assoc);
void slim_console_card(struct slim_console *console, const struct slim_wire_card *card);

/*
 * How long nobody has used the session: 0 while it is shown with idle
 * inhibited (someone watching a video uses it without touching anything).
 */
uint64_t slim_session_idle_us(struct slim_session *session);
/* Called as the session starts or stops being shown: see active_us. */
void slim_session_touch(struct slim_session *session);

/*
 * Begins a login at a console's greeter, in a login worker. False: refused
 * at once, *why says why. True: under way; its outcome goes to
 * slim_greeter_login_done (greeter-socket.c: `ok`, or `error` after the delay) and
 * stays in console->login_ok / login_error. On success the console is being
 * moved to the user's session.
 */
bool slim_manager_login(struct slim_manager *mgr, struct slim_console *console,
		const char *user, const char *password, const char **why);

/*
 * A login begun at the console's greeter ended (error NULL: logged in), or
 * was refused at once: failures in a row delay the next attempt, and its
 * greeter's client is told (events.login_done).
 */
void slim_console_login_done(struct slim_console *console, const char *error);
#define SLIM_LOGIN_DELAY_FIRST_MS 2000
#define SLIM_LOGIN_DELAY_MAX_MS 30000
/* The delay before a failed login's `error`, after `failures` failures (1..). */
unsigned slim_login_delay_ms(unsigned failures);

/* The REDIRECT retry timer (every 200 ms, at most 25 times). */
int slim_console_redirect_tick(void *data);

/* Sends the console to its greeter, starting one if needed. */
void slim_console_to_greeter(struct slim_console *console, enum slim_why why);
/* Shows `session` on `console`: REDIRECT once the compositor is ready. */
void slim_console_show(struct slim_console *console, struct slim_session *session);
/* A line for the console's greeter (kept until a greeter client says hello). */
void slim_console_message(struct slim_console *console, const char *text);
/*
 * The console's greeter offers a choice (choices.c): `text`, then labels
 * separated by '|' (at most SLIM_CHOICE_MAX). A message or another choice
 * replaces it.
 */
void slim_console_choose(struct slim_console *console, enum slim_choice_kind kind,
		const char *text, const char *labels);
/* The person at the greeter chose label `n`. False if there was no such label. */
bool slim_console_chose(struct slim_console *console, int n);
/*
 * The registry changed (a server came or went, etcd answers again): a
 * console whose person waits for the card's session tries again.
 */
void slim_manager_registry_changed(struct slim_manager *mgr);
/* A card tapped at the console, by its hash (what slim_console_card does). */
void slim_console_tap(struct slim_console *console, const struct slim_card_hash *token);
/*
 * A restarted manager found `session` on `console` in its state file: shown
 * there (and its greeter, if it is one), until the console says HELLO.
 */
void slim_console_restore(struct slim_console *console, struct slim_session *session);

/*
 * slimlandctl revoke: the console is refused and its connection ended; it
 * leaves the table, its session (if a user's) runs on detached.
 */
void slim_console_revoke(struct slim_console *console);
/*
 * A server group's other server takes the console (MOVE, `why` for the
 * log): it leaves the table here, its session (if a user's) runs on
 * detached.
 */
void slim_console_move(struct slim_console *console, const struct slim_wire_move *move,
		const char *server, const char *why);

/* slimlandctl detach: the console goes to the greeter, the session keeps running. */
bool slim_session_detach(struct slim_session *session, enum slim_why why);

/* Card tokens. */
/* What the manager keeps of a card's token. */
void slim_manager_hash_card(const struct slim_manager *mgr, const struct slim_wire_card *card,
		struct slim_card_hash *out);
struct slim_binding *slim_manager_binding(struct slim_manager *mgr,
		const struct slim_card_hash *token);
bool slim_manager_bind(struct slim_manager *mgr, const struct slim_card_hash *token,
		struct slim_session *session);
/*
 * What a card tapped at the console asks of the next login at its
 * greeter: to bind an `unknown` card, or `reauth`'s password (each may be
 * NULL). The session is forgotten here when it ends.
 */
void slim_console_card_asks(struct slim_console *console, const struct slim_card_hash *unknown,
		struct slim_session *reauth);
/* The card opens nothing here any more (a server group's other server has it). */
void slim_manager_unbind(struct slim_manager *mgr, const uint8_t hash[32]);

void slim_manager_changed(struct slim_manager *mgr);

/* The group's answers (SLIM_CARD_NONE and false without a group). */
void slim_manager_card_where(struct slim_manager *mgr, const uint8_t hash[32],
		struct slim_card_where *out);
bool slim_manager_login_elsewhere(struct slim_manager *mgr, struct slim_wire_move *move,
		char *server, size_t size);

/*
 * Helpdesk shadowing (shadowing.c): `c` watches `s` once its user says
 * yes; false with *why if it may not. Stop: the compositor is told to end
 * it; false if nothing watches.
 */
bool slim_shadow_start(struct slim_session *s, struct slim_console *c, bool control,
		const char **why);
bool slim_shadow_stop(struct slim_session *s);
const char *slim_shadow_state_str(enum slim_shadow_state state);
/* The compositor's shadow-* lines (slim_compositor_control_handler), `data` the session. */
void slim_shadow_ready(void *data, uint16_t port);
void slim_shadow_refused(void *data, const char *why);
void slim_shadow_attached(void *data, const char *console);
void slim_shadow_ended(void *data, const char *why);

#endif
