/*
 * What bench-migration.c (the users, one server, the report) and
 * migration-group.c (a server group on etcd: --group) share.
 */
#ifndef SLIM_BENCH_MIGRATION_H
#define SLIM_BENCH_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "managed-rig.h"
#include "slim-secure.h"

#define MIG_WIDTH 1920
#define MIG_HEIGHT 1080
#define MIG_MAX_MIGRATIONS 1000
/* --group, full run: logins placed across three servers */
#define MIG_PLACEMENT_LOGINS 30
#define MIG_PLACEMENT_SERVERS 3
#define MIG_PLACEMENT_WIDTH 640
#define MIG_PLACEMENT_HEIGHT 480

/* The two consoles, both run by every wait (managed-rig.h), then the placement's. */
extern struct bench_console mig_a, mig_b;

/* The login's user (the run's own name), password RIG_PASSWORD. */
extern char mig_user[];
/* The placement's user i (0-based), password RIG_PASSWORD; made by mig_placement_users(). */
void mig_placement_user(int i, char *name, size_t size);
bool mig_placement_users(void);

/* Where the time of a migration goes; the last three only when a MOVE takes part. */
enum mig_part {
	MIG_TOTAL,   /* CARD sent -> the complete frame presented */
	MIG_MANAGER, /* CARD sent -> the session's REDIRECT received */
	MIG_ATTACH,  /* REDIRECT -> the compositor's first datagram */
	MIG_PICTURE, /* first datagram -> the complete frame presented */
	MIG_MOVE,    /* CARD sent to B -> B's MOVE received (the new association begins) */
	MIG_ANSWER,  /* MOVE -> A answered the new association's HELLO (its handshake too) */
	MIG_RETOLD,  /* A answered -> the session's REDIRECT (the card told again) */
	MIG_PARTS,
};

/* One migration's times, and what it showed. */
struct mig_sample {
	uint64_t us[MIG_PARTS];
	uint64_t bytes;   /* the display association's bytes up to the complete frame */
	bool first_only;  /* frame 1 was complete on its own */
	uint32_t copies;  /* COPY commands */
};
/* Adds one to the set being measured (at most MIG_MAX_MIGRATIONS). */
void mig_record(const struct mig_sample *s);

/* Times of the migrations with a MOVE, from c's timestamps (t0: CARD sent, t3: complete frame). */
void mig_sample_of(const struct bench_console *c, uint64_t t0, uint64_t t3, bool moved,
		bool first_only, struct mig_sample *s);

/*
 * --group: one etcd member on loopback for the whole run (its data in
 * rig_tmpdir), killed at mig_etcd_stop() (exit, failure, signals) or if
 * this process dies. False, said on stderr, if it did not answer its
 * /health within 20 s.
 */
bool mig_etcd_start(void);
void mig_etcd_stop(void);

/*
 * Servers A and B of a group on that etcd for this transport, A's
 * card.key copied to B; true once both registered. The ports consoles
 * reach them at.
 */
bool mig_group_start(enum slim_sec_mode mode, uint16_t *port_a, uint16_t *port_b);

struct mig_group_stats {
	size_t n, failed;
	uint32_t bounces;   /* MOVEs beyond the one to A (a console sent back and forth) */
	uint32_t refusals;  /* REFUSEs on the tapping consoles' display associations */
};
/*
 * `migrations` times: the card off the console showing the session (at
 * A), then a console new to both servers says HELLO to B, gets B's
 * greeter, and the card is tapped there: B moves it to A, which shows it
 * the session (at session_port). Each measured one goes to mig_record().
 * *shows: the console showing the session, before and after.
 */
void mig_group_migrations(enum slim_sec_mode mode, uint16_t port_b, size_t migrations,
		uint16_t session_port, struct bench_console **shows, struct mig_group_stats *st);

/* The placement of MIG_PLACEMENT_LOGINS logins across servers A, B and C. */
struct mig_placement {
	bool done;
	size_t logins, failed;
	uint32_t sessions[MIG_PLACEMENT_SERVERS]; /* our users' sessions per server, from `list` */
	uint32_t landed[MIG_PLACEMENT_SERVERS];   /* where each console got its session */
	uint32_t moved;                           /* consoles MOVEd by placement at HELLO */
	uint32_t spread;                          /* max - min of sessions */
	uint32_t registry_lag;                    /* logins the registry had not seen in 3 s */
	uint64_t login_p50_us;                    /* HELLO -> the session shown, p50 */
	const char *weights;                      /* the weights in the servers' configuration */
};
/*
 * --group, after the migrations: the session on A ended, a third server
 * C started in the group, then MIG_PLACEMENT_LOGINS times a new console
 * (MIG_PLACEMENT_WIDTH x HEIGHT) says HELLO to A, follows any MOVE, and a
 * user of its own logs in at its greeter. Counted per server, then every
 * one of those sessions ended and the consoles stopped.
 */
void mig_placement_run(enum slim_sec_mode mode, uint16_t port_a, uint16_t port_b,
		struct mig_placement *p);

#endif
