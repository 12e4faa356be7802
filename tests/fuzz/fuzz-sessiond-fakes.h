/*
 * A session manager with nothing behind it, for the sessiond fuzzers, on
 * the fake world the manager's tests use (sessiond/fake-manager.h): no
 * process is started (each compositor is the far end of a socketpair,
 * which says `hello` at once and answers `expect` with `attached` when
 * fake_compositors_answer runs), every login is refused at once (no PAM
 * here), and every datagram the manager sends must be a valid downstream
 * one.
 */
#ifndef SLIM_FUZZ_SESSIOND_FAKES_H
#define SLIM_FUZZ_SESSIOND_FAKES_H

#include <wayland-server-core.h>
#include "fake-manager.h"

/* A fresh manager with the default configuration, on `loop`. */
struct slim_manager *fuzz_manager_create(struct wl_event_loop *loop, enum slim_enroll_mode enroll);
/* Destroys it and closes the fake compositors' ends. */
void fuzz_manager_destroy(struct slim_manager *mgr);

#endif
