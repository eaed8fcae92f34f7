/*
 * fake-qemu.c - a fake of the QEMU plugin API for host tests (see the
 * header). Single-threaded: the "current vCPU" is the one fake_exec() or
 * fake_discon() runs on, as in QEMU where a callback runs on its vCPU.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-qemu.h"

struct fake_cpu fake_cpus[FAKE_VCPUS];
uint8_t fake_mem[FAKE_MEM];
unsigned fake_nvcpus;

/*
 * QEMU's current_cpu, and a stand-in for each vCPU's CPU object: x0-x30,
 * sp and pc in a row at FAKE_XREGS_OFF (as xregs[] and pc in QEMU's
 * CPUARMState), among other bytes, refreshed from fake_cpus before each
 * instruction (regs.c may read them there).
 */
__thread void *current_cpu;
#define FAKE_OBJ_SIZE	(24u << 10)
#define FAKE_XREGS_OFF	0x40c8u
static uint8_t *cpu_obj[FAKE_VCPUS];
static struct {
	bool on;
	unsigned slot;
	uint64_t val;
} obj_lie[FAKE_VCPUS];
static size_t obj_mirror[FAKE_VCPUS];

static const char *const sys_names[] = {
	"TCR_EL1", "TTBR0_EL1", "TTBR1_EL1", "SCTLR_EL1", "TCR2_EL1",
	"PIR_EL1", "PIRE0_EL1", "CPACR_EL1", "ID_AA64MMFR3_EL1", "ESR_EL1",
	"FAR_EL1", "VBAR_EL1", "DCZID_EL0", "ELR_EL1", "SPSR_EL1",
	"ID_AA64MMFR1_EL1", "ID_AA64MMFR2_EL1", "TPIDR_EL1", "SP_EL0",
};
#define NSYS (sizeof(sys_names) / sizeof(sys_names[0]))
/* register handles: 1..31 x0..x30, 32 sp, 33 cpsr, 34 pc, 64 + i sysregs */
#define H_SP	32
#define H_CPSR	33
#define H_PC	34
#define H_SYS	64

static qemu_plugin_vcpu_udata_cb_t init_cb;
static qemu_plugin_vcpu_tb_trans_cb_t trans_cb;
static qemu_plugin_udata_cb_t exit_cb;
static qemu_plugin_vcpu_discon_cb_t discon_cb;
static void *init_ud, *trans_ud, *exit_ud, *discon_ud;

static unsigned cur;		/* the current vCPU */
static sigjmp_buf exec_jmp;
static uint64_t new_pc;
static unsigned cbs_run;

/* what the plugin registered on one instruction, in order */
enum { OP_CB, OP_COND, OP_INLINE };
struct fake_op {
	int type;
	qemu_plugin_vcpu_udata_cb_t cb;
	void *ud;
	enum qemu_plugin_cond cond;
	qemu_plugin_u64 entry;
	uint64_t imm;
};
/* a memory callback: after the instruction's ops, per access */
struct fake_mem_cb {
	qemu_plugin_vcpu_mem_cb_t cb;
	enum qemu_plugin_mem_rw rw;
	void *ud;
};
struct qemu_plugin_insn {
	uint64_t pc;
	uint32_t word;
	unsigned nops, nmem;
	struct fake_op ops[8];
	struct fake_mem_cb mem[2];
	struct qemu_plugin_insn *next;
};
struct qemu_plugin_tb {
	struct qemu_plugin_insn **insns;
	size_t n;
};
static struct qemu_plugin_insn *translated;

/* blocks of several instructions (fake_exec_tb()) */
struct fake_tb {
	uint64_t pc;
	unsigned n;
	uint32_t *words;
	struct qemu_plugin_insn **insns;
	struct fake_tb *next;
};
static struct fake_tb *tbs;

struct qemu_plugin_scoreboard {
	size_t size;
	uint8_t *data;
};

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_udata_cb_t cb, void *ud)
{
	(void)id;
	init_cb = cb;
	init_ud = ud;
}

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb,
					   void *ud)
{
	(void)id;
	trans_cb = cb;
	trans_ud = ud;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *ud)
{
	(void)id;
	exit_cb = cb;
	exit_ud = ud;
}

