/*
 * The pointer's image and position, for the console to draw (cursor.c):
 * the client's cursor or the theme's, where the shell's pointer is.
 */
#ifndef SLIM_CURSOR_H
#define SLIM_CURSOR_H

struct slim_cursor;
struct slim_link;
struct slim_shell;

/* Listens to the shell's seat for clients' cursors; NULL if no theme loads. */
struct slim_cursor *cursor_create(struct slim_link *link, struct slim_shell *shell);
void cursor_destroy(struct slim_cursor *cursor);
/* The theme's image `name`, in place of a client's. */
void cursor_set_theme(struct slim_cursor *cursor, const char *name);
/* The pointer moved: its position goes to the console. */
void cursor_moved(struct slim_cursor *cursor);
/* Sends the current image and position again (a console attached). */
void cursor_resend(struct slim_cursor *cursor);
/*
 * A second link the pointer goes to as well (a console watching the
 * session), or NULL; a new one is sent the image and position now.
 */
void cursor_set_mirror(struct slim_cursor *cursor, struct slim_link *mirror);

#endif
