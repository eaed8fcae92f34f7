/*
 * sysreg.h - emulation of the POE system registers, TLB maintenance,
 * context synchronisation and PSCI power-down
 */
#ifndef POE_SYSREG_H
#define POE_SYSREG_H

#include "qemu-plugin-api.h"
#include "sysdec.h"

/*
 * instrument a system instruction translated at vaddr (see
 * poe_insn_pc()); false if it is none of ours
 */
bool poe_sysreg_instrument(struct qemu_plugin_insn *insn,
			   const struct sys_insn *si, uint64_t vaddr);

#endif