void qemu_plugin_register_vcpu_discon_cb(qemu_plugin_id_t id,
					 enum qemu_plugin_discon_type type,
					 qemu_plugin_vcpu_discon_cb_t cb,
					 void *ud)
{
	(void)id;
	(void)type;
	discon_cb = cb;
	discon_ud = ud;
}

static struct fake_op *new_op(struct qemu_plugin_insn *insn, int type)
{
	struct fake_op *op;

	if (insn->nops == sizeof(insn->ops) / sizeof(insn->ops[0])) {
		fprintf(stderr, "fake-qemu: too many ops on one insn\n");
		abort();
	}
	op = &insn->ops[insn->nops++];
	memset(op, 0, sizeof(*op));
	op->type = type;
	return op;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *ud)
{
	struct fake_op *op = new_op(insn, OP_CB);

	(void)flags;
	op->cb = cb;
	op->ud = ud;
}

void qemu_plugin_register_vcpu_insn_exec_cond_cb(
	struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
	enum qemu_plugin_cb_flags flags, enum qemu_plugin_cond cond,
	qemu_plugin_u64 entry, uint64_t imm, void *ud)
{
	struct fake_op *op = new_op(insn, OP_COND);

	(void)flags;
	op->cb = cb;
	op->ud = ud;
	op->cond = cond;
	op->entry = entry;
	op->imm = imm;
}

void qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
	struct qemu_plugin_insn *insn, enum qemu_plugin_op o,
	qemu_plugin_u64 entry, uint64_t imm)
{
	struct fake_op *op = new_op(insn, OP_INLINE);

	if (o != QEMU_PLUGIN_INLINE_ADD_U64)
		abort();
	op->entry = entry;
	op->imm = imm;
}

void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw, void *ud)
{
	struct fake_mem_cb *m;

	(void)flags;
	if (insn->nmem == sizeof(insn->mem) / sizeof(insn->mem[0])) {
		fprintf(stderr, "fake-qemu: too many memory callbacks\n");
		abort();
	}
	m = &insn->mem[insn->nmem++];
	m->cb = cb;
	m->rw = rw;
	m->ud = ud;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
	return tb->n;
}

struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx)
{
	return idx < tb->n ? tb->insns[idx] : NULL;
}

size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
			     size_t len)
{
	if (len > 4)
		len = 4;
	memcpy(dest, &insn->word, len);
	return len;
}

size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn)
{
	(void)insn;
	return 4;
}

uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn)
{
	return insn->pc;
}

static qemu_plugin_reg_descriptor desc(uintptr_t h, const char *name)
{
	return (qemu_plugin_reg_descriptor){
		(struct qemu_plugin_register *)h, name, "fake", false
	};
}

GArray *qemu_plugin_get_registers(void)
{
	static char xn[31][4];
	GArray *a = g_array_new(false, false,
				sizeof(qemu_plugin_reg_descriptor));
	qemu_plugin_reg_descriptor d;
	unsigned i;

	for (i = 0; i < 31; i++) {
		snprintf(xn[i], sizeof(xn[i]), "x%u", i);
		d = desc(1 + i, xn[i]);
		g_array_append_val(a, d);
	}
	d = desc(H_SP, "sp");
	g_array_append_val(a, d);
	d = desc(H_CPSR, "cpsr");
	g_array_append_val(a, d);
	d = desc(H_PC, "pc");
	g_array_append_val(a, d);
	for (i = 0; i < NSYS; i++) {
		d = desc(H_SYS + i, sys_names[i]);
		g_array_append_val(a, d);
	}
	return a;
}

static uint64_t *obj_slots(unsigned vcpu)
{
	unsigned i;

	if (!cpu_obj[vcpu]) {
		cpu_obj[vcpu] = malloc(FAKE_OBJ_SIZE);
		for (i = 0; i < FAKE_OBJ_SIZE; i++)
			cpu_obj[vcpu][i] = (uint8_t)(i * 7 + vcpu);
	}
	return (uint64_t *)(cpu_obj[vcpu] + FAKE_XREGS_OFF);
}

