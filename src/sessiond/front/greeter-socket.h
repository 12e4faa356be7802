/*
 * The greeter socket (§3): the login form in each console's greeter
 * compositor says which console it serves and submits logins; the manager
 * answers with `ok`, a delayed `error`, or a `message` to show.
 */
#ifndef SLIM_SESSIOND_GREETER_H
#define SLIM_SESSIOND_GREETER_H

#include <stdbool.h>

struct slim_manager;
struct slim_console;
struct slim_greeter_server;
struct slim_greeter_client;

#define SLIM_LOGIN_DELAY_FIRST_MS 2000
#define SLIM_LOGIN_DELAY_MAX_MS 30000

/* Creates `mgr->greeter_socket`, mode 0660, group of the greeter user. */
struct slim_greeter_server *slim_greeter_server_create(struct slim_manager *mgr);
void slim_greeter_server_destroy(struct slim_greeter_server *server);
/* Adopts a connected socket as a client (the listener's accept, tests). */
struct slim_greeter_client *slim_greeter_client_create(struct slim_manager *mgr, int fd);
/* Closes every client's connection (the manager is going away). */
void slim_greeter_clients_destroy(struct slim_manager *mgr);

/* The console's greeter client, if connected, is told `message TEXT`. */
void slim_greeter_client_message(struct slim_console *console, const char *text);
/* The console is going away: its client no longer points at it. */
void slim_greeter_client_forget(struct slim_console *console);
/*
 * A login begun at the console ended (error NULL: logged in): its greeter
 * client is told `ok` now, or `error TEXT` after the failure's delay.
 */
void slim_greeter_login_done(struct slim_console *console, const char *error);
/* The delay before a failed login's `error`, after `failures` failures (1..). */
unsigned slim_login_delay_ms(unsigned failures);

#endif
