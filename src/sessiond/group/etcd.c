#define _GNU_SOURCE /* strndup */
#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etcd.h"
#include "slim-log.h"

/* What an answer may grow to: a range over a group's registry is far smaller. */
#define ETCD_ANSWER_MAX (4u << 20)
#define ETCD_CONNECT_TIMEOUT_MS 1000

struct slim_etcd {
	struct wl_event_loop *loop;
	CURLM *multi;
	struct wl_event_source *timer;
	char *endpoints[SLIM_ETCD_ENDPOINTS_MAX];
	int n_endpoints;
	int current; /* where the next request starts: the last that answered */
	struct slim_etcd_tls tls;
	struct wl_list calls; /* slim_etcd_call.link */
};

struct slim_etcd_call {
	struct wl_list link;
	struct slim_etcd *etcd;
	CURL *easy;
	struct curl_slist *headers;
	char path[64];
	char *body;
	unsigned timeout_ms;
	int endpoint;  /* the one being tried */
	int tried;     /* endpoints tried so far */
	bool stream;
	bool busy;     /* in a callback of its own: slim_etcd_cancel only forgets it */
	slim_etcd_done done;
	slim_etcd_stream event;
	void *data;
	char *answer;
	size_t len, cap;
	bool overflow;
};

/* One socket of curl's: an event source for as long as curl wants it watched. */
static int handle_socket_event(int fd, uint32_t mask, void *data);

static void call_finish(struct slim_etcd_call *call, struct json_object *result,
		const char *error);
static bool call_begin(struct slim_etcd_call *call);

static void call_free(struct slim_etcd_call *call)
{
	if (call->easy) {
		curl_multi_remove_handle(call->etcd->multi, call->easy);
		curl_easy_cleanup(call->easy);
	}
	curl_slist_free_all(call->headers);
	wl_list_remove(&call->link);
	free(call->body);
	free(call->answer);
	free(call);
}

/* An etcd error object ({"error": ..., "code": N}) or the gateway's {"message": ...}. */
static const char *answer_error(struct json_object *obj)
{
	struct json_object *e;
	if (json_object_object_get_ex(obj, "error", &e)) {
		if (json_object_is_type(e, json_type_string)) {
			return json_object_get_string(e);
		}
		struct json_object *m;
		if (json_object_object_get_ex(e, "message", &m)) {
			return json_object_get_string(m);
		}
		return "etcd error";
	}
	return NULL;
}

struct json_object *slim_etcd_parse(const char *text, size_t len, bool message,
		struct json_object **result, char *error, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	bool whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
		(size_t)json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	const char *why = NULL;
	if (!obj || !whole || !json_object_is_type(obj, json_type_object)) {
		why = "not a JSON object";
	} else if (answer_error(obj)) {
		why = answer_error(obj);
	} else if (message && !json_object_object_get_ex(obj, "result", result)) {
		why = "a message without a result";
	} else if (!message) {
		*result = obj;
	}
	if (why) {
		snprintf(error, size, "%s", why);
		json_object_put(obj);
		*result = NULL;
		return NULL;
	}
	return obj;
}

/*
 * A watch's answer so far: every complete line is one message. False when
 * the call is finished (the transfer is then ended).
 */
static bool stream_lines(struct slim_etcd_call *call)
{
	size_t start = 0;
	for (size_t i = 0; i < call->len; i++) {
		if (call->answer[i] != '\n') {
			continue;
		}
		struct json_object *result, *msg;
		char error[160], why[200];
		msg = slim_etcd_parse(call->answer + start, i - start, true, &result, error,
			sizeof(error));
		start = i + 1;
		if (!msg) {
			/* the stream is not to be believed further */
			snprintf(why, sizeof(why), "watch: %s", error);
			call_finish(call, NULL, why);
			return false;
		}
		call->busy = true;
		call->event(call->data, result, NULL);
		call->busy = false;
		json_object_put(msg);
		if (!call->event) {
			return false; /* cancelled by its own callback */
		}
	}
	memmove(call->answer, call->answer + start, call->len - start);
	call->len -= start;
	return true;
}

static size_t handle_write(char *ptr, size_t size, size_t n, void *data)
{
	struct slim_etcd_call *call = data;
	size_t bytes = size * n;
	if (call->len + bytes + 1 > ETCD_ANSWER_MAX) {
		call->overflow = true;
		return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
	}
	if (call->len + bytes + 1 > call->cap) {
		size_t cap = call->cap ? call->cap : 4096;
		while (cap < call->len + bytes + 1) {
			cap *= 2;
		}
		char *grown = realloc(call->answer, cap);
		if (!grown) {
			call->overflow = true;
			return 0;
		}
		call->answer = grown;
		call->cap = cap;
	}
	memcpy(call->answer + call->len, ptr, bytes);
	call->len += bytes;
	call->answer[call->len] = '\0';
	if (call->stream && !stream_lines(call)) {
		return 0; /* freed once curl has ended the transfer */
	}
	return bytes;
}

