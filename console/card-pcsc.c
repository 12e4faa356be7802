/*
 * Card readers through the PC/SC service (pcsc-lite's pcscd).
 *
 * pcsc-lite's API blocks: SCardGetStatusChange waits for a change, and
 * SCardConnect and SCardTransmit wait for the card, which a slow or
 * misbehaving card can make last seconds. Short timeouts in the console's
 * poll() loop would still stall the picture for as long as a card takes
 * to answer, and would wake the console many times a second to learn
 * nothing. So a thread does all PC/SC work, waiting with INFINITE, and
 * writes what it finds (a card event, a line for the user) into a pipe
 * that the poll() loop reads. The pipe keeps every console-side call on
 * the loop's thread; SCardCancel, which pcsc-lite provides for exactly
 * this, wakes the thread when the console quits.
 *
 * A card's token is its UID when GET DATA (FF CA 00 00 00, answered by
 * the reader's driver for contactless cards) ends in 90 00, else the
 * SHA-256 of its ATR. A card that cannot be read at all (it left, or the
 * connection failed) gives no token rather than a different one: the
 * same card must always give the same token.
 */
#define _GNU_SOURCE /* pipe2, pthread_timedjoin_np */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "card.h"
#include "slim-log.h"

#ifndef SLIM_HAVE_PCSC

struct slim_card_reader *slim_card_pcsc_create(bool wait,
		const struct slim_card_listener *listener, void *data, char *err, size_t err_len)
{
	snprintf(err, err_len, "this build has no PC/SC support (libpcsclite-dev, libsodium-dev)");
	return NULL;
}

#else

#include <pthread.h>
#include <sodium.h>
#include <time.h>
#include <winscard.h>

/* How often a missing PC/SC service is looked for again. */
#define RETRY_MS 2000
/* How long quitting waits for the thread, which a card that never answers may hold. */
#define STOP_WAIT_MS 2000
#define PNP_READER "\\\\?PnP?\\Notification"

enum msg_type {
	MSG_CARD,
	MSG_STATUS,
};

/* What the thread tells the loop; smaller than PIPE_BUF, so written whole. */
struct msg {
	uint8_t type;
	struct slim_wire_card card;
	char text[200];
};

struct slot {
	char *name;                 /* NULL: free */
	DWORD state;                /* what SCardGetStatusChange last said */
	bool tried;                 /* this card was read (or could not be) */
	uint32_t counter;           /* pcsc-lite's insertion/removal count, of `tried` */
	bool present;               /* an insertion was reported: its removal is due */
	struct slim_wire_card card; /* that insertion */
};

struct card_pcsc {
	struct slim_card_reader base;
	int event_fd[2]; /* thread -> loop */
	int stop_fd[2];  /* loop -> thread: wakes a wait for the service */
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock; /* guards ctx, have_ctx and stopping */
	SCARDCONTEXT ctx;
	bool have_ctx;
	bool stopping;

	/* the thread's own */
	struct slot slots[SLIM_CARD_MAX_READERS];
	DWORD pnp_state;
	bool waiting_said; /* "waiting for pcscd" is said once per absence */
	bool full_said;    /* "too many readers" once per listing */
};

static bool stopping(struct card_pcsc *p)
{
	pthread_mutex_lock(&p->lock);
	bool s = p->stopping;
	pthread_mutex_unlock(&p->lock);
	return s;
}

/* Hands a message to the loop; only quitting makes one get lost. */
static void post(struct card_pcsc *p, const struct msg *m)
{
	while (write(p->event_fd[1], m, sizeof(*m)) < 0) {
		if (errno == EINTR) {
			continue;
		}
		if (errno != EAGAIN) {
			return;
		}
		/* The loop is behind: wait for room, or for the end. */
		struct pollfd fds[2] = {
			{ .fd = p->event_fd[1], .events = POLLOUT },
			{ .fd = p->stop_fd[0], .events = POLLIN },
		};
		if (poll(fds, 2, -1) < 0 && errno != EINTR) {
			return;
		}
		if (fds[1].revents) {
			return;
		}
	}
}

