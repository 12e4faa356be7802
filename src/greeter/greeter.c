/*
 * slimland-greeter: the login form a console shows while it has no session.
 * It runs in a greeter compositor as the unprivileged greeter user and
 * talks to slimland-sessiond over the greeter socket
 * (protocol/session-manager.md §3):
 *
 *   → hello CONSOLE             ← message TEXT
 *   → login USER PASSWORDHEX    ← ok | error TEXT
 *   → chose N                   ← choice TEXT<tab>LABEL<tab>LABEL...
 *
 * A choice is a button per label under its text (a server group asks
 * where the card's session is out of reach), each also chosen by a
 * function key (F1 the first); the form stays usable.
 *
 * The socket's path and the console's id come in SLIMLAND_GREETER_SOCKET
 * and SLIMLAND_CONSOLE.
 */
#define _GNU_SOURCE /* explicit_bzero, struct ucred */
#include <errno.h>
#include <gtk/gtk.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SLIM_GREETER_LINE_MAX 1024
#define SLIM_GREETER_RETRY_S 2

struct slim_greeter {
	GtkWidget *window, *user, *password, *button, *message;
	GtkWidget *choices; /* a box of the buttons of the choice offered, if any */
	const char *socket_path;
	const char *console;
	GIOChannel *channel;  /* NULL while the manager is unreachable */
	guint watch, retry;
	bool logged_in;
	bool said_waiting; /* the log has been told of this outage */
};

/* The buttons of a choice go with the text they answer. */
static void clear_choices(struct slim_greeter *g)
{
	GList *children = gtk_container_get_children(GTK_CONTAINER(g->choices));
	for (GList *l = children; l; l = l->next) {
		gtk_widget_destroy(GTK_WIDGET(l->data));
	}
	g_list_free(children);
}

static void set_message(struct slim_greeter *g, const char *text)
{
	clear_choices(g);
	gtk_label_set_text(GTK_LABEL(g->message), text);
}

static bool send_line(struct slim_greeter *g, const char *line);

static void chose(GtkWidget *button, gpointer data)
{
	struct slim_greeter *g = data;
	char line[32];
	snprintf(line, sizeof(line), "chose %d\n",
		GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "slimland-choice")));
	/* answered by a message, another choice or a redirect */
	clear_choices(g);
	send_line(g, line);
	/* what follows may well be a login: typing goes to the form again */
	gtk_widget_grab_focus(g->user);
}

/* `TEXT<tab>LABEL<tab>LABEL...` */
static void show_choice(struct slim_greeter *g, char *line)
{
	char *labels = strchr(line, '\t');
	if (labels) {
		*labels++ = '\0';
	}
	set_message(g, line);
	int n = 0;
	for (char *label = labels; label && n < 8; n++) {
		char *next = strchr(label, '\t');
		if (next) {
			*next++ = '\0';
		}
		char text[160];
		snprintf(text, sizeof(text), "%s (F%d)", label, n + 1);
		GtkWidget *button = gtk_button_new_with_label(text);
		g_object_set_data(G_OBJECT(button), "slimland-choice", GINT_TO_POINTER(n));
		g_signal_connect(button, "clicked", G_CALLBACK(chose), g);
		gtk_box_pack_start(GTK_BOX(g->choices), button, FALSE, FALSE, 0);
		gtk_widget_show(button);
		label = next;
	}
}

static void set_form_sensitive(struct slim_greeter *g, bool sensitive)
{
	gtk_widget_set_sensitive(g->user, sensitive);
	gtk_widget_set_sensitive(g->password, sensitive);
	gtk_widget_set_sensitive(g->button, sensitive);
}

static bool send_line(struct slim_greeter *g, const char *line)
{
	if (!g->channel) {
		return false;
	}
	gsize written;
	GIOStatus s = g_io_channel_write_chars(g->channel, line, -1, &written, NULL);
	if (s == G_IO_STATUS_NORMAL) {
		s = g_io_channel_flush(g->channel, NULL);
	}
	return s == G_IO_STATUS_NORMAL;
}

