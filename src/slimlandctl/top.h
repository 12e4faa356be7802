/* slimlandctl top: the manager's metrics, live in the terminal. */
#ifndef SLIMLANDCTL_TOP_H
#define SLIMLANDCTL_TOP_H

/* A connection to the manager's socket, its peer checked; -1 (said) if none. */
int slimlandctl_connect(const char *path);
/* Until q or Ctrl-C; the exit status. */
int slimlandctl_top(const char *path);

#endif
