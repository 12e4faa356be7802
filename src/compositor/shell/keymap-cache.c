/*
 * Compiled keymaps by their XKB names. Compiling one takes tens of
 * milliseconds (more than a frame), so it is done on a thread of its own
 * while the loop goes on drawing, once per names: a console that comes
 * back, or a greeter's and a session's of one desk, find it compiled. A
 * keymap that does not compile is said once, with xkbcommon's reason, and
 * its names type `us` from then on.
 *
 * Each compile has an xkb_context of its own (a context is not to be
 * shared between threads); the keymap it makes is handed over through the
 * pipe, and from then on only the loop's thread touches it.
 */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wlr/util/log.h>
#include <xkbcommon/xkbcommon.h>
#include "shell-internal.h"
#include "slim-alloc.h"
#include "slim-keyboard.h"

/* Keymaps kept; the one used longest ago goes when another comes. */
#define CACHED 16
/*
 * Compiles at once: a console that attaches again and again with new names
 * costs a core at most; the names asked for later wait for a free one.
 */
#define MAX_COMPILING 1

struct cached {
	struct slim_keyboard names;
	struct xkb_keymap *keymap; /* NULL: free slot */
	uint64_t used;             /* when last asked for */
};

struct compile {
	struct slim_keymap_cache *cache;
	struct slim_keyboard names;
	struct xkb_keymap *keymap; /* the result: the names', or us's if they failed */
	bool failed;
	char reason[160]; /* xkbcommon's first error */
	pthread_t thread;
	struct wl_list link;
};

struct slim_keymap_cache {
	struct cached cached[CACHED];
	uint64_t clock;
	struct wl_list compiling; /* compile.link */
	int done[2];              /* a pipe: a finished compile's pointer */
	struct wl_event_source *done_source;
	void (*ready)(void *data);
	void *data;
};

/* libxkbcommon's log function: its format is libxkbcommon's own */
__attribute__((format(printf, 3, 0)))
static void keep_reason(struct xkb_context *ctx, enum xkb_log_level level, const char *fmt,
		va_list args)
{
	struct compile *c = xkb_context_get_user_data(ctx);
	if (level > XKB_LOG_LEVEL_ERROR || c->reason[0]) {
		return;
	}
	vsnprintf(c->reason, sizeof(c->reason), fmt, args);
	c->reason[strcspn(c->reason, "\n")] = '\0';
}

static struct xkb_keymap *compile_names(struct compile *c, const struct slim_keyboard *kb)
{
	/* the names alone say the keymap, not this process's XKB_DEFAULT_* */
	struct xkb_context *ctx = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	if (!ctx) {
		snprintf(c->reason, sizeof(c->reason), "no XKB context");
		return NULL;
	}
	xkb_context_set_user_data(ctx, c);
	xkb_context_set_log_fn(ctx, keep_reason);
	/* "" rather than NULL: empty options are none, not the default ones */
	struct xkb_rule_names names = {
		.rules = kb->rules, .model = kb->model, .layout = kb->layout,
		.variant = kb->variant, .options = kb->options,
	};
	struct xkb_keymap *keymap = xkb_keymap_new_from_names(ctx, &names,
		XKB_KEYMAP_COMPILE_NO_FLAGS);
	xkb_context_unref(ctx); /* the keymap holds it */
	return keymap;
}

static void compile_now(struct compile *c)
{
	c->keymap = compile_names(c, &c->names);
	if (!c->keymap) {
		c->failed = true;
		c->keymap = compile_names(c, &(struct slim_keyboard){ .layout = "us" });
	}
}

static void *compile_thread(void *data)
{
	struct compile *c = data;
	compile_now(c);
	/* a pointer is less than PIPE_BUF: written whole or not at all */
	if (write(c->cache->done[1], &c, sizeof(c)) != sizeof(c)) {
		wlr_log(WLR_ERROR, "keymap: cannot tell the loop a compile ended");
	}
	return NULL;
}