static gboolean try_connect(gpointer data);

static void disconnect(struct slim_greeter *g)
{
	if (g->watch) {
		g_source_remove(g->watch);
		g->watch = 0;
	}
	if (g->channel) {
		g_io_channel_shutdown(g->channel, FALSE, NULL);
		g_io_channel_unref(g->channel);
		g->channel = NULL;
	}
	if (!g->logged_in) {
		set_message(g, "Session manager unavailable");
		set_form_sensitive(g, true);
	}
	if (!g->retry) {
		g->retry = g_timeout_add_seconds(SLIM_GREETER_RETRY_S, try_connect, g);
	}
}

static void handle_line(struct slim_greeter *g, char *line)
{
	if (strncmp(line, "message ", 8) == 0) {
		set_message(g, line + 8);
	} else if (strncmp(line, "choice ", 7) == 0) {
		show_choice(g, line + 7);
		/* a login that was being checked was answered with this */
		set_form_sensitive(g, true);
		gtk_widget_grab_focus(g->user);
	} else if (strncmp(line, "error ", 6) == 0) {
		set_message(g, line + 6);
		set_form_sensitive(g, true);
		gtk_widget_grab_focus(g->password);
	} else if (strcmp(line, "ok") == 0) {
		g->logged_in = true;
		set_message(g, "Starting your session…");
	} else if (strcmp(line, "ping") == 0) {
		send_line(g, "pong\n");
	}
	/* Anything else is from a newer manager: ignored. */
}

static gboolean handle_socket(GIOChannel *channel, GIOCondition cond, gpointer data)
{
	struct slim_greeter *g = data;
	for (;;) {
		char *line = NULL;
		gsize len, eol;
		GIOStatus s = g_io_channel_read_line(channel, &line, &len, &eol, NULL);
		if (s == G_IO_STATUS_NORMAL) {
			line[eol] = '\0';
			handle_line(g, line);
			g_free(line);
			continue;
		}
		g_free(line);
		if (s == G_IO_STATUS_AGAIN) {
			return G_SOURCE_CONTINUE;
		}
		/* EOF or error: the manager went away (or restarted). */
		g->watch = 0;
		disconnect(g);
		return G_SOURCE_REMOVE;
	}
}

/*
 * Peer check: passwords go to root (slimland-sessiond) alone, or to a
 * process of our own uid, which can read what we type anyway (a test's
 * stand-in; the manager's socket is in a directory only root writes).
 */
static bool peer_is_manager(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		(cred.uid == 0 || cred.uid == getuid());
}

static gboolean try_connect(gpointer data)
{
	struct slim_greeter *g = data;
	g->retry = 0;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (!g->socket_path || strlen(g->socket_path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "slimland-greeter: SLIMLAND_GREETER_SOCKET is %s: "
			"no session manager to reach\n", g->socket_path ? "too long" : "not set");
		set_message(g, "Session manager unavailable");
		return G_SOURCE_REMOVE; /* no path: retrying will not help */
	}
	strcpy(addr.sun_path, g->socket_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		/* once an outage: the form says it too, but nobody may be looking */
		if (!g->said_waiting) {
			fprintf(stderr, "slimland-greeter: waiting for the session manager at %s "
				"(%s); trying every %d s\n", g->socket_path, strerror(errno),
				SLIM_GREETER_RETRY_S);
			g->said_waiting = true;
		}
		if (fd >= 0) {
			close(fd);
		}
		disconnect(g);
		return G_SOURCE_REMOVE;
	}
	if (!peer_is_manager(fd)) {
		if (!g->said_waiting) {
			fprintf(stderr, "slimland-greeter: %s is not the session manager's: nothing "
				"goes there; trying every %d s\n", g->socket_path, SLIM_GREETER_RETRY_S);
			g->said_waiting = true;
		}
		close(fd);
		disconnect(g);
		return G_SOURCE_REMOVE;
	}
	if (g->said_waiting) {
		fprintf(stderr, "slimland-greeter: connected to the session manager\n");
		g->said_waiting = false;
	}
	g->channel = g_io_channel_unix_new(fd);
	g_io_channel_set_close_on_unref(g->channel, TRUE);
	g_io_channel_set_encoding(g->channel, NULL, NULL); /* lines of bytes */
	g_io_channel_set_flags(g->channel, G_IO_FLAG_NONBLOCK, NULL);
	g->watch = g_io_add_watch(g->channel, G_IO_IN | G_IO_HUP | G_IO_ERR,
		handle_socket, g);
	char hello[SLIM_GREETER_LINE_MAX];
	snprintf(hello, sizeof(hello), "hello %s\n", g->console);
	if (!send_line(g, hello)) {
		disconnect(g);
		return G_SOURCE_REMOVE;
	}
	set_message(g, "");
	return G_SOURCE_REMOVE;
}

