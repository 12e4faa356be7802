/*
 * slimland-console: a stateless desk console. It says HELLO to the
 * server, paints what the server sends into a shadow framebuffer and
 * shows it through a backend, and sends input back. Everything runs in
 * one poll() loop over the UDP socket, stdin (--control) and a signalfd;
 * the link's next retry or ping is the poll timeout.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "audio.h"
#include "backend.h"
#include "card.h"
#include "console-core.h"
#include "control.h"
#include "decoders.h"
#include "devices.h"
#include "keyboard.h"
#include "session-link.h"
#include "manager.h"
#include "options.h"
#include "slim-clock.h"
#include "slim-keyboard.h"
#include "slim-log.h"
#include "status-screen.h"
#include "trust.h"

/*
 * A --manager whose name does not resolve (the network is not up yet, or
 * the name is wrong) is tried again this often, the screen saying why.
 */
#define MANAGER_RETRY_US 3000000ull

struct console {
	struct options opts;
	struct slim_sec_identity *identity; /* the console's key: its id is derived from it */
	char id[SLIM_CONSOLE_ID_LEN + 1];
	struct slim_trust *trust; /* --manager: whose key we believe */
	struct console_devices devices; /* the screen, and local keys and pointer */
	struct slim_console_core *core;
	struct console_decoders *decoders; /* NULL: no codec announced */
	struct slim_console_link *link;
	struct slim_console_manager *manager; /* --manager */
	uint64_t manager_retry_us; /* --manager not made yet: when to try (0: made) */
	struct slim_console_control *control;
	struct slim_card_reader *card;
	struct console_audio *audio; /* NULL: no sound device */
	struct slim_audio_sender mic_sender;
	uint16_t mtu; /* of a slim datagram, inside the secure transport's record */
	int signal_fd;
	bool busy_shown; /* "server busy" is said once per wait */
	bool redirecting; /* the link connects because of a REDIRECT: say so first */
	bool silence_shown; /* the status screen says the manager is silent, over the picture */
	uint64_t picture_us; /* the link's last datagram, as the manager was told of it */
	bool quit;
};

/*
 * Until the server's picture arrives the screen says why there is none.
 * It is drawn into the shadow framebuffer like any picture, and goes the
 * same way: the server repaints the whole screen for a new association.
 */
static void show_status(struct console *c, const char *line, const char *detail)
{
	const char *lines[] = { line, detail };
	struct slim_console_backend *backend = c->devices.backend;
	if (backend->impl->cursor) {
		/* the last server's pointer means nothing over this screen */
		backend->impl->cursor(backend, &(struct slim_console_cursor){ .visible = false });
	}
	slim_status_screen_show(slim_console_core_fb(c->core), backend, lines, detail ? 2 : 1);
}

/* The server shown now: --server's, or the manager's latest REDIRECT's. */
static const char *server_name(struct console *c)
{
	const char *server = slim_console_link_server(c->link);
	return server ? server : c->opts.server;
}

static void on_connecting(void *data, const char *why)
{
	struct console *c = data;
	c->busy_shown = false;
	c->silence_shown = false; /* the status screen says something else now */
	if (c->redirecting) {
		c->redirecting = false;
		slim_console_status("the session manager sends this console to %s", server_name(c));
		if (c->control) {
			slim_console_control_redirect(c->control, server_name(c));
		}
	}
	char line[320];
	snprintf(line, sizeof(line), "connecting to %s...", server_name(c));
	show_status(c, line, why);
	if (why) {
		slim_console_status("%s; connecting to %s again", why, server_name(c));
	} else {
		slim_console_status("connecting to %s", server_name(c));
	}
	if (c->control) {
		slim_console_control_connecting(c->control, server_name(c), why);
	}
}

