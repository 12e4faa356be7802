/*
 * The console's decoders, one a compressed stream, made when a stream's
 * first picture comes: what the core (core-video.h) calls to decode.
 */
#ifndef SLIM_CONSOLE_DECODERS_H
#define SLIM_CONSOLE_DECODERS_H

#include <stdbool.h>
#include "core-video.h"
#include "h264-decoder.h"

struct console_decoders;

/* try_vaapi: the GPU decodes when it can. */
struct console_decoders *console_decoders_create(bool try_vaapi);
void console_decoders_destroy(struct console_decoders *cd);
extern const struct slim_console_video_impl console_decoders_impl;
/* What HELLO announces. */
void console_decoders_caps(const struct console_decoders *cd, struct slim_wire_codec *codec);
/* The decoding figures of the streams' decoders, summed (decode times: the slowest's). */
void console_decoders_info(const struct console_decoders *cd, struct slim_h264_decoder_info *info);

#endif
