#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "assoc.h"
#include "manager.h"
#include "slim-clock.h"
#include "slim-log.h"

/* The manager's datagrams are small: a REDIRECT or a REFUSE. */
#define MANAGER_DGRAM_MAX 512
/*
 * Nothing acknowledges CARD, so each CARD datagram goes out this many
 * times more, the same bytes (its seq too, which makes the copies
 * repeats the manager ignores), CARD_REPEAT_MS apart: a tap is lost only
 * if every copy is.
 */
#define CARD_REPEATS 2
#define CARD_REPEAT_MS 100
/*
 * A new association that no manager answered in this long goes to the
 * next manager of --manager's list (HELLO went at 0, 250, 750 and 1750 ms);
 * one whose port is unreachable (ECONNREFUSED) goes at once.
 */
#define FAILOVER_US 2500000ull
/*
 * Liveness. The manager sends an attached console something at least
 * every second (its heartbeat, session-manager.md §1), and the picture of
 * a session on its server counts too. After PROBE_US of silence the
 * console asks (a PING every PROBE_EVERY_US, each answered at once), after
 * SAY_US it says so on its screen, and after GIVE_UP_US it goes to the
 * next manager of its list (alone, a new association with the same one):
 * a lost datagram or two costs a probe, never a failover.
 */
#define PROBE_US 1300000ull
#define PROBE_EVERY_US 300000ull
#define SAY_US 2000000ull
#define GIVE_UP_US 2500000ull
/*
 * The heartbeat says the manager lives, so the PING only tells the manager
 * that the console does, within its console_timeout (30 s by default):
 * rarer than the display association's, so that an idle console sends
 * under 100 bytes in 5 s.
 */
#define PING_MS 15000
/* How long HELLO names a manager the console could not reach (then a tap may try it again). */
#define UNREACHED_US 15000000ull
#define MANAGERS_MAX 8

struct slim_console_manager {
	struct slim_assoc *assoc; /* the socket, handshake, HELLO, PING and card life cycle */
	struct slim_console_manager_config config;
	/* --manager's list, in order: the first that answers, then the next */
	char *addresses[MANAGERS_MAX];
	int n_addresses;
	int current;
	/*
	 * A MOVE: the manager of the group it named, whose key the manager
	 * we trusted vouched for. Left for the list when it does not answer.
	 */
	bool moved;
	char moved_address[64];
	uint8_t vouched[SLIM_SEC_FINGERPRINT_LEN];
	const char *address; /* the one in use: addresses[current] or moved_address */
	char peer_name[400];
	uint64_t connecting_since_us;
	uint64_t heard_us; /* the association's last datagram from the manager */
	uint64_t probe_us; /* silent: the next probe is due then (0: at once) */
	bool silence_said;
	/* the host key of the manager of this association, as the handshake proved it */
	bool has_peer_key;
	uint8_t peer_key[SLIM_SEC_FINGERPRINT_LEN];
	/* the manager it left because it did not answer, named in HELLO until then */
	bool has_unreached;
	uint8_t unreached[SLIM_SEC_FINGERPRINT_LEN];
	uint64_t unreached_until_us;
	struct slim_console_core *core;
	char id[SLIM_CONSOLE_ID_LEN + 1];
	const struct slim_console_manager_listener *listener;
	void *data;

	uint32_t up_seq;
	/* the latest CARD datagram, while copies of it are still to go */
	uint8_t card_dgram[128];
	size_t card_len;
	int card_repeats;
	uint64_t card_next_us;

	struct slim_ratelimit log_limit;
};

/* "HOST[:PORT]" with the default port made explicit, as slim_udp_connect wants it. */
char *slim_console_manager_address_of(const char *manager)
{
	char buf[320];
	const char *last = strrchr(manager, ':');
	bool bracketed = manager[0] == '[';
	bool has_port = bracketed ? (last && last > strchr(manager, ']')) :
		(last && strchr(manager, ':') == last);
	if (has_port) {
		snprintf(buf, sizeof(buf), "%s", manager);
	} else if (!bracketed && last) {
		/* a bare IPv6 address */
		snprintf(buf, sizeof(buf), "[%s]:%d", manager, SLIM_SESSIOND_PORT);
	} else {
		snprintf(buf, sizeof(buf), "%s:%d", manager, SLIM_SESSIOND_PORT);
	}
	return strdup(buf);
}

