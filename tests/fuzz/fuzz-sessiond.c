/*
 * libFuzzer target: what a console that got past the secure transport
 * (fuzz-secure's business) says to slimland-sessiond, through
 * slim_consoles_receive: the codec, console ids and the keys they must
 * match, enrollment, the HELLO takeover rule, CARD handling and the
 * card/session logic behind it.
 *
 * The input's first byte chooses enroll (open, approve, closed); then a
 * script of datagrams: each is `u8 source` (one of 4 fake connections and
 * addresses; sources 2 and 3 proved keys, 0 and 1 came in clear), `u16
 * length` (little-endian), then that many bytes. Greeter
 * compositors the manager starts are fakes whose control sockets say
 * `hello` and `attached` at once, so REDIRECTs and migrations happen too.
 * Every datagram the manager sends must be a valid downstream datagram.
 * Each input gets a fresh manager: no state leaks between inputs.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "consoles.h"
#include "fuzz-common.h"
#include "fuzz-sessiond-fakes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct wl_event_loop *loop;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!loop) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		loop = wl_event_loop_create();
	}
	if (size < 1) {
		return 0;
	}
	static const enum slim_enroll_mode modes[] = {
		SLIM_ENROLL_OPEN, SLIM_ENROLL_APPROVE, SLIM_ENROLL_CLOSED,
	};
	struct slim_manager *mgr = fuzz_manager_create(loop, modes[data[0] % 3]);
	size_t pos = 1;
	while (pos + 3 <= size) {
		uint8_t source = data[pos] & 3;
		size_t len = data[pos + 1] | (size_t)data[pos + 2] << 8;
		pos += 3;
		if (len > size - pos) {
			len = size - pos;
		}
		/* a copy of exactly len bytes, so ASan sees overruns */
		uint8_t *dgram = malloc(len ? len : 1);
		memcpy(dgram, data + pos, len);
		pos += len;
		struct sockaddr_in from = { .sin_family = AF_INET, .sin_port = htons(40000) };
		from.sin_addr.s_addr = htonl(0x0a000001 + source);
		struct sockaddr_in local = { .sin_family = AF_INET };
		uint8_t key[SLIM_SEC_FINGERPRINT_LEN] = { source };
		struct slim_peer peer = {
			.conn = (struct slim_sec_conn *)(uintptr_t)(0x100 + source),
			.key = source >= 2 ? key : NULL,
			.from = (struct sockaddr *)&from, .from_len = sizeof(from),
			.local = (struct sockaddr *)&local, .local_len = sizeof(local),
		};
		slim_consoles_receive(mgr, &peer, dgram, len);
		free(dgram);
		wl_event_loop_dispatch(loop, 0);
		fake_compositors_answer();
		wl_event_loop_dispatch(loop, 0);
	}
	fuzz_manager_destroy(mgr);
	return 0;
}