static void obj_refresh(unsigned vcpu)
{
	uint64_t *slots = obj_slots(vcpu);

	memcpy(slots, fake_cpus[vcpu].x, sizeof(fake_cpus[vcpu].x));
	slots[31] = fake_cpus[vcpu].sp;
	slots[32] = fake_cpus[vcpu].pc;
	if (obj_lie[vcpu].on)
		slots[obj_lie[vcpu].slot] = obj_lie[vcpu].val;
	if (obj_mirror[vcpu])
		memcpy(cpu_obj[vcpu] + obj_mirror[vcpu], slots, 33 * 8);
	current_cpu = cpu_obj[vcpu];
}

void fake_obj_lie(unsigned vcpu, unsigned slot, uint64_t val)
{
	obj_lie[vcpu].on = true;
	obj_lie[vcpu].slot = slot;
	obj_lie[vcpu].val = val;
}

void fake_obj_mirror(unsigned vcpu, size_t offset)
{
	obj_mirror[vcpu] = offset;
}

static uint64_t *reg_slot(uintptr_t h)
{
	struct fake_cpu *c = &fake_cpus[cur];

	if (h >= 1 && h <= 31)
		return &c->x[h - 1];
	if (h == H_SP)
		return &c->sp;
	if (h == H_CPSR)
		return &c->cpsr;
	if (h == H_PC)
		return &c->pc;
	if (h >= H_SYS && h < H_SYS + NSYS)
		return &c->sys[h - H_SYS];
	return NULL;
}

bool qemu_plugin_read_register(struct qemu_plugin_register *handle,
			       GByteArray *buf)
{
	uint64_t *r = reg_slot((uintptr_t)handle);

	if (!r)
		return false;
	g_byte_array_append(buf, (const guint8 *)r, 8);
	return true;
}

/* As in QEMU 11.1: general-purpose registers only, not system ones. */
bool qemu_plugin_write_register(struct qemu_plugin_register *handle,
				GByteArray *buf)
{
	uintptr_t h = (uintptr_t)handle;
	uint64_t *r = reg_slot(h);

	if (!r || h >= H_SYS || buf->len < 8)
		return false;
	memcpy(r, buf->data, 8);
	obj_refresh(cur);
	return true;
}

uint64_t *fake_sys(unsigned vcpu, const char *name)
{
	unsigned i;

	for (i = 0; i < NSYS; i++)
		if (!strcmp(sys_names[i], name))
			return &fake_cpus[vcpu].sys[i];
	fprintf(stderr, "fake-qemu: no register %s\n", name);
	abort();
}

unsigned fake_resets;

/* synchronous here: no vCPU runs while a test is not executing one */
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
		       void *userdata)
{
	(void)id;
	fake_resets++;
	init_cb = NULL;
	trans_cb = NULL;
	exit_cb = NULL;
	discon_cb = NULL;
	translated = NULL;	/* the flush */
	tbs = NULL;
	if (cb)
		cb(userdata);
}

void qemu_plugin_set_pc(uint64_t vaddr)
{
	new_pc = vaddr;
	siglongjmp(exec_jmp, 1);
}

int qemu_plugin_read_memory_hwaddr(uint64_t addr, GByteArray *data, size_t len)
{
	if (addr >= FAKE_MEM || len > FAKE_MEM - addr)
		return 1;
	g_byte_array_append(data, fake_mem + addr, len);
	return 0;
}

/* Virtual reads alias guest RAM: VA modulo its size. */
bool qemu_plugin_read_memory_vaddr(uint64_t addr, GByteArray *data, size_t len)
{
	return qemu_plugin_read_memory_hwaddr(addr % FAKE_MEM, data, len) == 0;
}

void fake_poke(uint64_t pa, const void *src, size_t len)
{
	memcpy(fake_mem + pa, src, len);
}

struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t size)
{
	struct qemu_plugin_scoreboard *s = g_new0(struct qemu_plugin_scoreboard, 1);

	s->size = size;
	s->data = g_malloc0(size * FAKE_VCPUS);
	return s;
}

void *qemu_plugin_scoreboard_find(struct qemu_plugin_scoreboard *score,
				  unsigned int vcpu)
{
	return score->data + score->size * vcpu;
}

void qemu_plugin_outs(const char *string)
{
	fputs(string, stderr);
}

bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret)
{
	(void)name;
	if (!strcmp(val, "on") || !strcmp(val, "true")) {
		*ret = true;
		return true;
	}
	if (!strcmp(val, "off") || !strcmp(val, "false")) {
		*ret = false;
		return true;
	}
	return false;
}

int qemu_plugin_num_vcpus(void)
{
	return fake_nvcpus;
}

/* --- driving the plugin --- */

int fake_install(unsigned nvcpus, const char *opts)
{
	static const qemu_info_t info_proto = {
		.target_name = "aarch64", .version = { 7, 7 },
		.system_emulation = true,
	};
	qemu_info_t info = info_proto;
	char **argv = g_strsplit(opts, ",", -1);
	int rc;

	memset(fake_cpus, 0, sizeof(fake_cpus));
	translated = NULL;	/* new options, new instrumentation */
	tbs = NULL;
	fake_nvcpus = nvcpus;
	info.system.smp_vcpus = nvcpus;
	info.system.max_vcpus = nvcpus;
	rc = qemu_plugin_install(1, &info, g_strv_length(argv), argv);
	return rc;
}

void fake_init_vcpus(void)
{
	for (cur = 0; cur < fake_nvcpus; cur++) {
		fake_cpus[cur].cpsr = 0x3c5;	/* EL1h, interrupts masked */
		*fake_sys(cur, "SCTLR_EL1") = 1;
		obj_refresh(cur);
		if (init_cb)
			init_cb(cur, init_ud);
	}
	cur = 0;
}

static struct qemu_plugin_insn *translate(uint64_t pc, uint32_t word)
{
	struct qemu_plugin_insn *i;
	struct qemu_plugin_tb tb;

	for (i = translated; i; i = i->next)
		if (i->pc == pc && i->word == word)
			return i;
	i = g_new0(struct qemu_plugin_insn, 1);
	i->pc = pc;
	i->word = word;
	tb.insns = &i;
	tb.n = 1;
	if (trans_cb)
		trans_cb(&tb, trans_ud);
	i->next = translated;
	translated = i;
	return i;
}

/* not inlined into fake_exec_tb(), whose locals sigsetjmp() would clobber */
static __attribute__((noinline))
struct fake_tb *translate_tb(uint64_t pc, const uint32_t *words, unsigned n)
{
	struct qemu_plugin_tb tb;
	struct fake_tb *t;
	unsigned k;

	for (t = tbs; t; t = t->next)
		if (t->pc == pc && t->n == n &&
		    !memcmp(t->words, words, n * sizeof(*words)))
			return t;
	t = g_new0(struct fake_tb, 1);
	t->pc = pc;
	t->n = n;
	t->words = g_memdup2(words, n * sizeof(*words));
	t->insns = g_new0(struct qemu_plugin_insn *, n);
	for (k = 0; k < n; k++) {
		t->insns[k] = g_new0(struct qemu_plugin_insn, 1);
		t->insns[k]->pc = pc + 4 * k;
		t->insns[k]->word = words[k];
	}
	tb.insns = t->insns;
	tb.n = n;
	if (trans_cb)
		trans_cb(&tb, trans_ud);
	t->next = tbs;
	tbs = t;
	return t;
}

static bool cond_true(const struct fake_op *op)
{
	uint64_t v = *(uint64_t *)((uint8_t *)qemu_plugin_scoreboard_find(
					   op->entry.score, cur) + op->entry.offset);

	switch (op->cond) {
	case QEMU_PLUGIN_COND_ALWAYS: return true;
	case QEMU_PLUGIN_COND_EQ: return v == op->imm;
	case QEMU_PLUGIN_COND_NE: return v != op->imm;
	case QEMU_PLUGIN_COND_LT: return v < op->imm;
	case QEMU_PLUGIN_COND_LE: return v <= op->imm;
	case QEMU_PLUGIN_COND_GT: return v > op->imm;
	case QEMU_PLUGIN_COND_GE: return v >= op->imm;
	default: return false;
	}
}

