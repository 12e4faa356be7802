#define _GNU_SOURCE /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-log.h"
#include "trust.h"

/* known-servers is a short list; a file much larger is none of ours. */
#define KNOWN_MAX (1 << 20)

struct slim_trust {
	char *path, *address;
	bool has_given;
	uint8_t given[SLIM_SEC_FINGERPRINT_LEN];
	char why[512];
};

struct slim_trust *slim_trust_create(const char *path, const char *address,
		const uint8_t *given)
{
	struct slim_trust *t = calloc(1, sizeof(*t));
	if (!t) {
		return NULL;
	}
	t->path = strdup(path);
	t->address = strdup(address);
	if (!t->path || !t->address) {
		slim_trust_destroy(t);
		return NULL;
	}
	if (given) {
		t->has_given = true;
		memcpy(t->given, given, sizeof(t->given));
	}
	return t;
}

void slim_trust_destroy(struct slim_trust *t)
{
	if (!t) {
		return;
	}
	free(t->path);
	free(t->address);
	free(t);
}

bool slim_known_servers_find(const char *text, size_t len, const char *address,
		uint8_t fp[SLIM_SEC_FINGERPRINT_LEN], int *bad)
{
	bool found = false;
	*bad = 0;
	size_t pos = 0;
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (n == 0 || line[0] == '#') {
			continue;
		}
		char buf[512], addr[300], key[200];
		if (n >= sizeof(buf) || memchr(line, '\0', n)) {
			(*bad)++;
			continue;
		}
		memcpy(buf, line, n);
		buf[n] = '\0';
		char extra;
		uint8_t parsed[SLIM_SEC_FINGERPRINT_LEN];
		if (sscanf(buf, "%299s %199s %c", addr, key, &extra) != 2 ||
				!slim_sec_fingerprint_parse(key, parsed)) {
			(*bad)++;
			continue;
		}
		if (strcmp(addr, address) == 0) {
			memcpy(fp, parsed, SLIM_SEC_FINGERPRINT_LEN);
			found = true;
		}
	}
	return found;
}

bool slim_trust_set_address(struct slim_trust *t, const char *address)
{
	if (strcmp(t->address, address) == 0) {
		return true;
	}
	char *copy = strdup(address);
	if (!copy) {
		return false;
	}
	free(t->address);
	t->address = copy;
	return true;
}

/* The file's text ("" if there is none yet); NULL if it cannot be read. */
static char *read_known(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*len = 0;
		return errno == ENOENT ? strdup("") : NULL;
	}
	char *buf = malloc(KNOWN_MAX + 1);
	ssize_t n = buf ? read(fd, buf, KNOWN_MAX) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Appends the pin, creating the file (0600) and its directory if need be. */
static bool pin(struct slim_trust *t, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	char hex[65];
	slim_sec_fingerprint_hex(fp, hex);
	int fd = open(t->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		return false;
	}
	char line[512];
	int n = snprintf(line, sizeof(line), "%s sha256:%s\n", t->address, hex);
	bool ok = n > 0 && (size_t)n < sizeof(line) && write(fd, line, (size_t)n) == n;
	ok = close(fd) == 0 && ok;
	return ok;
}

const char *slim_trust_check(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	struct slim_trust *t = data;
	char offered[65], pinned_hex[65];
	slim_sec_fingerprint_hex(fp, offered);
	if (t->has_given) {
		if (memcmp(fp, t->given, sizeof(t->given)) == 0) {
			return NULL;
		}
		slim_sec_fingerprint_hex(t->given, pinned_hex);
		snprintf(t->why, sizeof(t->why), "the server's key is sha256:%.16s..., not the "
			"sha256:%.16s... of --server-key", offered, pinned_hex);
		return t->why;
	}
	size_t len;
	char *text = read_known(t->path, &len);
	if (!text) {
		snprintf(t->why, sizeof(t->why), "cannot read %s: %s", t->path, strerror(errno));
		return t->why;
	}
	uint8_t pinned[SLIM_SEC_FINGERPRINT_LEN];
	int bad;
	bool found = slim_known_servers_find(text, len, t->address, pinned, &bad);
	free(text);
	if (bad > 0) {
		slim_log(SLIM_LOG_ERROR, "%s: %d line(s) that are not \"ADDRESS sha256:HEX\", "
			"skipped", t->path, bad);
	}
	if (!found) {
		if (!pin(t, fp)) {
			snprintf(t->why, sizeof(t->why), "cannot pin the server's key in %s: %s",
				t->path, strerror(errno));
			return t->why;
		}
		slim_log(SLIM_LOG_INFO, "%s: first contact; its key sha256:%s is pinned in %s",
			t->address, offered, t->path);
		return NULL;
	}
	if (memcmp(pinned, fp, sizeof(pinned)) == 0) {
		return NULL;
	}
	slim_sec_fingerprint_hex(pinned, pinned_hex);
	snprintf(t->why, sizeof(t->why), "the server's key changed (now sha256:%.16s..., "
		"pinned sha256:%.16s...): if it was replaced on purpose, remove its line from %s",
		offered, pinned_hex, t->path);
	slim_log(SLIM_LOG_ERROR, "%s: refused: its key is sha256:%s, pinned sha256:%s in %s",
		t->address, offered, pinned_hex, t->path);
	return t->why;
}
