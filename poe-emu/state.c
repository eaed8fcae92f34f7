/*
 * state.c - the options and the per-vCPU state of poe-emu (see state.h)
 *
 * Context synchronisation: an MSR to POR_EL0, POR_EL1 or TCR2_EL1 only
 * records the written value (which MRS reads back, as a direct read after
 * a direct write of the same register does); the checks keep using the
 * effective value until the next ISB, exception entry or ERET, as on
 * hardware, where an access between the write and the synchronisation
 * may use either value. Until then the gates open for the union of both,
 * so that strict mode can compare the two verdicts (check.c).
 */
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "count.h"

struct poe_opts poe_opts;

static struct poe_vcpu *vcpus;
static unsigned max_vcpus;
static struct qemu_plugin_scoreboard *score;
static void (*flush_hook)(void);
static bool el1_reads_checked;

/* bbm=N: a break-before-make level the architecture defines, 0 to 3 */
static bool parse_bbm(const char *val, int *bbm)
{
	if (strlen(val) != 1 || val[0] < '0' || val[0] > '3')
		return false;
	*bbm = val[0] - '0';
	return true;
}

/*
 * tlb_l1=/tlb_l2=ENTRIES[:WAYS]: WAYS divides ENTRIES into a power of two
 * of sets (a set is picked by address bits); no WAYS: fully associative.
 */
static bool parse_geometry(const char *val, struct poe_tlb_geometry *g)
{
	char *end;
	unsigned long entries = strtoul(val, &end, 10), ways = entries, sets;

	if (end == val)
		return false;
	if (*end == ':') {
		val = end + 1;
		ways = strtoul(val, &end, 10);
		if (end == val)
			return false;
	}
	if (*end || !entries || entries > 65536 || !ways || entries % ways)
		return false;
	sets = entries / ways;
	if (sets & (sets - 1))
		return false;
	g->entries = entries;
	g->ways = ways;
	return true;
}

bool poe_opts_parse(int argc, char **argv)
{
	int i;

	poe_opts.fastregs = true;
	poe_opts.bbm = -1;
	/* a Neoverse V2 class core (README.md, "TLB model") */
	poe_opts.tlb_l1 = (struct poe_tlb_geometry){ 48, 48 };
	poe_opts.tlb_l2 = (struct poe_tlb_geometry){ 2048, 8 };
	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *val = eq ? eq + 1 : "";
		char *key = g_strndup(argv[i], eq ? eq - argv[i] : 0);
		bool ok = true;

		if (!strcmp(key, "log")) {
			poe_opts.log = fopen(val, "w");
			ok = poe_opts.log != NULL;
		} else if (!strcmp(key, "stats")) {
			ok = qemu_plugin_bool_parse(key, val, &poe_opts.stats);
		} else if (!strcmp(key, "strict")) {
			ok = qemu_plugin_bool_parse(key, val, &poe_opts.strict);
		} else if (!strcmp(key, "force_el1")) {
			ok = qemu_plugin_bool_parse(key, val,
						    &poe_opts.force_el1);
		} else if (!strcmp(key, "fastregs")) {
			ok = qemu_plugin_bool_parse(key, val,
						    &poe_opts.fastregs);
		} else if (!strcmp(key, "verbose")) {
			ok = qemu_plugin_bool_parse(key, val,
						    &poe_opts.verbose);
		} else if (!strcmp(key, "sysmap")) {
			poe_opts.sysmap = g_strdup(val);
		} else if (!strcmp(key, "strict_allow")) {
			poe_opts.strict_allow = g_renew(char *, poe_opts.strict_allow,
							poe_opts.n_strict_allow + 1);
			poe_opts.strict_allow[poe_opts.n_strict_allow++] =
				g_strdup(val);
			ok = *val != '\0';
		} else if (!strcmp(key, "bench")) {
			poe_opts.bench = g_strdup(val);
		} else if (!strcmp(key, "profile")) {
			poe_opts.profile = g_strdup(val);
		} else if (!strcmp(key, "windows")) {
			poe_opts.windows = g_strdup(val);
		} else if (!strcmp(key, "window_allow")) {
			poe_opts.window_allow = g_strdup(val);
		} else if (!strcmp(key, "window_stores")) {
			poe_opts.window_stores = g_strdup(val);
		} else if (!strcmp(key, "bbm")) {
			ok = parse_bbm(val, &poe_opts.bbm);
		} else if (!strcmp(key, "tlb")) {
			ok = qemu_plugin_bool_parse(key, val, &poe_opts.tlb);
		} else if (!strcmp(key, "tlb_l1")) {
			ok = parse_geometry(val, &poe_opts.tlb_l1);
			poe_opts.tlb_sized = true;
		} else if (!strcmp(key, "tlb_l2")) {
			ok = parse_geometry(val, &poe_opts.tlb_l2);
			poe_opts.tlb_sized = true;
		} else {
			ok = false;
		}
		g_free(key);
		if (!ok) {
			fprintf(stderr, "poe-emu: bad option '%s'\n", argv[i]);
			return false;
		}
	}
	return true;
}

