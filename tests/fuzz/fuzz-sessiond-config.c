/*
 * libFuzzer target: slimland.conf, the state file's parser and the
 * enrolled consoles' file (KEY_DIR/consoles). All are local files
 * (root's), but a damaged one after a crash or a full disk must never
 * crash the manager, and neither must any config.
 */
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "enroll.h"
#include "fuzz-common.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	if (!init) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		init = true;
	}
	/* exactly `size` bytes, so ASan sees overruns */
	char *text = malloc(size ? size : 1);
	memcpy(text, data, size);
	struct slim_config config;
	slim_config_defaults(&config);
	slim_config_parse(&config, text, size, "fuzz");
	if (strnlen(config.listen, sizeof(config.listen)) == sizeof(config.listen)) {
		abort();
	}
	struct slim_state state;
	slim_state_parse(text, size, "fuzz", &state);
	for (size_t i = 0; i < state.n_consoles; i++) {
		if (strnlen(state.consoles[i].id, sizeof(state.consoles[i].id)) ==
				sizeof(state.consoles[i].id)) {
			abort();
		}
	}
	slim_state_finish(&state);
	/* what it takes of a consoles file, it writes back the same (no file here) */
	struct slim_enroll enroll;
	slim_enroll_init(&enroll, NULL, SLIM_ENROLL_APPROVE);
	slim_enroll_parse(&enroll, text, size, "fuzz");
	for (size_t i = 0; i < enroll.n; i++) {
		if (!enroll.list[i].id[0] || (enroll.list[i].name[0] &&
				!slim_enroll_name_valid(enroll.list[i].name))) {
			abort();
		}
	}
	slim_enroll_finish(&enroll);
	free(text);
	return 0;
}