static void on_attached(void *data, uint32_t assoc)
{
	struct console *c = data;
	c->busy_shown = false;
	slim_console_status("attached to %s (association %08x)", server_name(c), assoc);
	if (c->audio) {
		console_audio_reset(c->audio);
		slim_audio_sender_reset(&c->mic_sender);
	}
	if (c->control) {
		slim_console_control_attached(c->control, assoc);
	}
}

static void on_refused(void *data, uint16_t reason, const char *text)
{
	struct console *c = data;
	if ((reason == SLIM_REFUSE_BUSY || reason == SLIM_REFUSE_TOO_LARGE) && !c->busy_shown) {
		c->busy_shown = true;
		bool busy = reason == SLIM_REFUSE_BUSY;
		slim_console_status("server %s: %s", busy ? "busy" : "refused this screen", text);
		char line[320];
		snprintf(line, sizeof(line), "%s %s", server_name(c),
			busy ? "is busy:" : "refused this screen:");
		show_status(c, line, text);
	}
	if (c->control) {
		slim_console_control_refused(c->control, reason, text);
	}
}

static void on_presented(void *data, uint32_t frame, uint64_t applied_us)
{
	struct console *c = data;
	if (c->control) {
		slim_console_control_frame(c->control, frame, applied_us);
	}
}

/* CARD goes to the session manager when there is one: it decides what a tap means. */
static void route_card(void *data, const struct slim_wire_card *card)
{
	struct console *c = data;
	if (c->manager) {
		slim_console_manager_send_card(c->manager, card);
	} else {
		slim_console_link_send_card(c->link, card);
	}
}

static void on_card(void *data, const struct slim_wire_card *card)
{
	struct console *c = data;
	slim_console_status("card %s on reader %u",
			card->event == SLIM_CARD_INSERTED ? "inserted" : "removed",
		card->reader);
	route_card(c, card);
}

static void on_card_status(void *data, const char *text)
{
	slim_console_status("%s", text);
}

static const struct slim_card_listener card_listener = {
	.card = on_card,
	.status = on_card_status,
};

/* Sets up --card-reader; false only if an explicit choice cannot work. */
static bool open_card_reader(struct console *c)
{
	char err[256];
	switch (c->opts.card_reader) {
	case CARD_NONE:
		return true;
	case CARD_STDIN:
		/* --control owns stdin: its "card" commands are the reader then */
		if (c->control) {
			slim_console_control_enable_cards(c->control, route_card, c);
			return true;
		}
		c->card = slim_card_stdin_create(STDIN_FILENO, &card_listener, c);
		if (!c->card) {
			slim_console_status("out of memory");
		}
		return c->card != NULL;
	case CARD_PCSC:
		c->card = slim_card_pcsc_create(true, &card_listener, c, err, sizeof(err));
		if (!c->card) {
			slim_console_status("--card-reader=pcsc: %s", err);
		}
		return c->card != NULL;
	case CARD_DEFAULT:
		c->card = slim_card_pcsc_create(false, &card_listener, c, err, sizeof(err));
		if (!c->card) {
			slim_console_status("%s: no card reader (--card-reader=pcsc waits for pcscd)", err);
		}
		return true;
	}
	return true;
}

static void on_audio(void *data, const struct slim_cmd *cmd, bool again, uint64_t time_us)
{
	struct console *c = data;
	if (c->audio) {
		console_audio_receive(c->audio, cmd, again, time_us);
	}
}

static const struct slim_console_link_listener link_listener = {
	.connecting = on_connecting,
	.attached = on_attached,
	.refused = on_refused,
	.presented = on_presented,
	.audio = on_audio,
};

static void on_audio_microphone(void *data, const struct slim_audio_packet *p)
{
	struct console *c = data;
	slim_audio_send(&c->mic_sender, p, true, slim_console_core_assoc(c->core), c->mtu,
		slim_now_us(), slim_console_link_send, c->link);
}

static void on_audio_report(void *data, const struct slim_wire_audio_report *report)
{
	struct console *c = data;
	slim_console_core_send_audio_report(c->core, report);
}