/* Called once: the callback, then the call is gone. */
static void call_finish(struct slim_etcd_call *call, struct json_object *result,
		const char *error)
{
	slim_etcd_done done = call->done;
	slim_etcd_stream event = call->event;
	void *data = call->data;
	/* a watch ended by its own message is freed later, by the transfer's end */
	call->done = NULL;
	call->event = NULL;
	call->busy = true;
	if (done) {
		done(data, result, error);
	} else if (event) {
		event(data, NULL, error ? error : "watch ended");
	}
	call->busy = false;
}

static bool call_begin(struct slim_etcd_call *call)
{
	struct slim_etcd *etcd = call->etcd;
	char url[512];
	snprintf(url, sizeof(url), "%s%s", etcd->endpoints[call->endpoint], call->path);
	if (call->easy) {
		curl_multi_remove_handle(etcd->multi, call->easy);
		curl_easy_cleanup(call->easy);
	}
	call->len = 0;
	call->overflow = false;
	call->easy = curl_easy_init();
	if (!call->easy) {
		return false;
	}
	CURL *e = call->easy;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, handle_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)ETCD_CONNECT_TIMEOUT_MS);
	/* http and https only: an endpoint is configuration, but a redirect is not */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (etcd->tls.ca[0]) {
		curl_easy_setopt(e, CURLOPT_CAINFO, etcd->tls.ca);
	}
	if (etcd->tls.cert[0]) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, etcd->tls.cert);
		curl_easy_setopt(e, CURLOPT_SSLKEY, etcd->tls.key[0] ? etcd->tls.key : etcd->tls.cert);
	}
	if (call->stream) {
		/*
		 * A member that vanished (a power cut) is found by TCP's
		 * keepalive, which curl sets only on a connection it opens: a
		 * watch has one of its own, never one a request left in the
		 * pool, nor one left to a request after it.
		 */
		curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 2L);
		curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 1L);
		curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	} else {
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)call->timeout_ms);
	}
	return curl_multi_add_handle(etcd->multi, e) == CURLM_OK;
}

/* A transfer ended: its answer, another endpoint, or the error. */
static void call_ended(struct slim_etcd_call *call, CURLcode code)
{
	struct slim_etcd *etcd = call->etcd;
	long status = 0;
	curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
	bool unreachable = code == CURLE_COULDNT_CONNECT || code == CURLE_OPERATION_TIMEDOUT ||
		code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING ||
		(code == CURLE_OK && status == 503);
	if (!call->stream && unreachable && call->tried + 1 < etcd->n_endpoints &&
			(call->done || call->event)) {
		/* the next member: a cluster with quorum answers from any */
		call->tried++;
		call->endpoint = (call->endpoint + 1) % etcd->n_endpoints;
		if (call_begin(call)) {
			return;
		}
	}
	if (!call->done && !call->event) {
		call_free(call);
		return;
	}
	char why[200];
	const char *error = NULL;
	struct json_object *obj = NULL;
	if (call->stream) {
		snprintf(why, sizeof(why), "%s", code == CURLE_OK ? "the stream ended" :
			curl_easy_strerror(code));
		if (code == CURLE_OK) {
			etcd->current = call->endpoint;
		} else {
			etcd->current = (call->endpoint + 1) % etcd->n_endpoints;
		}
		error = why;
	} else if (code != CURLE_OK) {
		snprintf(why, sizeof(why), "%s: %s", etcd->endpoints[call->endpoint],
			call->overflow ? "answer too large" : curl_easy_strerror(code));
		error = why;
	} else {
		etcd->current = call->endpoint;
		struct json_object *result;
		obj = slim_etcd_parse(call->answer ? call->answer : "", call->len, false, &result,
			why, sizeof(why));
		error = obj ? NULL : why;
	}
	call_finish(call, obj, error);
	json_object_put(obj);
	call_free(call);
}

static void check_done(struct slim_etcd *etcd)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(etcd->multi, &left))) {
		if (msg->msg != CURLMSG_DONE) {
			continue;
		}
		struct slim_etcd_call *call = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&call);
		call_ended(call, msg->data.result);
	}
}

