/*
 * Which session manager a console believes: the key given by the
 * administrator (--server-key), or else the one it met first at that
 * address, pinned in STATE_DIR/known-servers as ssh pins host keys.
 * A key that differs from the pin is refused with a message that says
 * which file to edit if the server was replaced on purpose.
 *
 * known-servers: one "ADDRESS sha256:HEX" a line, `#` comments; ADDRESS
 * is the --manager HOST:PORT as given (the default port made explicit).
 */
#ifndef SLIM_CONSOLE_TRUST_H
#define SLIM_CONSOLE_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "slim-secure.h"

struct slim_trust;

/*
 * `path`: the known-servers file; `given`: the administrator's pin, or
 * NULL. NULL only when out of memory.
 */
struct slim_trust *slim_trust_create(const char *path, const char *address,
		const uint8_t *given);
void slim_trust_destroy(struct slim_trust *trust);

/* The manager's address changed (a server group's next manager): its own pin. */
bool slim_trust_set_address(struct slim_trust *trust, const char *address);

/*
 * check_server for slim_sec_client_config (`data` is the trust): NULL if
 * the key is the pinned one (pinning it now if there was none), else why not.
 */
const char *slim_trust_check(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN]);

/*
 * The pin for `address` in known-servers text: true with *found and `fp`
 * set when a line names it (the last one wins). Lines that are not
 * "ADDRESS sha256:HEX" are counted in *bad and skipped.
 */
bool slim_known_servers_find(const char *text, size_t len, const char *address,
		uint8_t fp[SLIM_SEC_FINGERPRINT_LEN], int *bad);

#endif