static void submit(GtkWidget *widget, gpointer data)
{
	struct slim_greeter *g = data;
	const char *user = gtk_entry_get_text(GTK_ENTRY(g->user));
	const char *password = gtk_entry_get_text(GTK_ENTRY(g->password));
	if (!*user || strpbrk(user, " \t\r\n")) {
		set_message(g, "Enter your user name");
		gtk_widget_grab_focus(g->user);
		return;
	}
	if (!g->channel) {
		set_message(g, "Session manager unavailable");
		return;
	}
	/* "login " USER " " HEX "\n" must fit a line. */
	size_t need = 6 + strlen(user) + 1 + 2 * strlen(password) + 1;
	if (need >= SLIM_GREETER_LINE_MAX) {
		set_message(g, "User name or password too long");
		return;
	}
	char line[SLIM_GREETER_LINE_MAX];
	int n = snprintf(line, sizeof(line), "login %s ", user);
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *p = (const unsigned char *)password; *p; p++) {
		line[n++] = hex[*p >> 4];
		line[n++] = hex[*p & 15];
	}
	line[n++] = '\n';
	line[n] = '\0';
	bool sent = send_line(g, line);
	/* The password must not linger: not in our buffer, not on screen. */
	explicit_bzero(line, sizeof(line));
	gtk_entry_set_text(GTK_ENTRY(g->password), "");
	if (!sent) {
		disconnect(g);
		return;
	}
	set_message(g, "Checking…");
	set_form_sensitive(g, false);
}

/* F1, F2...: the choice's buttons, in order, for those without a pointer. */
static gboolean handle_key(GtkWidget *widget, GdkEventKey *event, gpointer data)
{
	struct slim_greeter *g = data;
	if (event->keyval < GDK_KEY_F1 || event->keyval > GDK_KEY_F8) {
		return FALSE;
	}
	GList *children = gtk_container_get_children(GTK_CONTAINER(g->choices));
	GList *nth = g_list_nth(children, event->keyval - GDK_KEY_F1);
	if (nth) {
		gtk_button_clicked(GTK_BUTTON(nth->data));
	}
	g_list_free(children);
	return nth != NULL;
}

/* Enter in the user name goes on to the password. */
static void next_field(GtkWidget *widget, gpointer data)
{
	struct slim_greeter *g = data;
	gtk_widget_grab_focus(g->password);
}

