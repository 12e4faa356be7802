/*
 * A greeter's uid in the user database while its greeter runs: a JSON user
 * record in /run/userdb/ (systemd's drop-in records, NAME.user and a
 * UID.user link to it), which nss-systemd resolves for every program
 * (the `systemd` of nsswitch.conf's passwd line, Debian's default).
 * dbus-daemon will neither run as nor take connections from a uid that
 * getpwuid does not know, so without it a greeter has no session bus.
 */
#ifndef SLIM_SESSIOND_USERDB_H
#define SLIM_SESSIOND_USERDB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SLIM_USERDB_DIR "/run/userdb"

/* NAME.user (and UID.user) in dir, replacing what was there. False: logged. */
bool slim_userdb_add(const char *dir, const char *name, uid_t uid, gid_t gid,
		const char *home, const char *shell);
/* UID.user and the record it names, if any. */
void slim_userdb_remove(const char *dir, uid_t uid);

#endif
