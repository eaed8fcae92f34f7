/*
 * plugin.c - poe-emu: FEAT_S1POE emulation for QEMU TCG (arm64 system mode)
 *
 * Glue: options, per-vCPU state, translation-time instrumentation, the
 * per-access check, logging, statistics and strict mode.
 *
 * Every data access instruction gets a conditional callback that runs only
 * while the overlay of the EL whose permissions it uses is enabled and the
 * current POR value denies some key what the access needs (struct
 * poe_score gates, kept by regs.c): loads only while some key lacks R,
 * stores while some key lacks W. A guest that does not use overlays pays
 * (almost) nothing, and in kpkeys' default context (key 1 read-only) EL1
 * loads are free. Code in the TTBR1 half runs at EL1 (unprivileged
 * LDTR/STTR use EL0 permissions); code in the TTBR0 half is normally EL0
 * but the idmap runs there at EL1, so those use the gates of the EL the
 * vCPU is at, tracked at exception entry (discontinuity callback) and at
 * ERET (SPSR_EL1.M), which avoids reading PSTATE on every access.
 *
 * Options: log=FILE, stats=on, strict=on (needs sysmap=FILE, the guest
 * kernel's System.map), verbose=on, force_el1=on (benchmark aid: EL1
 * overlay forced on with POR_EL1 = 0x77777717, kpkeys' default context:
 * key 1 read-only, the others RWX). See README.md.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "poe.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct poe_vcpu *poe_vcpus;
struct qemu_plugin_scoreboard *poe_score;
FILE *poe_log;
bool poe_strict;
bool poe_force_el1;

static unsigned max_vcpus;
static bool opt_stats, opt_verbose;
static GMutex lock;
static bool regs_ready;

/* strict mode: System.map symbols */
struct sym {
	uint64_t addr;
	char *name;
};
static GArray *syms;
static uint64_t sym_vectors, sym_ex_start, sym_ex_stop;

struct poe_score *poe_score_of(unsigned vcpu)
{
	return qemu_plugin_scoreboard_find(poe_score, vcpu);
}

