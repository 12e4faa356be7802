/*
 * The window backend's input without a window: SDL scancodes (USB HID
 * keyboard usages) to evdev codes, and pointer positions through the
 * letterbox back to console pixels.
 */
#include <SDL_scancode.h>
#include <linux/input-event-codes.h>
#include "test-util.h"
#include "window-input.h"

static void test_keymap(void **state)
{
	static const struct {
		int scancode;
		uint16_t evdev;
	} spot[] = {
		{ SDL_SCANCODE_A, KEY_A }, { SDL_SCANCODE_Q, KEY_Q }, { SDL_SCANCODE_Z, KEY_Z },
		{ SDL_SCANCODE_M, KEY_M }, { SDL_SCANCODE_1, KEY_1 }, { SDL_SCANCODE_0, KEY_0 },
		{ SDL_SCANCODE_F1, KEY_F1 }, { SDL_SCANCODE_F10, KEY_F10 },
		{ SDL_SCANCODE_F11, KEY_F11 }, { SDL_SCANCODE_F12, KEY_F12 },
		{ SDL_SCANCODE_RETURN, KEY_ENTER }, { SDL_SCANCODE_ESCAPE, KEY_ESC },
		{ SDL_SCANCODE_BACKSPACE, KEY_BACKSPACE }, { SDL_SCANCODE_TAB, KEY_TAB },
		{ SDL_SCANCODE_SPACE, KEY_SPACE }, { SDL_SCANCODE_MINUS, KEY_MINUS },
		{ SDL_SCANCODE_PERIOD, KEY_DOT }, { SDL_SCANCODE_SLASH, KEY_SLASH },
		{ SDL_SCANCODE_GRAVE, KEY_GRAVE }, { SDL_SCANCODE_APOSTROPHE, KEY_APOSTROPHE },
		{ SDL_SCANCODE_LEFTBRACKET, KEY_LEFTBRACE }, { SDL_SCANCODE_NONUSBACKSLASH, KEY_102ND },
		{ SDL_SCANCODE_LCTRL, KEY_LEFTCTRL }, { SDL_SCANCODE_RSHIFT, KEY_RIGHTSHIFT },
		{ SDL_SCANCODE_LALT, KEY_LEFTALT }, { SDL_SCANCODE_RALT, KEY_RIGHTALT },
		{ SDL_SCANCODE_LGUI, KEY_LEFTMETA }, { SDL_SCANCODE_UP, KEY_UP },
		{ SDL_SCANCODE_LEFT, KEY_LEFT }, { SDL_SCANCODE_PAGEDOWN, KEY_PAGEDOWN },
		{ SDL_SCANCODE_DELETE, KEY_DELETE }, { SDL_SCANCODE_INSERT, KEY_INSERT },
		{ SDL_SCANCODE_HOME, KEY_HOME }, { SDL_SCANCODE_KP_ENTER, KEY_KPENTER },
		{ SDL_SCANCODE_KP_7, KEY_KP7 },
		/* HID usage numbers, as SDL documents its scancodes to be */
		{ 0x04, 30 }, { 0x28, 28 }, { 0x3a, 59 }, { 0xe1, 42 },
	};
	for (size_t i = 0; i < sizeof(spot) / sizeof(spot[0]); i++) {
		assert_int_equal(slim_evdev_from_sdl_scancode(spot[i].scancode), spot[i].evdev);
	}
	/* the harness's own US table (tests/integration/slimtest.py) agrees */
	assert_int_equal(slim_evdev_from_sdl_scancode(SDL_SCANCODE_A), 30);
	assert_int_equal(slim_evdev_from_sdl_scancode(SDL_SCANCODE_LSHIFT), 42);

	/* nothing for what the table lacks, or what is no scancode */
	assert_int_equal(slim_evdev_from_sdl_scancode(SDL_SCANCODE_UNKNOWN), KEY_RESERVED);
	assert_int_equal(slim_evdev_from_sdl_scancode(-1), KEY_RESERVED);
	assert_int_equal(slim_evdev_from_sdl_scancode(SDL_NUM_SCANCODES), KEY_RESERVED);

	/* every letter and digit is there, and no two keys share a code among them */
	uint16_t seen[KEY_MAX + 1] = { 0 };
	for (int sc = SDL_SCANCODE_A; sc <= SDL_SCANCODE_0; sc++) {
		uint16_t code = slim_evdev_from_sdl_scancode(sc);
		assert_int_not_equal(code, KEY_RESERVED);
		assert_int_equal(seen[code]++, 0);
	}
}

static void test_letterbox(void **state)
{
	/* the same size: the whole window */
	struct slim_letterbox lb = slim_letterbox_fit(1280, 720, 1280, 720);
	assert_int_equal(lb.x, 0);
	assert_int_equal(lb.y, 0);
	assert_int_equal(lb.w, 1280);
	assert_int_equal(lb.h, 720);
	/* a taller window: bars above and below */
	lb = slim_letterbox_fit(1280, 1024, 1280, 720);
	assert_int_equal(lb.x, 0);
	assert_int_equal(lb.y, 152);
	assert_int_equal(lb.w, 1280);
	assert_int_equal(lb.h, 720);
	/* a wider one, and smaller: bars left and right, half size */
	lb = slim_letterbox_fit(1000, 360, 1280, 720);
	assert_int_equal(lb.x, 180);
	assert_int_equal(lb.y, 0);
	assert_int_equal(lb.w, 640);
	assert_int_equal(lb.h, 360);

	/* back to console pixels, in 1/256: twice as many */
	int32_t x, y;
	slim_letterbox_to_picture(&lb, 1280, 720, 180 + 10, 20, &x, &y);
	assert_int_equal(x, 20 * 256);
	assert_int_equal(y, 40 * 256);
	slim_letterbox_to_picture(&lb, 1280, 720, 180 + 10.5, 20, &x, &y);
	assert_int_equal(x, 21 * 256);
	/* on the bars: the picture's edges, never past them */
	slim_letterbox_to_picture(&lb, 1280, 720, 3, 400, &x, &y);
	assert_int_equal(x, 0);
	assert_int_equal(y, 720 * 256 - 1);
	slim_letterbox_to_picture(&lb, 1280, 720, 999, -5, &x, &y);
	assert_int_equal(x, 1280 * 256 - 1);
	assert_int_equal(y, 0);
	/* 1:1 is the identity */
	lb = slim_letterbox_fit(800, 600, 800, 600);
	slim_letterbox_to_picture(&lb, 800, 600, 123, 456, &x, &y);
	assert_int_equal(x, 123 * 256);
	assert_int_equal(y, 456 * 256);
	/* degenerate areas do not divide by zero */
	lb = slim_letterbox_fit(0, 0, 800, 600);
	assert_int_equal(lb.w, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keymap),
		cmocka_unit_test(test_letterbox),
	};
	return test_report(cmocka_run_group_tests(tests, NULL, NULL));
}