static void on_audio_heard(void *data, bool sound, uint64_t heard_us)
{
	struct console *c = data;
	if (c->control) {
		slim_console_control_audio_heard(c->control, sound, heard_us);
	}
}

static const struct console_audio_listener audio_listener = {
	.microphone = on_audio_microphone,
	.report = on_audio_report,
	.heard = on_audio_heard,
};

/* --manager: until its first REDIRECT there is no server to show. */
static void on_manager_connecting(void *data, const char *why)
{
	struct console *c = data;
	const char *manager = slim_console_manager_address(c->manager);
	/* a group's next manager has a pin of its own */
	slim_trust_set_address(c->trust, manager);
	if (slim_console_link_state(c->link) == SLIM_LINK_IDLE) {
		char line[320];
		snprintf(line, sizeof(line), "waiting for %s...", manager);
		show_status(c, line, why ? why : "the session manager");
	}
	if (why) {
		slim_console_status("%s; saying HELLO to %s again", why, manager);
	} else {
		slim_console_status("waiting for the session manager at %s", manager);
	}
	if (c->control) {
		slim_console_control_manager_connecting(c->control, manager, why);
	}
}

static void on_manager_attached(void *data, uint32_t assoc)
{
	struct console *c = data;
	slim_console_status("the session manager answered (association %08x)", assoc);
	if (c->control) {
		slim_console_control_manager_attached(c->control, assoc);
	}
}

static void on_manager_redirect(void *data, const struct sockaddr *addr, socklen_t len,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN], const uint8_t key[SLIM_SEC_KEY_LEN])
{
	struct console *c = data;
	/* acted on (not a repeat), the link starts connecting: on_connecting tells */
	c->redirecting = true;
	slim_console_link_redirect(c->link, addr, len, token, key);
	c->redirecting = false;
}

/* Not enrolled (yet): say so on the screen, with the id the administrator needs. */
static void on_manager_refused(void *data, uint16_t reason, const char *text)
{
	struct console *c = data;
	slim_console_status("the session manager refused this console: %s", text);
	if (slim_console_link_state(c->link) == SLIM_LINK_IDLE) {
		char line[320];
		snprintf(line, sizeof(line), "console %s", c->id);
		show_status(c, line, text);
	}
	if (c->control) {
		slim_console_control_manager_refused(c->control, reason, text);
	}
}

/* The session manager fell silent: the screen says so, over a picture that no longer moves. */
static void on_manager_silent(void *data, const char *manager, const char *next)
{
	struct console *c = data;
	char line[320], detail[320];
	snprintf(line, sizeof(line), "The session manager at %s does not answer", manager);
	snprintf(detail, sizeof(detail), "trying %s", next ? next : "again");
	show_status(c, line, detail);
	c->silence_shown = true;
	slim_console_status("%s: %s", line, detail);
	if (c->control) {
		slim_console_control_manager_silent(c->control, manager, detail);
	}
}

/* It answered after all: the picture it covered comes back. */
static void on_manager_answered(void *data)
{
	struct console *c = data;
	slim_console_status("the session manager at %s answers again",
		slim_console_manager_address(c->manager));
	if (c->silence_shown && slim_console_link_state(c->link) == SLIM_LINK_ATTACHED) {
		slim_console_link_request_repaint(c->link);
	}
	c->silence_shown = false;
}

