/*
 * The session's sound server: the user's own PipeWire if one already runs
 * (systemd's user units start it at login), else one started here when a
 * client first asks for sound, as session daemons of the compositor
 * (daemons.h): pipewire, wireplumber (which links streams and keeps the
 * defaults; it wants the session bus, session-bus.h, started first) and
 * pipewire-pulse (PulseAudio clients; ALSA clients reach PipeWire through
 * pipewire-alsa).
 *
 * A session that never plays a sound runs none of them: the compositor
 * holds PipeWire's socket and PulseAudio's itself, as systemd's socket
 * units would, and the first connection to either starts PipeWire and
 * pipewire-pulse on them (socket activation: the connection waits in the
 * socket until its daemon takes it). WirePlumber comes once the session's
 * own nodes are there: it tells a client's stream that finds no sink
 * "no node available" rather than waiting for one. Told to, the session
 * ends them again; the sockets stay.
 *
 * Either PipeWire is marked as the session's first (slim-pw-mark.h), so
 * that a console started beside the session keeps out of it.
 *
 * No wlroots and no libpipewire here: only processes and sockets.
 */
#ifndef SLIM_AUDIO_DAEMONS_H
#define SLIM_AUDIO_DAEMONS_H

#include <stdbool.h>

struct slim_sched;
struct slim_audio_daemons;

enum slim_audio_daemons_state {
	SLIM_AUDIO_NONE,      /* no sound: a daemon would not start */
	SLIM_AUDIO_USERS,     /* the user's own PipeWire: nothing started or ended here */
	SLIM_AUDIO_LISTENING, /* the sockets are the compositor's; no daemon runs */
	SLIM_AUDIO_STARTING,  /* PipeWire and pipewire-pulse started here, on the sockets */
	SLIM_AUDIO_RUNNING,   /* and WirePlumber */
};

/* PipeWire's socket and PulseAudio's. */
#define SLIM_AUDIO_SOCKETS 2

/*
 * Finds the user's PipeWire at $XDG_RUNTIME_DIR/pipewire-0, or listens
 * there (and at pulse/native) for the first client. NULL (said in one log
 * line) when there is no runtime directory or no socket can be made: the
 * session runs without sound. The daemons run in the compositor's cgroup
 * class (`sched`): they work for every client.
 */
struct slim_audio_daemons *slim_audio_daemons_create(struct slim_sched *sched);
enum slim_audio_daemons_state slim_audio_daemons_state(const struct slim_audio_daemons *d);
/*
 * While LISTENING, socket `i` (< SLIM_AUDIO_SOCKETS) to watch for a
 * connection, or -1: a connection there is for slim_audio_daemons_wake.
 */
int slim_audio_daemons_socket(const struct slim_audio_daemons *d, int i);
/*
 * LISTENING -> STARTING: starts PipeWire and pipewire-pulse on the
 * sockets, without waiting for them. True if a PipeWire is there or coming
 * (the user's counts); false when none could be started: the session has
 * no sound from then on.
 */
bool slim_audio_daemons_wake(struct slim_audio_daemons *d);
/* STARTING -> RUNNING: the session's nodes are there; WirePlumber may link streams to them. */
void slim_audio_daemons_link(struct slim_audio_daemons *d);
/* STARTING or RUNNING -> LISTENING: ends the daemons started here; the next client wakes them. */
void slim_audio_daemons_sleep(struct slim_audio_daemons *d);
/* Ends the daemons started here and closes the sockets. NULL is a no-op. */
void slim_audio_daemons_destroy(struct slim_audio_daemons *d);

#endif
