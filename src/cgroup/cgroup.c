/*
 * The cgroup tree of slimland sessions: see cgroup.h. Everything here is a
 * file in a cgroup filesystem: mkdir, a value written, a list read.
 */
#define _GNU_SOURCE /* realpath with NULL, dirent */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup.h"

static const char *const class_names[SLIM_CGROUP_CLASSES] = {
	[SLIM_CGROUP_COMPOSITOR] = "compositor",
	[SLIM_CGROUP_INTERACTIVE] = "interactive",
	[SLIM_CGROUP_BACKGROUND] = "background",
	[SLIM_CGROUP_HIDDEN] = "hidden",
};

const char *slim_cgroup_class_name(enum slim_cgroup_class class)
{
	return (unsigned)class < SLIM_CGROUP_CLASSES ? class_names[class] : "";
}

void slim_cgroup_policy_defaults(struct slim_cgroup_policy *p)
{
	*p = (struct slim_cgroup_policy){
		.enabled = true,
		.weight = {
			[SLIM_CGROUP_COMPOSITOR] = 1000,
			[SLIM_CGROUP_INTERACTIVE] = 1000,
			[SLIM_CGROUP_BACKGROUND] = 100,
			[SLIM_CGROUP_HIDDEN] = 10,
		},
		.hidden_idle = true,
		.memory_low = 256ull << 20,
		.background_soft_limit = 64ull << 20,
		.detached_idle = true,
		.slice = "slimland.slice",
	};
}

/* A cgroup directory's name: no path, nothing hidden, nothing odd. */
static bool slice_name_ok(const char *name, size_t size)
{
	size_t n = strlen(name);
	if (n == 0 || n >= size || name[0] == '.') {
		return false;
	}
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"0123456789._-") == n;
}

static bool parse_number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	if (*s < '0' || *s > '9') {
		return false;
	}
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > max) {
		return false;
	}
	*out = v;
	return true;
}

static int choose(const char *value, const char *yes, const char *no, bool *out)
{
	if (strcmp(value, yes) == 0 || strcmp(value, no) == 0) {
		*out = strcmp(value, yes) == 0;
		return 1;
	}
	return 0;
}

int slim_cgroup_policy_apply(struct slim_cgroup_policy *p, const char *key, const char *value)
{
	unsigned long v;
	if (strcmp(key, "cgroups") == 0) {
		return choose(value, "on", "off", &p->enabled);
	} else if (strcmp(key, "cgroup_slice") == 0) {
		if (!slice_name_ok(value, sizeof(p->slice))) {
			return 0;
		}
		snprintf(p->slice, sizeof(p->slice), "%s", value);
		return 1;
	} else if (strcmp(key, "hidden") == 0) {
		return choose(value, "idle", "weight", &p->hidden_idle);
	} else if (strcmp(key, "detached") == 0) {
		return choose(value, "idle", "fair", &p->detached_idle);
	} else if (strcmp(key, "memory_low") == 0 || strcmp(key, "background_soft_limit") == 0) {
		if (!parse_number(value, 1ul << 20, &v)) {
			return 0;
		}
		*(key[0] == 'm' ? &p->memory_low : &p->background_soft_limit) = (uint64_t)v << 20;
		return 1;
	} else if (strncmp(key, "weight_", 7) == 0) {
		for (int c = 0; c < SLIM_CGROUP_CLASSES; c++) {
			if (strcmp(key + 7, class_names[c]) == 0) {
				if (!parse_number(value, 10000, &v) || v == 0) {
					return 0;
				}
				p->weight[c] = (unsigned)v;
				return 1;
			}
		}
	}
	return -1;
}

/*
 * slim_cgroup_manager_base's finding and the slice: "slimland.slice/" or
 * "system.slice/slimland-sessiond.service/slimland.slice/"
 */
static char base[192] = "slimland.slice/";

void slim_cgroup_path(char *out, size_t size, uid_t uid, uint32_t session_id)
{
	int n = snprintf(out, size, "%suser-%u.slice", base, (unsigned)uid);
	if (session_id && n > 0 && (size_t)n < size) {
		snprintf(out + n, size - (size_t)n, "/session-%u", session_id);
	}
}

/* ---- files ---- */

