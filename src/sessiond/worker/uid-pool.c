#define _DEFAULT_SOURCE /* getpwent */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slim-log.h"
#include "uid-pool.h"

void slim_uid_pool_name(const struct slim_uid_pool *pool, uid_t uid, char *buf, size_t size)
{
	snprintf(buf, size, "%s-%u", pool->greeter_user ? pool->greeter_user : "greeter",
		(unsigned)uid);
}

/* Whether the user database's pw is a greeter's record of ours, not a user. */
static bool ours(const struct slim_uid_pool *pool, const struct passwd *pw)
{
	char name[96];
	slim_uid_pool_name(pool, pw->pw_uid, name, sizeof(name));
	return pool->greeter_user && strcmp(pw->pw_name, name) == 0;
}

bool slim_uid_pool_init(struct slim_uid_pool *pool, uid_t first, uid_t last)
{
	*pool = (struct slim_uid_pool){ 0 };
	if (first == 0 || last < first || last - first >= SLIM_GREETER_UIDS_MAX ||
			last > INT32_MAX) {
		return false;
	}
	pool->first = first;
	pool->count = (uint32_t)(last - first) + 1;
	pool->state = calloc(pool->count, 1); /* all SLIM_UID_FREE */
	return pool->state != NULL;
}

void slim_uid_pool_finish(struct slim_uid_pool *pool)
{
	free(pool->state);
	*pool = (struct slim_uid_pool){ 0 };
}

bool slim_uid_pool_has(const struct slim_uid_pool *pool, uid_t uid)
{
	return pool->state && uid >= pool->first && uid - pool->first < pool->count;
}

enum slim_uid_state slim_uid_pool_state(const struct slim_uid_pool *pool, uid_t uid)
{
	return slim_uid_pool_has(pool, uid) ? pool->state[uid - pool->first] : SLIM_UID_REFUSED;
}

void slim_uid_pool_set(struct slim_uid_pool *pool, uid_t uid, enum slim_uid_state state)
{
	if (!slim_uid_pool_has(pool, uid)) {
		return;
	}
	uint8_t *s = &pool->state[uid - pool->first];
	pool->ending -= *s == SLIM_UID_ENDING;
	pool->ending += state == SLIM_UID_ENDING;
	*s = (uint8_t)state;
}

/* /etc/subuid's NAME:START:COUNT lines: the uids of the range they cover, refused. */
static uint32_t refuse_subuids(struct slim_uid_pool *pool, const char *path, char *first_why,
		size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return 0;
	}
	uint32_t refused = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		unsigned long long start, n;
		if (!colon || sscanf(colon + 1, "%llu:%llu", &start, &n) != 2) {
			continue;
		}
		*colon = '\0';
		uint64_t lo = pool->first, hi = (uint64_t)pool->first + pool->count;
		for (uint64_t uid = start > lo ? start : lo; uid - start < n && uid < hi; uid++) {
			if (pool->state[uid - lo] != SLIM_UID_REFUSED) {
				if (!refused++ && !first_why[0]) {
					snprintf(first_why, size, "uid %llu, a subordinate uid of %.64s (%.64s)",
						(unsigned long long)uid, line, path);
				}
				slim_uid_pool_set(pool, (uid_t)uid, SLIM_UID_REFUSED);
			}
		}
	}
	fclose(f);
	return refused;
}

uint32_t slim_uid_pool_refuse_users(struct slim_uid_pool *pool, const char *subuid_path)
{
	uint32_t refused = 0;
	char first_why[256] = "";
	struct passwd *pw;
	setpwent();
	while ((pw = getpwent())) {
		if (slim_uid_pool_state(pool, pw->pw_uid) != SLIM_UID_REFUSED && !ours(pool, pw)) {
			if (!refused++) {
				snprintf(first_why, sizeof(first_why), "uid %u, user %s",
					(unsigned)pw->pw_uid, pw->pw_name);
			}
			slim_uid_pool_set(pool, pw->pw_uid, SLIM_UID_REFUSED);
		}
	}
	endpwent();
	if (subuid_path) {
		refused += refuse_subuids(pool, subuid_path, first_why, sizeof(first_why));
	}
	if (refused) {
		slim_log(SLIM_LOG_ERROR, "greeter_uids %u-%u: %u of them belong to users (the first: "
			"%s) and are never used", (unsigned)pool->first,
			(unsigned)(pool->first + pool->count - 1), (unsigned)refused, first_why);
	}
	return refused;
}

uid_t slim_uid_pool_take(struct slim_uid_pool *pool)
{
	for (uint32_t i = 0; i < pool->count; i++) {
		uint32_t at = (pool->next + i) % pool->count;
		if (pool->state[at] != SLIM_UID_FREE) {
			continue;
		}
		uid_t uid = pool->first + at;
		struct passwd *pw = getpwuid(uid);
		if (pw && !ours(pool, pw)) {
			slim_log(SLIM_LOG_ERROR, "greeter_uids: uid %u belongs to user %s: never used",
				(unsigned)uid, pw->pw_name);
			slim_uid_pool_set(pool, uid, SLIM_UID_REFUSED);
			continue;
		}
		pool->next = (at + 1) % pool->count;
		slim_uid_pool_set(pool, uid, SLIM_UID_USED);
		return uid;
	}
	return (uid_t)-1;
}

bool slim_uid_pool_claim(struct slim_uid_pool *pool, uid_t uid)
{
	if (slim_uid_pool_state(pool, uid) != SLIM_UID_FREE) {
		return false;
	}
	slim_uid_pool_set(pool, uid, SLIM_UID_USED);
	return true;
}
