/*
 * libFuzzer target: slimland.conf and the state file's parser. Both are
 * local files (root's), but a damaged state file after a crash or a full
 * disk must never crash the manager, and neither must any config.
 */
#include <stdlib.h>
#include <string.h>
#include "config.h"
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
	for (size_t i = 0; i < state.n_tokens; i++) {
		if (state.tokens[i].token.len == 0 || state.tokens[i].token.len > 32) {
			abort();
		}
	}
	slim_state_finish(&state);
	free(text);
	return 0;
}
