/*
 * qemu-plugin-api.h - our own declarations of the QEMU TCG plugin API
 *
 * Debian ships no qemu-plugin.h, so this file declares the subset of the
 * QEMU 11.1 plugin API (version 7) that poe-emu uses. Signatures were
 * checked against the calling convention of the exported functions of
 * Debian's qemu-system-aarch64 1:11.1.3 (in v7 every callback carries a
 * userdata pointer and no plugin id; register/memory reads return bool).
 */
#ifndef POE_QEMU_PLUGIN_API_H
#define POE_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 7

typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS = 0,
	QEMU_PLUGIN_CB_R_REGS = 1,
	QEMU_PLUGIN_CB_RW_REGS = 2,
	QEMU_PLUGIN_CB_RW_REGS_PC = 3,
};

enum qemu_plugin_cond {
	QEMU_PLUGIN_COND_NEVER = 0,
	QEMU_PLUGIN_COND_ALWAYS = 1,
	QEMU_PLUGIN_COND_EQ = 2,
	QEMU_PLUGIN_COND_NE = 3,
	QEMU_PLUGIN_COND_LT = 4,
	QEMU_PLUGIN_COND_LE = 5,
	QEMU_PLUGIN_COND_GT = 6,
	QEMU_PLUGIN_COND_GE = 7,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64 = 0,
	QEMU_PLUGIN_INLINE_STORE_U64 = 1,
};

/* which accesses a memory callback is for */
enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W = 2,
	QEMU_PLUGIN_MEM_RW = 3,
};

/* size, sign, endianness, store: opaque here (nothing reads it) */
typedef uint32_t qemu_plugin_meminfo_t;

enum qemu_plugin_discon_type {
	QEMU_PLUGIN_DISCON_INTERRUPT = 1,
	QEMU_PLUGIN_DISCON_EXCEPTION = 2,
	QEMU_PLUGIN_DISCON_HOSTCALL = 4,
	QEMU_PLUGIN_DISCON_ALL = 7,
};

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_register;
struct qemu_plugin_scoreboard;

/* A u64 living inside each vCPU's element of a scoreboard. */
typedef struct {
	struct qemu_plugin_scoreboard *score;
	size_t offset;
} qemu_plugin_u64;

typedef struct {
	struct qemu_plugin_register *handle;
	const char *name;
	const char *feature;
	bool is_readonly;
} qemu_plugin_reg_descriptor;

typedef void (*qemu_plugin_udata_cb_t)(void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(struct qemu_plugin_tb *tb,
					       void *userdata);
/* run after an access, with its virtual address */
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu,
					  qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);
typedef void (*qemu_plugin_vcpu_discon_cb_t)(unsigned int vcpu,
					     enum qemu_plugin_discon_type type,
					     uint64_t from_pc, uint64_t to_pc,
					     void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv);

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_udata_cb_t cb,
				       void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb,
					   void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_discon_cb(qemu_plugin_id_t id,
					 enum qemu_plugin_discon_type type,
					 qemu_plugin_vcpu_discon_cb_t cb,
					 void *userdata);

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cond_cb(
	struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
	enum qemu_plugin_cb_flags flags, enum qemu_plugin_cond cond,
	qemu_plugin_u64 entry, uint64_t imm, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
	struct qemu_plugin_insn *insn, enum qemu_plugin_op op,
	qemu_plugin_u64 entry, uint64_t imm);
/*
 * cb runs after each access the instruction makes (none if it makes
 * none); checked against the disassembly of Debian's 1:11.1.3: the
 * arguments are passed on as (insn's callbacks, cb, flags, rw, userdata),
 * and cb is called with (vcpu, info, vaddr, userdata).
 */
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw,
				      void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
			     size_t len);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

GArray *qemu_plugin_get_registers(void);
bool qemu_plugin_read_register(struct qemu_plugin_register *handle,
			       GByteArray *buf);
bool qemu_plugin_write_register(struct qemu_plugin_register *handle,
				GByteArray *buf);
/* Does not return: leaves the TB and resumes at vaddr (needs RW_REGS_PC). */
void qemu_plugin_set_pc(uint64_t vaddr);
/*
 * Unregister every callback of the plugin and flush the translated code,
 * asynchronously (once no vCPU runs); then call cb(userdata), from where
 * the plugin may register callbacks again.
 */
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
		       void *userdata);

/* 0 means success; other values are failure kinds we do not distinguish. */
int qemu_plugin_read_memory_hwaddr(uint64_t addr, GByteArray *data, size_t len);
bool qemu_plugin_read_memory_vaddr(uint64_t addr, GByteArray *data, size_t len);

struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
void *qemu_plugin_scoreboard_find(struct qemu_plugin_scoreboard *score,
				  unsigned int vcpu);

void qemu_plugin_outs(const char *string);
bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret);
int qemu_plugin_num_vcpus(void);

#endif
