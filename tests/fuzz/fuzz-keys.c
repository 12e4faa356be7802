/*
 * libFuzzer target: the files and texts the secure transport reads, any of
 * which someone may have edited, damaged or planted. The first byte says
 * which parser gets the rest:
 *
 *   0  a PEM private key (a console's or the session manager's key file)
 *   1  a secret key file (a pairing key: 64 hex digits)
 *   2  a key fingerprint as given on a command line (--server-key)
 *   3  a console's known-servers file (console/trust.c)
 *
 * None may read outside its input, and what they accept must be what they
 * promise: a fingerprint parsed prints back to itself.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "fuzz-common.h"
#include "slim-secure.h"
#include "trust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool logs_quiet;
	if (!logs_quiet) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		logs_quiet = true;
	}
	struct fuzz_text t;
	if (!fuzz_text_split(data, size, &t)) {
		return 0;
	}
	char *text = t.bytes, *copy = t.string;
	size_t len = t.len;
	char err[256];
	uint8_t key[SLIM_SEC_KEY_LEN], fp[SLIM_SEC_FINGERPRINT_LEN];
	switch (data[0] % 4) {
	case 0: {
		struct slim_sec_identity *id = slim_sec_identity_from_pem(text, len, err, sizeof(err));
		if (id) {
			char id_text[SLIM_CONSOLE_ID_LEN + 1];
			slim_sec_fingerprint_id(slim_sec_identity_fingerprint(id), id_text);
			if (!slim_sec_id_valid(id_text)) {
				abort();
			}
		}
		slim_sec_identity_destroy(id);
		break;
	}
	case 1:
		slim_sec_key_parse(text, len, key);
		break;
	case 2:
		if (slim_sec_fingerprint_parse(copy, fp)) {
			char hex[65];
			slim_sec_fingerprint_hex(fp, hex);
			const char *digits = strncmp(copy, "sha256:", 7) == 0 ? copy + 7 : copy;
			if (strcasecmp(hex, digits) != 0) {
				abort(); /* what was taken does not print back */
			}
		}
		break;
	case 3: {
		int bad;
		slim_known_servers_find(text, len, "10.0.0.1:5550", fp, &bad);
		break;
	}
	}
	fuzz_text_free(&t);
	return 0;
}