void poe_state_init(unsigned n)
{
	max_vcpus = n;
	vcpus = g_aligned_alloc0(n, sizeof(struct poe_vcpu), 64);
	score = qemu_plugin_scoreboard_new(sizeof(struct poe_score));
}

unsigned poe_max_vcpus(void)
{
	return max_vcpus;
}

struct poe_vcpu *poe_vcpu(unsigned index)
{
	return &vcpus[index];
}

struct poe_score *poe_score_of(unsigned index)
{
	return qemu_plugin_scoreboard_find(score, index);
}

qemu_plugin_u64 poe_score_u64(size_t offset)
{
	return (qemu_plugin_u64){ score, offset };
}

unsigned poe_por_denies(uint64_t por)
{
	unsigned k, d = 0;

	for (k = 0; k < 8; k++) {
		unsigned p = (por >> (4 * k)) & 0xf;

		if (p & 8)
			p = 0;			/* reserved: no access */
		if (!(p & POE_R))
			d |= DENY_R;
		if (!(p & POE_W))
			d |= DENY_W;
		if (!(p & POE_X))
			d |= DENY_X;
	}
	return d;
}

/* the keys whose permissions in POR value por lack perm (POE_*): a mask */
static unsigned keys_lacking(uint64_t por, unsigned perm)
{
	unsigned k, keys = 0;

	for (k = 0; k < 8; k++) {
		unsigned p = (por >> (4 * k)) & 0xf;

		if ((p & 8) || !(p & perm))	/* reserved: no access */
			keys |= 1u << k;
	}
	return keys;
}

bool poe_por_restricts(uint64_t por)
{
	return poe_por_denies(por) & (DENY_R | DENY_W);
}

static unsigned denies_el1(const struct poe_regs *r)
{
	return (r->tcr2 & TCR2_POE) ? poe_por_denies(r->por_el1) : 0;
}

static unsigned denies_el0(const struct poe_regs *r)
{
	return (r->tcr2 & TCR2_E0POE) ? poe_por_denies(r->por_el0) : 0;
}

static void forget_high(struct poe_vcpu *v)
{
	struct poe_score *s = poe_score_of(v->index);

	s->xlo_el1 = ~0ull;
	s->xhi_el1 = 0;
}

static void forget_low(struct poe_vcpu *v)
{
	v->xlo_cur = ~0ull;
	v->xhi_cur = 0;
}

/*
 * The remembered runs are xruns[0, xruns_n): the ring starts again at 0,
 * or the next run found would be written after stale ones that a lookup
 * then reads (check.c's xrun_find()).
 */
void poe_fetch_forget(struct poe_vcpu *v)
{
	forget_high(v);
	forget_low(v);
	v->x0_saved = false;
	v->xruns_n = 0;
	v->xruns_next = 0;
}

/*
 * The TTBR0-half bounds are those of the EL the vCPU is at: keep EL0's
 * over an exception (a system call or an interrupt does not change what
 * user code may execute), start afresh for EL1 code in that half.
 */
static void fetch_switch_el(struct poe_vcpu *v, unsigned from, unsigned to)
{
	if (from == 0 && to != 0) {
		v->x0_lo = v->xlo_cur;
		v->x0_hi = v->xhi_cur;
		v->x0_saved = true;
		forget_low(v);
	} else if (to == 0 && v->x0_saved) {
		v->xlo_cur = v->x0_lo;
		v->xhi_cur = v->x0_hi;
		v->x0_saved = false;
	} else {
		forget_low(v);
	}
}

void poe_fetch_known(struct poe_vcpu *v, bool high, uint64_t lo,
		     uint64_t hi)
{
	struct poe_score *s = poe_score_of(v->index);

	if (high) {
		s->xlo_el1 = lo;
		s->xhi_el1 = hi;
	} else {
		v->xlo_cur = lo;
		v->xhi_cur = hi;
	}
}

void poe_set_flush_hook(void (*hook)(void))
{
	flush_hook = hook;
}

void poe_flush_translations(struct poe_vcpu *v)
{
	v->st.flushes++;
	if (flush_hook)
		flush_hook();
}

bool poe_el1_reads_checked(void)
{
	return __atomic_load_n(&el1_reads_checked, __ATOMIC_RELAXED);
}

/*
 * The first time an EL1 overlay denies a read (in effect, or in strict
 * mode as written): loads in the TTBR1 half were translated without a
 * check. The vCPU gets here from an ISB, exception entry or ERET (or, in
 * strict mode, the MSR, which the plugin skips by leaving the TB), so it
 * runs no more of that code before the flush; other vCPUs are not
 * concerned until their own POR_EL1 denies R. Until then a load is
 * allowed whether checked or not (the checks use the value in effect).
 */
