/*
 * A keyboard's XKB names as a person writes them: the console's
 * --keyboard and a user's ~/.config/slimland/keyboard.
 *
 *   LAYOUT[:VARIANT][+LAYOUT[:VARIANT]...][,OPTION[,OPTION...]]
 *
 * "de", "us:dvorak", "de,grp:alt_shift_toggle", "us+ru:phonetic,grp:alt_shift_toggle"
 * (XKB's layout "us,ru", variant ",phonetic"). Layouts are joined with +
 * because XKB's options are a comma-separated list of their own: what
 * follows the first comma is options, and nothing else.
 */
#ifndef SLIM_KEYBOARD_H
#define SLIM_KEYBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include "slim-desk.h"

#define SLIM_KEYBOARD_SYNTAX "LAYOUT[:VARIANT][+LAYOUT[:VARIANT]...][,OPTIONS]"
/* XKB switches between at most four layouts (groups). */
#define SLIM_KEYBOARD_MAX_LAYOUTS 4
/* Room for slim_keyboard_describe's text, whatever the names. */
#define SLIM_KEYBOARD_DESCRIBE_LEN 400

/*
 * `spec` in the syntax above, into `kb` (rules and model empty). False,
 * with the reason in `why`, if it is not that syntax, names a character an
 * XKB name has not, or does not fit HELLO's fields; `kb` is then unchanged.
 */
bool slim_keyboard_parse(const char *spec, struct slim_keyboard *kb, char *why, size_t why_len);
/*
 * A file's text (len bytes, not necessarily terminated): one line in that
 * syntax, with blank lines and lines starting with # around it. False,
 * with the reason and its line in `why`, for anything else.
 */
bool slim_keyboard_parse_text(const char *text, size_t len, struct slim_keyboard *kb,
		char *why, size_t why_len);
/*
 * Whether every name holds only what XKB names hold (letters, digits and
 * _,:+()-.), as HELLO requires.
 */
bool slim_keyboard_names_valid(const struct slim_keyboard *kb);
/*
 * `kb` in the syntax above, for a log line; its model and rules, if any,
 * after it ("de (model pc105)"). "default" for no layout.
 */
void slim_keyboard_describe(const struct slim_keyboard *kb, char *out, size_t len);

#endif
