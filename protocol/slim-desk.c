/*
 * A console's heads and keyboard between HELLO's wire form and the form
 * both ends use. Everything here takes bytes a console chose: names are
 * cleaned before anyone logs or shows them.
 */
#include <stdio.h>
#include <string.h>
#include "slim-desk.h"
#include "slim-keyboard.h"

#define copy_name(dst, src) copy_text((dst), sizeof(dst), (src), sizeof(src))

static void copy_text(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t n = strnlen(src, src_len < dst_len - 1 ? src_len : dst_len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* NUL-padded, not necessarily terminated: the wire's text. */
static void put_text(char *dst, size_t dst_len, const char *src)
{
	memset(dst, 0, dst_len);
	memcpy(dst, src, strnlen(src, dst_len));
}

void slim_desk_single(struct slim_desk *desk, uint32_t width, uint32_t height)
{
	*desk = (struct slim_desk){
		.n_heads = 1,
		.heads[0] = {
			.width = width, .height = height, .primary = true,
			.name = "CONSOLE-1", .make = "slimland", .model = "console",
		},
	};
}

void slim_desk_bounds(const struct slim_desk *desk, uint32_t *width, uint32_t *height)
{
	*width = *height = 0;
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		const struct slim_head *h = &desk->heads[i];
		if (h->x + h->width > *width) {
			*width = h->x + h->width;
		}
		if (h->y + h->height > *height) {
			*height = h->y + h->height;
		}
	}
}

const struct slim_head *slim_desk_primary(const struct slim_desk *desk)
{
	for (uint32_t i = 0; i < desk->n_heads; i++) {
		if (desk->heads[i].primary) {
			return &desk->heads[i];
		}
	}
	return &desk->heads[0];
}

bool slim_desk_same_heads(const struct slim_desk *a, const struct slim_desk *b)
{
	return a->n_heads == b->n_heads &&
		memcmp(a->heads, b->heads, a->n_heads * sizeof(a->heads[0])) == 0;
}

bool slim_desk_same_keyboard(const struct slim_desk *a, const struct slim_desk *b)
{
	if (a->has_keyboard != b->has_keyboard) {
		return false;
	}
	return !a->has_keyboard || memcmp(&a->keyboard, &b->keyboard, sizeof(a->keyboard)) == 0;
}

static bool overlap(const struct slim_wire_head *a, const struct slim_wire_head *b)
{
	return a->x < b->x + b->width && b->x < a->x + a->width &&
		a->y < b->y + b->height && b->y < a->y + a->height;
}

bool slim_desk_heads_valid(const uint8_t *heads, size_t count, uint32_t width, uint32_t height)
{
	if (count < 1 || count > SLIM_MAX_HEADS) {
		return false;
	}
	struct slim_wire_head h[SLIM_MAX_HEADS];
	memcpy(h, heads, count * sizeof(h[0]));
	for (size_t i = 0; i < count; i++) {
		/* u16 + u16 cannot overflow the int they are promoted to */
		if (h[i].width == 0 || h[i].height == 0 || h[i].width > SLIM_MAX_DIM ||
				h[i].height > SLIM_MAX_DIM || h[i].x + h[i].width > (int)width ||
				h[i].y + h[i].height > (int)height || h[i].scale > SLIM_MAX_SCALE) {
			return false;
		}
		for (size_t j = 0; j < i; j++) {
			if (overlap(&h[i], &h[j])) {
				return false;
			}
		}
	}
	return true;
}

/* A connector's name goes into wl_output's name and file names: letters, digits, . _ - */
static void clean_name(char *s)
{
	for (; *s; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-';
		if (!ok) {
			*s = '-';
		}
	}
}

static void clean_printable(char *s)
{
	for (; *s; s++) {
		if (*s < 0x20 || *s > 0x7e) {
			*s = '?';
		}
	}
}

static void head_from_wire(struct slim_head *head, const struct slim_wire_head *w, size_t i)
{
	*head = (struct slim_head){
		.x = w->x, .y = w->y, .width = w->width, .height = w->height,
		.refresh_mhz = w->refresh_mhz, .scale = w->scale,
		.primary = w->flags & SLIM_HEAD_PRIMARY,
	};
	if (w->mm_width <= SLIM_MAX_HEAD_MM && w->mm_height <= SLIM_MAX_HEAD_MM &&
			w->mm_width && w->mm_height) {
		head->mm_width = w->mm_width;
		head->mm_height = w->mm_height;
	}
	copy_name(head->name, w->name);
	copy_name(head->make, w->make);
	copy_name(head->model, w->model);
	clean_name(head->name);
	clean_printable(head->make);
	clean_printable(head->model);
	if (!head->name[0]) {
		snprintf(head->name, sizeof(head->name), "HEAD-%u", (unsigned)(i % SLIM_MAX_HEADS) + 1);
	}
}

static bool name_taken(const struct slim_desk *desk, uint32_t upto, const char *name)
{
	for (uint32_t j = 0; j < upto; j++) {
		if (strcmp(desk->heads[j].name, name) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * Two heads of one name would be one wl_output name twice: a later one
 * takes the first HEAD-n nobody has (of 2 * SLIM_MAX_HEADS, one is free).
 */
static void unique_names(struct slim_desk *desk)
{
	for (uint32_t i = 1; i < desk->n_heads; i++) {
		for (unsigned n = 1; name_taken(desk, i, desk->heads[i].name) &&
				n <= 2 * SLIM_MAX_HEADS; n++) {
			char name[sizeof(desk->heads[i].name)];
			snprintf(name, sizeof(name), "HEAD-%u", n);
			if (!name_taken(desk, desk->n_heads, name)) {
				memcpy(desk->heads[i].name, name, sizeof(name));
			}
		}
	}
}

static void keyboard_from_wire(struct slim_desk *desk, const struct slim_wire_keyboard *w)
{
	struct slim_keyboard *kb = &desk->keyboard;
	copy_name(kb->rules, w->rules);
	copy_name(kb->model, w->model);
	copy_name(kb->layout, w->layout);
	copy_name(kb->variant, w->variant);
	copy_name(kb->options, w->options);
	desk->has_keyboard = slim_keyboard_names_valid(kb);
	desk->keyboard_bad = !desk->has_keyboard;
	if (!desk->has_keyboard) {
		memset(kb, 0, sizeof(*kb));
	}
}

void slim_desk_from_wire(struct slim_desk *desk, uint32_t width, uint32_t height,
		const uint8_t *heads, size_t count, const uint8_t *keyboard)
{
	slim_desk_single(desk, width, height);
	if (heads) {
		desk->n_heads = (uint32_t)count;
		bool primary = false;
		for (size_t i = 0; i < count; i++) {
			struct slim_wire_head w;
			memcpy(&w, heads + i * sizeof(w), sizeof(w));
			head_from_wire(&desk->heads[i], &w, i);
			/* one primary: the first that says so */
			desk->heads[i].primary = desk->heads[i].primary && !primary;
			primary = primary || desk->heads[i].primary;
		}
		desk->heads[0].primary = desk->heads[0].primary || !primary;
		unique_names(desk);
	}
	if (keyboard) {
		struct slim_wire_keyboard w;
		memcpy(&w, keyboard, sizeof(w));
		keyboard_from_wire(desk, &w);
	}
}

void slim_desk_head_to_wire(const struct slim_head *head, struct slim_wire_head *w)
{
	*w = (struct slim_wire_head){
		.x = (uint16_t)head->x, .y = (uint16_t)head->y,
		.width = (uint16_t)head->width, .height = (uint16_t)head->height,
		.mm_width = (uint16_t)(head->mm_width <= SLIM_MAX_HEAD_MM ? head->mm_width : 0),
		.mm_height = (uint16_t)(head->mm_height <= SLIM_MAX_HEAD_MM ? head->mm_height : 0),
		.refresh_mhz = head->refresh_mhz,
		.scale = (uint8_t)(head->scale <= SLIM_MAX_SCALE ? head->scale : 0),
		.flags = head->primary ? SLIM_HEAD_PRIMARY : 0,
	};
	put_text(w->name, sizeof(w->name), head->name);
	put_text(w->make, sizeof(w->make), head->make);
	put_text(w->model, sizeof(w->model), head->model);
}

void slim_desk_keyboard_to_wire(const struct slim_keyboard *kb, struct slim_wire_keyboard *w)
{
	put_text(w->rules, sizeof(w->rules), kb->rules);
	put_text(w->model, sizeof(w->model), kb->model);
	put_text(w->layout, sizeof(w->layout), kb->layout);
	put_text(w->variant, sizeof(w->variant), kb->variant);
	put_text(w->options, sizeof(w->options), kb->options);
}
