/*
 * regs.c - guest register access through the plugin API (see regs.h)
 *
 * qemu_plugin_get_registers() lists the registers QEMU's gdbstub knows,
 * by name (QEMU's names for system registers); the handles are the same
 * on every vCPU. Reads and writes are only valid from callbacks that
 * declared register access (QEMU_PLUGIN_CB_R_REGS or more).
 */
#include <stdio.h>
#include <string.h>

#include "regs.h"

static struct qemu_plugin_register *reg[R_NUM];
static struct qemu_plugin_register *xreg[31];
static bool ready;
static __thread GByteArray *buf __attribute__((tls_model("initial-exec")));

static const char *const reg_names[R_NUM] = {
	[R_TCR_EL1] = "TCR_EL1", [R_TTBR0_EL1] = "TTBR0_EL1",
	[R_TTBR1_EL1] = "TTBR1_EL1", [R_SCTLR_EL1] = "SCTLR_EL1",
	[R_TCR2_EL1] = "TCR2_EL1", [R_PIR_EL1] = "PIR_EL1",
	[R_PIRE0_EL1] = "PIRE0_EL1", [R_CPACR_EL1] = "CPACR_EL1",
	[R_ID_AA64MMFR3_EL1] = "ID_AA64MMFR3_EL1", [R_ESR_EL1] = "ESR_EL1",
	[R_FAR_EL1] = "FAR_EL1", [R_VBAR_EL1] = "VBAR_EL1",
	[R_DCZID_EL0] = "DCZID_EL0", [R_CPSR] = "cpsr", [R_SP] = "sp",
	[R_ELR_EL1] = "ELR_EL1", [R_SPSR_EL1] = "SPSR_EL1", [R_PC] = "pc",
};

bool poe_regs_init(bool verbose)
{
	GArray *regs = qemu_plugin_get_registers();
	bool ok = true;
	unsigned i, j;
	char name[8];

	for (i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r =
			&g_array_index(regs, qemu_plugin_reg_descriptor, i);

		for (j = 0; j < R_NUM; j++)
			if (!strcmp(r->name, reg_names[j]))
				reg[j] = r->handle;
		for (j = 0; j < 31; j++) {
			snprintf(name, sizeof(name), "x%u", j);
			if (!strcmp(r->name, name))
				xreg[j] = r->handle;
		}
	}
	g_array_free(regs, true);
	for (j = 0; j < R_NUM; j++) {
		if (!reg[j] && j == R_DCZID_EL0) {
			continue;	/* optional: ZVA size defaults to 64 */
		} else if (!reg[j]) {
			fprintf(stderr, "poe-emu: register %s not found\n",
				reg_names[j]);
			ok = false;
		} else if (verbose) {
			fprintf(stderr, "poe-emu: register %s found\n",
				reg_names[j]);
		}
	}
	for (j = 0; j < 31; j++)
		if (!xreg[j])
			ok = false;
	ready = true;
	return ok;
}

bool poe_regs_ready(void)
{
	return ready;
}

static uint64_t read_handle(struct qemu_plugin_register *h)
{
	uint64_t x = 0;

	if (!h)
		return 0;
	if (!buf)
		buf = g_byte_array_new();
	buf->len = 0;		/* faster than g_byte_array_set_size() */
	if (qemu_plugin_read_register(h, buf))
		memcpy(&x, buf->data, MIN(buf->len, sizeof(x)));
	return x;
}

uint64_t poe_reg_read(enum poe_reg_id id)
{
	return read_handle(reg[id]);
}

uint64_t poe_gpr_read(unsigned n, bool sp)
{
	if (n == 31)
		return sp ? read_handle(reg[R_SP]) : 0;
	return read_handle(xreg[n]);
}

void poe_gpr_write(unsigned n, uint64_t val)
{
	if (n == 31 || !xreg[n])
		return;
	if (!buf)
		buf = g_byte_array_new();
	g_byte_array_set_size(buf, sizeof(val));
	memcpy(buf->data, &val, sizeof(val));
	qemu_plugin_write_register(xreg[n], buf);
}

/*
 * QEMU's aarch64 system-mode TBs are position independent (CF_PCREL): a
 * TB is looked up by physical address and runs at every virtual address
 * that maps the same physical page (a program's text in two processes, a
 * shared library). So the vaddr the plugin saw at translation is only
 * where the instruction ran first, and its page may be another process's.
 * The "pc" register, read in a callback, is not that instruction's address
 * either: QEMU writes the PC back only at the start of a TB and before
 * some instructions, so it is the address of the TB's first instruction or
 * of a later one up to this one, which is less than 4K before (a TB has at
 * most 512 instructions). The two addresses of a shared page differ by a
 * multiple of the page size, so an instruction keeps its offset in its
 * page, and this one runs at the only address at or after that PC, less
 * than 4K on, with vaddr's offset.
 */
uint64_t poe_insn_pc(uint64_t vaddr)
{
	uint64_t pc = read_handle(reg[R_PC]);

	return pc + ((vaddr - pc) & 0xfff);
}
