/*
 * Keys of the secure transport: long-term ECDSA P-256 key pairs in PEM
 * files (a console's, the session manager's), their fingerprints and the
 * console ids derived from them, and secret key files (pairing keys).
 * Every file here is a secret: created 0600 in one atomic step, and
 * refused when anyone else may read it. Also what both ends share on
 * the wire: the server's "forgotten" hint, and the inbox GnuTLS reads.
 */
#define _GNU_SOURCE /* O_CLOEXEC, getrandom */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-codec.h"
#include "slim-hex.h"
#include "slim-log.h"
#include "slim-sec-internal.h"

/* A PEM key is a few hundred bytes; anything much larger is no key of ours. */
#define KEY_FILE_MAX 8192

struct slim_sec_identity {
	gnutls_x509_privkey_t key;
	gnutls_datum_t spki; /* DER SubjectPublicKeyInfo */
	uint8_t fp[SLIM_SEC_FINGERPRINT_LEN];
};

bool slim_sec_mode_parse(const char *text, enum slim_sec_mode *mode)
{
	if (strcmp(text, "dtls") == 0) {
		*mode = SLIM_SEC_DTLS;
	} else if (strcmp(text, "clear") == 0) {
		*mode = SLIM_SEC_CLEAR;
	} else {
		return false;
	}
	return true;
}

const char *slim_sec_mode_name(enum slim_sec_mode mode)
{
	return mode == SLIM_SEC_CLEAR ? "clear" : "dtls";
}

bool slim_sec_clear_allowed(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)addr;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)addr;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		const uint8_t *a = in6->sin6_addr.s6_addr;
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
			(memcmp(a, mapped, sizeof(mapped)) == 0 && a[12] == 127);
	}
	return false;
}

bool slim_sec_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

void slim_sec_fingerprint_hex(const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN], char out[65])
{
	slim_hex_encode(out, fp, SLIM_SEC_FINGERPRINT_LEN);
}

bool slim_sec_fingerprint_parse(const char *text, uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	if (strncmp(text, "sha256:", 7) == 0) {
		text += 7;
	}
	return slim_hex_decode(fp, SLIM_SEC_FINGERPRINT_LEN, text);
}

void slim_sec_fingerprint_id(const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN],
		char out[SLIM_CONSOLE_ID_LEN + 1])
{
	slim_hex_encode(out, fp, SLIM_CONSOLE_ID_LEN / 2);
}

bool slim_sec_id_valid(const char *text)
{
	size_t n = 0;
	for (; text[n]; n++) {
		char ch = text[n];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
			return false;
		}
	}
	return n == SLIM_CONSOLE_ID_LEN;
}

/* The whole file, if it is a secret only its owner may read; "" err on success. */
static char *read_secret(const char *path, size_t *len, bool *missing, char *err,
		size_t err_len)
{
	*missing = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		*missing = errno == ENOENT;
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		snprintf(err, err_len, "%s: readable by others (mode %03o): a key must be "
			"0600 (chmod 600 it, or remove it and a new key is made)", path,
			(unsigned)(st.st_mode & 0777));
		goto out;
	}
	if (st.st_size <= 0 || st.st_size > KEY_FILE_MAX) {
		snprintf(err, err_len, "%s: %s", path, st.st_size <= 0 ? "empty" : "too large for a key");
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(err, err_len, "%s: out of memory", path);
		goto out;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			snprintf(err, err_len, "%s: %s", path, n < 0 ? strerror(errno) : "short read");
			free(buf);
			buf = NULL;
			goto out;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
out:
	close(fd);
	return buf;
}