/* Numbers and sends one upstream datagram of the control association; its length. */
static size_t send_dgram(struct slim_console_manager *m, struct slim_writer *w)
{
	if (++m->up_seq == 0) {
		m->up_seq = 1;
	}
	size_t len = slim_writer_finish(w, m->up_seq, slim_now_us());
	slim_assoc_send(m->assoc, w->buf, len);
	return len;
}

static void assoc_connecting(void *data, const char *why)
{
	struct slim_console_manager *m = data;
	m->up_seq = 0;
	m->connecting_since_us = slim_now_us();
	m->has_peer_key = false;
	m->silence_said = false;
	m->probe_us = 0;
	/* the new association is told every card still on a reader once it answers */
	m->card_repeats = 0;
	if (m->listener->connecting) {
		m->listener->connecting(m->data, why);
	}
}

static void assoc_send_hello(void *data, uint32_t id)
{
	struct slim_console_manager *m = data;
	uint8_t buf[128];
	struct slim_writer w;
	struct slim_wire_hello hello;
	slim_console_core_fill_hello(m->core, m->id, &hello);
	if (m->moved) {
		/* placed already: the card on the reader may be what sent us here */
		hello.caps |= SLIM_CAP_MOVED;
	}
	/* no manager sends us back where we could not go */
	if (m->has_unreached && slim_now_us() >= m->unreached_until_us) {
		m->has_unreached = false;
	}
	slim_writer_init(&w, buf, sizeof(buf), id, true);
	slim_put_hello_ext(&w, &hello, &(struct slim_hello_parts){
		.unreached = m->has_unreached ? m->unreached : NULL });
	send_dgram(m, &w);
}

static void assoc_send_ping(void *data)
{
	struct slim_console_manager *m = data;
	uint8_t buf[64];
	struct slim_writer w;
	slim_writer_init(&w, buf, sizeof(buf), slim_assoc_id(m->assoc), true);
	slim_put_ping(&w);
	send_dgram(m, &w);
}

static void assoc_attached(void *data, uint32_t id)
{
	struct slim_console_manager *m = data;
	m->heard_us = slim_now_us();
	if (m->has_unreached && m->has_peer_key &&
			memcmp(m->peer_key, m->unreached, sizeof(m->unreached)) == 0) {
		m->has_unreached = false; /* heard from it again */
	}
	if (m->listener->attached) {
		m->listener->attached(m->data, id);
	}
}

static bool assoc_send_card(void *data, const struct slim_wire_card *card)
{
	struct slim_console_manager *m = data;
	struct slim_writer w;
	slim_writer_init(&w, m->card_dgram, sizeof(m->card_dgram), slim_assoc_id(m->assoc), true);
	slim_put_card(&w, card);
	/* a newer event's copies replace an older one's: the latest state is what counts */
	m->card_len = send_dgram(m, &w);
	m->card_repeats = CARD_REPEATS;
	m->card_next_us = slim_now_us() + CARD_REPEAT_MS * 1000ull;
	/* as good as sent: a datagram lost now is like one lost on the wire */
	return true;
}

/* After a MOVE: the key the manager we trusted named, and no other. */
static const char *check_vouched(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	struct slim_console_manager *m = data;
	return memcmp(fp, m->vouched, sizeof(m->vouched)) == 0 ? NULL :
		"not the key the group's manager named for this server";
}

