/*
 * slim-x11-flood N: an X11 window that, once it has the focus (the
 * compositor has mapped it: it has a task bar entry whose title follows),
 * renames itself N times as fast as X11 lets it (WM_NAME and _NET_WM_NAME,
 * each a property change the window manager hears), then says "flooded"
 * and waits to be killed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xcb/xcb.h>

static xcb_atom_t atom(xcb_connection_t *c, const char *name)
{
	xcb_intern_atom_reply_t *r = xcb_intern_atom_reply(c,
		xcb_intern_atom(c, 0, (uint16_t)strlen(name), name), NULL);
	xcb_atom_t a = r ? r->atom : XCB_ATOM_NONE;
	free(r);
	return a;
}

int main(int argc, char *argv[])
{
	long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: slim-x11-flood N\n");
		return 2;
	}
	xcb_connection_t *c = xcb_connect(NULL, NULL);
	if (xcb_connection_has_error(c)) {
		fprintf(stderr, "slim-x11-flood: cannot connect to X11\n");
		return 1;
	}
	xcb_screen_t *screen = xcb_setup_roots_iterator(xcb_get_setup(c)).data;
	xcb_window_t w = xcb_generate_id(c);
	uint32_t values[] = { screen->white_pixel, XCB_EVENT_MASK_FOCUS_CHANGE };
	xcb_create_window(c, XCB_COPY_FROM_PARENT, w, screen->root, 0, 0, 200, 100, 0,
		XCB_WINDOW_CLASS_INPUT_OUTPUT, screen->root_visual,
		XCB_CW_BACK_PIXEL | XCB_CW_EVENT_MASK, values);
	xcb_map_window(c, w);
	xcb_flush(c);
	xcb_generic_event_t *event;
	while ((event = xcb_wait_for_event(c))) {
		bool focused = (event->response_type & 0x7f) == XCB_FOCUS_IN;
		free(event);
		if (focused) {
			break;
		}
	}
	xcb_atom_t net_wm_name = atom(c, "_NET_WM_NAME"), utf8 = atom(c, "UTF8_STRING");
	char name[64];
	for (long i = 0; i < n; i++) {
		int len = snprintf(name, sizeof(name), "flood %ld", i);
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_NAME, XCB_ATOM_STRING,
			8, (uint32_t)len, name);
		xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, net_wm_name, utf8, 8,
			(uint32_t)len, name);
	}
	/* a round trip: the server has taken every change */
	free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
	printf("flooded\n");
	fflush(stdout);
	pause();
	xcb_disconnect(c);
	return 0;
}
