/*
 * Helpdesk shadowing (shadow.c): a second console watching the session,
 * after its user said yes. The compositor asks itself (a question drawn
 * over everything, answered with Y or N on the session's own console's
 * keyboard; no answer in SHADOW_ASK_S seconds is no) and, while a console
 * watches, draws a red bar over everything at the top of the screen that
 * the watching console sees too and cannot take away. Ctrl+Alt+Escape on
 * the session's console ends the watching, as does either console leaving
 * or the manager's `unshadow`.
 */
#ifndef SLIM_SHADOW_H
#define SLIM_SHADOW_H

#include <stdbool.h>
#include "control-line.h"
#include "slim-pixels.h"
#include <pixman.h>

#define SHADOW_ASK_S 30
/* the shadow console must attach this soon after the user's yes */
#define SHADOW_ATTACH_S 15

struct slim_server;
struct slim_shadow;

struct slim_shadow *shadow_create(struct slim_server *server);
void shadow_destroy(struct slim_shadow *shadow);

/* The manager's `shadow` and `unshadow`. */
void shadow_request(struct slim_shadow *shadow, const struct slim_control_line *req);
void shadow_stop(struct slim_shadow *shadow, const char *why);
/*
 * Input from the session's own console: true if it was the shadow's (the
 * question's answer, the chord that ends it), and goes no further.
 */
bool shadow_owner_input(struct slim_shadow *shadow, const struct slim_wire_input *ev);
/* The session's console went: nobody is left to ask or to watch. */
void shadow_owner_detached(struct slim_shadow *shadow);
/* A frame the session's console was sent: the shadow's link takes it too. */
void shadow_frame(struct slim_shadow *shadow, const struct slim_fb *fb,
		const pixman_region32_t *damage);

#endif
