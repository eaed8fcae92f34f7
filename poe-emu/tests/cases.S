/* cases.S - one assembled instruction per row of cases.def, in order */
#define CASE(kind, flags, size, ea, wb, ...) __VA_ARGS__ ;
	.text
	.globl cases
cases:
#include "cases.def"
