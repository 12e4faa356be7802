#include <stdio.h>
#include <stdlib.h>
#include "fuzz-common.h"
#include "slim-codec.h"

void fuzz_quiet_log(enum slim_log_level level, const char *fmt, va_list args)
{
	char line[256];
	vsnprintf(line, sizeof(line), fmt, args);
}

void fuzz_check_datagram(const uint8_t *buf, size_t len, bool upstream, const char *who)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = slim_reader_init(&r, &hdr, buf, len, upstream, FUZZ_W, FUZZ_H);
	if (err == SLIM_OK && (hdr.assoc != FUZZ_ASSOC || len > SLIM_DEFAULT_MTU)) {
		err = SLIM_ERR_FIELD;
	}
	while (err == SLIM_OK) {
		err = slim_reader_next(&r, &cmd);
		if (cmd.type == 0) {
			break;
		}
	}
	if (err != SLIM_OK) {
		fprintf(stderr, "%s sent a bad datagram: %s\n", who, slim_error_str(err));
		abort();
	}
}
