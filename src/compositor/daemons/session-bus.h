/*
 * The session's D-Bus session bus: one of its own for every session and
 * every greeter, whatever its sound. Without one, a GTK or GIO program
 * starts a bus itself through X11 (dbus-launch --autolaunch, where
 * dbus-x11 is installed), which starts Xwayland for nothing and leaves a
 * bus behind.
 */
#ifndef SLIM_SESSION_BUS_H
#define SLIM_SESSION_BUS_H

struct slim_sched;
struct slim_session_bus;

/*
 * Sets DBUS_SESSION_BUS_ADDRESS for the clients: the user's own bus if it
 * is set already (NULL returned), else a dbus-daemon started here,
 * listening in $XDG_RUNTIME_DIR. Call it once WAYLAND_DISPLAY and DISPLAY
 * are set: the services the bus starts (the accessibility bus, portals)
 * take its environment. A bus that cannot start is said once in the log,
 * and the address then names no bus, so that nothing starts one through
 * X11. The bus, and every service it started, ends with
 * slim_session_bus_stop() or with the compositor.
 */
struct slim_session_bus *slim_session_bus_start(struct slim_sched *sched);
/* NULL: no-op. */
void slim_session_bus_stop(struct slim_session_bus *bus);

#endif
