/*
 * The greeter socket (§3): the login form in each console's greeter
 * compositor says which console it serves and submits logins; the manager
 * answers with `ok`, a delayed `error`, or a `message` to show.
 */
#ifndef SLIM_SESSIOND_GREETER_H
#define SLIM_SESSIOND_GREETER_H

#include <stdbool.h>

struct slim_manager;
struct slim_greeter_server;
struct slim_greeter_client;

/* Creates `mgr->greeters.socket`, mode 0660, group of the greeter user. */
struct slim_greeter_server *slim_greeter_server_create(struct slim_manager *mgr);
void slim_greeter_server_destroy(struct slim_greeter_server *server);
/*
 * A client says `hello CONSOLE` to serve that console's greeter: it hears
 * the console's messages and logins from then on (its events), until it
 * goes, serves another, or the console or the manager goes.
 *
 * Adopts a connected socket as a client (the listener's accept, tests).
 */
struct slim_greeter_client *slim_greeter_client_create(struct slim_manager *mgr, int fd);

#endif
