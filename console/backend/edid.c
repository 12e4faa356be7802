/*
 * The EDID base block (VESA E-EDID 1.3/1.4): an 8-byte header, the
 * manufacturer id at 8 (three 5-bit letters, big-endian, 'A' = 1), the
 * product code at 10 (little-endian), and four 18-byte descriptors from
 * 54, of which a display descriptor (a zero pixel clock) tagged 0xFC
 * holds the monitor's name: up to 13 bytes, ended by a newline, padded
 * with spaces.
 */
#include <stdio.h>
#include <string.h>
#include "edid.h"

#define EDID_BLOCK 128
#define DESCRIPTORS_AT 54
#define DESCRIPTOR_LEN 18
#define N_DESCRIPTORS 4
#define TAG_NAME 0xfc
#define TEXT_LEN 13

static const uint8_t header[8] = { 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 };

/* The three letters of the PNP id, or an empty string if one is out of range. */
static void parse_make(const uint8_t *block, char make[4])
{
	uint32_t id = (uint32_t)block[8] << 8 | block[9];
	for (int i = 0; i < 3; i++) {
		uint32_t letter = (id >> (10 - 5 * i)) & 0x1f;
		if (letter < 1 || letter > 26) {
			make[0] = '\0';
			return;
		}
		make[i] = (char)('A' + letter - 1);
	}
	make[3] = '\0';
}

/* A descriptor's text up to its newline, printable ASCII only, trailing spaces cut. */
static void copy_text(const uint8_t *text, char *out, size_t out_len)
{
	size_t n = 0;
	for (size_t i = 0; i < TEXT_LEN && text[i] != '\n' && n + 1 < out_len; i++) {
		out[n++] = text[i] >= 0x20 && text[i] < 0x7f ? (char)text[i] : '?';
	}
	while (n > 0 && out[n - 1] == ' ') {
		n--;
	}
	out[n] = '\0';
}

/* The monitor name descriptor's text; false if the block has none (or it is empty). */
static bool parse_name(const uint8_t *block, char *out, size_t out_len)
{
	for (int i = 0; i < N_DESCRIPTORS; i++) {
		const uint8_t *d = block + DESCRIPTORS_AT + i * DESCRIPTOR_LEN;
		/* a display descriptor: pixel clock 0, then 0, the tag, 0 */
		if (d[0] == 0 && d[1] == 0 && d[2] == 0 && d[3] == TAG_NAME) {
			copy_text(d + 5, out, out_len);
			if (out[0]) {
				return true;
			}
		}
	}
	return false;
}

bool slim_edid_parse(const uint8_t *data, size_t len, struct slim_edid *out)
{
	*out = (struct slim_edid){ 0 };
	if (!data || len < EDID_BLOCK || memcmp(data, header, sizeof(header)) != 0) {
		return false;
	}
	parse_make(data, out->make);
	if (!parse_name(data, out->model, sizeof(out->model))) {
		snprintf(out->model, sizeof(out->model), "0x%04x",
			(unsigned)(data[10] | (uint32_t)data[11] << 8));
	}
	return true;
}