static bool write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	size_t len = strlen(value);
	bool ok = write(fd, value, len) == (ssize_t)len;
	int saved = errno;
	close(fd);
	errno = saved;
	return ok;
}

/* Reads a small file into buf (NUL-terminated); its length, or -1. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	size_t got = 0;
	ssize_t n;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0) {
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static bool path_join(char *out, size_t size, const char *a, const char *b, const char *c)
{
	int n = snprintf(out, size, "%s%s%s%s%s", a, b && *b ? "/" : "", b ? b : "",
		c && *c ? "/" : "", c ? c : "");
	return n >= 0 && (size_t)n < size;
}

static bool has_word(const char *list, const char *word, const char *seps)
{
	size_t len = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += len) {
		bool starts = p == list || strchr(seps, p[-1]);
		bool ends = p[len] == '\0' || strchr(seps, p[len]);
		if (starts && ends) {
			return true;
		}
	}
	return false;
}

/* ---- finding the hierarchies ---- */

static bool add_v1(struct slim_cgroup_fs *fs, const char *root, const char *const *dirs,
		const char *probe, const char *controller)
{
	for (; *dirs; dirs++) {
		char dir[128], file[192];
		if (!path_join(dir, sizeof(dir), root, *dirs, NULL) ||
				!path_join(file, sizeof(file), dir, probe, NULL) ||
				access(file, F_OK) != 0) {
			continue;
		}
		/* cpu and cpuacct mounted together: one hierarchy */
		char *real = realpath(dir, NULL);
		for (size_t i = 0; real && i < fs->n; i++) {
			char *other = realpath(fs->mount[i], NULL);
			bool same = other && strcmp(real, other) == 0;
			free(other);
			if (same) {
				free(real);
				return true;
			}
		}
		free(real);
		snprintf(fs->mount[fs->n], sizeof(fs->mount[0]), "%s", dir);
		snprintf(fs->controllers[fs->n], sizeof(fs->controllers[0]), "%s", controller);
		fs->n++;
		return true;
	}
	return false;
}

bool slim_cgroup_fs_detect(struct slim_cgroup_fs *fs, const char *root, char *why, size_t why_len)
{
	memset(fs, 0, sizeof(*fs));
	char path[192], controllers[256];
	if (path_join(path, sizeof(path), root, "cgroup.controllers", NULL) &&
			read_file(path, controllers, sizeof(controllers)) >= 0) {
		if (!has_word(controllers, "cpu", " \n")) {
			snprintf(why, why_len, "the cgroup v2 hierarchy at %s has no cpu controller",
				root);
			return false;
		}
		fs->version = 2;
		fs->n = 1;
		snprintf(fs->mount[0], sizeof(fs->mount[0]), "%s", root);
		return true;
	}
	static const char *const cpu[] = { "cpu", "cpu,cpuacct", NULL };
	static const char *const cpuacct[] = { "cpuacct", "cpu,cpuacct", NULL };
	static const char *const memory[] = { "memory", NULL };
	if (!add_v1(fs, root, cpu, "cpu.shares", "cpu")) {
		snprintf(why, why_len, "no cgroup v2 hierarchy with the cpu controller and no v1 "
			"cpu hierarchy under %s", root);
		return false;
	}
	add_v1(fs, root, cpuacct, "cpuacct.usage", "cpuacct");
	add_v1(fs, root, memory, "memory.soft_limit_in_bytes", "memory");
	fs->version = 1;
	return true;
}

static bool is_v1(const struct slim_cgroup_fs *fs, size_t i, const char *controller)
{
	return fs->version == 1 && strcmp(fs->controllers[i], controller) == 0;
}

/* ---- the manager's part: building and delegating ---- */

static bool mkdir_p(const char *mount, const char *rel)
{
	char path[SLIM_CGROUP_PATH + 160];
	if (!path_join(path, sizeof(path), mount, rel, NULL)) {
		errno = ENAMETOOLONG;
		return false;
	}
	for (char *p = path + strlen(mount) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST) {
				return false;
			}
			*p = '/';
		}
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST;
}

static bool knob(const char *dir, const char *name, const char *value)
{
	char path[SLIM_CGROUP_PATH + 200];
	return path_join(path, sizeof(path), dir, name, NULL) && write_file(path, value);
}

