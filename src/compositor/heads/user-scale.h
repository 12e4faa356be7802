/*
 * The scale a user chose for every head: one number, 1..SLIM_MAX_SCALE, in
 * $XDG_CONFIG_HOME/slimland/scale (~/.config/slimland/scale). No wlroots.
 */
#ifndef SLIM_USER_SCALE_H
#define SLIM_USER_SCALE_H

#include <stdint.h>

/* The user's scale, read now; 0 if there is no file. A bad one is said in the log. */
uint32_t slim_user_scale(void);

#endif
