/*
 * --control: a line protocol on stdin and stdout for tests and benchmarks.
 *
 * Commands, one a line:
 *   key CODE 0|1          evdev key (KEY_A = 30) up or down
 *   button CODE 0|1       evdev button (BTN_LEFT = 272) up or down
 *   motion X Y            pointer to (X, Y) in console pixels (fractions allowed)
 *   rmotion DX DY         pointer moved by (DX, DY) pixels
 *   axis VALUE            vertical scroll by VALUE scroll units
 *   resize W H            the screen is W x H now, as after a monitor hot-plug:
 *                         a new association tells the server ("connecting" follows)
 *   screenshot PATH       PNG of the shadow framebuffer; answers "screenshot PATH"
 *   stats                 answers "stats frames=N datagrams=N applied=N bad=N late=N dup=N
 *                         ... input_sent=N input_retransmits=N input_acked=N input_dropped=N"
 *                         and, with sound, "audio datagrams=N packets=N lost=N ... depth_ms=N"
 *   sync                  answers "sync FRAME", the last presented frame (0: none yet)
 *   watch X Y             from now on, each presented frame that changed the colour of
 *                         the pixel at (X, Y) also says "pixel X Y RRGGBB APPLIED_US"
 *                         (hex, after its "frame" line, same time): when a video's
 *                         flash was shown, without a screenshot a frame (bench-audio)
 *   card insert HEX       with --card-reader=stdin: a card with this UID (1..32
 *   card remove           bytes) put on reader 0, and taken off again
 *   quit                  (the end of stdin quits too: no console outlives its driver)
 * Events, one a line, flushed at once:
 *   id ID (first: the console's id, from its key),
 *   connecting HOST:PORT [(WHY)] (WHY: what ended the last attempt, e.g. a
 *   handshake that failed), attached ASSOC, frame ID APPLIED_US,
 *   refused busy TEXT, refused unknown, audio onset HEARD_US (sound began
 *   after a silence, heard then), audio quiet HEARD_US (it ended: 100 ms of
 *   quiet heard), pixel X Y RRGGBB APPLIED_US (after
 *   "watch"), error TEXT (a bad command, or input
 *   while not attached or with too much unacknowledged, which is dropped).
 *   ASSOC is decimal; TEXT is the
 *   server's, with control characters shown as '?'.
 *   With --manager these are the display association's; the control
 *   association adds: manager connecting HOST:PORT [(WHY)], manager attached
 *   ASSOC, manager silent HOST:PORT (WHAT) (2 s without a word from it; WHAT:
 *   "trying HOST:PORT" or "trying again"),
 *   manager refused pending|denied TEXT (not enrolled), and redirect
 *   HOST:PORT (a REDIRECT acted on: "connecting" follows).
 *
 * Input events carry CLOCK_MONOTONIC milliseconds, and "frame" is printed
 * the moment the frame is presented, so that "key 30 1" to "frame" is the
 * console's view of the round trip through the server.
 */
#ifndef SLIM_CONSOLE_CONTROL_H
#define SLIM_CONSOLE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "audio.h"
#include "console-core.h"
#include "session-link.h"

struct slim_console_control;

struct slim_console_control *slim_console_control_create(int in_fd, FILE *out,
		struct slim_console_core *core, struct slim_console_link *link);
void slim_console_control_destroy(struct slim_console_control *ctl);

/*
 * "card" commands become reader 0's events (--card-reader=stdin with
 * --control), handed to `card` (the program knows where CARD goes).
 */
void slim_console_control_enable_cards(struct slim_console_control *ctl,
		void (*card)(void *data, const struct slim_wire_card *card), void *data);
int slim_console_control_fd(const struct slim_console_control *ctl);
/* "audio onset US": sound began; "audio quiet US": it ended (100 ms of quiet heard). */
void slim_console_control_audio_heard(struct slim_console_control *ctl, bool sound,
		uint64_t heard_us);
/* "stats" reports this sound too. */
void slim_console_control_set_audio(struct slim_console_control *ctl, struct console_audio *audio);
struct console_decoders;
/* The video decoders whose figures `stats` adds (a "video" line). */
void slim_console_control_set_decoders(struct slim_console_control *ctl,
		struct console_decoders *decoders);
/* Reads and runs commands; false once "quit" was read or stdin closed. */
bool slim_console_control_dispatch(struct slim_console_control *ctl);

void slim_console_control_id(struct slim_console_control *ctl, const char *id);
void slim_console_control_connecting(struct slim_console_control *ctl, const char *server,
		const char *why);
void slim_console_control_attached(struct slim_console_control *ctl, uint32_t assoc);
void slim_console_control_frame(struct slim_console_control *ctl, uint32_t frame,
		uint64_t applied_us);
void slim_console_control_refused(struct slim_console_control *ctl, uint16_t reason,
		const char *text);
void slim_console_control_manager_connecting(struct slim_console_control *ctl, const char *manager,
		const char *why);
void slim_console_control_manager_refused(struct slim_console_control *ctl, uint16_t reason,
		const char *text);
void slim_console_control_manager_attached(struct slim_console_control *ctl, uint32_t assoc);
/* The manager has been silent for 2 s; `what` says what the console does about it. */
void slim_console_control_manager_silent(struct slim_console_control *ctl, const char *manager,
		const char *what);
void slim_console_control_redirect(struct slim_console_control *ctl, const char *server);

#endif
