#include <stdlib.h>
#include "fuzz-common.h"
#include "fuzz-sessiond-fakes.h"

static void check_sent(const uint8_t *buf, size_t len)
{
	fuzz_check_valid(buf, len, false, 1, 1, "the manager");
}

struct slim_manager *fuzz_manager_create(struct wl_event_loop *loop, enum slim_enroll_mode enroll)
{
	static const uint8_t card_key[SLIM_SEC_KEY_LEN] = { 7 };
	fake = (struct fake_world){ .eager = true, .check_sent = check_sent };
	fake.now_us = slim_now_us();
	struct slim_config config;
	slim_config_defaults(&config);
	config.enroll = enroll;
	/* no files: enrollment lives in memory, the host key is none */
	struct slim_manager *mgr = slim_manager_create(loop, &config, "/nonexistent", card_key, NULL,
		NULL, &fake_ops, NULL);
	if (!mgr) {
		abort();
	}
	mgr->greeters.check_peer = false;
	return mgr;
}

void fuzz_manager_destroy(struct slim_manager *mgr)
{
	slim_manager_destroy(mgr);
	fake_compositors_end();
}