static int handle_socket_event(int fd, uint32_t mask, void *data)
{
	struct slim_etcd *etcd = data;
	int flags = 0, running;
	if (mask & WL_EVENT_READABLE) {
		flags |= CURL_CSELECT_IN;
	}
	if (mask & WL_EVENT_WRITABLE) {
		flags |= CURL_CSELECT_OUT;
	}
	if (mask & (WL_EVENT_ERROR | WL_EVENT_HANGUP)) {
		flags |= CURL_CSELECT_ERR;
	}
	curl_multi_socket_action(etcd->multi, fd, flags, &running);
	check_done(etcd);
	return 0;
}

static int handle_timer(void *data)
{
	struct slim_etcd *etcd = data;
	int running;
	curl_multi_socket_action(etcd->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(etcd);
	return 0;
}

static int handle_curl_socket(CURL *easy, curl_socket_t s, int what, void *data, void *socketp)
{
	struct slim_etcd *etcd = data;
	struct wl_event_source *source = socketp;
	if (what == CURL_POLL_REMOVE) {
		if (source) {
			wl_event_source_remove(source);
			curl_multi_assign(etcd->multi, s, NULL);
		}
		return 0;
	}
	uint32_t mask = 0;
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) {
		mask |= WL_EVENT_READABLE;
	}
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) {
		mask |= WL_EVENT_WRITABLE;
	}
	if (source) {
		wl_event_source_fd_update(source, mask);
		return 0;
	}
	source = wl_event_loop_add_fd(etcd->loop, s, mask, handle_socket_event, etcd);
	if (!source) {
		return -1;
	}
	curl_multi_assign(etcd->multi, s, source);
	return 0;
}

static int handle_curl_timer(CURLM *multi, long timeout_ms, void *data)
{
	struct slim_etcd *etcd = data;
	/* 0 would disarm a wl timer: "at once" is the next millisecond */
	wl_event_source_timer_update(etcd->timer, timeout_ms < 0 ? 0 :
		timeout_ms == 0 ? 1 : (int)timeout_ms);
	return 0;
}

struct slim_etcd *slim_etcd_create(struct wl_event_loop *loop, const char *endpoints,
		const struct slim_etcd_tls *tls)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		return NULL;
	}
	struct slim_etcd *etcd = calloc(1, sizeof(*etcd));
	if (!etcd) {
		curl_global_cleanup();
		return NULL;
	}
	etcd->loop = loop;
	if (tls) {
		etcd->tls = *tls;
	}
	wl_list_init(&etcd->calls);
	const char *p = endpoints;
	while (*p && etcd->n_endpoints < SLIM_ETCD_ENDPOINTS_MAX) {
		size_t n = strcspn(p, ", ");
		if (n > 0) {
			char *url = strndup(p, n);
			while (url && n > 0 && url[n - 1] == '/') {
				url[--n] = '\0';
			}
			if (!url || (strncmp(url, "http://", 7) != 0 &&
					strncmp(url, "https://", 8) != 0)) {
				slim_log(SLIM_LOG_ERROR, "etcd endpoint %.*s: not an http(s) URL",
					(int)strcspn(p, ", "), p);
				free(url);
				goto fail;
			}
			etcd->endpoints[etcd->n_endpoints++] = url;
		}
		p += strcspn(p, ", ");
		p += strspn(p, ", ");
	}
	if (etcd->n_endpoints == 0) {
		goto fail;
	}
	etcd->multi = curl_multi_init();
	etcd->timer = wl_event_loop_add_timer(loop, handle_timer, etcd);
	if (!etcd->multi || !etcd->timer) {
		goto fail;
	}
	curl_multi_setopt(etcd->multi, CURLMOPT_SOCKETFUNCTION, handle_curl_socket);
	curl_multi_setopt(etcd->multi, CURLMOPT_SOCKETDATA, etcd);
	curl_multi_setopt(etcd->multi, CURLMOPT_TIMERFUNCTION, handle_curl_timer);
	curl_multi_setopt(etcd->multi, CURLMOPT_TIMERDATA, etcd);
	return etcd;
fail:
	slim_etcd_destroy(etcd);
	return NULL;
}

void slim_etcd_destroy(struct slim_etcd *etcd)
{
	if (!etcd) {
		return;
	}
	struct slim_etcd_call *call, *tmp;
	wl_list_for_each_safe(call, tmp, &etcd->calls, link) {
		call_free(call);
	}
	if (etcd->multi) {
		curl_multi_cleanup(etcd->multi);
	}
	if (etcd->timer) {
		wl_event_source_remove(etcd->timer);
	}
	for (int i = 0; i < etcd->n_endpoints; i++) {
		free(etcd->endpoints[i]);
	}
	free(etcd);
	curl_global_cleanup();
}

