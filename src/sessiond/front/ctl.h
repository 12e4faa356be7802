/*
 * slimlandctl's socket (§4): root only, one request a line, answered by
 * lines and a final `ok` or `error TEXT`.
 */
#ifndef SLIM_SESSIOND_CTL_H
#define SLIM_SESSIOND_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include "slim-proto.h"

struct slim_manager;
struct slim_group;
struct slim_ctl_server;

enum slim_ctl_cmd {
	SLIM_CTL_LIST,
	SLIM_CTL_DETACH,
	SLIM_CTL_END,
	SLIM_CTL_WHY,
	SLIM_CTL_CONSOLES, /* enrolled and waiting consoles */
	SLIM_CTL_APPROVE,  /* approve ID [NAME] */
	SLIM_CTL_REVOKE,   /* revoke ID */
	SLIM_CTL_KEY,      /* the host key's fingerprint */
	SLIM_CTL_CLASSES,  /* each session's processes by cgroup class, and their CPU */
	SLIM_CTL_AUDIO,    /* how sound fares on each console showing a session */
	SLIM_CTL_LINK,     /* what the pacer knows of each console's link */
	SLIM_CTL_VIDEO,    /* each console's compressed video: encoder, rate, time */
	SLIM_CTL_GROUP,    /* the server group: servers, load, sessions */
	SLIM_CTL_DRAIN,    /* drain SERVER: no new sessions there */
	SLIM_CTL_UNDRAIN,  /* undrain SERVER */
	SLIM_CTL_SHADOW,   /* shadow SESSION CONSOLE [control] */
	SLIM_CTL_UNSHADOW, /* unshadow SESSION */
	SLIM_CTL_METRICS,  /* the Prometheus text (metrics-render.h): slimlandctl top */
};

struct slim_ctl_request {
	enum slim_ctl_cmd cmd;
	uint32_t session;                      /* detach, end, shadow, unshadow */
	bool control;                          /* shadow: with the console's input */
	char console[SLIM_CONSOLE_ID_LEN + 1]; /* why, approve, revoke (an id or its start) */
	char name[64];                         /* approve's NAME, "" for none; drain's SERVER */
};

/* Parses one request line; false with *error set if it is not one. */
bool slim_ctl_parse(const char *line, struct slim_ctl_request *req, const char **error);

typedef void (*slim_ctl_out)(void *data, const char *line);
/*
 * Runs one request line, answering through `out` (the last line: ok or
 * error). `group` is the server group's (NULL: none).
 */
void slim_ctl_run(struct slim_manager *mgr, struct slim_group *group, const char *line,
		slim_ctl_out out, void *data);

/* `path`, mode 0600; connections from other users than root are closed. */
struct slim_ctl_server *slim_ctl_server_create(struct slim_manager *mgr,
		struct slim_group *group, const char *path);
void slim_ctl_server_destroy(struct slim_ctl_server *server);
/*
 * Adopts a connected socket whose peer has been checked as a client (the
 * listener's accept, fuzzers); it is closed when the peer hangs up.
 */
bool slim_ctl_client_create(struct slim_manager *mgr, struct slim_group *group, int fd);

#endif