static const struct slim_console_manager_listener manager_listener = {
	.silent = on_manager_silent,
	.answered = on_manager_answered,
	.connecting = on_manager_connecting,
	.attached = on_manager_attached,
	.redirect = on_manager_redirect,
	.refused = on_manager_refused,
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
		slim_console_status("SIGUSR1: no --screenshot PATH to write to");
	} else if (slim_png_write(c->opts.screenshot, slim_console_core_fb(c->core))) {
		slim_console_status("screenshot written to %s", c->opts.screenshot);
	} else {
		slim_console_status("screenshot: cannot write %s", c->opts.screenshot);
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

static void on_local_input(void *data, const struct slim_wire_input *ev, size_t n)
{
	struct console *c = data;
	/* as with --control: input for a server that is not listening is dropped */
	slim_console_link_send_input(c->link, ev, n);
}

static void on_window_closed(void *data)
{
	struct console *c = data;
	c->quit = true;
}

static void on_display_back(void *data)
{
	struct console *c = data;
	slim_console_status("display back: asking %s for a repaint", server_name(c));
	slim_console_link_request_repaint(c->link);
}

/* A monitor plugged in or out: the screen and the server follow, in a new association. */
static bool on_display_heads(void *data, const struct slim_desk *desk)
{
	struct console *c = data;
	uint32_t width, height;
	slim_desk_bounds(desk, &width, &height);
	if (!slim_console_core_set_heads(c->core, desk)) {
		slim_console_status("display: cannot make a %ux%u screen of %u heads; the picture "
			"stays away", width, height, desk->n_heads);
		return false;
	}
	c->opts.width = width;
	c->opts.height = height;
	char why[64];
	snprintf(why, sizeof(why), "the display is %ux%u (%u head%s) now", width, height,
		desk->n_heads, desk->n_heads == 1 ? "" : "s");
	slim_console_link_reassociate(c->link, why);
	return true;
}

static const struct console_devices_listener devices_listener = {
	.input = on_local_input,
	.closed = on_window_closed,
	.display_back = on_display_back,
	.heads = on_display_heads,
};

/* The console's key, made on its first start; its id is the key's. */
static bool load_identity(struct console *c, char *err, size_t err_len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/console.key", c->opts.state_dir);
	c->identity = slim_sec_identity_load(path, true, err, err_len);
	if (!c->identity) {
		return false;
	}
	slim_sec_fingerprint_id(slim_sec_identity_fingerprint(c->identity), c->id);
	return true;
}

/* Clear transport crosses no network: the peer must be on this machine. */
static bool transport_allowed(struct console *c, int fd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	if (c->opts.transport != SLIM_SEC_CLEAR || fd < 0) {
		return true;
	}
	if (getpeername(fd, (struct sockaddr *)&peer, &len) == 0 &&
			slim_sec_clear_allowed((struct sockaddr *)&peer)) {
		return true;
	}
	slim_console_status("--transport clear: only to this machine (a loopback address)");
	return false;
}

/* --manager: its control association, in which the console proves its key. */
static bool create_manager(struct console *c, char *err, size_t err_len)
{
	char path[4200];
	/* the first of a group's managers; on_manager_connecting follows the others */
	char first[300];
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(c->opts.manager, ","),
		c->opts.manager);
	char *address = slim_console_manager_address_of(first);
	snprintf(path, sizeof(path), "%s/known-servers", c->opts.state_dir);
	if (!c->trust && address) {
		c->trust = slim_trust_create(path, address,
			c->opts.has_server_key ? c->opts.server_key : NULL);
	}
	free(address);
	if (!c->trust) {
		snprintf(err, err_len, "out of memory");
		return false;
	}
	struct slim_console_manager_config config = {
		.mode = c->opts.transport,
		.mtu = c->opts.mtu,
		.identity = c->identity,
		.check_server = slim_trust_check,
		.check_data = c->trust,
	};
	c->manager = slim_console_manager_create(c->opts.manager, c->core, c->id, &config,
		&manager_listener, c, err, err_len);
	if (c->manager && !transport_allowed(c, slim_console_manager_fd(c->manager))) {
		snprintf(err, err_len, "--manager %s is not on this machine", c->opts.manager);
		return false;
	}
	return c->manager != NULL;
}

/*
 * --manager's association, started: true, or tried again later with the
 * reason on the screen (a name that does not resolve yet). False only when
 * it can never work.
 */