static void el1_reads_now_checked(struct poe_vcpu *v)
{
	if (__atomic_exchange_n(&el1_reads_checked, true, __ATOMIC_RELAXED))
		return;
	poe_flush_translations(v);
}

static void update_gates(struct poe_vcpu *v)
{
	struct poe_score *s = poe_score_of(v->index);
	unsigned el1 = denies_el1(&v->eff), el0 = denies_el0(&v->eff), cur;
	bool window = (v->eff.tcr2 & TCR2_POE) && !(el1 & DENY_W);
	unsigned unpriv;

	v->live_el1 = el1 & (DENY_R | DENY_W);
	v->live_el0 = el0 & (DENY_R | DENY_W);
	v->x_el1 = el1 & DENY_X;
	v->x_el0 = el0 & DENY_X;
	s->window = window;
	count_el1_window(v->index, window);
	if (el1 & DENY_W)	/* the overlay on, outside a window */
		v->wp_keys = keys_lacking(v->eff.por_el1, POE_W);
	/* strict mode compares the written value's verdicts too */
	if ((el1 & DENY_R) ||
	    (poe_opts.strict && v->unsynced && (denies_el1(&v->wr) & DENY_R)))
		el1_reads_now_checked(v);
	if (v->unsynced) {
		el1 |= denies_el1(&v->wr);
		el0 |= denies_el0(&v->wr);
	}
	cur = v->el ? el1 : v->aarch32 ? 0 : el0;
	unpriv = el0 | (v->uao_maybe ? el1 : 0);
	s->rd_el1 = el1 & DENY_R;
	s->wr_el1 = !!(el1 & DENY_W);
	s->rw_el1 = !!(el1 & (DENY_R | DENY_W));
	s->rd_unpriv = unpriv & DENY_R;
	s->wr_unpriv = !!(unpriv & DENY_W);
	s->rw_unpriv = !!(unpriv & (DENY_R | DENY_W));
	s->rd_cur = cur & DENY_R;
	s->wr_cur = !!(cur & DENY_W);
	s->rw_cur = !!(cur & (DENY_R | DENY_W));
	s->rw_any = s->rw_el1 | s->rw_unpriv;
	s->x_cur = v->el ? v->x_el1 : !v->aarch32 && v->x_el0;
	s->unsynced = v->unsynced;
}

static void written(struct poe_vcpu *v)
{
	v->unsynced = memcmp(&v->wr, &v->eff, sizeof(v->wr)) != 0;
	update_gates(v);
}

void poe_write_por_el0(struct poe_vcpu *v, uint64_t val)
{
	v->wr.por_el0 = val;
	written(v);
}

void poe_write_por_el1(struct poe_vcpu *v, uint64_t val)
{
	v->wr.por_el1 = val;
	written(v);
}

void poe_write_tcr2(struct poe_vcpu *v, uint64_t val)
{
	if (poe_opts.force_el1)
		val |= TCR2_POE;
	v->wr.tcr2 = val;
	written(v);
}

void poe_context_sync(struct poe_vcpu *v)
{
	if (!v->unsynced)
		return;
	v->eff = v->wr;
	v->unsynced = false;
	update_gates(v);
	poe_fetch_forget(v);
}

void poe_set_el(struct poe_vcpu *v, unsigned el, bool aarch32)
{
	if (v->el != el || v->aarch32 != aarch32) {
		fetch_switch_el(v, v->aarch32 ? 2 : v->el, aarch32 ? 2 : el);
		v->el = el;
		v->aarch32 = aarch32;
		update_gates(v);
	}
}

void poe_set_uao(struct poe_vcpu *v, bool maybe)
{
	if (v->uao_maybe != maybe) {
		v->uao_maybe = maybe;
		update_gates(v);
	}
}

void poe_vcpu_reset(struct poe_vcpu *v)
{
	unsigned index = v->index;
	struct poe_stats st = v->st;
	uint64_t checked = v->checked;
	struct poe_score *s = poe_score_of(index);
	uint64_t isb = s->isb;

	memset(v, 0, sizeof(*v));
	memset(s, 0, sizeof(*s));
	v->index = index;
	v->st = st;
	v->checked = checked;
	s->isb = isb;
	v->el = 1;		/* vCPUs come out of reset at EL1 (no EL2/3) */
	v->tlb_gen = ~0ull;	/* catch up at the first lookup */
	if (poe_opts.force_el1) {
		/* benchmark aid: EL1 overlay on, POR_EL1 as kpkeys' default
		 * context (key 1 read-only, every other key RWX) */
		v->eff.tcr2 = TCR2_POE;
		v->eff.por_el1 = 0x77777717;
	}
	v->wr = v->eff;
	update_gates(v);
	poe_fetch_forget(v);
}
