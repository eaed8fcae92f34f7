/*
 * plugin.c - poe-emu: FEAT_S1POE emulation for QEMU TCG (arm64 system mode)
 *
 * QEMU glue only: installation (options are parsed by state.c), vCPU
 * initialisation, translation-time instrumentation (dispatched to the
 * bench counters, the window attribution, the system instruction
 * emulation, the access and fetch checks and the window stores), the
 * discontinuity callback and exit. See README.md for what is emulated;
 * the modules are, from the bottom up:
 *   decode.c, sysdec.c  instruction decoders (no QEMU dependency)
 *   sysmap.c            the kernel's System.map (sysmap=FILE)
 *   regs.c              register access
 *   count.c             bench counters (bench=FILE)
 *   profile.c           bench rows' EL1 instructions by block (profile=FILE)
 *   state.c             options, per-vCPU state, gates, context sync
 *   window.c, caller.c  page-table window instructions by function,
 *                       callers of the functions that leak into windows
 *   walk.c, policy.c    table walk, soft TLB, the permission decision
 *   tlbmodel.c          the TLB model of the bench (tlb=on)
 *   store.c, path.c,    stores in page-table windows, by target; the
 *   target.c            call paths and targets of those to other memory
 *   strict.c, fault.c   strict mode and log, fault delivery
 *   sysreg.c, check.c   system instruction emulation, access/fetch checks
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "count.h"
#include "decode.h"
#include "fault.h"
#include "profile.h"
#include "regs.h"
#include "state.h"
#include "store.h"
#include "strict.h"
#include "sysdec.h"
#include "sysmap.h"
#include "sysreg.h"
#include "tlbmodel.h"
#include "window.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static GMutex init_lock;
static qemu_plugin_id_t plugin_id;

static void tb_trans(struct qemu_plugin_tb *tb, void *ud)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct window_tb wtb = { 0 };
	uint64_t page = 0;

	(void)ud;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		/* where it runs first, maybe not later: see poe_insn_pc() */
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
		struct sys_insn si;
		uint32_t word;

		count_instrument_insn(insn, vaddr);	/* first, see count.c */
		window_instrument_insn(&wtb, insn, vaddr);
		tlbm_instrument_insn(insn, vaddr);
		if (i == 0)
			profile_instrument_tb(insn, vaddr, n);
		if (i == 0 || (vaddr & ~0xfffull) != page) {
			page = vaddr & ~0xfffull;
			poe_check_instrument_fetch(insn, vaddr);
		}
		/* a 2-byte Thumb instruction: AArch32 is not instrumented */
		if (qemu_plugin_insn_data(insn, &word, 4) != 4)
			continue;
		if (sys_decode(word, &si)) {
			count_instrument_sys(insn, &si);
			poe_sysreg_instrument(insn, &si, vaddr);
			continue;
		}
		poe_check_instrument_access(insn, word, vaddr);
		store_instrument_insn(insn, word, vaddr);
	}
}

static void vcpu_init(unsigned vcpu, void *ud)
{
	(void)ud;
	if (vcpu >= poe_max_vcpus())
		return;
	g_mutex_lock(&init_lock);
	if (!poe_regs_ready() && !poe_regs_init(poe_opts.verbose,
						poe_max_vcpus(),
						poe_opts.fastregs))
		fprintf(stderr, "poe-emu: some registers are missing; "
			"emulation will be incomplete\n");
	if (vcpu == 0 && poe_opts.bbm >= 0 &&
	    !poe_reg_found(R_ID_AA64MMFR2_EL1))
		fprintf(stderr, "poe-emu: bbm=%d: QEMU lists no "
			"ID_AA64MMFR2_EL1, its MRS is left as it is\n",
			poe_opts.bbm);
	if (vcpu == 0 && poe_opts.window_stores &&
	    (!poe_reg_found(R_TPIDR_EL1) || !poe_reg_found(R_SP_EL0)))
		fprintf(stderr, "poe-emu: window_stores=: QEMU lists no "
			"TPIDR_EL1 or no SP_EL0: no store is found to a "
			"per-CPU variable or to the current task\n");
	g_mutex_unlock(&init_lock);
	poe_vcpu(vcpu)->index = vcpu;
	poe_vcpu_reset(poe_vcpu(vcpu));
}

/* An exception or interrupt is taken, always to EL1 (no EL2/EL3). */
static void discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		   uint64_t from_pc, uint64_t to_pc, void *ud)
{
	struct poe_vcpu *v;

	(void)from_pc;
	(void)to_pc;
	(void)ud;
	if (vcpu >= poe_max_vcpus())
		return;
	count_discon(vcpu, type);
	if (type == QEMU_PLUGIN_DISCON_HOSTCALL)
		return;		/* PSCI/semihosting, handled by QEMU */
	v = poe_vcpu(vcpu);
	poe_context_sync(v);	/* exception entry synchronises */
	poe_set_el(v, 1, false);
	poe_set_uao(v, false);	/* and clears PSTATE.UAO */
	poe_fault_discon(v, type);
}

static void print_stats(const char *who, const struct poe_stats *s,
			uint64_t isb, uint64_t checked)
{
	char *line = g_strdup_printf(
		"poe-stats: %s por_el1_writes=%llu por_el0_writes=%llu "
		"isb=%llu tlbi=%llu checked=%llu faults=%llu walks=%llu "
		"fetch_calls=%llu fetch_checks=%llu resets=%llu flushes=%llu\n",
		who, (unsigned long long)s->por_el1_writes,
		(unsigned long long)s->por_el0_writes,
		(unsigned long long)isb, (unsigned long long)s->tlbi,
		(unsigned long long)checked, (unsigned long long)s->faults,
		(unsigned long long)s->walks,
		(unsigned long long)s->fetch_calls,
		(unsigned long long)s->fetch_checks,
		(unsigned long long)s->resets,
		(unsigned long long)s->flushes);

	fputs(line, stderr);	/* qemu_plugin_outs needs -d plugin */
	poe_log_line(line);
	g_free(line);
}