static void post_card(struct card_pcsc *p, const struct slim_wire_card *card)
{
	struct msg m = { .type = MSG_CARD, .card = *card };
	post(p, &m);
}

static void post_status(struct card_pcsc *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void post_status(struct card_pcsc *p, const char *fmt, ...)
{
	struct msg m = { .type = MSG_STATUS };
	va_list args;
	va_start(args, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, args);
	va_end(args);
	post(p, &m);
}

/* pcsc-lite's text for an error, without the full stop it ends with. */
static const char *why(LONG rv, char *buf, size_t len)
{
	snprintf(buf, len, "%s", pcsc_stringify_error(rv));
	size_t n = strlen(buf);
	if (n > 0 && buf[n - 1] == '.') {
		buf[n - 1] = '\0';
	}
	return buf;
}

/* Sleeps `ms`; false if the console is quitting. */
static bool wait_retry(struct card_pcsc *p, int ms)
{
	struct pollfd pfd = { .fd = p->stop_fd[0], .events = POLLIN };
	int n;
	while ((n = poll(&pfd, 1, ms)) < 0 && errno == EINTR) {
	}
	return n == 0 && !stopping(p);
}

/* Reports the removal of the card on `slot`, if one was reported inserted. */
static void slot_remove_card(struct card_pcsc *p, struct slot *slot)
{
	if (slot->present) {
		slot->present = false;
		slot->card.event = SLIM_CARD_REMOVED;
		post_card(p, &slot->card);
	}
}

static void slot_free(struct card_pcsc *p, struct slot *slot, bool report)
{
	if (report) {
		slot_remove_card(p, slot);
	}
	free(slot->name);
	*slot = (struct slot){ 0 };
}

/*
 * Reads the token of the card in `slot`'s reader; `atr` from the reader's
 * state. False if the card gave none (it is then left alone until it is
 * taken off: trying again would only fail again).
 */
static bool read_token(struct card_pcsc *p, struct slot *slot, const uint8_t *atr,
		size_t atr_len, struct slim_wire_card *card)
{
	char buf[128];
	SCARDHANDLE h;
	DWORD proto;
	LONG rv = SCardConnect(p->ctx, slot->name, SCARD_SHARE_SHARED,
		SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1, &h, &proto);
	if (rv != SCARD_S_SUCCESS) {
		post_status(p, "card reader %u: cannot connect to the card: %s",
			(unsigned)(slot - p->slots), why(rv, buf, sizeof(buf)));
		return false;
	}
	static const uint8_t get_uid[] = { 0xff, 0xca, 0x00, 0x00, 0x00 };
	uint8_t resp[258];
	DWORD resp_len = sizeof(resp);
	rv = SCardTransmit(h, proto == SCARD_PROTOCOL_T0 ? SCARD_PCI_T0 : SCARD_PCI_T1,
		get_uid, sizeof(get_uid), NULL, resp, &resp_len);
	SCardDisconnect(h, SCARD_LEAVE_CARD);
	if (rv != SCARD_S_SUCCESS || resp_len < 2) {
		/* no answer at all: no token, rather than one the card would not give next time */
		post_status(p, "card reader %u: the card did not answer: %s",
			(unsigned)(slot - p->slots),
			rv != SCARD_S_SUCCESS ? why(rv, buf, sizeof(buf)) : "short response");
		return false;
	}
	*card = (struct slim_wire_card){
		.event = SLIM_CARD_INSERTED,
		.reader = (uint8_t)(slot - p->slots),
	};
	size_t uid_len = resp_len - 2;
	if (resp[resp_len - 2] == 0x90 && resp[resp_len - 1] == 0x00 &&
			uid_len >= 1 && uid_len <= SLIM_CARD_TOKEN_MAX) {
		card->kind = SLIM_CARD_UID;
		card->len = (uint8_t)uid_len;
		memcpy(card->token, resp, uid_len);
		return true;
	}
	/* The card said no: it has no UID to give, and its ATR is what is left. */
	if (atr_len == 0) {
		post_status(p, "card reader %u: the card has neither a UID nor an ATR",
			(unsigned)(slot - p->slots));
		return false;
	}
	_Static_assert(crypto_hash_sha256_BYTES == SLIM_CARD_TOKEN_MAX, "SHA-256 token");
	crypto_hash_sha256(card->token, atr, atr_len);
	card->kind = SLIM_CARD_ATR_HASH;
	card->len = crypto_hash_sha256_BYTES;
	return true;
}

/* Follows one reader's new state: a card taken off, put on, or swapped. */
static void slot_update(struct card_pcsc *p, struct slot *slot, const SCARD_READERSTATE *rs)
{
	DWORD ev = rs->dwEventState;
	slot->state = ev & ~(DWORD)SCARD_STATE_CHANGED;
	bool there = ev & SCARD_STATE_PRESENT;
	/* The count changes with every insertion and removal, so a quick swap shows too. */
	uint32_t counter = (uint32_t)(ev >> 16);
	bool new_card = there && (!slot->tried || counter != slot->counter);
	if (slot->present && (!there || new_card)) {
		slot_remove_card(p, slot);
	}
	if (!there) {
		slot->tried = false;
	}
	if (new_card) {
		/*
		 * Marked before reading: connecting changes the reader's state
		 * (in use), which must not make the same card read again.
		 */
		slot->tried = true;
		slot->counter = counter;
		struct slim_wire_card card;
		if (read_token(p, slot, rs->rgbAtr, rs->cbAtr, &card)) {
			slot->present = true;
			slot->card = card;
			post_card(p, &card);
		}
	}
}

static bool in_list(const char *list, const char *name)
{
	for (const char *r = list; r && *r; r += strlen(r) + 1) {
		if (strcmp(r, name) == 0) {
			return true;
		}
	}
	return false;
}

/* Matches the slots to the readers pcscd has now; false if the service is gone. */
static bool update_readers(struct card_pcsc *p, LONG *rv_out)
{
	LPSTR list = NULL;
	DWORD len = SCARD_AUTOALLOCATE;
	LONG rv = SCardListReaders(p->ctx, NULL, (LPSTR)&list, &len);
	if (rv == SCARD_E_NO_READERS_AVAILABLE) {
		list = NULL;
	} else if (rv != SCARD_S_SUCCESS) {
		*rv_out = rv;
		return false;
	}
	for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
		struct slot *slot = &p->slots[i];
		if (slot->name && !in_list(list, slot->name)) {
			post_status(p, "card reader %zu gone: %s", i, slot->name);
			slot_free(p, slot, true);
		}
	}
	bool full = false;
	for (const char *r = list; r && *r; r += strlen(r) + 1) {
		struct slot *free_slot = NULL;
		bool known = false;
		for (size_t i = 0; i < SLIM_CARD_MAX_READERS && !known; i++) {
			known = p->slots[i].name && strcmp(p->slots[i].name, r) == 0;
			if (!p->slots[i].name && !free_slot) {
				free_slot = &p->slots[i];
			}
		}
		if (known) {
			continue;
		}
		if (!free_slot || !(free_slot->name = strdup(r))) {
			if (!p->full_said) {
				post_status(p, "card reader %s not watched: at most %d readers",
					r, SLIM_CARD_MAX_READERS);
			}
			full = true;
			continue;
		}
		/* UNAWARE: the first status call reports the card already in it */
		free_slot->state = SCARD_STATE_UNAWARE;
		post_status(p, "card reader %zu: %s", (size_t)(free_slot - p->slots), r);
	}
	p->full_said = full;
	if (list) {
		SCardFreeMemory(p->ctx, list);
	}
	return true;
}

