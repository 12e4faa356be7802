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
