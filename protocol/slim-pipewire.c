#include <stdlib.h>
#include <spa/param/audio/format-utils.h>
#include "slim-audio.h"
#include "slim-pipewire.h"

struct pw_stream *slim_pw_stream_create(struct pw_core *core, const char *name,
		struct pw_properties *props, enum spa_direction direction, uint32_t channels,
		enum pw_stream_flags flags, struct spa_hook *listener,
		const struct pw_stream_events *events, void *data)
{
	struct pw_stream *stream = props ? pw_stream_new(core, name, props) : NULL;
	if (!stream) {
		return NULL;
	}
	pw_stream_add_listener(stream, listener, events, data);
	uint8_t buf[512];
	struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	struct spa_audio_info_raw info = SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_S16,
		.channels = channels, .rate = SLIM_AUDIO_RATE);
	if (channels == 2) {
		info.position[0] = SPA_AUDIO_CHANNEL_FL;
		info.position[1] = SPA_AUDIO_CHANNEL_FR;
	} else {
		info.position[0] = SPA_AUDIO_CHANNEL_MONO;
	}
	const struct spa_pod *params[] = {
		spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info),
	};
	/* on the data thread: no hop through a main loop between the graph and us */
	if (pw_stream_connect(stream, direction, PW_ID_ANY, flags | PW_STREAM_FLAG_MAP_BUFFERS |
			PW_STREAM_FLAG_RT_PROCESS, params, 1) < 0) {
		spa_hook_remove(listener);
		pw_stream_destroy(stream);
		return NULL;
	}
	return stream;
}

struct slim_pw *slim_pw_connect(const char *thread_name,
		const struct pw_core_events *core_events, void *data, const char **why)
{
	struct slim_pw *pw = calloc(1, sizeof(*pw));
	if (!pw) {
		*why = "PipeWire: out of memory";
		return NULL;
	}
	pw_init(NULL, NULL);
	pw->thread = pw_thread_loop_new(thread_name, NULL);
	pw->context = pw->thread ?
		pw_context_new(pw_thread_loop_get_loop(pw->thread), NULL, 0) : NULL;
	if (!pw->context) {
		*why = "PipeWire: out of memory";
		goto fail;
	}
	pw_thread_loop_lock(pw->thread);
	if (pw_thread_loop_start(pw->thread) < 0) {
		pw_thread_loop_unlock(pw->thread);
		*why = "PipeWire: cannot start a thread";
		goto fail;
	}
	pw->core = pw_context_connect(pw->context, NULL, 0);
	if (!pw->core) {
		pw_thread_loop_unlock(pw->thread);
		*why = "no PipeWire answers";
		goto fail;
	}
	if (core_events) {
		pw_core_add_listener(pw->core, &pw->core_listener, core_events, data);
	}
	return pw;
fail:
	slim_pw_destroy(pw);
	return NULL;
}

struct pw_stream *slim_pw_add_stream(struct slim_pw *pw, const char *name,
		struct pw_properties *props, enum spa_direction direction, uint32_t channels,
		enum pw_stream_flags flags, const struct pw_stream_events *events, void *data)
{
	if (pw->n_streams == SLIM_PW_STREAMS) {
		pw_properties_free(props);
		return NULL;
	}
	struct slim_pw_stream *s = &pw->streams[pw->n_streams];
	s->stream = slim_pw_stream_create(pw->core, name, props, direction, channels, flags,
		&s->listener, events, data);
	if (!s->stream) {
		return NULL;
	}
	pw->n_streams++;
	return s->stream;
}

void slim_pw_destroy(struct slim_pw *pw)
{
	if (!pw) {
		return;
	}
	if (pw->thread) {
		pw_thread_loop_stop(pw->thread);
	}
	for (int i = 0; i < pw->n_streams; i++) {
		spa_hook_remove(&pw->streams[i].listener);
		pw_stream_destroy(pw->streams[i].stream);
	}
	if (pw->core) {
		/* a hook never added is zeroed: removing it is a no-op */
		spa_hook_remove(&pw->core_listener);
		pw_core_disconnect(pw->core);
	}
	if (pw->context) {
		pw_context_destroy(pw->context);
	}
	if (pw->thread) {
		pw_thread_loop_destroy(pw->thread);
	}
	free(pw);
	pw_deinit();
}
