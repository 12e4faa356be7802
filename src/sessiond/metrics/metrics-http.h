/*
 * The manager's Prometheus endpoint (metrics_listen in slimland.conf):
 * libmicrohttpd without a thread of its own, driven by the manager's event
 * loop through its epoll descriptor, answering GET /metrics alone.
 */
#ifndef SLIM_METRICS_HTTP_H
#define SLIM_METRICS_HTTP_H

struct slim_manager;
struct slim_group;
struct slim_metrics_server;

/* Listens on `address` (ADDRESS:PORT); NULL, said in the log, if it cannot. */
struct slim_metrics_server *slim_metrics_server_create(struct slim_manager *mgr,
		struct slim_group *group, const char *address);
void slim_metrics_server_destroy(struct slim_metrics_server *server);

#endif