/* mkdir -p, each new directory 0700: a key's directory is nobody else's business. */
static bool make_dirs(const char *path, char *err, size_t err_len)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path) {
		return true;
	}
	size_t n = (size_t)(slash - path);
	if (n >= sizeof(dir)) {
		snprintf(err, err_len, "%s: path too long", path);
		return false;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	for (char *p = dir + 1; ; p++) {
		bool end = *p == '\0';
		if (*p == '/' || end) {
			*p = '\0';
			if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
				snprintf(err, err_len, "%s: %s", dir, strerror(errno));
				return false;
			}
			if (end) {
				break;
			}
			*p = '/';
		}
	}
	return true;
}

/*
 * Writes a new secret file: a temporary one (0600), fsync, then link() to
 * the name, which fails if someone made the file meanwhile (that one wins).
 */
static bool write_secret(const char *path, const void *data, size_t len, char *err,
		size_t err_len)
{
	if (!make_dirs(path, err, err_len)) {
		return false;
	}
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.new-%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
		return false;
	}
	bool ok = write(fd, data, len) == (ssize_t)len && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (ok && link(tmp, path) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		ok = false;
	} else if (!ok) {
		snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
	}
	unlink(tmp);
	return ok;
}

void slim_sec_identity_destroy(struct slim_sec_identity *id)
{
	if (!id) {
		return;
	}
	if (id->key) {
		gnutls_x509_privkey_deinit(id->key);
	}
	gnutls_free(id->spki.data);
	free(id);
}

/* The public half, its DER and its fingerprint. */
static bool derive_public(struct slim_sec_identity *id)
{
	gnutls_privkey_t priv = NULL;
	gnutls_pubkey_t pub = NULL;
	bool ok = gnutls_privkey_init(&priv) == 0 &&
		gnutls_privkey_import_x509(priv, id->key, GNUTLS_PRIVKEY_IMPORT_COPY) == 0 &&
		gnutls_pubkey_init(&pub) == 0 &&
		gnutls_pubkey_import_privkey(pub, priv, 0, 0) == 0 &&
		gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &id->spki) == 0 &&
		gnutls_hash_fast(GNUTLS_DIG_SHA256, id->spki.data, id->spki.size, id->fp) == 0;
	if (pub) {
		gnutls_pubkey_deinit(pub);
	}
	if (priv) {
		gnutls_privkey_deinit(priv);
	}
	return ok;
}

struct slim_sec_identity *slim_sec_identity_from_pem(const char *pem, size_t len,
		char *err, size_t err_len)
{
	struct slim_sec_identity *id = calloc(1, sizeof(*id));
	if (!id || gnutls_x509_privkey_init(&id->key) != 0) {
		snprintf(err, err_len, "out of memory");
		slim_sec_identity_destroy(id);
		return NULL;
	}
	gnutls_datum_t datum = { .data = (unsigned char *)pem, .size = (unsigned)len };
	int r = len > KEY_FILE_MAX ? GNUTLS_E_BASE64_DECODING_ERROR :
		gnutls_x509_privkey_import2(id->key, &datum, GNUTLS_X509_FMT_PEM, NULL,
			GNUTLS_PKCS_PLAIN);
	if (r < 0) {
		snprintf(err, err_len, "not a PEM private key (%s)", gnutls_strerror(r));
		goto fail;
	}
	/* the priorities sign with ECDSA P-256 only: another key could never be used */
	gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID;
	gnutls_datum_t x = { 0 }, y = { 0 }, k = { 0 };
	if (gnutls_x509_privkey_get_pk_algorithm(id->key) != GNUTLS_PK_ECDSA ||
			gnutls_x509_privkey_export_ecc_raw(id->key, &curve, &x, &y, &k) != 0 ||
			curve != GNUTLS_ECC_CURVE_SECP256R1) {
		gnutls_free(x.data);
		gnutls_free(y.data);
		gnutls_memset(k.data, 0, k.size);
		gnutls_free(k.data);
		snprintf(err, err_len, "not an ECDSA P-256 key");
		goto fail;
	}
	gnutls_free(x.data);
	gnutls_free(y.data);
	gnutls_memset(k.data, 0, k.size);
	gnutls_free(k.data);
	if (!derive_public(id)) {
		snprintf(err, err_len, "cannot derive its public key");
		goto fail;
	}
	return id;
fail:
	slim_sec_identity_destroy(id);
	return NULL;
}

