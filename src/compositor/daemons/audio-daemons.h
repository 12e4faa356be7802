/*
 * The session's sound server: the user's own PipeWire if one already runs
 * (systemd's user units start it at login), else one started here, as
 * session daemons of the compositor (daemons.h), so that clients find a
 * sound server as on any desktop: pipewire, wireplumber (which links
 * streams and keeps the defaults; it wants the session bus, session-bus.h,
 * started first) and pipewire-pulse (PulseAudio clients; ALSA clients
 * reach PipeWire through pipewire-alsa). Either PipeWire is marked as the
 * session's first (slim-pw-mark.h), so that a console started beside the
 * session keeps out of it.
 *
 * No wlroots and no libpipewire here: only processes.
 */
#ifndef SLIM_AUDIO_DAEMONS_H
#define SLIM_AUDIO_DAEMONS_H

#include <stdbool.h>

struct slim_sched;
struct slim_audio_daemons;

/*
 * Makes sure a PipeWire answers at $XDG_RUNTIME_DIR/pipewire-0, starting
 * what is missing. NULL (said in one log line) when there is no runtime
 * directory or PipeWire cannot be started: the session runs without sound.
 * The daemons run in the compositor's cgroup class (`sched`): they work
 * for every client.
 */
struct slim_audio_daemons *slim_audio_daemons_start(struct slim_sched *sched);
/* Ends the daemons started here (none if the user's own ran). NULL: no-op. */
void slim_audio_daemons_stop(struct slim_audio_daemons *daemons);

#endif
