/*
 * bench-audio's rig (audio-rig.h): the relay, and the PipeWire client that
 * stands for the session's applications.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "audio-rig.h"
#include "session.h"
#include "slim-codec.h"
#include "slim-pipewire.h"

static uint64_t now_us(void)
{
	return bench_now_us();
}

/* --- the relay between the console and the compositor */



struct counts relay_counts(struct relay *r)
{
	return (struct counts){
		atomic_load(&r->down_bytes), atomic_load(&r->down_dgrams),
		atomic_load(&r->audio_bytes), atomic_load(&r->audio_dgrams),
		atomic_load(&r->up_bytes), atomic_load(&r->up_dgrams),
		atomic_load(&r->coded_bytes), now_us(),
	};
}

/*
 * An AUDIO datagram: its first command is the new packet, those after it
 * copies of the packets before (slim-audio.h); `coded` gets the first's
 * payload.
 */
static bool is_audio(const uint8_t *buf, size_t len, size_t *coded)
{
	struct slim_reader rd;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	if (slim_reader_init(&rd, &hdr, buf, len, false, WIDTH, HEIGHT) != SLIM_OK ||
			slim_reader_next(&rd, &cmd) != SLIM_OK || cmd.type != SLIM_CMD_AUDIO) {
		return false;
	}
	*coded = cmd.audio.len;
	return true;
}

static void *relay_main(void *data)
{
	struct relay *r = data;
	static uint8_t buf[65536];
	struct pollfd p[3] = {
		{ .fd = r->front, .events = POLLIN },
		{ .fd = r->back, .events = POLLIN },
		{ .fd = r->wake, .events = POLLIN },
	};
	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			break;
		}
		if (p[2].revents) {
			break;
		}
		for (;;) {
			struct sockaddr_in from;
			socklen_t len = sizeof(from);
			ssize_t n = recvfrom(r->front, buf, sizeof(buf), MSG_DONTWAIT,
				(struct sockaddr *)&from, &len);
			if (n < 0) {
				break;
			}
			r->console = from;
			r->have_console = true;
			atomic_fetch_add(&r->up_bytes, (uint64_t)n);
			atomic_fetch_add(&r->up_dgrams, 1);
			send(r->back, buf, (size_t)n, MSG_DONTWAIT);
		}
		for (;;) {
			/* ECONNREFUSED too (nobody listened yet): nothing to forward */
			ssize_t n = recv(r->back, buf, sizeof(buf), MSG_DONTWAIT);
			if (n < 0 && errno == ECONNREFUSED) {
				continue;
			}
			if (n < 0) {
				break;
			}
			if (!r->have_console) {
				continue;
			}
			atomic_fetch_add(&r->down_bytes, (uint64_t)n);
			atomic_fetch_add(&r->down_dgrams, 1);
			size_t coded;
			if (r->clear && is_audio(buf, (size_t)n, &coded)) {
				atomic_fetch_add(&r->audio_bytes, (uint64_t)n);
				atomic_fetch_add(&r->audio_dgrams, 1);
				atomic_fetch_add(&r->coded_bytes, coded);
			}
			sendto(r->front, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&r->console,
				sizeof(r->console));
		}
	}
	return NULL;
}