/*
 * v2: the cpu and memory controllers enabled in every cgroup from the root
 * down to `rel` (memory only where the kernel has it), so that rel (and,
 * with in_rel, its children) get cpu.weight and memory.low.
 */
static void enable_controllers(const char *mount, const char *rel, bool in_rel)
{
	char dir[SLIM_CGROUP_PATH + 160];
	snprintf(dir, sizeof(dir), "%s", mount);
	const char *p = rel;
	for (;;) {
		/* a v2 cgroup with controllers for its children holds no process */
		if (*p || in_rel) {
			knob(dir, "cgroup.subtree_control", "+cpu");
			knob(dir, "cgroup.subtree_control", "+memory");
		}
		if (p != rel) {
			/* what lies below is protected only as far as its parents are */
			knob(dir, "memory.low", "max");
		}
		if (!*p) {
			break;
		}
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		size_t used = strlen(dir);
		snprintf(dir + used, sizeof(dir) - used, "/%.*s", (int)len, p);
		p += len + (slash ? 1 : 0);
	}
}

/* The files systemd hands over with Delegate=yes, and the directory. */
static bool delegate(const char *dir, uid_t uid, gid_t gid)
{
	static const char *const files[] = {
		"cgroup.procs", "cgroup.threads", "cgroup.subtree_control", "tasks",
	};
	if (chown(dir, uid, gid) != 0) {
		return false;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[SLIM_CGROUP_PATH + 200];
		if (path_join(path, sizeof(path), dir, files[i], NULL) &&
				chown(path, uid, gid) != 0 && errno != ENOENT) {
			return false;
		}
	}
	return true;
}

static void class_knobs(const struct slim_cgroup_fs *fs, size_t i, const char *dir,
		const struct slim_cgroup_policy *p, enum slim_cgroup_class class)
{
	char value[32];
	bool protected = class == SLIM_CGROUP_COMPOSITOR || class == SLIM_CGROUP_INTERACTIVE;
	if (fs->version == 2) {
		snprintf(value, sizeof(value), "%u", p->weight[class]);
		knob(dir, "cpu.weight", value);
		snprintf(value, sizeof(value), "%llu",
			protected ? (unsigned long long)p->memory_low : 0ull);
		knob(dir, "memory.low", value);
	} else if (is_v1(fs, i, "cpu")) {
		unsigned shares = p->weight[class] * 1024 / 100;
		snprintf(value, sizeof(value), "%u", shares < 2 ? 2 : shares);
		knob(dir, "cpu.shares", value);
	} else if (is_v1(fs, i, "memory") && !protected) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)p->background_soft_limit);
		knob(dir, "memory.soft_limit_in_bytes", value);
	}
	if (class == SLIM_CGROUP_HIDDEN && p->hidden_idle &&
			(fs->version == 2 || is_v1(fs, i, "cpu"))) {
		knob(dir, "cpu.idle", "1"); /* a kernel without it keeps the weight */
	}
}

void slim_cgroup_manager_base(const struct slim_cgroup_fs *fs, const char *slice,
		char *where, size_t where_len)
{
	char own[SLIM_CGROUP_PATH], dir[SLIM_CGROUP_PATH + 160];
	snprintf(base, sizeof(base), "%s/", slice);
	snprintf(where, where_len, "%s/%s", fs->mount[0], slice);
	if (fs->version != 2 || access("/run/systemd/system", F_OK) != 0 ||
			!slim_cgroup_of(fs, getpid(), own, sizeof(own)) || !own[0] ||
			strlen(own) + strlen(slice) + 3 > sizeof(base)) {
		return;
	}
	/* a restarted manager is in its "manager" child already */
	size_t len = strlen(own);
	if (len > 8 && strcmp(own + len - 8, "/manager") == 0) {
		own[len - 8] = '\0';
		len -= 8;
	}
	/* only a service's cgroup is delegated (Delegate=yes); a login's scope is not */
	if (len < 8 || strcmp(own + len - 8, ".service") != 0) {
		return;
	}
	if (!path_join(dir, sizeof(dir), fs->mount[0], own, "manager") ||
			(mkdir(dir, 0755) != 0 && errno != EEXIST) ||
			!knob(dir, "cgroup.procs", "0")) {
		snprintf(where, where_len, "%s/%s (cannot use the service's cgroup %s: %s)",
			fs->mount[0], slice, own, strerror(errno));
		return;
	}
	snprintf(base, sizeof(base), "%s/%s/", own, slice);
	snprintf(where, where_len, "%s/%s/%s (the service's delegated cgroup)", fs->mount[0], own,
		slice);
}