unsigned fake_pc_lag;

/* the inline ops and callbacks of one instruction, in order */
static void run_ops(const struct qemu_plugin_insn *insn)
{
	unsigned k;

	for (k = 0; k < insn->nops; k++) {
		const struct fake_op *op = &insn->ops[k];

		if (op->type == OP_INLINE) {
			*(uint64_t *)((uint8_t *)qemu_plugin_scoreboard_find(
				op->entry.score, cur) + op->entry.offset) +=
				op->imm;
		} else if (op->type == OP_CB || cond_true(op)) {
			cbs_run++;
			op->cb(cur, op->ud);
		}
	}
}

uint64_t fake_exec_at(unsigned vcpu, uint64_t vaddr, uint64_t run_pc,
		      uint32_t word)
{
	struct qemu_plugin_insn *insn = translate(vaddr, word);

	cur = vcpu;
	cbs_run = 0;
	fake_cpus[vcpu].pc = run_pc - fake_pc_lag;
	obj_refresh(vcpu);
	if (sigsetjmp(exec_jmp, 0))
		return new_pc;
	run_ops(insn);
	return run_pc + 4;
}

uint64_t fake_exec_mem(unsigned vcpu, uint64_t pc, uint32_t word,
		       uint64_t va, bool store)
{
	struct qemu_plugin_insn *insn = translate(pc, word);
	/* QEMU's info: the store bit as its qemu_plugin_mem_is_store() reads */
	qemu_plugin_meminfo_t info = (store ? QEMU_PLUGIN_MEM_W :
					      QEMU_PLUGIN_MEM_R) << 16;
	unsigned k;

	cur = vcpu;
	cbs_run = 0;
	fake_cpus[vcpu].pc = pc - fake_pc_lag;
	obj_refresh(vcpu);
	if (sigsetjmp(exec_jmp, 0))
		return new_pc;		/* a fault: no access, no callback */
	run_ops(insn);
	for (k = 0; k < insn->nmem; k++) {
		const struct fake_mem_cb *m = &insn->mem[k];

		if (m->rw & (store ? QEMU_PLUGIN_MEM_W : QEMU_PLUGIN_MEM_R)) {
			cbs_run++;
			m->cb(vcpu, info, va, m->ud);
		}
	}
	return pc + 4;
}

unsigned fake_mem_cbs_on(uint64_t pc, uint32_t word)
{
	return translate(pc, word)->nmem;
}

uint64_t fake_exec_tb(unsigned vcpu, uint64_t pc, const uint32_t *words,
		      unsigned n)
{
	struct fake_tb *volatile t = translate_tb(pc, words, n);
	volatile unsigned k;

	cur = vcpu;
	cbs_run = 0;
	fake_cpus[vcpu].pc = pc;	/* written back at the TB's start */
	obj_refresh(vcpu);
	if (sigsetjmp(exec_jmp, 0))
		return new_pc;
	for (k = 0; k < n; k++)
		run_ops(t->insns[k]);
	return pc + 4 * n;
}

uint64_t fake_exec(unsigned vcpu, uint64_t pc, uint32_t word)
{
	return fake_exec_at(vcpu, pc, pc, word);
}

unsigned fake_ops_on(uint64_t pc, uint32_t word)
{
	return translate(pc, word)->nops;
}

unsigned fake_callbacks_run(void)
{
	return cbs_run;
}

void fake_discon(unsigned vcpu, enum qemu_plugin_discon_type type,
		 uint64_t from, uint64_t to)
{
	cur = vcpu;
	obj_refresh(vcpu);
	if (discon_cb)
		discon_cb(vcpu, type, from, to, discon_ud);
}

void fake_exit(void)
{
	if (exit_cb)
		exit_cb(exit_ud);
}