static int udp_socket(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int size = 4 << 20;
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	}
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool relay_start(struct relay *r, uint16_t compositor_port, bool clear)
{
	*r = (struct relay){ .front = -1, .back = -1, .wake = -1, .clear = clear };
	r->front = udp_socket(0);
	r->back = udp_socket(0);
	r->wake = eventfd(0, EFD_CLOEXEC);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(compositor_port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	if (r->front < 0 || r->back < 0 || r->wake < 0 ||
			connect(r->back, (struct sockaddr *)&to, sizeof(to)) != 0 ||
			getsockname(r->front, (struct sockaddr *)&me, &len) != 0) {
		return false;
	}
	r->port = ntohs(me.sin_port);
	r->started = pthread_create(&r->thread, NULL, relay_main, r) == 0;
	return r->started;
}

void relay_stop(struct relay *r)
{
	if (r->started) {
		uint64_t one = 1;
		(void)!write(r->wake, &one, sizeof(one));
		pthread_join(r->thread, NULL);
		r->started = false;
	}
	int *fds[] = { &r->front, &r->back, &r->wake };
	for (size_t i = 0; i < 3; i++) {
		if (*fds[i] >= 0) {
			close(*fds[i]);
		}
		*fds[i] = -1;
	}
}

/* --- the session's side: a PipeWire client that plays clicks and hears them */



static void handle_out_process(void *data)
{
	struct pw_side *pw = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(pw->out);
	if (!b) {
		return;
	}
	atomic_fetch_add(&pw->out_calls, 1);
	struct spa_data *d = &b->buffer->datas[0];
	if (!d->data) {
		pw_stream_queue_buffer(pw->out, b);
		return;
	}
	uint32_t frames = d->maxsize / 4;
	if (b->requested && b->requested < frames) {
		frames = (uint32_t)b->requested;
	}
	int16_t *s = d->data;
	memset(s, 0, (size_t)frames * 4);
	uint64_t t = now_us();
	int mode = atomic_load(&pw->mode);
	int64_t click_at = -1;
	if (mode == PLAY_CLICKS && atomic_load(&pw->clicks_left) > 0) {
		if (pw->next_click_us == 0) {
			pw->next_click_us = t + CLICK_GAP_US / 2;
		}
		/* where in this buffer the click falls due, if it does */
		uint64_t end = t + (uint64_t)frames * 1000000 / RATE;
		if (pw->next_click_us < end) {
			click_at = pw->next_click_us <= t ? 0 :
				(int64_t)((pw->next_click_us - t) * RATE / 1000000);
			if (click_at + CLICK_FRAMES > (int64_t)frames) {
				/* whole in one buffer: its time is then exactly its offset */
				click_at = frames > CLICK_FRAMES ? (int64_t)(frames - CLICK_FRAMES) : 0;
			}
			for (uint32_t i = 0; i < CLICK_FRAMES && (uint32_t)click_at + i < frames; i++) {
				int16_t v = (int16_t)(CLICK_LEVEL * sin(2 * M_PI * 1000 * i / RATE));
				s[2 * (click_at + i)] = s[2 * (click_at + i) + 1] = v;
			}
			pw->next_click_us += CLICK_GAP_US;
			atomic_fetch_sub(&pw->clicks_left, 1);
		}
	} else if (mode == PLAY_CLICKS) {
		pw->next_click_us = 0;
	} else if (mode == PLAY_TONE) {
		for (uint32_t i = 0; i < frames; i++) {
			int16_t v = (int16_t)(12000 * sin(pw->phase));
			pw->phase = fmod(pw->phase + 2 * M_PI * 440 / RATE, 2 * M_PI);
			s[2 * i] = s[2 * i + 1] = v;
		}
	}
	d->chunk->offset = 0;
	d->chunk->stride = 4;
	d->chunk->size = frames * 4;
	uint64_t queued = now_us();
	pw_stream_queue_buffer(pw->out, b);
	if (click_at >= 0) {
		times_add(&pw->clicks, queued + (uint64_t)click_at * 1000000 / RATE);
	}
}

static void handle_in_process(void *data)
{
	struct pw_side *pw = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(pw->in);
	if (!b) {
		return;
	}
	uint64_t t = now_us();
	atomic_fetch_add(&pw->in_calls, 1);
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data && d->chunk && d->chunk->offset + d->chunk->size <= d->maxsize) {
		const int16_t *s = (const int16_t *)((const uint8_t *)d->data + d->chunk->offset);
		uint32_t n = d->chunk->size / 2;
		for (uint32_t i = 0; i < n; i++) {
			bool loud = s[i] > HEARD_LEVEL || s[i] < -HEARD_LEVEL;
			if (loud && pw->in_quiet >= QUIET_FRAMES) {
				times_add(&pw->heard, t);
			}
			pw->in_quiet = loud ? 0 : pw->in_quiet + 1;
		}
	}
	pw_stream_queue_buffer(pw->in, b);
}

static const struct pw_stream_events out_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_out_process,
};

static const struct pw_stream_events in_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = handle_in_process,
};

static struct pw_stream *make_stream(struct pw_side *pw, const char *target,
		enum spa_direction dir, uint32_t channels, struct spa_hook *listener,
		const struct pw_stream_events *events)
{
	struct pw_properties *props = pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio",
		PW_KEY_MEDIA_CATEGORY, dir == PW_DIRECTION_OUTPUT ? "Playback" : "Capture",
		PW_KEY_MEDIA_ROLE, "Music", PW_KEY_NODE_LATENCY, "480/48000",
		PW_KEY_TARGET_OBJECT, target, NULL);
	return slim_pw_stream_create(pw->core,
		dir == PW_DIRECTION_OUTPUT ? "bench-audio clicks" : "bench-audio ear", props, dir,
		channels, PW_STREAM_FLAG_AUTOCONNECT, listener, events, pw);
}

void pw_side_stop(struct pw_side *pw)
{
	if (pw->thread) {
		pw_thread_loop_stop(pw->thread);
	}
	if (pw->out) {
		pw_stream_destroy(pw->out);
	}
	if (pw->in) {
		pw_stream_destroy(pw->in);
	}
	if (pw->core) {
		pw_core_disconnect(pw->core);
	}
	if (pw->context) {
		pw_context_destroy(pw->context);
	}
	if (pw->thread) {
		pw_thread_loop_destroy(pw->thread);
	}
	memset(pw, 0, sizeof(*pw));
}

/* Connects to the session's PipeWire ($XDG_RUNTIME_DIR, set by the session). */
bool pw_side_start(struct pw_side *pw, bool ear)
{
	memset(pw, 0, sizeof(*pw));
	pw->thread = pw_thread_loop_new("bench-audio", NULL);
	pw->context = pw->thread ?
		pw_context_new(pw_thread_loop_get_loop(pw->thread), NULL, 0) : NULL;
	if (!pw->context || pw_thread_loop_start(pw->thread) < 0) {
		goto fail;
	}
	pw_thread_loop_lock(pw->thread);
	pw->core = pw_context_connect(pw->context, NULL, 0);
	if (pw->core) {
		pw->out = make_stream(pw, "slimland-console-speaker", PW_DIRECTION_OUTPUT, 2,
			&pw->out_listener, &out_events);
		if (ear) {
			pw->in = make_stream(pw, "slimland-console-microphone", PW_DIRECTION_INPUT, 1,
				&pw->in_listener, &in_events);
		}
	}
	pw_thread_loop_unlock(pw->thread);
	if (!pw->out || (ear && !pw->in)) {
		goto fail;
	}
	return true;
fail:
	pw_side_stop(pw);
	return false;
}

