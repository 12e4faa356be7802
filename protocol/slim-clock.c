#include <time.h>
#include "slim-clock.h"

uint64_t slim_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t slim_now_us(void)
{
	return slim_now_ns() / 1000u;
}

uint64_t slim_now_ms(void)
{
	return slim_now_ns() / 1000000u;
}