void poe_log_fault(struct poe_vcpu *v, unsigned type)
{
	(void)type;
	if (!poe_log)
		return;
	g_mutex_lock(&lock);
	fprintf(poe_log,
		"poe-fault: vcpu=%u el=%u pc=0x%llx va=0x%llx pkey=%u "
		"por=0x%llx kind=%s class=%s wnr=%d level=%d\n",
		v->index, v->redirect_el,
		(unsigned long long)v->redirect_pc,
		(unsigned long long)v->fault_va, v->fault_key,
		(unsigned long long)v->fault_por, v->fault_kind,
		v->fault_what, v->fault_wnr, v->fault_level);
	fflush(poe_log);
	g_mutex_unlock(&lock);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool load_sysmap(const char *path)
{
	char line[512], name[400], type;
	unsigned long long addr;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "poe-emu: cannot open sysmap %s\n", path);
		return false;
	}
	syms = g_array_new(false, false, sizeof(struct sym));
	while (fgets(line, sizeof(line), f)) {
		struct sym s;

		if (sscanf(line, "%llx %c %399s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "vectors"))
			sym_vectors = addr;
		else if (!strcmp(name, "__start___ex_table"))
			sym_ex_start = addr;
		else if (!strcmp(name, "__stop___ex_table"))
			sym_ex_stop = addr;
		if (type != 't' && type != 'T')
			continue;
		s.addr = addr;
		s.name = g_strdup(name);
		g_array_append_val(syms, s);
	}
	fclose(f);
	g_array_sort(syms, sym_cmp);
	if (!sym_vectors || !sym_ex_start || sym_ex_stop <= sym_ex_start) {
		fprintf(stderr, "poe-emu: %s lacks vectors/__start___ex_table/"
			"__stop___ex_table\n", path);
		return false;
	}
	return true;
}

static const char *sym_name(uint64_t addr, uint64_t *off)
{
	const struct sym *best = NULL;
	unsigned lo = 0, hi = syms ? syms->len : 0;

	while (lo < hi) {	/* last symbol <= addr */
		unsigned mid = (lo + hi) / 2;
		const struct sym *s = &g_array_index(syms, struct sym, mid);

		if (s->addr <= addr) {
			best = s;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (!best)
		return "?";
	*off = addr - best->addr;
	return best->name;
}

/*
 * Does the kernel have an exception-table fixup for pc? The table is read
 * from guest memory (entries: s32 insn, s32 fixup, s16 type, s16 data,
 * offsets relative to the field); the KASLR slide is VBAR_EL1 - vectors.
 */
bool poe_strict_expected(struct poe_vcpu *v, uint64_t pc)
{
	uint64_t slide = poe_read(v, poe_reg[R_VBAR_EL1]) - sym_vectors;
	uint64_t start = sym_ex_start + slide, len = sym_ex_stop - sym_ex_start;
	GByteArray *tab = g_byte_array_new();
	bool found = false;
	uint64_t i;

	if (qemu_plugin_read_memory_vaddr(start, tab, len) && tab->len == len) {
		for (i = 0; i + 12 <= len; i += 12) {
			int32_t rel;

			memcpy(&rel, tab->data + i, 4);
			if (start + i + (int64_t)rel == pc) {
				found = true;
				break;
			}
		}
	} else {
		fprintf(stderr, "poe-emu: strict: cannot read __ex_table\n");
	}
	g_byte_array_free(tab, true);
	return found;
}

static void strict_abort(struct poe_vcpu *v, const struct poe_insn *pi,
			 const struct poe_verdict *vd, uint64_t por)
{
	uint64_t slide = poe_read(v, poe_reg[R_VBAR_EL1]) - sym_vectors;
	uint64_t off = 0;
	const char *fn = sym_name(pi->pc - slide, &off);

	fprintf(stderr,
		"poe-emu: strict: unexpected EL1 overlay violation\n"
		"poe-emu:   vcpu %u pc 0x%llx (%s+0x%llx) insn %08x (%s %s)\n"
		"poe-emu:   va 0x%llx pkey %u POR_EL1 0x%llx level %d\n"
		"poe-emu:   no exception-table fixup for this pc: the kernel "
		"would oops; aborting\n",
		v->index, (unsigned long long)pi->pc, fn,
		(unsigned long long)off, pi->word, ls_kind_name(pi->d.kind),
		pi->d.name, (unsigned long long)vd->va, vd->key,
		(unsigned long long)por, vd->level);
	if (poe_log) {
		fprintf(poe_log, "poe-strict: vcpu=%u pc=0x%llx sym=%s+0x%llx "
			"va=0x%llx pkey=%u por=0x%llx\n", v->index,
			(unsigned long long)pi->pc, fn, (unsigned long long)off,
			(unsigned long long)vd->va, vd->key,
			(unsigned long long)por);
		fflush(poe_log);
	}
	fflush(stderr);
	_exit(3);
}

/* Is the overlay that governs an access with these permissions live? */
static inline bool overlay_live(const struct poe_vcpu *v, bool el0_perms)
{
	return el0_perms ? v->live_el0 : v->live_el1;
}

/*
 * MOPS prologue: check the whole destination range (W) and, for CPY, the
 * source range (R), each with the EL0 permissions if that side is
 * unprivileged (CPY*WT*, CPY*RT*, SET*T*).
 */
static void mops_check(struct poe_vcpu *v, const struct poe_insn *pi,
		       unsigned el)
{
	const struct ls_insn *d = &pi->d;
	bool dst_el0 = el == 0 || (d->flags & LS_F_UNPRIV);
	bool src_el0 = el == 0 || (d->flags & LS_F_SRC_UNPRIV);
	bool cpy = d->flags & LS_F_MOPS_CPY;
	uint64_t n, addr;
	struct poe_verdict vd;

	if (!overlay_live(v, dst_el0) && !(cpy && overlay_live(v, src_el0)))
		return;
	n = poe_read_gpr(v, d->rm, false);
	if (!n)
		return;
	if (n > (1ull << 55))
		n = 1ull << 55;
	v->st.checked++;
	if (overlay_live(v, dst_el0)) {
		addr = poe_read_gpr(v, d->rn, false);
		poe_check(v, addr, n, false, true, dst_el0, &vd);
		if (!vd.allowed)
			poe_fault_inject(v, pi, el, true, &vd,
					 dst_el0 ? v->por_el0 : v->por_el1);
	}
	if (cpy && overlay_live(v, src_el0)) {
		addr = poe_read_gpr(v, d->rs, false);
		poe_check(v, addr, n, true, false, src_el0, &vd);
		if (!vd.allowed)
			poe_fault_inject(v, pi, el, false, &vd,
					 src_el0 ? v->por_el0 : v->por_el1);
	}
}

static void ls_cb(unsigned vcpu, void *ud)
{
	const struct poe_insn *pi = ud;
	const struct ls_insn *d = &pi->d;
	struct poe_vcpu *v = &poe_vcpus[vcpu];
	unsigned el = pi->high ? 1 : v->el;
	bool el0_perms = el == 0 || (d->flags & LS_F_UNPRIV);
	uint64_t por = el0_perms ? v->por_el0 : v->por_el1;
	uint64_t base, index = 0, ea;
	struct poe_verdict vd;

	if (v->redirect)
		return;
	if (d->kind == LS_MOPS) {
		mops_check(v, pi, el);
		return;
	}
	if (!overlay_live(v, el0_perms))
		return;
	base = (d->flags & LS_F_LITERAL) ? 0 : poe_read_gpr(v, d->rn, true);
	if (d->flags & LS_F_REGOFF)
		index = poe_read_gpr(v, d->rm, false);
	ea = ls_ea(d, base, index, pi->pc);
	v->st.checked++;
	poe_check(v, ea, d->size, d->kind == LS_LOAD || d->kind == LS_RMW,
		  d->kind != LS_LOAD, el0_perms, &vd);
	if (vd.allowed)
		return;
	if (el == 1 && poe_strict && !poe_strict_expected(v, pi->pc))
		strict_abort(v, pi, &vd, por);
	poe_fault_inject(v, pi, el, d->kind != LS_LOAD, &vd, por);
}

/*
 * The scoreboard word that must be non-zero for this access to need a
 * check: by the EL whose permissions apply (TTBR1 code runs at EL1,
 * TTBR0 code at either) and by what it needs (R, W or both).
 */
static size_t gate_field(const struct ls_insn *d, bool high)
{
	static const size_t field[3][3] = {
		{ offsetof(struct poe_score, rd_el1),
		  offsetof(struct poe_score, wr_el1),
		  offsetof(struct poe_score, rw_el1) },
		{ offsetof(struct poe_score, rd_el0),
		  offsetof(struct poe_score, wr_el0),
		  offsetof(struct poe_score, rw_el0) },
		{ offsetof(struct poe_score, rd_cur),
		  offsetof(struct poe_score, wr_cur),
		  offsetof(struct poe_score, rw_cur) },
	};
	unsigned who, need;

	if (d->kind == LS_LOAD)
		need = 0;
	else if (d->kind == LS_STORE || d->kind == LS_ZVA)
		need = 1;
	else
		need = 2;
	if (high && d->kind == LS_MOPS &&
	    (d->flags & (LS_F_UNPRIV | LS_F_SRC_UNPRIV)))
		return offsetof(struct poe_score, rw_any);
	if (!high)
		who = 2;
	else if (d->flags & LS_F_UNPRIV)
		who = 1;
	else
		who = 0;
	return field[who][need];
}

static void tb_trans(struct qemu_plugin_tb *tb, void *ud)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)ud;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		struct poe_insn *pi;
		struct sys_insn si;
		struct ls_insn d;
		uint32_t word;
		size_t field;

		if (qemu_plugin_insn_data(insn, &word, 4) != 4)
			continue;
		count_instrument_insn(insn, pc);	/* first, see count.c */
		if (sys_decode(word, &si)) {
			count_instrument_sys(insn, &si);
			poe_sysreg_instrument(insn, &si, pc, opt_stats);
			continue;
		}
		if (!ls_decode(word, &d) || d.kind == LS_PRFM ||
		    d.kind == LS_MOPS_CONT)
			continue;
		pi = g_new0(struct poe_insn, 1);
		pi->d = d;
		pi->pc = pc;
		pi->word = word;
		pi->high = pc >> 63;
		field = gate_field(&d, pi->high);
		qemu_plugin_register_vcpu_insn_exec_cond_cb(
			insn, ls_cb, QEMU_PLUGIN_CB_RW_REGS_PC,
			QEMU_PLUGIN_COND_NE,
			(qemu_plugin_u64){ poe_score, field }, 0, pi);
	}
}

