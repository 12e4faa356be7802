/*
 * The session manager's tests (manager-harness.h says how they drive it):
 * its consoles, its sessions, and what an administrator does to it.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "manager-harness.h"

int main(void)
{
	slim_log_init(SLIM_LOG_DEBUG, quiet);
	signal(SIGPIPE, SIG_IGN);
	int failed = _cmocka_run_group_tests("consoles", manager_consoles_tests,
		manager_consoles_tests_n, NULL, NULL);
	failed += _cmocka_run_group_tests("sessions", manager_sessions_tests,
		manager_sessions_tests_n, NULL, NULL);
	failed += _cmocka_run_group_tests("admin", manager_admin_tests, manager_admin_tests_n,
		NULL, NULL);
	failed += _cmocka_run_group_tests("shadow", manager_shadow_tests, manager_shadow_tests_n,
		NULL, NULL);
	return failed;
}
