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
/* At a clean exit: the lock file goes (nothing is left to sweep). */
void run_tag_release(void);

#endif