bool slim_cgroup_session_create(const struct slim_cgroup_fs *fs,
		const struct slim_cgroup_policy *policy, const char *rel, uid_t uid, gid_t gid,
		char *why, size_t why_len)
{
	if (fs->version == 0 || strstr(rel, "..") || strlen(rel) > SLIM_CGROUP_PATH - 16) {
		snprintf(why, why_len, "no cgroup hierarchy, or a bad cgroup path %s", rel);
		return false;
	}
	for (size_t i = 0; i < fs->n; i++) {
		const char *mount = fs->mount[i];
		char dir[SLIM_CGROUP_PATH + 160];
		if (!mkdir_p(mount, rel)) {
			snprintf(why, why_len, "cannot create %s/%s: %s", mount, rel, strerror(errno));
			return false;
		}
		if (fs->version == 2) {
			enable_controllers(mount, rel, policy->enabled);
		}
		path_join(dir, sizeof(dir), mount, rel, NULL);
		if (!delegate(dir, uid, gid)) {
			snprintf(why, why_len, "cannot hand %s to uid %u: %s", dir, (unsigned)uid,
				strerror(errno));
			return false;
		}
		for (int c = 0; policy->enabled && c < SLIM_CGROUP_CLASSES; c++) {
			path_join(dir, sizeof(dir), mount, rel, class_names[c]);
			if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
				snprintf(why, why_len, "cannot create %s: %s", dir, strerror(errno));
				return false;
			}
			class_knobs(fs, i, dir, policy, c);
			if (!delegate(dir, uid, gid)) {
				snprintf(why, why_len, "cannot hand %s to uid %u: %s", dir,
					(unsigned)uid, strerror(errno));
				return false;
			}
		}
	}
	return true;
}

void slim_cgroup_session_remove(const struct slim_cgroup_fs *fs, const char *rel)
{
	for (size_t i = 0; i < fs->n; i++) {
		char dir[SLIM_CGROUP_PATH + 160];
		for (int c = 0; c < SLIM_CGROUP_CLASSES; c++) {
			if (path_join(dir, sizeof(dir), fs->mount[i], rel, class_names[c])) {
				rmdir(dir);
			}
		}
		if (path_join(dir, sizeof(dir), fs->mount[i], rel, NULL)) {
			rmdir(dir);
		}
	}
}

bool slim_cgroup_set_idle(const struct slim_cgroup_fs *fs, const char *rel, bool idle)
{
	if (fs->version == 0 || !mkdir_p(fs->mount[0], rel)) {
		return false;
	}
	char dir[SLIM_CGROUP_PATH + 160];
	path_join(dir, sizeof(dir), fs->mount[0], rel, NULL);
	if (knob(dir, "cpu.idle", idle ? "1" : "0")) {
		return true;
	}
	/* no cpu.idle (v2 before Linux 5.15): the least weight instead */
	return fs->version == 2 ? knob(dir, "cpu.weight", idle ? "1" : "100") :
		knob(dir, "cpu.shares", idle ? "2" : "1024");
}

/* ---- the compositor's part: moving ---- */

size_t slim_cgroup_procs_paths(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, char procs[][SLIM_CGROUP_PATH + 32])
{
	size_t n = 0;
	for (size_t i = 0; i < fs->n; i++) {
		char dir[SLIM_CGROUP_PATH + 160];
		if (path_join(dir, sizeof(dir), fs->mount[i], rel, slim_cgroup_class_name(class)) &&
				path_join(procs[n], SLIM_CGROUP_PATH + 32, dir, "cgroup.procs", NULL)) {
			n++;
		}
	}
	return n;
}

int slim_cgroup_move(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, pid_t pid)
{
	char procs[SLIM_CGROUP_MAX_HIER][SLIM_CGROUP_PATH + 32];
	size_t n = slim_cgroup_procs_paths(fs, rel, class, procs);
	char value[24];
	snprintf(value, sizeof(value), "%d", (int)pid);
	int err = n ? 0 : ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!write_file(procs[i], value) && !err) {
			err = errno;
		}
	}
	return err;
}

