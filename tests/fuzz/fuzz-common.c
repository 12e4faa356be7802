#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "slim-codec.h"
#include "slim-zstd.h"

void fuzz_quiet_log(enum slim_log_level level, const char *fmt, va_list args)
{
	char line[256];
	vsnprintf(line, sizeof(line), fmt, args);
}

static void check(const uint8_t *buf, size_t len, bool upstream, uint16_t width,
		uint16_t height, bool any_assoc, const char *who)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	/*
	 * a compressed datagram is checked as the console reads it: expanded,
	 * with what it names of those before it, which this keeps as a console does
	 */
	static struct slim_zstd *z;
	static struct slim_history *h;
	static uint8_t expanded[SLIM_ZSTD_MAX_DGRAM];
	z = z ? z : slim_zstd_create();
	h = h ? h : slim_history_create();
	enum slim_error err = z && h ? slim_zstd_reader_init(z, expanded, h, &r, &hdr, buf, len,
		upstream, width, height) : SLIM_ERR_ZSTD;
	if (err == SLIM_OK && !upstream && hdr.seq != 0) {
		slim_history_add(h, hdr.seq, r.p, (size_t)(r.end - r.p));
	}
	if (err == SLIM_OK && ((!any_assoc && hdr.assoc != FUZZ_ASSOC) || len > SLIM_DEFAULT_MTU)) {
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

void fuzz_check_valid(const uint8_t *buf, size_t len, bool upstream, uint16_t width,
		uint16_t height, const char *who)
{
	check(buf, len, upstream, width, height, true, who);
}

void fuzz_check_datagram(const uint8_t *buf, size_t len, bool upstream, const char *who)
{
	check(buf, len, upstream, FUZZ_W, FUZZ_H, false, who);
}

bool fuzz_text_split(const uint8_t *data, size_t size, struct fuzz_text *text)
{
	if (size < 1) {
		return false;
	}
	text->len = size - 1;
	/* exactly len bytes (malloc'ed apart, so that a read past them is caught) */
	text->bytes = malloc(text->len + 1);
	text->string = malloc(text->len + 1);
	if (!text->bytes || !text->string) {
		abort();
	}
	memcpy(text->bytes, data + 1, text->len);
	memcpy(text->string, data + 1, text->len);
	text->string[text->len] = '\0';
	return true;
}

void fuzz_text_free(struct fuzz_text *text)
{
	free(text->bytes);
	free(text->string);
}