static bool create_identity_file(const char *path, char *err, size_t err_len)
{
	gnutls_x509_privkey_t key;
	gnutls_datum_t pem = { 0 };
	if (gnutls_x509_privkey_init(&key) != 0) {
		snprintf(err, err_len, "out of memory");
		return false;
	}
	bool ok = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
			GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) == 0 &&
		gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL,
			GNUTLS_PKCS_PLAIN, &pem) == 0;
	gnutls_x509_privkey_deinit(key);
	if (!ok) {
		snprintf(err, err_len, "cannot make a key");
		return false;
	}
	ok = write_secret(path, pem.data, pem.size, err, err_len);
	gnutls_memset(pem.data, 0, pem.size);
	gnutls_free(pem.data);
	return ok;
}

struct slim_sec_identity *slim_sec_identity_load(const char *path, bool create,
		char *err, size_t err_len)
{
	size_t len;
	bool missing;
	char *pem = read_secret(path, &len, &missing, err, err_len);
	if (!pem && missing && create) {
		if (!create_identity_file(path, err, err_len)) {
			return NULL;
		}
		slim_log(SLIM_LOG_INFO, "made a new key: %s", path);
		pem = read_secret(path, &len, &missing, err, err_len);
	}
	if (!pem) {
		return NULL;
	}
	char why[200];
	struct slim_sec_identity *id = slim_sec_identity_from_pem(pem, len, why, sizeof(why));
	explicit_bzero(pem, len);
	free(pem);
	if (!id) {
		snprintf(err, err_len, "%s: %s", path, why);
	}
	return id;
}

const uint8_t *slim_sec_identity_fingerprint(const struct slim_sec_identity *id)
{
	return id->fp;
}

bool slim_sec_identity_credentials(const struct slim_sec_identity *id,
		gnutls_certificate_credentials_t *out)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_privkey_t priv = NULL;
	gnutls_pcert_st *pcert = calloc(1, sizeof(*pcert));
	if (!pcert || gnutls_certificate_allocate_credentials(&cred) != 0) {
		goto fail;
	}
	if (gnutls_privkey_init(&priv) != 0 ||
			gnutls_privkey_import_x509(priv, id->key, GNUTLS_PRIVKEY_IMPORT_COPY) != 0 ||
			gnutls_pcert_import_rawpk_raw(pcert, &id->spki, GNUTLS_X509_FMT_DER, 0, 0) != 0) {
		goto fail;
	}
	/* on success the credential owns the key and the pcert's contents */
	if (gnutls_certificate_set_key(cred, NULL, 0, pcert, 1, priv) != 0) {
		gnutls_pcert_deinit(pcert);
		goto fail;
	}
	free(pcert);
	*out = cred;
	return true;
fail:
	if (priv) {
		gnutls_privkey_deinit(priv);
	}
	if (cred) {
		gnutls_certificate_free_credentials(cred);
	}
	free(pcert);
	return false;
}

bool slim_sec_peer_fingerprint(gnutls_session_t session, uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	unsigned n = 0;
	if (gnutls_certificate_type_get2(session, GNUTLS_CTYPE_PEERS) != GNUTLS_CRT_RAWPK) {
		return false;
	}
	const gnutls_datum_t *peers = gnutls_certificate_get_peers(session, &n);
	return peers && n == 1 &&
		gnutls_hash_fast(GNUTLS_DIG_SHA256, peers[0].data, peers[0].size, fp) == 0;
}

