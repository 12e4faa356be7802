/*
 * The heads a console without a display of its own says it has, as
 * `--size` and the control's `heads` write them (heads-option.c): one
 * WxH per head, left to right, each optionally with its physical size
 * and scale: `1920x1080,3840x2160/600x340mm@2`.
 */
#ifndef SLIM_CONSOLE_HEADS_OPTION_H
#define SLIM_CONSOLE_HEADS_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include "slim-desk.h"

/*
 * The heads of `arg` into desk (its keyboard untouched), laid out left to
 * right along their top edges, named CONSOLE-1, CONSOLE-2...; false with
 * `err` saying what is wrong (nothing in desk changes then).
 */
bool slim_heads_option_parse(const char *arg, struct slim_desk *desk, char *err, size_t err_len);

#endif
