/*
 * The uids greeters run as (slimland.conf's greeter_uids, session-manager.md
 * §3): each greeter a uid of its own, so that a process of one greeter can
 * neither signal nor trace another's, nor enter its runtime directory. The
 * uids belong to nobody in the user database; a uid goes back to the pool
 * only once nothing of its last greeter runs any more.
 */
#ifndef SLIM_SESSIOND_UID_POOL_H
#define SLIM_SESSIOND_UID_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The default range: above 65535, where distributions and systemd keep
 * their system, regular, homed and dynamic users (DynamicUser takes
 * 61184-65519) and nobody (65534); below 100000, where useradd starts
 * handing out subordinate uids (/etc/subuid) for users' containers; far
 * below systemd-nspawn's container ranges (524288 and up).
 */
#define SLIM_GREETER_UIDS_FIRST 70000u
#define SLIM_GREETER_UIDS_LAST 70999u
/* The most uids a range may hold (one byte each in the pool). */
#define SLIM_GREETER_UIDS_MAX 65536u

enum slim_uid_state {
	SLIM_UID_FREE,
	SLIM_UID_USED,    /* a greeter runs as it */
	SLIM_UID_ENDING,  /* its greeter is gone; something of it may still run */
	SLIM_UID_REFUSED, /* a user's, or a user's subordinate uid: never used */
};

struct slim_uid_pool {
	/*
	 * The greeter user: a record named GREETER_USER-UID (userdb.h) is a
	 * greeter's of ours, an earlier run's, not a user (NULL: none is).
	 */
	const char *greeter_user;
	uid_t first;
	uint32_t count;
	uint8_t *state;  /* enum slim_uid_state, one per uid of the range */
	uint32_t next;   /* where the next take starts looking */
	uint32_t ending; /* how many are SLIM_UID_ENDING */
};

/* first..last, all free. False: no memory, or not a range config.c takes. */
bool slim_uid_pool_init(struct slim_uid_pool *pool, uid_t first, uid_t last);
void slim_uid_pool_finish(struct slim_uid_pool *pool);
/* Whether uid is one of the range's (whatever its state). */
bool slim_uid_pool_has(const struct slim_uid_pool *pool, uid_t uid);
/* Its state; SLIM_UID_REFUSED for a uid outside the range. */
enum slim_uid_state slim_uid_pool_state(const struct slim_uid_pool *pool, uid_t uid);
/*
 * Refuses the uids that belong to users: every entry of the user database
 * (getpwent) and every range of subordinate uids in `subuid_path`
 * (/etc/subuid; NULL: none), said once in the log. Returns how many.
 */
uint32_t slim_uid_pool_refuse_users(struct slim_uid_pool *pool, const char *subuid_path);
/*
 * A free uid, now used: the first free one after the last taken, so that
 * a uid is used again as late as possible. One that getpwuid says is a
 * user's (added since the start, or not listed by getpwent) is refused
 * then, and said. (uid_t)-1: none free.
 */
uid_t slim_uid_pool_take(struct slim_uid_pool *pool);
/* A greeter found again after a restart runs as uid: used. False if it is not free. */
bool slim_uid_pool_claim(struct slim_uid_pool *pool, uid_t uid);
/* GREETER_USER-UID: what the greeter that runs as uid is called (USER, its userdb record). */
void slim_uid_pool_name(const struct slim_uid_pool *pool, uid_t uid, char *buf, size_t size);
/* USED -> ENDING (its greeter is gone), ENDING -> FREE (nothing of it runs). */
void slim_uid_pool_set(struct slim_uid_pool *pool, uid_t uid, enum slim_uid_state state);

#endif