/* The manager's key judged by its pin (or by the MOVE that sent us), and kept if good. */
static const char *check_peer(void *data, const uint8_t fp[SLIM_SEC_FINGERPRINT_LEN])
{
	struct slim_console_manager *m = data;
	const char *why = m->moved ? check_vouched(m, fp) :
		m->config.check_server(m->config.check_data, fp);
	if (!why) {
		memcpy(m->peer_key, fp, sizeof(m->peer_key));
		m->has_peer_key = true;
	}
	return why;
}

/* The console's key, and the manager's judged by check_peer. */
static bool assoc_security(void *data, struct slim_sec_client_config *config, char *why,
		size_t why_len)
{
	struct slim_console_manager *m = data;
	config->mode = m->config.mode;
	config->mtu = m->config.mtu;
	config->identity = m->config.identity;
	config->check_server = check_peer;
	config->check_data = m;
	return true;
}

static const char *assoc_peer(void *data)
{
	struct slim_console_manager *m = data;
	snprintf(m->peer_name, sizeof(m->peer_name), "the session manager at %s", m->address);
	return m->peer_name;
}

static void log_limited(struct slim_console_manager *m, const char *what, const char *why)
{
	if (slim_ratelimit(&m->log_limit, slim_now_us())) {
		slim_log(SLIM_LOG_ERROR, "manager: %s: %s", what, why);
	}
}

/* A new association with the manager at `address` (one of the list, or a MOVE's). */
static bool switch_to(struct slim_console_manager *m, const char *address, const char *why,
		uint64_t now_us)
{
	char err[256];
	int fd = slim_udp_connect("--manager", address, m->config.source, err, sizeof(err));
	if (fd < 0) {
		log_limited(m, address, err);
		return false;
	}
	m->address = address;
	slim_assoc_set_fd(m->assoc, fd);
	slim_assoc_connect(m->assoc, why, now_us);
	return true;
}

static void handle_datagram(struct slim_console_manager *m, const uint8_t *buf, size_t len,
		uint64_t now_us);

static void assoc_datagram(void *data, const uint8_t *buf, size_t len, uint64_t now_us)
{
	handle_datagram(data, buf, len, now_us);
}

static void fail_over(struct slim_console_manager *m, const char *what, uint64_t now_us);

/* A dead server's port: a group's next manager at once, not after the 2.5 s. */
static bool assoc_refused(void *data, uint64_t now_us)
{
	struct slim_console_manager *m = data;
	if (m->n_addresses < 2 && !m->moved) {
		return false;
	}
	fail_over(m, "refuses (no session manager runs there)", now_us);
	return true;
}

static const struct slim_assoc_impl assoc_impl = {
	.connecting = assoc_connecting,
	.security = assoc_security,
	.datagram = assoc_datagram,
	.send_hello = assoc_send_hello,
	.send_ping = assoc_send_ping,
	.attached = assoc_attached,
	.send_card = assoc_send_card,
	.refused = assoc_refused,
	.peer = assoc_peer,
};

/*
 * HOST[:PORT],HOST[:PORT],...: the managers of a server group, in order,
 * written as slim_udp_connect takes them. Their number, or 0 with the
 * reason in `err`.
 */
static int parse_list(const char *manager, char *addresses[MANAGERS_MAX], char *err,
		size_t err_len)
{
	int n_addresses = 0;
	for (const char *p = manager; *p; ) {
		size_t n = strcspn(p, ",");
		char one[300];
		if (n > 0 && n < sizeof(one) && n_addresses < MANAGERS_MAX) {
			memcpy(one, p, n);
			one[n] = '\0';
			char *address = slim_console_manager_address_of(one);
			if (!address) {
				snprintf(err, err_len, "out of memory");
				goto fail;
			}
			addresses[n_addresses++] = address;
			if (!slim_udp_address_check("--manager", address, err, err_len)) {
				goto fail;
			}
		} else if (n > 0) {
			snprintf(err, err_len, "--manager: at most %d managers of up to 299 "
				"characters each", MANAGERS_MAX);
			goto fail;
		}
		p += n + (p[n] == ',');
	}
	if (n_addresses == 0) {
		snprintf(err, err_len, "--manager: no address");
	}
	return n_addresses;
fail:
	for (int i = 0; i < n_addresses; i++) {
		free(addresses[i]);
		addresses[i] = NULL;
	}
	return 0;
}