static void vcpu_init(unsigned vcpu, void *ud)
{
	struct poe_vcpu *v;

	(void)ud;
	if (vcpu >= max_vcpus)
		return;
	v = &poe_vcpus[vcpu];
	v->index = vcpu;
	v->el = 1;		/* vCPUs start at EL1 (no EL2/EL3) */
	v->buf = g_byte_array_new();
	g_mutex_lock(&lock);
	if (!regs_ready) {
		uint64_t dczid;

		if (!poe_regs_init(opt_verbose))
			fprintf(stderr, "poe-emu: some registers are missing; "
				"emulation will be incomplete\n");
		dczid = poe_read(v, poe_reg[R_DCZID_EL0]);
		if (poe_reg[R_DCZID_EL0] && !(dczid & 0x10))
			ls_zva_bytes = 4u << (dczid & 0xf);
		regs_ready = true;
	}
	g_mutex_unlock(&lock);
	if (poe_force_el1) {
		/* benchmark aid: EL1 overlay on, POR_EL1 as kpkeys' default
		 * context (key 1 read-only, every other key RWX) */
		v->tcr2 |= TCR2_POE;
		v->por_el1 = 0x77777717;
	}
	poe_update_gates(v);
}

static void print_stats(const char *who, const struct poe_stats *s,
			uint64_t isb)
{
	char *line = g_strdup_printf(
		"poe-stats: %s por_el1_writes=%llu por_el0_writes=%llu "
		"isb=%llu tlbi=%llu checked=%llu faults=%llu walks=%llu\n",
		who, (unsigned long long)s->por_el1_writes,
		(unsigned long long)s->por_el0_writes,
		(unsigned long long)isb, (unsigned long long)s->tlbi,
		(unsigned long long)s->checked, (unsigned long long)s->faults,
		(unsigned long long)s->walks);

	fputs(line, stderr);	/* qemu_plugin_outs needs -d plugin */
	if (poe_log)
		fputs(line, poe_log);
	g_free(line);
}

