#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "slim-log.h"
#include "userdb.h"

/* s as a JSON string: quotes, backslashes and control bytes escaped. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

/* What was made aside as tmp takes path's place, whole: a lookup never sees half. */
static bool place(const char *tmp, const char *path)
{
	if (rename(tmp, path) != 0) {
		slim_log(SLIM_LOG_ERROR, "userdb: %s: %s", path, strerror(errno));
		unlink(tmp);
		return false;
	}
	return true;
}

bool slim_userdb_add(const char *dir, const char *name, uid_t uid, gid_t gid,
		const char *home, const char *shell)
{
	if (strchr(name, '/') || name[0] == '.') {
		return false;
	}
	char path[PATH_MAX], tmp[PATH_MAX + 8], link[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s.user", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(link, sizeof(link), "%s/%u.user", dir, (unsigned)uid);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		slim_log(SLIM_LOG_ERROR, "userdb: %s: %s", dir, strerror(errno));
		return false;
	}
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		slim_log(SLIM_LOG_ERROR, "userdb: %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	fputs("{\"userName\":", f);
	put_string(f, name);
	fprintf(f, ",\"uid\":%u,\"gid\":%u,\"homeDirectory\":", (unsigned)uid, (unsigned)gid);
	put_string(f, home);
	fputs(",\"shell\":", f);
	put_string(f, shell);
	fputs(",\"realName\":\"slimland greeter\",\"disposition\":\"dynamic\"}\n", f);
	if (fclose(f) != 0) {
		slim_log(SLIM_LOG_ERROR, "userdb: %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return false;
	}
	if (!place(tmp, path)) {
		return false;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", link);
	unlink(tmp);
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s.user", name);
	if (symlink(target, tmp) != 0) {
		slim_log(SLIM_LOG_ERROR, "userdb: %s: %s", tmp, strerror(errno));
		unlink(path);
		return false;
	}
	if (!place(tmp, link)) {
		unlink(path);
		return false;
	}
	return true;
}

void slim_userdb_remove(const char *dir, uid_t uid)
{
	char link[PATH_MAX], target[NAME_MAX + 1], path[PATH_MAX];
	snprintf(link, sizeof(link), "%s/%u.user", dir, (unsigned)uid);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		/* only a record beside it: never a path elsewhere */
		if (!strchr(target, '/') && target[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, target);
			unlink(path);
		}
	}
	unlink(link);
}