bool slim_console_manager_check(const char *manager, char *err, size_t err_len)
{
	char *addresses[MANAGERS_MAX] = { 0 };
	int n = parse_list(manager, addresses, err, err_len);
	for (int i = 0; i < n; i++) {
		free(addresses[i]);
	}
	return n > 0;
}

struct slim_console_manager *slim_console_manager_create(const char *manager,
		struct slim_console_core *core,
		const char *id, const struct slim_console_manager_config *config,
		const struct slim_console_manager_listener *listener, void *data,
		char *err, size_t err_len)
{
	struct slim_console_manager *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	m->config = *config;
	m->log_limit = (struct slim_ratelimit)SLIM_RATELIMIT_INIT(5);
	m->n_addresses = parse_list(manager, m->addresses, err, err_len);
	if (m->n_addresses <= 0) {
		slim_console_manager_destroy(m);
		return NULL;
	}
	m->address = m->addresses[0];
	int fd = slim_udp_connect("--manager", m->address, m->config.source, err, err_len);
	if (fd < 0) {
		slim_console_manager_destroy(m);
		return NULL;
	}
	m->assoc = slim_assoc_create("manager", fd, &assoc_impl, m);
	if (!m->assoc) {
		snprintf(err, err_len, "out of memory");
		slim_console_manager_destroy(m);
		return NULL;
	}
	slim_assoc_set_ping_ms(m->assoc, PING_MS, slim_now_us());
	m->core = core;
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->listener = listener;
	m->data = data;
	return m;
}

void slim_console_manager_destroy(struct slim_console_manager *m)
{
	if (!m) {
		return;
	}
	slim_assoc_destroy(m->assoc);
	for (int i = 0; i < m->n_addresses; i++) {
		free(m->addresses[i]);
	}
	free(m);
}

const char *slim_console_manager_address(const struct slim_console_manager *m)
{
	return m->address;
}

int slim_console_manager_fd(const struct slim_console_manager *m)
{
	return slim_assoc_fd(m->assoc);
}

void slim_console_manager_start(struct slim_console_manager *m)
{
	slim_assoc_connect(m->assoc, NULL, slim_now_us());
}

void slim_console_manager_send_card(struct slim_console_manager *m,
		const struct slim_wire_card *card)
{
	slim_assoc_send_card(m->assoc, card);
}

static void handle_refuse(struct slim_console_manager *m, const struct slim_cmd *cmd,
		uint64_t now_us)
{
	if (cmd->refuse.reason == SLIM_REFUSE_UNKNOWN) {
		/*
		 * The manager restarted. While CONNECTING the retries keep their
		 * backoff; otherwise HELLO again at once. The display association
		 * is not touched: the picture goes on.
		 */
		slim_assoc_restart(m->assoc, "the session manager forgot this console", now_us);
		return;
	}
	/* BUSY, PENDING, DENIED, or a reason this version does not know: wait and ask again */
	slim_assoc_busy(m->assoc, now_us);
	char text[SLIM_REFUSE_TEXT_MAX + 1];
	size_t n = cmd->refuse.len < SLIM_REFUSE_TEXT_MAX ? cmd->refuse.len : SLIM_REFUSE_TEXT_MAX;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)cmd->refuse.text[i];
		text[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	text[n] = '\0';
	if (m->listener->refused) {
		m->listener->refused(m->data, cmd->refuse.reason, text);
	} else {
		log_limited(m, m->address, text);
	}
}

static void handle_redirect(struct slim_console_manager *m, const struct slim_wire_redirect *r)
{
	struct sockaddr_storage addr = { 0 };
	socklen_t len;
	if (r->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)&addr;
		in->sin_family = AF_INET;
		in->sin_port = htons(r->port);
		memcpy(&in->sin_addr, r->addr, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&addr;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(r->port);
		memcpy(&in6->sin6_addr, r->addr, 16);
		len = sizeof(*in6);
	}
	m->listener->redirect(m->data, (struct sockaddr *)&addr, len, r->token, r->key);
}

