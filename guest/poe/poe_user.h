/*
 * poe_user.h - user-pkey definitions the guest POE tests share
 *
 * The cross toolchain's libc headers may predate arm64 POE: these are
 * the kernel's values (uapi hwcap.h, siginfo.h, mman.h for arm64).
 */
#ifndef POE_USER_H
#define POE_USER_H

#include <stdint.h>

#ifndef HWCAP2_POE
#define HWCAP2_POE (1UL << 63)
#endif
#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif

/* pkey_alloc()/pkey_set() rights: PKEY_DISABLE_{ACCESS,WRITE,EXECUTE,READ} */
#define KEY_DENY_ACCESS 1
#define KEY_DENY_WRITE 2
#define KEY_DENY_EXECUTE 4
#define KEY_DENY_READ 8

#define KSFT_SKIP 4

/* POR_EL0 by its encoding: older assemblers do not know the name. */
static inline uint64_t por_read(void)
{
	uint64_t v;

	asm volatile("mrs %0, S3_3_C10_C2_4" : "=r"(v));
	return v;
}

static inline void por_write(uint64_t v)
{
	asm volatile("msr S3_3_C10_C2_4, %0\n\tisb" : : "r"(v) : "memory");
}

#endif /* POE_USER_H */
