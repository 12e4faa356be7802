#include <string.h>
#include "placement.h"

long slim_place_room(const struct slim_place_server *s, const struct slim_place_weights *w)
{
	long per_user = w->ram_per_user_mb ? w->ram_per_user_mb : 1;
	long room = (long)s->mem_avail_mb * 100 / per_user;
	long idle_pct = (long)s->cpus * 100 - (long)s->load_pct;
	if (idle_pct > 0) {
		room += idle_pct * (long)w->cpu_weight / 100;
	}
	room -= (long)s->sessions * (long)w->existing_users_weight;
	return room;
}

static bool better(const struct slim_place_server *a, long room_a,
		const struct slim_place_server *b, long room_b)
{
	if (room_a != room_b) {
		return room_a > room_b;
	}
	if (a->sessions != b->sessions) {
		return a->sessions < b->sessions;
	}
	return strcmp(a->name, b->name) < 0;
}

int slim_place(const struct slim_place_server *servers, int n,
		const struct slim_place_weights *w, const char *previous)
{
	int best = -1;
	long best_room = 0;
	for (int i = 0; i < n; i++) {
		if (servers[i].drain) {
			continue;
		}
		long room = slim_place_room(&servers[i], w);
		if (previous && strcmp(servers[i].name, previous) == 0 && room >= 100) {
			return i;
		}
		if (best < 0 || better(&servers[i], room, &servers[best], best_room)) {
			best = i;
			best_room = room;
		}
	}
	return best;
}