static struct slim_etcd_call *call_create(struct slim_etcd *etcd, const char *path,
		struct json_object *body, bool stream)
{
	struct slim_etcd_call *call = calloc(1, sizeof(*call));
	if (!call) {
		json_object_put(body);
		return NULL;
	}
	wl_list_insert(&etcd->calls, &call->link);
	call->etcd = etcd;
	call->stream = stream;
	call->endpoint = etcd->current;
	snprintf(call->path, sizeof(call->path), "%s", path);
	const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) :
		NULL;
	call->body = text ? strdup(text) : NULL;
	json_object_put(body);
	call->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!call->body || !call->headers) {
		call_free(call);
		return NULL;
	}
	return call;
}

struct slim_etcd_call *slim_etcd_post(struct slim_etcd *etcd, const char *path,
		struct json_object *body, unsigned timeout_ms, slim_etcd_done done, void *data)
{
	struct slim_etcd_call *call = call_create(etcd, path, body, false);
	if (!call) {
		return NULL;
	}
	call->timeout_ms = timeout_ms;
	call->done = done;
	call->data = data;
	if (!call_begin(call)) {
		call_free(call);
		return NULL;
	}
	return call;
}

struct slim_etcd_call *slim_etcd_watch(struct slim_etcd *etcd, struct json_object *body,
		slim_etcd_stream event, void *data)
{
	struct slim_etcd_call *call = call_create(etcd, "/v3/watch", body, true);
	if (!call) {
		return NULL;
	}
	call->event = event;
	call->data = data;
	if (!call_begin(call)) {
		call_free(call);
		return NULL;
	}
	return call;
}

void slim_etcd_cancel(struct slim_etcd_call *call)
{
	if (!call) {
		return;
	} else if (call->busy) {
		/* inside curl's or our own callback: freed as that returns */
		call->done = NULL;
		call->event = NULL;
	} else {
		call_free(call);
	}
}

const char *slim_etcd_endpoint(const struct slim_etcd *etcd)
{
	return etcd->endpoints[etcd->current];
}

struct json_object *slim_etcd_b64(const void *bytes, size_t len)
{
	gnutls_datum_t in = { .data = (unsigned char *)bytes, .size = (unsigned)len };
	gnutls_datum_t out = { 0 };
	if (len == 0) {
		return json_object_new_string("");
	}
	if (gnutls_base64_encode2(&in, &out) < 0) {
		return NULL;
	}
	struct json_object *obj = json_object_new_string_len((const char *)out.data,
		(int)out.size);
	gnutls_free(out.data);
	return obj;
}

struct json_object *slim_etcd_b64_str(const char *text)
{
	return slim_etcd_b64(text, strlen(text));
}

bool slim_etcd_unb64(struct json_object *obj, char *out, size_t size, size_t *len)
{
	if (!obj || !json_object_is_type(obj, json_type_string) || size == 0) {
		return false;
	}
	gnutls_datum_t in = {
		.data = (unsigned char *)json_object_get_string(obj),
		.size = (unsigned)json_object_get_string_len(obj),
	};
	gnutls_datum_t dec = { 0 };
	size_t n = 0;
	if (in.size > 0) {
		if (gnutls_base64_decode2(&in, &dec) < 0) {
			return false;
		}
		n = dec.size;
	}
	bool fits = n < size;
	if (fits) {
		if (n > 0) {
			memcpy(out, dec.data, n);
		}
		out[n] = '\0';
		if (len) {
			*len = n;
		}
	}
	gnutls_free(dec.data);
	return fits;
}

int64_t slim_etcd_int(struct json_object *obj, const char *field)
{
	struct json_object *v;
	if (!obj || !json_object_object_get_ex(obj, field, &v)) {
		return 0;
	}
	if (json_object_is_type(v, json_type_int)) {
		return json_object_get_int64(v);
	}
	if (!json_object_is_type(v, json_type_string)) {
		return 0;
	}
	char *end;
	const char *s = json_object_get_string(v);
	long long n = strtoll(s, &end, 10);
	return (*s && *end == '\0') ? n : 0;
}

struct json_object *slim_etcd_array(struct json_object *obj, const char *field, size_t *n)
{
	struct json_object *v;
	*n = 0;
	if (!obj || !json_object_object_get_ex(obj, field, &v) ||
			!json_object_is_type(v, json_type_array)) {
		return NULL;
	}
	*n = json_object_array_length(v);
	return v;
}

void slim_etcd_prefix_end(const char *prefix, char *out, size_t size)
{
	snprintf(out, size, "%s", prefix);
	size_t n = strlen(out);
	if (n > 0) {
		out[n - 1]++;
	}
}
