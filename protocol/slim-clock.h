/*
 * The one clock slimland keeps time with: CLOCK_MONOTONIC, which nobody
 * sets and which never goes back. Input events' milliseconds, the
 * datagrams' times of arrival, the jitter buffers' and every timeout are
 * on it, in whichever unit the reader needs.
 */
#ifndef SLIM_CLOCK_H
#define SLIM_CLOCK_H

#include <stdint.h>

uint64_t slim_now_ns(void);
uint64_t slim_now_us(void);
uint64_t slim_now_ms(void);

#endif
