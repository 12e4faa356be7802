/*
 * A client of etcd's v3 API through its JSON gateway (`POST /v3/...`, the
 * API's documented HTTP form), on the manager's event loop: libcurl's
 * multi interface with its sockets and its timer as event sources, so that
 * an etcd that is slow or gone never blocks a console.
 *
 * Each request names a callback that gets the answer's JSON object, or
 * NULL and a reason. The endpoints are tried in turn: a request that
 * cannot reach one goes to the next, and the next request starts at the
 * one that answered last. Keys and values are bytes in the API (base64 in
 * JSON): slim_etcd_b64 and slim_etcd_unb64 translate.
 */
#ifndef SLIM_SESSIOND_ETCD_H
#define SLIM_SESSIOND_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <wayland-server-core.h>

#define SLIM_ETCD_ENDPOINTS_MAX 8

struct slim_etcd;
struct slim_etcd_call;

/*
 * A unary answer: `result` (borrowed for the call) or NULL with `error`
 * set. etcd's own errors ({"error": ...}) arrive as errors too.
 */
typedef void (*slim_etcd_done)(void *data, struct json_object *result, const char *error);
/*
 * A watch's events, one message of the stream at a time (its "result");
 * NULL with `error` when the stream ended (the call is then finished).
 */
typedef void (*slim_etcd_stream)(void *data, struct json_object *result, const char *error);

/*
 * https endpoints: the CA that signed the members' certificates, and this
 * server's certificate and key for etcd's client-cert-auth. Empty: the
 * system's CAs, no client certificate.
 */
struct slim_etcd_tls {
	char ca[256], cert[256], key[256];
};

/*
 * `endpoints`: comma-separated URLs (http://10.0.0.1:2379,...); `tls` is
 * copied (NULL: none). NULL if no endpoint is valid.
 */
struct slim_etcd *slim_etcd_create(struct wl_event_loop *loop, const char *endpoints,
		const struct slim_etcd_tls *tls);
/* Cancels what is in flight without calling back. */
void slim_etcd_destroy(struct slim_etcd *etcd);

/*
 * POST `path` (e.g. "/v3/kv/put") with `body`, whose reference is taken.
 * `timeout_ms` bounds the whole exchange on one endpoint. NULL if it could
 * not be begun (the callback is not called).
 */
struct slim_etcd_call *slim_etcd_post(struct slim_etcd *etcd, const char *path,
		struct json_object *body, unsigned timeout_ms, slim_etcd_done done, void *data);
/* A watch (`create_request` body, taken): messages until the stream ends. */
struct slim_etcd_call *slim_etcd_watch(struct slim_etcd *etcd, struct json_object *body,
		slim_etcd_stream event, void *data);
/* Forgets a call in flight: its callback is never called. NULL: nothing. */
void slim_etcd_cancel(struct slim_etcd_call *call);

/*
 * An answer's text (`len` bytes, exactly one JSON object), or with
 * `message` one message of a watch's stream: the object to put when done,
 * *result what the callback gets (the object, or the message's "result").
 * NULL and `error` if it is not one, or if it is etcd's error.
 */
struct json_object *slim_etcd_parse(const char *text, size_t len, bool message,
		struct json_object **result, char *error, size_t size);

/* The endpoint the last answer came from (for slimlandctl group). */
const char *slim_etcd_endpoint(const struct slim_etcd *etcd);

/* A JSON string of `len` bytes in base64; NULL on allocation failure. */
struct json_object *slim_etcd_b64(const void *bytes, size_t len);
struct json_object *slim_etcd_b64_str(const char *text);
/*
 * Decodes a base64 JSON string into `out` (NUL-terminated, at most
 * `size` - 1 bytes). False if it is not one or does not fit.
 */
bool slim_etcd_unb64(struct json_object *obj, char *out, size_t size, size_t *len);
/* etcd's int64 fields are JSON strings; absent or malformed: 0. */
int64_t slim_etcd_int(struct json_object *obj, const char *field);
/* The array `field` of `obj`, and its length in *n; absent or not an array: NULL, 0. */
struct json_object *slim_etcd_array(struct json_object *obj, const char *field, size_t *n);
/* The end of the range of keys under `prefix` (prefix with its last byte + 1). */
void slim_etcd_prefix_end(const char *prefix, char *out, size_t size);

#endif
