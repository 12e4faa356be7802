/*
 * The VNC viewer of bench-peers: see peers-vnc.h.
 *
 * Bytes are counted by the kernel on the viewer's socket (TCP_INFO's
 * bytes_received: the payload that arrived, which is what the viewer's
 * reads return), so that nothing sits between the server and the viewer
 * to add a hop to its keystrokes' latency.
 */
#define _GNU_SOURCE
#include <linux/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rfb/rfbclient.h>
#include "peers-vnc.h"
#include "session.h"
#include "slim-log.h"

struct bench_vnc {
	rfbClient *client;
	pthread_t thread;
	bool thread_started;
	/*
	 * Held while a message is handled, and while the main thread sends a
	 * key: libvncclient writes its update requests from inside the
	 * handling, and two writers must not interleave their messages.
	 */
	pthread_mutex_t lock;
	atomic_bool stop, dead;
	/* rectangles in the update being received */
	unsigned rects;
	atomic_uint_fast64_t updates, last_update_us;
	/* the first update since bench_vnc_mark(), 0 until it comes */
	atomic_uint_fast64_t first_update_us;
};

/* The tag under which the viewer finds itself in libvncclient's callbacks. */
static int vnc_tag;

static void log_quiet(const char *format, ...)
{
}

static void got_rect(rfbClient *client, int x, int y, int w, int h)
{
	struct bench_vnc *v = rfbClientGetClientData(client, &vnc_tag);
	v->rects++;
}

/*
 * The whole update is decoded into the viewer's framebuffer: the viewer
 * has the picture now, as slimland's console has when it presents.
 */
static void finished_update(rfbClient *client)
{
	struct bench_vnc *v = rfbClientGetClientData(client, &vnc_tag);
	if (v->rects > 0) {
		uint64_t now = slim_now_us();
		uint_fast64_t none = 0;
		atomic_compare_exchange_strong(&v->first_update_us, &none, now);
		atomic_store(&v->last_update_us, now);
		atomic_fetch_add(&v->updates, 1);
	}
	v->rects = 0;
}

static void *viewer_thread(void *data)
{
	struct bench_vnc *v = data;
	while (!atomic_load(&v->stop)) {
		int n = WaitForMessage(v->client, 50000);
		if (n < 0) {
			break;
		}
		if (n == 0) {
			continue;
		}
		pthread_mutex_lock(&v->lock);
		bool ok = HandleRFBServerMessage(v->client);
		pthread_mutex_unlock(&v->lock);
		if (!ok) {
			break;
		}
	}
	atomic_store(&v->dead, true);
	return NULL;
}

struct bench_vnc *bench_vnc_connect(uint16_t port, const char *encoding, char *err,
		size_t err_size)
{
	rfbClientLog = log_quiet;
	rfbClientErr = log_quiet;
	struct bench_vnc *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&v->lock, NULL);
	/* 8 bits a channel, 4 bytes a pixel: what viewers ask for on a true-colour screen */
	v->client = rfbGetClient(8, 3, 4);
	if (!v->client) {
		snprintf(err, err_size, "no client");
		goto error;
	}
	rfbClientSetClientData(v->client, &vnc_tag, v);
	v->client->GotFrameBufferUpdate = got_rect;
	v->client->FinishedFrameBufferUpdate = finished_update;
	v->client->appData.encodingsString = encoding;
	free(v->client->serverHost); /* rfbGetClient's empty string */
	v->client->serverHost = strdup("127.0.0.1");
	v->client->serverPort = port;
	/* rfbInitClient frees the client when it fails */
	if (!rfbInitClient(v->client, NULL, NULL)) {
		v->client = NULL;
		snprintf(err, err_size, "cannot connect to 127.0.0.1:%u", port);
		goto error;
	}
	if (pthread_create(&v->thread, NULL, viewer_thread, v) != 0) {
		snprintf(err, err_size, "no thread");
		goto error;
	}
	v->thread_started = true;
	return v;

error:
	bench_vnc_destroy(v);
	return NULL;
}

void bench_vnc_destroy(struct bench_vnc *v)
{
	if (!v) {
		return;
	}
	atomic_store(&v->stop, true);
	if (v->thread_started) {
		pthread_join(v->thread, NULL);
	}
	if (v->client) {
		free(v->client->frameBuffer);
		rfbClientCleanup(v->client);
	}
	pthread_mutex_destroy(&v->lock);
	free(v);
}

bool bench_vnc_alive(struct bench_vnc *v)
{
	return v && !atomic_load(&v->dead);
}

uint64_t bench_vnc_bytes(struct bench_vnc *v)
{
	struct tcp_info info = { 0 };
	socklen_t len = sizeof(info);
	if (!v || getsockopt(v->client->sock, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
			len < offsetof(struct tcp_info, tcpi_bytes_received) +
				sizeof(info.tcpi_bytes_received)) {
		return 0;
	}
	return info.tcpi_bytes_received;
}

uint64_t bench_vnc_wire_bytes_sent(struct bench_vnc *v)
{
	struct tcp_info info = { 0 };
	socklen_t len = sizeof(info);
	if (!v || getsockopt(v->client->sock, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
			len < offsetof(struct tcp_info, tcpi_segs_out) + sizeof(info.tcpi_segs_out)) {
		return 0;
	}
	/* every segment, the ACKs of what came too, with IPv4 and TCP headers and timestamps */
	return info.tcpi_bytes_sent + (uint64_t)info.tcpi_segs_out * BENCH_IPV4_TCP_HEADERS;
}

uint64_t bench_vnc_updates(struct bench_vnc *v)
{
	return atomic_load(&v->updates);
}

uint64_t bench_vnc_last_update_us(struct bench_vnc *v)
{
	return atomic_load(&v->last_update_us);
}

void bench_vnc_mark(struct bench_vnc *v)
{
	atomic_store(&v->first_update_us, 0);
}

uint64_t bench_vnc_first_update_us(struct bench_vnc *v)
{
	return atomic_load(&v->first_update_us);
}

bool bench_vnc_key(struct bench_vnc *v, uint32_t keysym, bool down)
{
	pthread_mutex_lock(&v->lock);
	bool ok = SendKeyEvent(v->client, keysym, down ? TRUE : FALSE);
	pthread_mutex_unlock(&v->lock);
	return ok;
}
