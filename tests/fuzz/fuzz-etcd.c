/*
 * libFuzzer target: what etcd answers, into a server group's registry
 * (group.c): grants, claims, keepalives, ranges, a watch's messages and
 * puts, through the parsing a real answer takes (slim_etcd_parse) and the
 * handlers, then slimlandctl group and a publish of the manager's table.
 * etcd is input here: a member may be compromised, or something else may
 * answer at its address.
 *
 * The input is text split at '\n'; each piece's first byte says which
 * request it answers (its value mod 6: grant, claim, keepalive, range,
 * watch, put), the rest is the answer. For example
 *   3{"header":{"revision":"5"},"kvs":[{"key":"L3NsaW1sYW5kL3NlcnZlcnMvYQ==","value":"e30="}]}
 *   4{"result":{"events":[{"type":"DELETE","kv":{"key":"L3NsaW1sYW5kL3NlcnZlcnMvYQ=="}}]}}
 * Each input gets a fresh manager and group; its etcd endpoint is a port
 * nobody listens on, and the event loop never runs, so nothing leaves.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz-common.h"
#include "fuzz-sessiond-fakes.h"
#include "group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void count(void *data, const char *line)
{
	sink += strlen(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wl_event_loop *loop;
	if (!loop) {
		slim_log_init(SLIM_LOG_DEBUG, fuzz_quiet_log);
		loop = wl_event_loop_create();
		/* held for the fuzzer's life: each group's would set up TLS again */
		curl_global_init(CURL_GLOBAL_DEFAULT);
	}
	struct slim_manager *mgr = fuzz_manager_create(loop, SLIM_ENROLL_OPEN);
	struct slim_group_config config;
	slim_group_config_defaults(&config);
	snprintf(config.etcd, sizeof(config.etcd), "http://127.0.0.1:9");
	snprintf(config.name, sizeof(config.name), "fuzz");
	struct slim_group *group = slim_group_create(mgr, &config);
	if (!group) {
		abort();
	}
	size_t pos = 0;
	while (pos < size) {
		const uint8_t *end = memchr(data + pos, '\n', size - pos);
		size_t n = end ? (size_t)(end - (data + pos)) : size - pos;
		if (n > 0) {
			/* 'c': a card's claim; else one of the others, as before */
			slim_group_answer(group, data[pos] == 'c' ? SLIM_GROUP_CARD_CLAIM :
				(enum slim_group_request)(data[pos] % 6),
				(const char *)data + pos + 1, n - 1);
		}
		pos += n + 1;
	}
	slim_group_view(group, count, NULL);
	slim_group_changed(group);
	slim_group_destroy(group);
	fuzz_manager_destroy(mgr);
	return 0;
}