/* Watches the readers until the service goes away (its error) or the console quits. */
static LONG watch_readers(struct card_pcsc *p)
{
	LONG rv = SCARD_S_SUCCESS;
	bool relist = true;
	p->pnp_state = SCARD_STATE_UNAWARE;
	while (!stopping(p)) {
		if (relist && !update_readers(p, &rv)) {
			return rv;
		}
		relist = false;
		SCARD_READERSTATE rs[SLIM_CARD_MAX_READERS + 1];
		struct slot *of[SLIM_CARD_MAX_READERS];
		DWORD n = 0;
		for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
			if (p->slots[i].name) {
				of[n] = &p->slots[i];
				rs[n++] = (SCARD_READERSTATE){
					.szReader = p->slots[i].name,
					.dwCurrentState = p->slots[i].state,
				};
			}
		}
		/* readers plugged in or out wake this pseudo-reader */
		rs[n++] = (SCARD_READERSTATE){ .szReader = PNP_READER,
			.dwCurrentState = p->pnp_state };
		rv = SCardGetStatusChange(p->ctx, INFINITE, rs, n);
		if (rv == SCARD_E_CANCELLED || rv == SCARD_E_TIMEOUT) {
			continue; /* the loop's test says whether to go on */
		}
		if (rv == SCARD_E_UNKNOWN_READER) {
			relist = true; /* one went between the listing and the call */
			continue;
		}
		if (rv != SCARD_S_SUCCESS) {
			return rv;
		}
		for (DWORD i = 0; i + 1 < n; i++) {
			if (rs[i].dwEventState & (SCARD_STATE_UNKNOWN | SCARD_STATE_IGNORE)) {
				relist = true;
			} else if (rs[i].dwEventState & SCARD_STATE_CHANGED) {
				slot_update(p, of[i], &rs[i]);
			}
		}
		if (rs[n - 1].dwEventState & SCARD_STATE_CHANGED) {
			relist = true;
		}
		p->pnp_state = rs[n - 1].dwEventState & ~(DWORD)SCARD_STATE_CHANGED;
	}
	return SCARD_S_SUCCESS;
}

