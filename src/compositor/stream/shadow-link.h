/*
 * A second console watching the session (helpdesk shadowing): a link of
 * its own (its own socket, encoder, model of the console and pacer), fed
 * from the same frames as the session's console. Each frame's damaged
 * pixels are copied into a screen of the shadow's own and its damage
 * gathered; the shadow is sent what changed whenever its link can take a
 * frame, a few milliseconds after the session's console had its frame,
 * so a slow shadow costs the session's console nothing but that copy.
 *
 * Its console attaches as a managed one does: with the token and key the
 * manager handed over (`shadow` on the control socket), once.
 *
 * No wlroots here: only the Wayland event loop.
 */
#ifndef SLIM_SHADOW_LINK_H
#define SLIM_SHADOW_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <pixman.h>
#include <wayland-server-core.h>
#include "link.h"

struct slim_shadow_link_handler {
	void (*attached)(void *data, const char *console_id);
	/* the shadow console went (goodbye, silence, or detached) */
	void (*detached)(void *data, const char *console_id);
	/* input from the shadow console, for the session to take or not */
	void (*input)(void *data, const struct slim_wire_input *ev);
};

struct slim_shadow_link;

/*
 * Listens on `config`'s address at a port of its own (any free one),
 * managed; `config` is copied.
 */
struct slim_shadow_link *slim_shadow_link_create(struct wl_event_loop *loop,
		const struct slim_link_config *config, const struct slim_shadow_link_handler *handler,
		void *data);
void slim_shadow_link_destroy(struct slim_shadow_link *shadow);

uint16_t slim_shadow_link_port(const struct slim_shadow_link *shadow);
/* Its link, for what goes out without a frame (the pointer). */
struct slim_link *slim_shadow_link_link(struct slim_shadow_link *shadow);
void slim_shadow_link_expect(struct slim_shadow_link *shadow,
		const uint8_t token[SLIM_ATTACH_TOKEN_LEN],
		const char console_id[SLIM_CONSOLE_ID_LEN], const uint8_t key[SLIM_SEC_KEY_LEN]);
/*
 * A frame of the session's screen and what changed in it: the shadow's
 * copy takes the changed pixels; it is sent them when its link has room.
 * NULL is a no-op.
 */
void slim_shadow_link_frame(struct slim_shadow_link *shadow, const struct slim_fb *fb,
		const pixman_region32_t *damage);

#endif
