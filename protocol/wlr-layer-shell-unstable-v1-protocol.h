/*
 * The two enums of wlr-layer-shell-unstable-v1 that wlroots 0.15's
 * <wlr/types/wlr_layer_shell_v1.h> needs to compile: Debian ships that
 * header but not the protocol's XML to generate this one from. The values
 * are the protocol's own (zwlr_layer_shell_v1 version 4).
 */
#ifndef SLIM_WLR_LAYER_SHELL_UNSTABLE_V1_PROTOCOL_H
#define SLIM_WLR_LAYER_SHELL_UNSTABLE_V1_PROTOCOL_H

enum zwlr_layer_shell_v1_layer {
	ZWLR_LAYER_SHELL_V1_LAYER_BACKGROUND = 0,
	ZWLR_LAYER_SHELL_V1_LAYER_BOTTOM = 1,
	ZWLR_LAYER_SHELL_V1_LAYER_TOP = 2,
	ZWLR_LAYER_SHELL_V1_LAYER_OVERLAY = 3,
};

enum zwlr_layer_surface_v1_keyboard_interactivity {
	ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_NONE = 0,
	ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_EXCLUSIVE = 1,
	ZWLR_LAYER_SURFACE_V1_KEYBOARD_INTERACTIVITY_ON_DEMAND = 2,
};

enum zwlr_layer_surface_v1_anchor {
	ZWLR_LAYER_SURFACE_V1_ANCHOR_TOP = 1,
	ZWLR_LAYER_SURFACE_V1_ANCHOR_BOTTOM = 2,
	ZWLR_LAYER_SURFACE_V1_ANCHOR_LEFT = 4,
	ZWLR_LAYER_SURFACE_V1_ANCHOR_RIGHT = 8,
};

/* Not needed by wlroots: the error slimland posts for what 0.15 lets through. */
enum zwlr_layer_surface_v1_error {
	ZWLR_LAYER_SURFACE_V1_ERROR_INVALID_SIZE = 1,
};

#endif