static void at_exit(void *ud)
{
	struct poe_stats total = { 0 };
	uint64_t isb_total = 0;
	unsigned i, n = qemu_plugin_num_vcpus();

	(void)ud;
	if (opt_stats) {
		for (i = 0; i < n && i < max_vcpus; i++) {
			const struct poe_stats *s = &poe_vcpus[i].st;
			uint64_t isb = poe_score_of(i)->isb;
			char who[32];

			snprintf(who, sizeof(who), "vcpu=%u", i);
			print_stats(who, s, isb);
			total.por_el1_writes += s->por_el1_writes;
			total.por_el0_writes += s->por_el0_writes;
			total.tlbi += s->tlbi;
			total.checked += s->checked;
			total.faults += s->faults;
			total.walks += s->walks;
			isb_total += isb;
		}
		print_stats("total", &total, isb_total);
	}
	count_exit();
	if (poe_log)
		fclose(poe_log);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *sysmap = NULL;
	int i;

	if (!info->system_emulation || strcmp(info->target_name, "aarch64")) {
		fprintf(stderr, "poe-emu: needs qemu-system-aarch64\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *val = eq ? eq + 1 : "";
		char *key = g_strndup(argv[i], eq ? eq - argv[i] : 0);
		bool ok = true;

		if (!strcmp(key, "log")) {
			poe_log = fopen(val, "w");
			ok = poe_log != NULL;
		} else if (!strcmp(key, "stats")) {
			ok = qemu_plugin_bool_parse(key, val, &opt_stats);
		} else if (!strcmp(key, "strict")) {
			ok = qemu_plugin_bool_parse(key, val, &poe_strict);
		} else if (!strcmp(key, "force_el1")) {
			ok = qemu_plugin_bool_parse(key, val, &poe_force_el1);
		} else if (!strcmp(key, "verbose")) {
			ok = qemu_plugin_bool_parse(key, val, &opt_verbose);
		} else if (!strcmp(key, "bench")) {
			ok = count_open(val);
		} else if (!strcmp(key, "sysmap")) {
			sysmap = val;
		} else {
			ok = false;
		}
		g_free(key);
		if (!ok) {
			fprintf(stderr, "poe-emu: bad option '%s'\n", argv[i]);
			return -1;
		}
	}
	if (poe_strict && (!sysmap || !load_sysmap(sysmap))) {
		fprintf(stderr, "poe-emu: strict=on needs sysmap=System.map\n");
		return -1;
	}
	max_vcpus = info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
	poe_vcpus = g_new0(struct poe_vcpu, max_vcpus);
	poe_score = qemu_plugin_scoreboard_new(sizeof(struct poe_score));
	count_init();

	qemu_plugin_register_vcpu_init_cb(id, vcpu_init, NULL);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans, NULL);
	qemu_plugin_register_vcpu_discon_cb(id, QEMU_PLUGIN_DISCON_ALL,
					    poe_fault_discon, NULL);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
