#include <stdlib.h>
#include "slim-alloc.h"
#include "slim-log.h"

void *slim_xalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);
	if (!p) {
		slim_log(SLIM_LOG_ERROR, "out of memory for %zu bytes: aborting", size);
		abort();
	}
	return p;
}