static void build_window(struct slim_greeter *g)
{
	g->window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
	gtk_window_set_title(GTK_WINDOW(g->window), "slimland login");
	/* Nothing to close it with: a console without a session shows this. */
	gtk_window_set_deletable(GTK_WINDOW(g->window), FALSE);
	g_signal_connect(g->window, "destroy", G_CALLBACK(gtk_main_quit), NULL);

	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
	gtk_widget_set_halign(box, GTK_ALIGN_CENTER);
	gtk_widget_set_valign(box, GTK_ALIGN_CENTER);
	gtk_container_add(GTK_CONTAINER(g->window), box);

	GtkWidget *title = gtk_label_new(NULL);
	gtk_label_set_markup(GTK_LABEL(title),
		"<span size=\"xx-large\">Tap your card or log in</span>");
	gtk_box_pack_start(GTK_BOX(box), title, FALSE, FALSE, 12);

	GtkWidget *grid = gtk_grid_new();
	gtk_grid_set_row_spacing(GTK_GRID(grid), 8);
	gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
	gtk_box_pack_start(GTK_BOX(box), grid, FALSE, FALSE, 0);

	GtkWidget *user_label = gtk_label_new_with_mnemonic("_User name");
	gtk_widget_set_halign(user_label, GTK_ALIGN_END);
	g->user = gtk_entry_new();
	gtk_entry_set_width_chars(GTK_ENTRY(g->user), 24);
	gtk_label_set_mnemonic_widget(GTK_LABEL(user_label), g->user);
	gtk_grid_attach(GTK_GRID(grid), user_label, 0, 0, 1, 1);
	gtk_grid_attach(GTK_GRID(grid), g->user, 1, 0, 1, 1);

	GtkWidget *password_label = gtk_label_new_with_mnemonic("_Password");
	gtk_widget_set_halign(password_label, GTK_ALIGN_END);
	g->password = gtk_entry_new();
	gtk_entry_set_visibility(GTK_ENTRY(g->password), FALSE);
	gtk_entry_set_input_purpose(GTK_ENTRY(g->password), GTK_INPUT_PURPOSE_PASSWORD);
	gtk_label_set_mnemonic_widget(GTK_LABEL(password_label), g->password);
	gtk_grid_attach(GTK_GRID(grid), password_label, 0, 1, 1, 1);
	gtk_grid_attach(GTK_GRID(grid), g->password, 1, 1, 1, 1);

	g->button = gtk_button_new_with_mnemonic("_Log in");
	gtk_widget_set_halign(g->button, GTK_ALIGN_END);
	gtk_grid_attach(GTK_GRID(grid), g->button, 1, 2, 1, 1);

	g->message = gtk_label_new("");
	gtk_label_set_line_wrap(GTK_LABEL(g->message), TRUE);
	gtk_box_pack_start(GTK_BOX(box), g->message, FALSE, FALSE, 12);
	g->choices = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
	gtk_widget_set_halign(g->choices, GTK_ALIGN_CENTER);
	gtk_box_pack_start(GTK_BOX(box), g->choices, FALSE, FALSE, 0);

	g_signal_connect(g->user, "activate", G_CALLBACK(next_field), g);
	g_signal_connect(g->password, "activate", G_CALLBACK(submit), g);
	g_signal_connect(g->button, "clicked", G_CALLBACK(submit), g);
	g_signal_connect(g->window, "key-press-event", G_CALLBACK(handle_key), g);

	/* Asked once mapped: a compositor may ignore it on an unmapped window. */
	gtk_widget_show_all(g->window);
	gtk_window_maximize(GTK_WINDOW(g->window));
	gtk_widget_grab_focus(g->user);
}

int main(int argc, char *argv[])
{
	gtk_init(&argc, &argv);
	/* A manager that goes away mid-write is noticed by the watch, not by dying. */
	signal(SIGPIPE, SIG_IGN);
	static struct slim_greeter g;
	g.socket_path = g_getenv("SLIMLAND_GREETER_SOCKET");
	g.console = g_getenv("SLIMLAND_CONSOLE");
	if (!g.console || !*g.console || strpbrk(g.console, " \r\n")) {
		g.console = "0"; /* the manager knows the console by its greeter anyway */
	}
	build_window(&g);
	try_connect(&g);
	gtk_main();
	return 0;
}
