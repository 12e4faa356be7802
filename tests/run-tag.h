/*
 * A C test's run tag, claimed as tests/integration/slimrun.py claims one:
 * "st" and five letters or digits, with a lock on
 * $SLIMTEST_RUNS_DIR (/var/lib/slimtest)/TAG.lock held until the process
 * ends. What the test makes in the machine's shared namespaces (users, PAM
 * services, cgroups) is named "TAG-label", so that two runs at once never
 * share one, and what a killed run left is swept by the next integration
 * test (slimrun.py), which finds the lock free.
 */
#ifndef SLIM_RUN_TAG_H
#define SLIM_RUN_TAG_H

#include <stdbool.h>
#include <stddef.h>

/* "TAG-label" into out (the tag claimed on first use); false if no tag can be had. */
bool run_tag_name(char *out, size_t size, const char *label);
/*
 * A block of uids that belong to no user and that no other run has (for a
 * manager's greeter_uids), claimed as slimrun.claim_uids claims one: the
 * file RUNS_DIR/uids-FIRST holding the tag, removed at run_tag_release or
 * swept with the run. False if none can be had.
 */
bool run_tag_uids(unsigned *first, unsigned *last);
/* The same, for at least `count` uids: as many neighbouring blocks, each claimed so. */
bool run_tag_uids_at_least(unsigned count, unsigned *first, unsigned *last);
/*
 * At a clean exit: the lock file goes (nothing is left to sweep), with the
 * claimed uids and their user records (/run/userdb/UID.user, which a
 * manager leaves for the greeters it leaves running).
 */
void run_tag_release(void);

#endif