static struct cached *lookup(struct slim_keymap_cache *cache, const struct slim_keyboard *names)
{
	for (size_t i = 0; i < CACHED; i++) {
		if (cache->cached[i].keymap &&
				memcmp(&cache->cached[i].names, names, sizeof(*names)) == 0) {
			return &cache->cached[i];
		}
	}
	return NULL;
}

/* A compile's result into the cache, in a free slot or the one used longest ago. */
static void keep(struct slim_keymap_cache *cache, struct compile *c)
{
	char text[SLIM_KEYBOARD_DESCRIBE_LEN];
	slim_keyboard_describe(&c->names, text, sizeof(text));
	if (c->failed) {
		wlr_log(WLR_ERROR, "keyboard %s does not compile (%s): it types us", text,
			c->reason[0] ? c->reason : "no reason given");
	}
	if (!c->keymap) {
		return; /* not even us: the keyboard keeps what it has */
	}
	struct cached *slot = &cache->cached[0];
	for (size_t i = 0; i < CACHED && slot->keymap; i++) {
		if (!cache->cached[i].keymap || cache->cached[i].used < slot->used) {
			slot = &cache->cached[i];
		}
	}
	xkb_keymap_unref(slot->keymap);
	*slot = (struct cached){ .names = c->names, .keymap = c->keymap, .used = ++cache->clock };
	c->keymap = NULL;
}

static void finish(struct compile *c)
{
	pthread_join(c->thread, NULL);
	wl_list_remove(&c->link);
	keep(c->cache, c);
	xkb_keymap_unref(c->keymap);
	free(c);
}

static int handle_done(int fd, uint32_t mask, void *data)
{
	struct slim_keymap_cache *cache = data;
	struct compile *c;
	while (read(fd, &c, sizeof(c)) == sizeof(c)) {
		finish(c);
		cache->ready(cache->data);
	}
	return 0;
}

struct slim_keymap_cache *keymap_cache_create(struct wl_event_loop *loop,
		void (*ready)(void *data), void *data)
{
	struct slim_keymap_cache *cache = slim_znew(struct slim_keymap_cache);
	cache->ready = ready;
	cache->data = data;
	wl_list_init(&cache->compiling);
	if (pipe2(cache->done, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(cache);
		return NULL;
	}
	cache->done_source = wl_event_loop_add_fd(loop, cache->done[0], WL_EVENT_READABLE,
		handle_done, cache);
	if (!cache->done_source) {
		keymap_cache_destroy(cache);
		return NULL;
	}
	return cache;
}

/* Waits for the compiles under way: a few tens of milliseconds at most. */
void keymap_cache_destroy(struct slim_keymap_cache *cache)
{
	if (!cache) {
		return;
	}
	struct compile *c, *tmp;
	wl_list_for_each_safe(c, tmp, &cache->compiling, link) {
		finish(c);
	}
	for (size_t i = 0; i < CACHED; i++) {
		xkb_keymap_unref(cache->cached[i].keymap);
	}
	if (cache->done_source) {
		wl_event_source_remove(cache->done_source);
	}
	close(cache->done[0]);
	close(cache->done[1]);
	free(cache);
}

/*
 * `names`' keymap, or NULL while it compiles (or waits to): ready() is
 * called when a compile is done, and the caller asks again.
 */
struct xkb_keymap *keymap_cache_get(struct slim_keymap_cache *cache,
		const struct slim_keyboard *names)
{
	struct cached *hit = lookup(cache, names);
	if (hit) {
		hit->used = ++cache->clock;
		return hit->keymap;
	}
	struct compile *c;
	if (wl_list_length(&cache->compiling) >= MAX_COMPILING) {
		return NULL; /* asked again when one is done (ready) */
	}
	c = slim_znew(struct compile);
	c->cache = cache;
	c->names = *names;
	if (pthread_create(&c->thread, NULL, compile_thread, c) == 0) {
		wl_list_insert(&cache->compiling, &c->link);
		return NULL;
	}
	/* no thread to be had: the loop waits for this one compile */
	compile_now(c);
	keep(cache, c);
	xkb_keymap_unref(c->keymap);
	free(c);
	hit = lookup(cache, names);
	return hit ? hit->keymap : NULL;
}
