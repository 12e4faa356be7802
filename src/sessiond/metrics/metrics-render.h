/*
 * What the manager knows, as Prometheus metrics text (prom-text.h): its
 * consoles and their links (from what each session's compositor reports,
 * compositor-control.h), its sessions and their cgroups, the group's
 * servers, and the manager process itself.
 */
#ifndef SLIM_METRICS_RENDER_H
#define SLIM_METRICS_RENDER_H

#include <stddef.h>

struct slim_manager;
struct slim_group;

/* The text (malloc'd, NUL-terminated) and its length; NULL if it could not be made. */
char *slim_metrics_render(struct slim_manager *mgr, struct slim_group *group, size_t *len);

#endif
