/*
 * Which PipeWire carries a session's sound, told without a race: the
 * compositor holds a shared lock on a file beside the PipeWire socket of
 * its runtime directory (the socket's path and ".slimland-session") from
 * before it starts that PipeWire, or, when the user's ran already, before
 * it makes its nodes there, for as long as it runs. A console connected to
 * a PipeWire whose lock is held would play the session's sound into the
 * session's own sink and send it back as its microphone: a loop. The lock
 * goes with the compositor, however it ends; the file stays, unlocked.
 * Only a regular file of the user's own is a mark.
 */
#ifndef SLIM_PW_MARK_H
#define SLIM_PW_MARK_H

#include <stdbool.h>

/* The compositor's: marks the PipeWire at `socket_path`; the lock's fd, or -1 (errno). */
int slim_pw_mark(const char *socket_path);
/*
 * Whether the PipeWire this process connects to (as libpipewire finds its
 * socket: PIPEWIRE_REMOTE, then PIPEWIRE_RUNTIME_DIR or XDG_RUNTIME_DIR)
 * is marked. Asked after connecting, it cannot race with a session
 * starting its PipeWire: the mark was there first.
 */
bool slim_pw_marked(void);

#endif
