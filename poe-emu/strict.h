/*
 * strict.h - strict mode (strict=on,sysmap=FILE) and the fault log
 */
#ifndef POE_STRICT_H
#define POE_STRICT_H

#include "state.h"
#include "policy.h"

/* needs the System.map loaded (sysmap.c), with vectors and the bounds
 * of the exception table */
bool poe_strict_init(void);
/* has the kernel an exception-table fixup for pc? */
bool poe_strict_expected(uint64_t pc);
/*
 * Is pc in a function named by strict_allow=? Then the denied access is
 * one the guest makes on purpose (LKDTM's page-table writes): report it
 * and let it fault as on hardware.
 */
bool poe_strict_allowed(struct poe_vcpu *v, uint64_t pc, uint64_t va,
			unsigned key, uint64_t por);
/*
 * Stop QEMU (exit status 3) with a report: what went wrong, where (vCPU,
 * PC, symbol+offset, instruction), the access (VA, key) and POR_EL1.
 */
__attribute__((noreturn))
void poe_strict_abort(struct poe_vcpu *v, const char *why, uint64_t pc,
		      uint32_t word, const char *what, uint64_t va,
		      unsigned key, uint64_t por);

/* log=FILE: one line per delivered fault, and copies of the stats */
void poe_log_fault(struct poe_vcpu *v);
void poe_log_line(const char *line);

#endif