static bool start_manager(struct console *c)
{
	char err[512];
	if (create_manager(c, err, sizeof(err))) {
		c->manager_retry_us = 0;
		slim_console_manager_start(c->manager);
		return true;
	}
	if (c->manager) {
		slim_console_status("%s", err); /* a transport it may not use */
		return false;
	}
	char line[320];
	snprintf(line, sizeof(line), "The session manager %s cannot be reached", c->opts.manager);
	show_status(c, line, err);
	slim_console_status("%s; trying again in %llu s", err, MANAGER_RETRY_US / 1000000);
	c->manager_retry_us = slim_now_us() + MANAGER_RETRY_US;
	return true;
}

/* "HOST:PORT" and "HOST:PORT2": the same host. */
static bool same_host(const char *a, const char *b)
{
	const char *pa = strrchr(a, ':'), *pb = strrchr(b, ':');
	return pa && pb && pa - a == pb - b && strncmp(a, b, (size_t)(pa - a)) == 0;
}

/*
 * The picture of a session on the manager's server says that server is
 * there: as good as the manager's heartbeat (a picture from elsewhere is not).
 */
static void tell_manager_picture(struct console *c)
{
	uint64_t heard = slim_console_link_heard_us(c->link);
	const char *server = slim_console_link_server(c->link);
	if (!c->manager || heard == c->picture_us || !server) {
		return;
	}
	c->picture_us = heard;
	if (same_host(server, slim_console_manager_address(c->manager))) {
		slim_console_manager_heard(c->manager, heard);
	}
}

static bool run(struct console *c)
{
	int pump_ms = console_devices_timeout_ms(&c->devices);
	/* the devices' last: they are dispatched after the rest */
	enum { FD_SIGNAL, FD_LINK, FD_CONTROL, FD_CARD, FD_MANAGER, FD_AUDIO, FD_DEVICES,
		FD_COUNT = FD_DEVICES + CONSOLE_DEVICES_FDS };
	struct pollfd fds[FD_COUNT] = {
		[FD_SIGNAL] = { .fd = c->signal_fd, .events = POLLIN },
		[FD_LINK] = { .events = POLLIN },
		[FD_MANAGER] = { .fd = c->manager ? slim_console_manager_fd(c->manager) : -1,
			.events = POLLIN },
		/* poll() skips a negative fd: without --control stdin is not read */
		[FD_CONTROL] = { .fd = c->control ? slim_console_control_fd(c->control) : -1,
			.events = POLLIN },
		[FD_CARD] = { .events = POLLIN },
		[FD_AUDIO] = { .fd = console_audio_fd(c->audio), .events = POLLIN },
	};
	while (!c->quit) {
		/* a REDIRECT gives the link a new socket, a group's next manager the manager */
		fds[FD_LINK].fd = slim_console_link_fd(c->link);
		fds[FD_MANAGER].fd = c->manager ? slim_console_manager_fd(c->manager) : -1;
		/* the stdin card reader is done at the end of its input */
		fds[FD_CARD].fd = c->card ? slim_card_reader_fd(c->card) : -1;
		console_devices_poll(&c->devices, fds + FD_DEVICES);
		if (c->manager_retry_us && slim_now_us() >= c->manager_retry_us &&
				!start_manager(c)) {
			return false;
		}
		slim_console_link_tick(c->link, slim_now_us());
		int timeout_ms = slim_console_link_timeout_ms(c->link, slim_now_us());
		if (c->manager_retry_us) {
			uint64_t now_us = slim_now_us();
			int ms = now_us >= c->manager_retry_us ? 0 :
				(int)((c->manager_retry_us - now_us + 999) / 1000);
			if (timeout_ms < 0 || ms < timeout_ms) {
				timeout_ms = ms;
			}
		}
		if (c->manager) {
			slim_console_manager_tick(c->manager, slim_now_us());
			int ms = slim_console_manager_timeout_ms(c->manager, slim_now_us());
			/* -1: the link waits for nothing (no REDIRECT yet) */
			if (timeout_ms < 0 || ms < timeout_ms) {
				timeout_ms = ms;
			}
		}
		if (pump_ms >= 0 && (timeout_ms < 0 || timeout_ms > pump_ms)) {
			timeout_ms = pump_ms;
		}
		if (poll(fds, FD_COUNT, timeout_ms) < 0) {
			if (errno == EINTR) {
				continue;
			}
			slim_console_status("poll: %s", strerror(errno));
			return false;
		}
		/* Signals first: a SIGUSR1 sent before a command is served before it. */
		if (fds[FD_SIGNAL].revents) {
			handle_signals(c);
		}
		if (fds[FD_LINK].revents) {
			slim_console_link_dispatch(c->link);
			tell_manager_picture(c);
		}
		if (fds[FD_MANAGER].revents) {
			slim_console_manager_dispatch(c->manager);
		}
		if (fds[FD_CONTROL].revents && !slim_console_control_dispatch(c->control)) {
			c->quit = true;
		}
		if (fds[FD_CARD].revents) {
			slim_card_reader_dispatch(c->card);
		}
		if (fds[FD_AUDIO].revents) {
			/* the microphone is heard only by the session it shows */
			console_audio_dispatch(c->audio,
				slim_console_link_state(c->link) == SLIM_LINK_ATTACHED);
		}
		console_devices_dispatch(&c->devices, fds + FD_DEVICES);
	}
	return true;
}

