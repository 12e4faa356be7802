/*
 * The development card reader's line format ("insert HEX", "remove"),
 * shared by --card-reader=stdin and --control's "card" command, and the
 * stdin reader itself fed through a pipe.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../console/card.h"
#include "test-util.h"

static struct slim_wire_card no_card(void)
{
	return (struct slim_wire_card){ .event = SLIM_CARD_REMOVED };
}

static void test_insert_remove(void **state)
{
	struct slim_wire_card card = no_card();
	const char *err = "unset";
	assert_true(slim_card_parse("insert", "04A1b2C3", &card, &err));
	assert_int_equal(card.event, SLIM_CARD_INSERTED);
	assert_int_equal(card.kind, SLIM_CARD_UID);
	assert_int_equal(card.reader, 0);
	assert_int_equal(card.len, 4);
	static const uint8_t uid[SLIM_CARD_TOKEN_MAX] = { 0x04, 0xa1, 0xb2, 0xc3 };
	assert_memory_equal(card.token, uid, sizeof(uid)); /* zero-padded */

	/* one card a reader: a second insertion changes nothing */
	struct slim_wire_card before = card;
	assert_false(slim_card_parse("insert", "ff", &card, &err));
	assert_non_null(err);
	assert_memory_equal(&card, &before, sizeof(card));

	/* the removal repeats the token */
	assert_true(slim_card_parse("remove", NULL, &card, &err));
	assert_int_equal(card.event, SLIM_CARD_REMOVED);
	assert_int_equal(card.kind, SLIM_CARD_UID);
	assert_int_equal(card.len, 4);
	assert_memory_equal(card.token, uid, sizeof(uid));
	assert_false(slim_card_parse("remove", NULL, &card, &err));
	assert_false(slim_card_parse("remove", "04", &card, &err));

	/* and the reader takes a card again, the largest token too */
	char hex[2 * SLIM_CARD_TOKEN_MAX + 1];
	for (size_t i = 0; i < 2 * SLIM_CARD_TOKEN_MAX; i++) {
		hex[i] = "0123456789abcdef"[i % 16];
	}
	hex[2 * SLIM_CARD_TOKEN_MAX] = '\0';
	assert_true(slim_card_parse("insert", hex, &card, &err));
	assert_int_equal(card.len, SLIM_CARD_TOKEN_MAX);
	assert_int_equal(card.token[0], 0x01);
	assert_int_equal(card.token[SLIM_CARD_TOKEN_MAX - 1], 0xef);
}

static void test_bad_tokens(void **state)
{
	static const char *bad[] = {
		"", "0", "123", "0g", "g0", "04 a1", "0x04", "-1",
		/* 33 bytes */
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct slim_wire_card card = no_card();
		const char *err = NULL;
		assert_false(slim_card_parse("insert", bad[i], &card, &err));
		assert_non_null(err);
		assert_int_equal(card.event, SLIM_CARD_REMOVED);
		assert_int_equal(card.len, 0);
	}
	struct slim_wire_card card = no_card();
	const char *err = NULL;
	assert_false(slim_card_parse("insert", NULL, &card, &err));
	assert_false(slim_card_parse("eject", NULL, &card, &err));
	assert_non_null(err);
}

static void test_lines(void **state)
{
	struct slim_wire_card card = no_card();
	const char *err;
	/* blanks and comments are no event and no error */
	static const char *nothing[] = { "", "   ", "\t\r", "# insert 01", "  #" };
	for (size_t i = 0; i < sizeof(nothing) / sizeof(nothing[0]); i++) {
		err = "unset";
		assert_false(slim_card_parse_line(nothing[i], &card, &err));
		assert_null(err);
	}
	static const char *wrong[] = { "insert", "insert 01 02", "remove now", "eject",
		"insert zz", "card insert 01" };
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		err = NULL;
		assert_false(slim_card_parse_line(wrong[i], &card, &err));
		assert_non_null(err);
		assert_int_equal(card.event, SLIM_CARD_REMOVED);
	}
	assert_true(slim_card_parse_line("  insert\tdeadBEEF \r", &card, &err));
	assert_int_equal(card.event, SLIM_CARD_INSERTED);
	assert_int_equal(card.len, 4);
	assert_int_equal(card.token[3], 0xef);
	assert_true(slim_card_parse_line("remove", &card, &err));
	assert_int_equal(card.event, SLIM_CARD_REMOVED);
	assert_int_equal(card.token[0], 0xde);

	char longline[1024];
	memset(longline, 'a', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	err = NULL;
	assert_false(slim_card_parse_line(longline, &card, &err));
	assert_non_null(err);
}

struct sink {
	struct slim_wire_card cards[8];
	size_t n_cards;
	size_t n_status;
};

static void on_card(void *data, const struct slim_wire_card *card)
{
	struct sink *s = data;
	assert_true(s->n_cards < sizeof(s->cards) / sizeof(s->cards[0]));
	s->cards[s->n_cards++] = *card;
}

static void on_status(void *data, const char *text)
{
	struct sink *s = data;
	assert_non_null(strstr(text, "card reader (stdin)"));
	s->n_status++;
}

static const struct slim_card_listener listener = { .card = on_card, .status = on_status };

static void feed(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

static void test_stdin_reader(void **state)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	/* as in the poll() loop: a dispatch with nothing to read must not block */
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	struct sink sink = { 0 };
	struct slim_card_reader *r = slim_card_stdin_create(p[0], &listener, &sink);
	assert_non_null(r);
	assert_int_equal(slim_card_reader_fd(r), p[0]);

	/* a line split over two reads counts once it is whole */
	feed(p[1], "# a script\ninsert 04a1");
	slim_card_reader_dispatch(r);
	assert_int_equal(sink.n_cards, 0);
	feed(p[1], "b2\nbogus\nremove\nremove\n");
	slim_card_reader_dispatch(r);
	assert_int_equal(sink.n_cards, 2);
	assert_int_equal(sink.cards[0].event, SLIM_CARD_INSERTED);
	assert_int_equal(sink.cards[0].len, 3);
	assert_int_equal(sink.cards[0].token[2], 0xb2);
	assert_int_equal(sink.cards[1].event, SLIM_CARD_REMOVED);
	assert_memory_equal(sink.cards[1].token, sink.cards[0].token, SLIM_CARD_TOKEN_MAX);
	assert_int_equal(sink.n_status, 2); /* "bogus", and the second removal */

	/* an overlong line is reported once and skipped whole */
	char junk[600];
	memset(junk, 'x', sizeof(junk));
	assert_int_equal(write(p[1], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	feed(p[1], "\n");
	for (int i = 0; i < 4; i++) {
		slim_card_reader_dispatch(r);
	}
	assert_int_equal(sink.n_status, 3);
	assert_int_equal(sink.n_cards, 2);

	/* the last line needs no newline; the end of input ends the reader only */
	feed(p[1], "insert 01");
	close(p[1]);
	slim_card_reader_dispatch(r);
	slim_card_reader_dispatch(r);
	assert_int_equal(sink.n_cards, 3);
	assert_int_equal(sink.cards[2].token[0], 0x01);
	assert_int_equal(slim_card_reader_fd(r), -1);

	slim_card_reader_destroy(r);
	slim_card_reader_destroy(NULL);
	close(p[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_remove),
		cmocka_unit_test(test_bad_tokens),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_stdin_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
