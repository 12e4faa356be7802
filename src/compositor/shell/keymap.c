/*
 * Which keymap the console's keyboard types with, chosen at each attach:
 *
 *   the user's own   ~/.config/slimland/keyboard ($XDG_CONFIG_HOME's), one
 *                    line as the console's --keyboard says it: wins
 *   the console's    the names its HELLO says (slim-desk.h)
 *   us               a console whose names have characters no XKB name has
 *   the session's    a console that says none: XKB_DEFAULT_* of the
 *                    session's environment, compiled when it starts
 *
 * A keymap not yet compiled comes from keymap-cache.c a few tens of
 * milliseconds later; the console's keys wait for it, so that none types
 * with the keymap of the console before. wlr_keyboard_set_keymap sends the
 * new keymap to every client (the seat's keymap event), which types with
 * it from its next key on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wlr/interfaces/wlr_keyboard.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/util/log.h>
#include <xkbcommon/xkbcommon.h>
#include "shell-internal.h"
#include "slim-alloc.h"
#include "slim-keyboard.h"

/* Keys that may wait for a keymap; more are typed with the one there is. */
#define MAX_HELD 64
/* Larger than a keyboard file; a larger one is not one. */
#define MAX_USER_FILE 4096

struct slim_keymap {
	struct wlr_keyboard *keyboard;
	struct xkb_keymap *session_default;
	struct slim_keymap_cache *cache;
	bool waiting; /* for `want`'s keymap to compile */
	bool overflowed; /* more keys came meanwhile than wait: the rest go on */
	struct slim_keyboard want;
	struct wlr_event_keyboard_key held[MAX_HELD];
	size_t n_held;
	/* said once until it changes: the user's file's fault, a console's bad names */
	char said_file[512];
	char said_console[SLIM_CONSOLE_ID_LEN + 1];
};

static void set(struct slim_keymap *km, struct xkb_keymap *keymap)
{
	if (km->keyboard->keymap != keymap) {
		wlr_keyboard_set_keymap(km->keyboard, keymap);
	}
}

/* The keys that waited, typed now with the keymap there is. */
static void release_held(struct slim_keymap *km)
{
	for (size_t i = 0; i < km->n_held; i++) {
		wlr_keyboard_notify_key(km->keyboard, &km->held[i]);
	}
	km->n_held = 0;
}

/* `keymap` is the one to type with: set, and the keys that waited for it typed. */
static void settle(struct slim_keymap *km, struct xkb_keymap *keymap)
{
	set(km, keymap);
	km->waiting = km->overflowed = false;
	release_held(km);
}

/* The keymap of `want`, if it is compiled. */
static void try_want(struct slim_keymap *km)
{
	struct xkb_keymap *keymap = keymap_cache_get(km->cache, &km->want);
	if (keymap) {
		settle(km, keymap);
	}
}

static void handle_compiled(void *data)
{
	struct slim_keymap *km = data;
	if (km->waiting) {
		try_want(km);
	}
}

struct slim_keymap *keymap_create(struct wl_event_loop *loop, struct wlr_keyboard *keyboard)
{
	struct slim_keymap *km = slim_znew(struct slim_keymap);
	km->keyboard = keyboard;
	struct xkb_context *ctx = xkb_context_new(XKB_CONTEXT_NO_FLAGS);
	/* NULL names: rules, model, layout, variant and options from XKB_DEFAULT_*. */
	km->session_default = ctx ? xkb_keymap_new_from_names(ctx, NULL,
		XKB_KEYMAP_COMPILE_NO_FLAGS) : NULL;
	xkb_context_unref(ctx);
	km->cache = keymap_cache_create(loop, handle_compiled, km);
	if (!km->session_default || !km->cache) {
		wlr_log(WLR_ERROR, "cannot compile the keymap (check XKB_DEFAULT_LAYOUT)");
		keymap_destroy(km);
		return NULL;
	}
	set(km, km->session_default);
	return km;
}

void keymap_destroy(struct slim_keymap *km)
{
	if (!km) {
		return;
	}
	keymap_cache_destroy(km->cache);
	xkb_keymap_unref(km->session_default);
	free(km);
}

/* Where the user's own keyboard is said. */
static bool user_file_path(char *path, size_t size)
{
	const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n = config && config[0] == '/' ? snprintf(path, size, "%s/slimland/keyboard", config) :
		home && home[0] == '/' ? snprintf(path, size, "%s/.config/slimland/keyboard", home) :
		-1;
	return n > 0 && (size_t)n < size;
}

/* Says `what` unless it was the last thing said of the file. */
static void say_file(struct slim_keymap *km, const char *what)
{
	if (strcmp(km->said_file, what) != 0) {
		wlr_log(WLR_ERROR, "%s", what);
		snprintf(km->said_file, sizeof(km->said_file), "%s", what);
	}
}

/* The user's own keyboard: false if there is no file, or a bad one (said once). */
static bool user_keyboard(struct slim_keymap *km, struct slim_keyboard *kb)
{
	char path[4096], text[MAX_USER_FILE], why[192], what[sizeof(km->said_file)];
	FILE *f = user_file_path(path, sizeof(path)) ? fopen(path, "r") : NULL;
	if (!f) {
		km->said_file[0] = '\0';
		return false;
	}
	size_t len = fread(text, 1, sizeof(text), f);
	bool error = ferror(f);
	fclose(f);
	if (error || len == sizeof(text)) {
		snprintf(why, sizeof(why), "%s", error ? "cannot be read" : "too large");
	} else if (slim_keyboard_parse_text(text, len, kb, why, sizeof(why))) {
		km->said_file[0] = '\0';
		return true;
	}
	snprintf(what, sizeof(what), "%.160s: %s; the console's keyboard is used", path, why);
	say_file(km, what);
	return false;
}

void keymap_attached(struct slim_keymap *km, const char *console_id,
		const struct slim_desk *desk)
{
	static const struct slim_keyboard us = { .layout = "us" };
	struct slim_keyboard user;
	const struct slim_keyboard *names = NULL;
	const char *whose = "the console's";
	if (user_keyboard(km, &user)) {
		names = &user;
		whose = "the user's";
	} else if (desk->has_keyboard) {
		names = &desk->keyboard;
	} else if (desk->keyboard_bad) {
		if (strcmp(km->said_console, console_id) != 0) {
			wlr_log(WLR_ERROR, "console %s says a keyboard with characters no XKB name "
				"has: it types us", console_id);
			snprintf(km->said_console, sizeof(km->said_console), "%s", console_id);
		}
		names = &us;
	}
	if (!names) {
		wlr_log(WLR_DEBUG, "keyboard: the session's own");
		settle(km, km->session_default);
		return;
	}
	char text[SLIM_KEYBOARD_DESCRIBE_LEN];
	slim_keyboard_describe(names, text, sizeof(text));
	wlr_log(WLR_INFO, "keyboard: %s, %s", text, whose);
	km->want = *names;
	km->waiting = true;
	try_want(km);
}

bool keymap_hold_key(struct slim_keymap *km, const struct wlr_event_keyboard_key *key)
{
	if (!km->waiting || km->overflowed) {
		return false;
	}
	if (km->n_held == MAX_HELD) {
		release_held(km); /* then this one, after them */
		km->overflowed = true;
		return false;
	}
	km->held[km->n_held++] = *key;
	return true;
}