static bool establish(struct card_pcsc *p, LONG *rv)
{
	SCARDCONTEXT ctx;
	*rv = SCardEstablishContext(SCARD_SCOPE_SYSTEM, NULL, NULL, &ctx);
	if (*rv != SCARD_S_SUCCESS) {
		return false;
	}
	pthread_mutex_lock(&p->lock);
	p->ctx = ctx;
	p->have_ctx = true;
	pthread_mutex_unlock(&p->lock);
	return true;
}

static void release(struct card_pcsc *p)
{
	/* under the lock, so that the loop never cancels a context being let go */
	pthread_mutex_lock(&p->lock);
	if (p->have_ctx) {
		SCardReleaseContext(p->ctx);
		p->have_ctx = false;
	}
	pthread_mutex_unlock(&p->lock);
}

static void *watch_thread(void *data)
{
	char buf[128];
	struct card_pcsc *p = data;
	while (!stopping(p)) {
		LONG rv = SCARD_S_SUCCESS;
		if (!p->have_ctx && !establish(p, &rv)) {
			if (!p->waiting_said) {
				p->waiting_said = true;
				post_status(p, "no PC/SC service (pcscd): %s; card reader waiting for it",
					why(rv, buf, sizeof(buf)));
			}
			wait_retry(p, RETRY_MS);
			continue;
		}
		if (p->waiting_said) {
			p->waiting_said = false;
			post_status(p, "PC/SC service (pcscd) found: card reader on");
		}
		rv = watch_readers(p);
		bool quitting = stopping(p);
		/*
		 * Without the service nobody can tell whether a card is still
		 * there: it counts as removed, and comes back with the service.
		 */
		for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
			slot_free(p, &p->slots[i], !quitting);
		}
		release(p);
		if (!quitting) {
			p->waiting_said = true;
			post_status(p, "PC/SC service (pcscd) lost: %s; card reader waiting for it",
				why(rv, buf, sizeof(buf)));
			wait_retry(p, RETRY_MS);
		}
	}
	release(p);
	return NULL;
}

static struct card_pcsc *card_pcsc(struct slim_card_reader *reader)
{
	return (struct card_pcsc *)reader;
}