bool slim_sec_key_parse(const char *text, size_t len, uint8_t key[SLIM_SEC_KEY_LEN])
{
	char hex[2 * SLIM_SEC_KEY_LEN + 1];
	if (len == 2 * SLIM_SEC_KEY_LEN + 1 && text[len - 1] == '\n') {
		len--;
	}
	if (len != 2 * SLIM_SEC_KEY_LEN || memchr(text, '\0', len)) {
		return false;
	}
	memcpy(hex, text, len);
	hex[len] = '\0';
	bool ok = slim_hex_decode(key, SLIM_SEC_KEY_LEN, hex);
	explicit_bzero(hex, sizeof(hex));
	return ok;
}

bool slim_sec_key_file_load(const char *path, bool create, uint8_t key[SLIM_SEC_KEY_LEN],
		char *err, size_t err_len)
{
	size_t len;
	bool missing;
	char *text = read_secret(path, &len, &missing, err, err_len);
	if (!text && missing && create) {
		uint8_t fresh[SLIM_SEC_KEY_LEN];
		char hex[2 * SLIM_SEC_KEY_LEN + 2];
		if (!slim_sec_random(fresh, sizeof(fresh))) {
			snprintf(err, err_len, "getrandom: %s", strerror(errno));
			return false;
		}
		slim_hex_encode(hex, fresh, sizeof(fresh));
		hex[2 * SLIM_SEC_KEY_LEN] = '\n';
		bool ok = write_secret(path, hex, 2 * SLIM_SEC_KEY_LEN + 1, err, err_len);
		explicit_bzero(fresh, sizeof(fresh));
		explicit_bzero(hex, sizeof(hex));
		if (!ok) {
			return false;
		}
		/* read back: a file someone else made at the same moment wins */
		text = read_secret(path, &len, &missing, err, err_len);
	}
	if (!text) {
		return false;
	}
	bool ok = slim_sec_key_parse(text, len, key);
	explicit_bzero(text, len);
	free(text);
	if (!ok) {
		snprintf(err, err_len, "%s: not a key (64 hex digits)", path);
	}
	return ok;
}

bool slim_sec_is_hint(const uint8_t *buf, size_t len)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	return slim_reader_init(&r, &hdr, buf, len, false, 0, 0) == SLIM_OK &&
		hdr.assoc == 0 && hdr.seq == 0 && hdr.count == 1 &&
		slim_reader_next(&r, &cmd) == SLIM_OK && cmd.type == SLIM_CMD_REFUSE &&
		cmd.refuse.reason == SLIM_REFUSE_UNKNOWN;
}

size_t slim_sec_make_hint(uint8_t *buf, size_t size)
{
	struct slim_writer w;
	slim_writer_init(&w, buf, size, 0, false);
	if (!slim_put_refuse(&w, SLIM_REFUSE_UNKNOWN, "")) {
		return 0;
	}
	return slim_writer_finish(&w, 0, 0);
}

static ssize_t inbox_pull(gnutls_transport_ptr_t ptr, void *buf, size_t size)
{
	struct slim_sec_inbox *inbox = ptr;
	if (!inbox->data) {
		gnutls_transport_set_errno(inbox->tls, EAGAIN);
		return -1;
	}
	size_t n = inbox->len < size ? inbox->len : size;
	memcpy(buf, inbox->data, n);
	inbox->data = NULL;
	return (ssize_t)n;
}

static int inbox_pull_timeout(gnutls_transport_ptr_t ptr, unsigned ms)
{
	const struct slim_sec_inbox *inbox = ptr;
	return inbox->data != NULL;
}

void slim_sec_inbox_attach(struct slim_sec_inbox *inbox, gnutls_session_t tls,
		gnutls_push_func push, void *push_ptr)
{
	inbox->tls = tls;
	inbox->data = NULL;
	gnutls_transport_set_ptr2(tls, inbox, push_ptr);
	gnutls_transport_set_push_function(tls, push);
	gnutls_transport_set_pull_function(tls, inbox_pull);
	gnutls_transport_set_pull_timeout_function(tls, inbox_pull_timeout);
}
