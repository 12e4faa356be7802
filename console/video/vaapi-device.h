/*
 * The GPU that decodes H.264 for the console: the first render node whose
 * VA-API driver offers H.264 decoding (VAEntrypointVLD).
 */
#ifndef SLIM_VAAPI_DEVICE_H
#define SLIM_VAAPI_DEVICE_H

#include <libavutil/buffer.h>

/* A libavutil VA-API device on that node, or NULL when there is none. */
AVBufferRef *slim_vaapi_h264_decode_device(void);

#endif