/*
 * MOVE: the session is on another server of the group (or a new one goes
 * there): its manager, with the key ours vouched for, takes over the
 * control association; the picture stays until it redirects us.
 */
static void handle_move(struct slim_console_manager *m, const struct slim_wire_move *move,
		uint64_t now_us)
{
	char host[INET6_ADDRSTRLEN];
	inet_ntop(move->family == 4 ? AF_INET : AF_INET6, move->addr, host, sizeof(host));
	snprintf(m->moved_address, sizeof(m->moved_address), move->family == 4 ? "%s:%u" :
		"[%s]:%u", host, move->port);
	memcpy(m->vouched, move->fingerprint, sizeof(m->vouched));
	m->moved = true;
	char why[128];
	snprintf(why, sizeof(why), "moved by the session manager to %s", m->moved_address);
	if (!switch_to(m, m->moved_address, why, now_us)) {
		m->moved = false;
	}
}

/* Where fail_over goes: NULL if nowhere else (the same manager again). */
static const char *next_address(const struct slim_console_manager *m)
{
	if (m->moved) {
		return m->addresses[m->current]; /* back to the list, where we were */
	}
	return m->n_addresses > 1 ? m->addresses[(m->current + 1) % m->n_addresses] : NULL;
}

/*
 * The manager did not answer (in time, or at all; `what` it did): the next
 * one, told in HELLO which one this console cannot reach, so that it is not
 * sent back.
 */
static void fail_over(struct slim_console_manager *m, const char *what, uint64_t now_us)
{
	const uint8_t *key = m->has_peer_key ? m->peer_key : m->moved ? m->vouched : NULL;
	if (key) {
		memcpy(m->unreached, key, sizeof(m->unreached));
		m->has_unreached = true;
		m->unreached_until_us = now_us + UNREACHED_US;
	}
	char why[400];
	snprintf(why, sizeof(why), "the session manager at %s %s", m->address, what);
	const char *next = next_address(m);
	if (m->moved) {
		m->moved = false;
	} else {
		m->current = (m->current + 1) % m->n_addresses;
	}
	switch_to(m, next, why, now_us);
}

/* Heard from the manager (or from its server's picture): alive. */
static void heard(struct slim_console_manager *m, uint64_t at_us)
{
	if (at_us > m->heard_us) {
		m->heard_us = at_us;
	}
	m->probe_us = 0;
	if (m->silence_said) {
		m->silence_said = false;
		if (m->listener->answered) {
			m->listener->answered(m->data);
		}
	}
}

/* An attached association's silence: probed, said, then given up on. */
static void check_silence(struct slim_console_manager *m, uint64_t now_us)
{
	uint64_t silent = now_us > m->heard_us ? now_us - m->heard_us : 0;
	if (silent < PROBE_US) {
		return;
	}
	if (silent >= GIVE_UP_US) {
		if (m->n_addresses > 1 || m->moved) {
			fail_over(m, "does not answer", now_us);
		} else {
			char why[400];
			snprintf(why, sizeof(why), "the session manager at %s does not answer",
				m->address);
			slim_assoc_restart(m->assoc, why, now_us);
		}
		return;
	}
	if (now_us >= m->probe_us) {
		slim_assoc_ping(m->assoc);
		m->probe_us = now_us + PROBE_EVERY_US;
	}
	if (silent >= SAY_US && !m->silence_said) {
		m->silence_said = true;
		if (m->listener->silent) {
			m->listener->silent(m->data, m->address, next_address(m));
		}
	}
}

void slim_console_manager_heard(struct slim_console_manager *m, uint64_t at_us)
{
	if (slim_assoc_state(m->assoc) == SLIM_ASSOC_ATTACHED) {
		heard(m, at_us);
	}
}