static void close_pipe(int fd[2])
{
	for (int i = 0; i < 2; i++) {
		if (fd[i] >= 0) {
			close(fd[i]);
		}
	}
}

/* Asks the thread to end and waits for it; false if it would not. */
static bool stop_thread(struct card_pcsc *p)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_mutex_unlock(&p->lock);
	if (write(p->stop_fd[1], "x", 1) < 0) {
		/* the pipe is full of the same request already */
	}
	/*
	 * A cancel that comes before the thread is inside SCardGetStatusChange
	 * does nothing, so it is repeated until the thread is gone.
	 */
	for (int waited = 0; waited < STOP_WAIT_MS; waited += 50) {
		pthread_mutex_lock(&p->lock);
		if (p->have_ctx) {
			SCardCancel(p->ctx);
		}
		pthread_mutex_unlock(&p->lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(p->thread, NULL, &ts) == 0) {
			return true;
		}
	}
	return false;
}

static void pcsc_destroy(struct slim_card_reader *reader)
{
	struct card_pcsc *p = card_pcsc(reader);
	if (p->thread_started && !stop_thread(p)) {
		/*
		 * A card that never answers holds the thread in pcsc-lite. The
		 * console is quitting: the thread and what it uses are left to
		 * the end of the process rather than freed under it.
		 */
		slim_log(SLIM_LOG_ERROR, "card reader: PC/SC is stuck; not waiting for it");
		pthread_detach(p->thread);
		return;
	}
	if (p->have_ctx) {
		SCardReleaseContext(p->ctx); /* never handed to a thread */
	}
	for (size_t i = 0; i < SLIM_CARD_MAX_READERS; i++) {
		free(p->slots[i].name);
	}
	close_pipe(p->event_fd);
	close_pipe(p->stop_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int pcsc_fd(const struct slim_card_reader *reader)
{
	return ((const struct card_pcsc *)reader)->event_fd[0];
}

static void pcsc_dispatch(struct slim_card_reader *reader)
{
	struct card_pcsc *p = card_pcsc(reader);
	struct msg m;
	/* whole messages only: each was written in one piece of at most PIPE_BUF */
	while (read(p->event_fd[0], &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		if (m.type == MSG_CARD) {
			slim_card_reader_emit(reader, &m.card);
		} else {
			m.text[sizeof(m.text) - 1] = '\0';
			slim_card_reader_status(reader, "%s", m.text);
		}
	}
}

static const struct slim_card_reader_impl pcsc_impl = {
	.destroy = pcsc_destroy,
	.fd = pcsc_fd,
	.dispatch = pcsc_dispatch,
};

struct slim_card_reader *slim_card_pcsc_create(bool wait,
		const struct slim_card_listener *listener, void *data, char *err, size_t err_len)
{
	_Static_assert(sizeof(struct msg) <= PIPE_BUF, "a message is written whole");
	if (sodium_init() < 0) {
		snprintf(err, err_len, "libsodium does not initialise");
		return NULL;
	}
	struct card_pcsc *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	p->base = (struct slim_card_reader){ .impl = &pcsc_impl, .listener = listener,
		.data = data };
	p->event_fd[0] = p->event_fd[1] = p->stop_fd[0] = p->stop_fd[1] = -1;
	pthread_mutex_init(&p->lock, NULL);
	if (pipe2(p->event_fd, O_CLOEXEC | O_NONBLOCK) != 0 ||
			pipe2(p->stop_fd, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, err_len, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* Without `wait`, a service that is not there means no card reader. */
	char buf[128];
	LONG rv;
	if (!establish(p, &rv) && !wait) {
		snprintf(err, err_len, "no PC/SC service (pcscd): %s", why(rv, buf, sizeof(buf)));
		goto fail;
	}
	int e = pthread_create(&p->thread, NULL, watch_thread, p);
	if (e != 0) {
		snprintf(err, err_len, "cannot start the card reader thread: %s", strerror(e));
		goto fail;
	}
	p->thread_started = true;
	return &p->base;
fail:
	pcsc_destroy(&p->base);
	return NULL;
}

#endif
