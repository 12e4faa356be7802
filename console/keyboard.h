/*
 * The keymap the console's keyboard types with, which HELLO tells the
 * session: --keyboard, or else the system's, from /etc/default/keyboard
 * (Debian's keyboard-configuration) and then XKB_DEFAULT_* in the
 * environment.
 */
#ifndef SLIM_CONSOLE_KEYBOARD_H
#define SLIM_CONSOLE_KEYBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include "slim-desk.h"

#define CONSOLE_KEYBOARD_FILE "/etc/default/keyboard"

/*
 * The system's keyboard: `path`'s (CONSOLE_KEYBOARD_FILE), else
 * XKB_DEFAULT_*'s. False if neither says one; a file or variable that
 * cannot be read is said on stderr and passed over.
 */
bool console_keyboard_system(const char *path, struct slim_keyboard *kb);

/*
 * /etc/default/keyboard's text (len bytes): shell-style KEY=VALUE lines,
 * VALUE bare, "double-" or 'single-quoted', without expansions; blank
 * lines and # comments. XKBMODEL, XKBLAYOUT, XKBVARIANT and XKBOPTIONS go
 * into `kb`, other keys are passed over. False, with the line and the
 * reason in `why`, for a line that is none of these or a value no XKB
 * name has. *found: whether it names a layout.
 */
bool console_keyboard_parse_default(const char *text, size_t len, struct slim_keyboard *kb,
		bool *found, char *why, size_t why_len);

#endif
