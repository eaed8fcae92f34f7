/* sys.S - one assembled instruction per row of sys.def, in order */
#define SYS(kind, bcast, rt, ...) __VA_ARGS__ ;
	.arch armv8.8-a
	.text
	.globl sys_cases
sys_cases:
#include "sys.def"