/* --server's link, or the one a REDIRECT will give a server: false once the reason is said. */
static bool open_link(struct console *c)
{
	char err[512];
	/* --manager: no server until the manager's REDIRECT names one */
	struct slim_console_link_config link_config = {
		.mode = c->opts.transport,
		.mtu = c->opts.mtu,
		.pairing_key = c->opts.pairing_key[0] ? c->opts.pairing_key : NULL,
	};
	c->link = slim_console_link_create(c->opts.server, &link_config, err, sizeof(err));
	if (!c->link) {
		slim_console_status("%s", err);
		return false;
	}
	return transport_allowed(c, slim_console_link_fd(c->link));
}

/* The keymap HELLO says: --keyboard's, else the system's, else none (the session's own). */
static void set_keyboard(struct console *c)
{
	struct slim_keyboard system;
	const struct slim_keyboard *kb = c->opts.has_keyboard ? &c->opts.keyboard :
		console_keyboard_system(CONSOLE_KEYBOARD_FILE, &system) ? &system : NULL;
	slim_console_core_set_keyboard(c->core, kb);
	char text[SLIM_KEYBOARD_DESCRIBE_LEN];
	slim_keyboard_describe(kb ? kb : &(struct slim_keyboard){ 0 }, text, sizeof(text));
	slim_log(SLIM_LOG_DEBUG, "keyboard: %s", kb ? text : "none said (the session's own)");
}

/* The screen the server paints, as large as the output; false once the reason is said. */
static bool create_core(struct console *c)
{
	/* a record's overhead is the wire's; the slim datagrams get the rest */
	uint32_t mtu = c->opts.mtu;
	if (c->opts.transport == SLIM_SEC_DTLS) {
		mtu = (mtu > SLIM_SEC_MAX_RECORD + SLIM_SEC_OVERHEAD ?
			SLIM_SEC_MAX_RECORD + SLIM_SEC_OVERHEAD : mtu) - SLIM_SEC_OVERHEAD;
	}
	c->mtu = (uint16_t)mtu;
	c->core = slim_console_core_create(c->opts.width, c->opts.height, c->mtu,
		c->devices.backend, slim_console_link_send, c->link);
	/* the output's heads: a display's own, else --size's */
	if (!c->core || !slim_console_core_set_heads(c->core, &c->devices.desk)) {
		slim_console_status("cannot create a %ux%u screen of %u heads", c->opts.width,
			c->opts.height, c->devices.desk.n_heads);
		return false;
	}
	slim_console_core_set_video_budget(c->core, c->opts.video_budget);
	if (c->opts.video_codec != VIDEO_CODEC_NONE) {
		c->decoders = console_decoders_create(c->opts.video_codec == VIDEO_CODEC_AUTO);
		struct slim_wire_codec h264;
		if (c->decoders) {
			console_decoders_caps(c->decoders, &h264);
			slim_console_core_set_video(c->core, &console_decoders_impl, c->decoders, &h264, 1);
		}
	}
	/* a frame's ACK rides on the keystroke's release that usually follows */
	slim_console_core_set_ack_delay(c->core, true);
	set_keyboard(c);
	return true;
}

