/*
 * fault.h - delivering an overlay permission fault
 */
#ifndef POE_FAULT_H
#define POE_FAULT_H

#include "state.h"
#include "policy.h"
#include "regs.h"

/* What the handler must read, and the log's description. */
struct poe_fault_info {
	uint64_t pc;		/* the access or the fetched instruction */
	unsigned el;		/* EL the access runs at */
	bool exec;		/* instruction abort, else data abort */
	bool wnr, cm;		/* data abort: write, cache maintenance */
	uint64_t por;		/* the POR value that denied it (log) */
	const char *what, *kind;
};

/* Deliver the fault for verdict vd; does not return (moves the PC). */
__attribute__((noreturn))
void poe_fault_deliver(struct poe_vcpu *v, const struct poe_fault_info *fi,
		       const struct poe_verdict *vd);
/* an exception or interrupt was taken (after the vCPU's EL update) */
void poe_fault_discon(struct poe_vcpu *v, enum qemu_plugin_discon_type type);
/* MRS ESR_EL1 / FAR_EL1 / ELR_EL1: patched while a fault is pending */
void poe_fault_instrument_mrs(struct qemu_plugin_insn *insn,
			      enum poe_reg_id which, unsigned rt);
/* the syndrome the handler reads (exported for the tests) */
uint64_t poe_fault_esr(const struct poe_fault *f);

#endif