static void at_exit(void *ud)
{
	struct poe_stats total = { 0 };
	uint64_t isb_total = 0, checked_total = 0;
	unsigned i, n = qemu_plugin_num_vcpus();

	(void)ud;
	for (i = 0; poe_opts.stats && i < n && i < poe_max_vcpus(); i++) {
		const struct poe_stats *s = &poe_vcpu(i)->st;
		uint64_t isb = poe_score_of(i)->isb;
		char who[32];

		snprintf(who, sizeof(who), "vcpu=%u", i);
		print_stats(who, s, isb, poe_vcpu(i)->checked);
		checked_total += poe_vcpu(i)->checked;
		total.por_el1_writes += s->por_el1_writes;
		total.por_el0_writes += s->por_el0_writes;
		total.tlbi += s->tlbi;
		total.faults += s->faults;
		total.walks += s->walks;
		total.fetch_calls += s->fetch_calls;
		total.fetch_checks += s->fetch_checks;
		total.resets += s->resets;
		total.flushes += s->flushes;
		isb_total += isb;
	}
	if (poe_opts.stats)
		print_stats("total", &total, isb_total, checked_total);
	count_exit();
	profile_exit();
	window_exit();
	store_exit();
	if (poe_opts.log)
		fclose(poe_opts.log);
	poe_opts.log = NULL;
}

static void register_callbacks(void *ud)
{
	(void)ud;
	qemu_plugin_register_vcpu_tb_trans_cb(plugin_id, tb_trans, NULL);
	qemu_plugin_register_vcpu_discon_cb(plugin_id, QEMU_PLUGIN_DISCON_ALL,
					    discon, NULL);
	qemu_plugin_register_atexit_cb(plugin_id, at_exit, NULL);
}

/*
 * Flush QEMU's translations (state.c decides when). When the kernel
 * installs its vectors in the TTBR1 half (sysreg.c): until then it ran
 * in the TTBR0 half: at physical addresses with the MMU off, then through
 * the idmap (early_map_kernel() and the memset()/memcpy() it calls), and
 * QEMU keeps one TB per physical page (CF_PCREL, see poe_insn_pc()), so
 * it would run those TBs at the kernel's virtual addresses from now on,
 * instrumented for the TTBR0 half: gated by the EL the vCPU is at
 * (LDTR/STTR by EL1's permissions), fetch-checked at every TB start,
 * counted as EL0 instructions. Flush them. QEMU's only way is a plugin
 * reset, which drops every callback; the vCPU init callback is not needed
 * again (QEMU virt creates every vCPU at start). Linux installs its
 * vectors once per CPU start (boot, CPU online, resume, kexec), after
 * which it runs kernel code in the TTBR0 half only through the idmap,
 * code that runs nowhere else. And when loads in the TTBR1 half must be
 * checked from now on (poe_el1_reads_checked()).
 */
static void flush_translations(void)
{
	qemu_plugin_reset(plugin_id, register_callbacks, NULL);
}

/* the TLB model reports to the bench records only */
static bool tlb_options_ok(void)
{
	if (poe_opts.tlb && !poe_opts.bench) {
		fprintf(stderr, "poe-emu: tlb=on needs bench=FILE\n");
		return false;
	}
	if (poe_opts.tlb_sized && !poe_opts.tlb) {
		fprintf(stderr, "poe-emu: tlb_l1=/tlb_l2= need tlb=on\n");
		return false;
	}
	return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	if (!info->system_emulation || strcmp(info->target_name, "aarch64")) {
		fprintf(stderr, "poe-emu: needs qemu-system-aarch64\n");
		return -1;
	}
	memset(&poe_opts, 0, sizeof(poe_opts));
	if (!poe_opts_parse(argc, argv))
		return -1;
	if (poe_opts.sysmap && !sysmap_load(poe_opts.sysmap))
		return -1;
	if (poe_opts.strict && !poe_strict_init()) {
		fprintf(stderr, "poe-emu: strict=on needs sysmap=System.map\n");
		return -1;
	}
	if (poe_opts.bench && !count_open(poe_opts.bench)) {
		fprintf(stderr, "poe-emu: cannot open bench=%s\n",
			poe_opts.bench);
		return -1;
	}
	if ((poe_opts.windows || poe_opts.window_allow) &&
	    !window_open(poe_opts.windows, poe_opts.window_allow))
		return -1;
	if (poe_opts.window_stores && !store_open(poe_opts.window_stores))
		return -1;
	if (poe_opts.profile && (!poe_opts.bench ||
				 !profile_open(poe_opts.profile))) {
		fprintf(stderr, "poe-emu: profile=%s needs bench= and a "
			"writable file\n", poe_opts.profile);
		return -1;
	}
	if (!tlb_options_ok())
		return -1;
	count_tlb_fields(poe_opts.tlb);
	count_init();
	poe_state_init(info->system.max_vcpus > 0 ? info->system.max_vcpus : 1);
	tlbm_init(poe_max_vcpus());

	plugin_id = id;
	poe_set_flush_hook(flush_translations);
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init, NULL);
	register_callbacks(NULL);
	return 0;
}
