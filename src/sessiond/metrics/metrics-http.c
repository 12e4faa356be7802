#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "metrics-http.h"
#include "metrics-render.h"
#include "sessions.h"

/*
 * What anyone who reaches the port can take, whatever they send: a few
 * connections, each a small buffer for its request and gone when it
 * dawdles. A request larger than the buffer (a 1 GB header) is answered
 * with an error and closed; connections past the limits are closed as
 * they are accepted.
 */
#define METRICS_CONNECTIONS 32
#define METRICS_CONNECTIONS_PER_IP 4
#define METRICS_CONNECTION_MEMORY (32 * 1024)
#define METRICS_TIMEOUT_S 10
/* One text a second at most, however often it is asked for. */
#define METRICS_CACHE_US 1000000

struct slim_metrics_server {
	struct slim_manager *mgr;
	struct slim_group *group;
	struct MHD_Daemon *mhd;
	struct wl_event_source *readable, *timer;
	char *text;
	size_t text_len;
	uint64_t text_us;
	struct slim_ratelimit log_rl;
};

__attribute__((format(printf, 2, 0)))
static void handle_mhd_log(void *data, const char *fmt, va_list args)
{
	struct slim_metrics_server *server = data;
	if (!slim_ratelimit(&server->log_rl, slim_now_us())) {
		return;
	}
	char line[256];
	vsnprintf(line, sizeof(line), fmt, args);
	line[strcspn(line, "\n")] = '\0';
	slim_log(SLIM_LOG_INFO, "metrics: %s", line);
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
		MHD_RESPMEM_PERSISTENT);
	if (!r) {
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, MHD_HTTP_METHOD_GET);
	}
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static const char *metrics_text(struct slim_metrics_server *server, size_t *len)
{
	uint64_t now = slim_now_us();
	if (!server->text || now - server->text_us >= METRICS_CACHE_US) {
		free(server->text);
		server->text = slim_metrics_render(server->mgr, server->group, &server->text_len);
		server->text_us = now;
	}
	*len = server->text_len;
	return server->text;
}

/*
 * Every request is answered at its first call, with its headers read: a
 * body nobody asked for is not read, and the connection closes after.
 */
static enum MHD_Result handle_request(void *data, struct MHD_Connection *conn, const char *url,
		const char *method, const char *version, const char *upload_data,
		size_t *upload_data_size, void **request)
{
	struct slim_metrics_server *server = data;
	if (strcmp(url, "/metrics") != 0) {
		return answer(conn, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
		return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	}
	size_t len;
	const char *text = metrics_text(server, &len);
	if (!text) {
		return answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "no memory for the metrics\n");
	}
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
		MHD_RESPMEM_MUST_COPY);
	if (!r) {
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
		"text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* After each run: MHD says when it next needs one though nothing is readable (timeouts). */
static void arm_timer(struct slim_metrics_server *server)
{
	MHD_UNSIGNED_LONG_LONG ms;
	if (MHD_get_timeout(server->mhd, &ms) != MHD_YES) {
		wl_event_source_timer_update(server->timer, 0);
		return;
	}
	/* 0 disarms a wl timer: what is due now runs a millisecond later */
	wl_event_source_timer_update(server->timer, ms == 0 ? 1 : ms > 60000 ? 60000 : (int)ms);
}

static int handle_readable(int fd, uint32_t mask, void *data)
{
	struct slim_metrics_server *server = data;
	MHD_run(server->mhd);
	arm_timer(server);
	return 0;
}

static int handle_timer(void *data)
{
	struct slim_metrics_server *server = data;
	MHD_run(server->mhd);
	arm_timer(server);
	return 0;
}

struct slim_metrics_server *slim_metrics_server_create(struct slim_manager *mgr,
		struct slim_group *group, const char *address)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (!slim_parse_address(address, 0, &ss, &len)) {
		slim_log(SLIM_LOG_ERROR, "metrics: %s is no address", address);
		return NULL;
	}
	struct slim_metrics_server *server = calloc(1, sizeof(*server));
	if (!server) {
		return NULL;
	}
	server->mgr = mgr;
	server->group = group;
	server->log_rl = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
		(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	server->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle_request, server,
		/* first, or MHD's own logger says what comes before it */
		MHD_OPTION_EXTERNAL_LOGGER, handle_mhd_log, server,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS_PER_IP,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONNECTION_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_TIMEOUT_S,
		MHD_OPTION_END);
	const union MHD_DaemonInfo *info = server->mhd ?
		MHD_get_daemon_info(server->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (info) {
		server->readable = wl_event_loop_add_fd(mgr->loop, info->epoll_fd, WL_EVENT_READABLE,
			handle_readable, server);
		server->timer = wl_event_loop_add_timer(mgr->loop, handle_timer, server);
	}
	if (!server->readable || !server->timer) {
		slim_log(SLIM_LOG_ERROR, "metrics: cannot listen on %s: %s", address, strerror(errno));
		slim_metrics_server_destroy(server);
		return NULL;
	}
	slim_log(SLIM_LOG_INFO, "metrics: on http://%s/metrics", address);
	return server;
}

void slim_metrics_server_destroy(struct slim_metrics_server *server)
{
	if (!server) {
		return;
	}
	if (server->readable) {
		wl_event_source_remove(server->readable);
	}
	if (server->timer) {
		wl_event_source_remove(server->timer);
	}
	if (server->mhd) {
		MHD_stop_daemon(server->mhd);
	}
	free(server->text);
	free(server);
}
