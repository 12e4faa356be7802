/*
 * The session's sound to the attached console, coded for it if it plays
 * it (Opus or PCM, a stream of its own for each association), and what
 * comes back: its microphone and how its playback fares.
 */
#include <string.h>
#include "link-internal.h"

void link_sound_stop(struct slim_link *link)
{
	slim_audio_encoder_destroy(link->sound.enc);
	link->sound.enc = NULL;
}

void link_sound_restart(struct slim_link *link, uint32_t caps, const char *id)
{
	struct link_sound *s = &link->sound;
	/* the console's buffer starts over */
	link_sound_stop(link);
	memset(&s->report, 0, sizeof(s->report));
	slim_audio_sender_reset(&s->sender);
	if (caps & SLIM_CAP_AUDIO) {
		s->enc = slim_audio_encoder_create(s->codec, 2, s->bitrate, 10);
		if (!s->enc) {
			link_log_limited(link, id, "cannot create an audio encoder: no sound");
		}
	}
}

void link_sound_command(struct slim_link *link, const struct slim_cmd *cmd)
{
	struct link_sound *s = &link->sound;
	if (cmd->type == SLIM_CMD_MIC) {
		/* the datagram's first is the packet, any after it copies of earlier ones */
		struct slim_audio_packet p;
		slim_audio_packet_from_cmd(cmd, &p);
		link->handler->microphone(link->data, &p, s->mic_seen);
		s->mic_seen = true;
	} else if (cmd->type == SLIM_CMD_AUDIO_REPORT) {
		s->report = cmd->audio_report;
		link->handler->audio_report(link->data);
	}
}

void slim_link_send_audio(struct slim_link *link, const int16_t *pcm)
{
	if (!link->console.attached || !link->sound.enc || !link->console.conn) {
		return;
	}
	uint8_t out[SLIM_AUDIO_MAX_WIRE_PAYLOAD];
	struct slim_audio_packet p;
	if (slim_audio_encode(link->sound.enc, pcm, out, sizeof(out), &p) < 0) {
		link_log_limited(link, link->console.console_id, "audio: a frame did not encode");
		return;
	}
	slim_audio_send(&link->sound.sender, &p, false, link->console.assoc, link->console.mtu,
		slim_now_us(), link_send_to_peer, link);
}

void slim_link_audio_stats(const struct slim_link *link, struct slim_link_audio_stats *stats)
{
	const struct link_sound *s = &link->sound;
	const struct slim_wire_audio_report *r = &s->report;
	*stats = (struct slim_link_audio_stats){
		.codec = s->codec,
		.bitrate = s->codec == SLIM_AUDIO_PCM ? SLIM_AUDIO_RATE * 2 * 16 : s->bitrate,
		.depth_ms = r->depth_ms,
		.received = r->received, .repaired = r->repaired, .lost = r->lost,
	};
}