long slim_cgroup_class_read(const struct slim_cgroup_fs *fs, const char *rel,
		enum slim_cgroup_class class, pid_t *pids, size_t max, uint64_t *cpu_us)
{
	*cpu_us = 0;
	char dir[SLIM_CGROUP_PATH + 160], path[SLIM_CGROUP_PATH + 200], buf[8192];
	if (fs->version == 0 ||
			!path_join(dir, sizeof(dir), fs->mount[0], rel, class_names[class]) ||
			!path_join(path, sizeof(path), dir, "cgroup.procs", NULL) ||
			read_file(path, buf, sizeof(buf)) < 0) {
		return -1;
	}
	long count = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if ((size_t)count < max) {
			pids[count] = (pid_t)atoi(line);
		}
		count++;
	}
	for (size_t i = 0; i < fs->n; i++) {
		bool v1 = is_v1(fs, i, "cpuacct") || (is_v1(fs, i, "cpu") &&
			strstr(fs->mount[i], "cpuacct"));
		if (fs->version == 2 || v1) {
			path_join(dir, sizeof(dir), fs->mount[i], rel, class_names[class]);
			path_join(path, sizeof(path), dir, v1 ? "cpuacct.usage" : "cpu.stat", NULL);
			if (read_file(path, buf, sizeof(buf)) < 0) {
				continue;
			}
			const char *usage = v1 ? buf : strstr(buf, "usage_usec ");
			if (usage) {
				unsigned long long v = strtoull(usage + (v1 ? 0 : 11), NULL, 10);
				*cpu_us = v1 ? v / 1000 : v;
			}
		}
	}
	return count;
}

bool slim_cgroup_memory_read(const struct slim_cgroup_fs *fs, const char *rel, uint64_t *bytes)
{
	for (size_t i = 0; i < fs->n; i++) {
		bool v1 = is_v1(fs, i, "memory");
		if (fs->version != 2 && !v1) {
			continue;
		}
		char path[SLIM_CGROUP_PATH + 200], buf[64];
		if (path_join(path, sizeof(path), fs->mount[i], rel,
				v1 ? "memory.usage_in_bytes" : "memory.current") &&
				read_file(path, buf, sizeof(buf)) > 0 && buf[0] >= '0' && buf[0] <= '9') {
			*bytes = strtoull(buf, NULL, 10);
			return true;
		}
	}
	return false;
}

bool slim_cgroup_of(const struct slim_cgroup_fs *fs, pid_t pid, char *rel, size_t rel_len)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (fs->version == 0 || read_file(path, buf, sizeof(buf)) < 0) {
		return false;
	}
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		/* ID:CONTROLLERS:/PATH, v2's "0::/PATH" */
		char *a = strchr(line, ':');
		char *b = a ? strchr(a + 1, ':') : NULL;
		if (!b || b[1] != '/') {
			continue;
		}
		*b = '\0';
		bool match = fs->version == 2 ? a[1] == '\0' : has_word(a + 1, "cpu", ",");
		if (match) {
			snprintf(rel, rel_len, "%s", b + 2);
			return true;
		}
	}
	return false;
}

size_t slim_cgroup_descendants(pid_t pid, pid_t *out, size_t max)
{
	size_t n = 0;
	/* breadth first: out[] is the queue of processes whose children to read */
	for (size_t next = 0;; next++) {
		pid_t parent = next == 0 ? pid : (next - 1 < n ? out[next - 1] : 0);
		if (parent == 0) {
			return n;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)parent);
		DIR *tasks = opendir(path);
		if (!tasks) {
			continue; /* gone meanwhile */
		}
		struct dirent *t;
		while ((t = readdir(tasks))) {
			if (t->d_name[0] == '.') {
				continue;
			}
			char file[96], buf[4096];
			snprintf(file, sizeof(file), "/proc/%d/task/%.16s/children", (int)parent,
				t->d_name);
			if (read_file(file, buf, sizeof(buf)) <= 0) {
				continue;
			}
			for (char *w = strtok(buf, " \n"); w && n < max; w = strtok(NULL, " \n")) {
				out[n++] = (pid_t)atoi(w);
			}
		}
		closedir(tasks);
	}
}