/* Everything the loop serves, started: -1, or the status to exit with. */
static int start(struct console *c)
{
	char err[512];
	if (!load_identity(c, err, sizeof(err))) {
		slim_console_status("%s", err);
		return EXIT_FAILURE;
	}
	if (c->opts.print_id) {
		printf("%s\n", c->id);
		return EXIT_SUCCESS;
	}
	if (!open_link(c)) {
		return EXIT_USAGE;
	}
	if (!console_devices_open_output(&c->devices, &c->opts, &devices_listener, c) ||
			!create_core(c)) {
		return EXIT_FAILURE;
	}
	if (c->opts.manager && !slim_console_manager_check(c->opts.manager, err, sizeof(err))) {
		slim_console_status("%s", err);
		return EXIT_USAGE;
	}
	if (c->opts.control) {
		c->control = slim_console_control_create(STDIN_FILENO, stdout, c->core, c->link);
		if (!c->control) {
			slim_console_status("out of memory");
			return EXIT_FAILURE;
		}
	}
	c->signal_fd = open_signals();
	if (c->signal_fd < 0) {
		slim_console_status("signalfd: %s", strerror(errno));
		return EXIT_FAILURE;
	}
	/* after the signals are blocked: the PC/SC thread inherits the mask */
	if (!open_card_reader(c)) {
		return EXIT_FAILURE;
	}
	console_devices_open_input(&c->devices, &c->opts);
	if (c->control) {
		slim_console_control_id(c->control, c->id);
	}
	/* no sound device is no reason to stop: the console is silent, and says so */
	c->audio = console_audio_create(&c->opts.audio, &audio_listener, c);
	slim_console_core_set_caps(c->core, console_audio_caps(c->audio));
	if (c->control) {
		slim_console_control_set_audio(c->control, c->audio);
		slim_console_control_set_decoders(c->control, c->decoders);
	}
	slim_console_link_start(c->link, c->core, c->id, &link_listener, c);
	if (c->opts.manager && !start_manager(c)) {
		return EXIT_USAGE;
	}
	return -1;
}

static void stop(struct console *c)
{
	slim_card_reader_destroy(c->card);
	slim_console_control_destroy(c->control);
	slim_console_manager_destroy(c->manager);
	slim_trust_destroy(c->trust);
	/* before the core: the link lets go of the core's events */
	slim_console_link_destroy(c->link);
	console_audio_destroy(c->audio);
	slim_console_core_destroy(c->core);
	console_decoders_destroy(c->decoders);
	console_devices_close(&c->devices);
	if (c->signal_fd >= 0) {
		close(c->signal_fd);
	}
	slim_sec_identity_destroy(c->identity);
}

int main(int argc, char *argv[])
{
	struct console c = { .signal_fd = -1 };
	int ret = slim_options_parse(argc, argv, &c.opts);
	if (ret >= 0) {
		return ret;
	}
	slim_log_init(c.opts.verbose ? SLIM_LOG_DEBUG : SLIM_LOG_INFO, NULL);
	if (c.opts.bench_present) {
		ret = console_devices_bench(&c.devices, &c.opts);
	} else if ((ret = start(&c)) < 0) {
		ret = run(&c) ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	stop(&c);
	return ret;
}