static void handle_datagram(struct slim_console_manager *m, const uint8_t *buf, size_t len,
		uint64_t now_us)
{
	struct slim_reader r;
	struct slim_dgram hdr;
	struct slim_cmd cmd;
	enum slim_error err = len > MANAGER_DGRAM_MAX ? SLIM_ERR_LENGTH :
		slim_reader_init(&r, &hdr, buf, len, false, 0, 0);
	if (err != SLIM_OK || hdr.assoc != slim_assoc_id(m->assoc)) {
		/* the connection hears the manager only: an old association, or a bad datagram */
		log_limited(m, "dropped a datagram", err != SLIM_OK ? slim_error_str(err) :
			"not this association");
		return;
	}
	if (hdr.count == 1 && slim_reader_next(&r, &cmd) == SLIM_OK &&
			cmd.type == SLIM_CMD_REFUSE) {
		handle_refuse(m, &cmd, now_us);
		return;
	}
	/* anything else in our association says the manager heard the HELLO */
	slim_assoc_heard(m->assoc, now_us);
	heard(m, now_us);
	slim_reader_init(&r, &hdr, buf, len, false, 0, 0);
	/* REDIRECT and MOVE travel alone, like REFUSE */
	if (hdr.count == 1 && slim_reader_next(&r, &cmd) == SLIM_OK) {
		if (cmd.type == SLIM_CMD_REDIRECT) {
			handle_redirect(m, &cmd.redirect);
		} else if (cmd.type == SLIM_CMD_MOVE) {
			handle_move(m, &cmd.move, now_us);
		}
	}
}

void slim_console_manager_dispatch(struct slim_console_manager *m)
{
	slim_assoc_dispatch(m->assoc);
}

void slim_console_manager_tick(struct slim_console_manager *m, uint64_t now_us)
{
	slim_assoc_tick(m->assoc, now_us);
	if ((m->n_addresses > 1 || m->moved) &&
			slim_assoc_state(m->assoc) == SLIM_ASSOC_CONNECTING &&
			now_us - m->connecting_since_us >= FAILOVER_US) {
		fail_over(m, "does not answer", now_us);
	} else if (slim_assoc_state(m->assoc) == SLIM_ASSOC_ATTACHED) {
		check_silence(m, now_us);
	}
	if (m->card_repeats > 0 && now_us >= m->card_next_us) {
		slim_assoc_send(m->assoc, m->card_dgram, m->card_len);
		m->card_repeats--;
		m->card_next_us = now_us + CARD_REPEAT_MS * 1000ull;
	}
}

int slim_console_manager_timeout_ms(const struct slim_console_manager *m, uint64_t now_us)
{
	int ms = slim_assoc_timeout_ms(m->assoc, now_us);
	if ((m->n_addresses > 1 || m->moved) &&
			slim_assoc_state(m->assoc) == SLIM_ASSOC_CONNECTING) {
		uint64_t at = m->connecting_since_us + FAILOVER_US;
		int fail_ms = now_us >= at ? 0 : (int)((at - now_us + 999) / 1000);
		ms = ms < 0 || fail_ms < ms ? fail_ms : ms;
	}
	if (m->card_repeats > 0) {
		int card_ms = now_us >= m->card_next_us ? 0 :
			(int)((m->card_next_us - now_us + 999) / 1000);
		ms = ms < 0 || card_ms < ms ? card_ms : ms;
	}
	if (slim_assoc_state(m->assoc) == SLIM_ASSOC_ATTACHED) {
		/* the next step of the silence: a probe, saying so, giving up */
		uint64_t at = m->heard_us + (m->silence_said ? GIVE_UP_US : SAY_US);
		if (now_us < m->heard_us + PROBE_US) {
			at = m->heard_us + PROBE_US;
		} else if (m->probe_us < at) {
			at = m->probe_us;
		}
		int silence_ms = now_us >= at ? 0 : (int)((at - now_us + 999) / 1000);
		ms = ms < 0 || silence_ms < ms ? silence_ms : ms;
	}
	return ms;
}
