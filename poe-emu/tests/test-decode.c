/*
 * test-decode.c - host unit test of decode.c against real encodings
 *
 * Usage: test-decode cases.bin. cases.bin is cases.S assembled by the
 * aarch64 cross assembler (one word per row of cases.def); each word is
 * decoded and checked against the expectations in the same row. Prints
 * TAP and a final "N passed, N failed" line; exits 1 on any failure.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decode.h"

#define R(n)	((uint64_t)((n) + 1) << 16)
#define SP	0x7fff0000ull
#define PCB	0x400000ull

#define U	LS_F_UNPRIV
#define X	LS_F_EXCL
#define P	LS_F_PAIR
#define V	LS_F_SIMD
#define LIT	LS_F_LITERAL
#define A	LS_F_ACQREL
#define RO	LS_F_REGOFF
#define C	LS_F_MOPS_CPY
#define SU	LS_F_SRC_UNPRIV
#define PAC	LS_F_PAC
#define Z	LS_F_XZR
#define CM	LS_F_CM
#define MM	LS_F_MOPS_MAIN
#define ME	LS_F_MOPS_EPI
#define F	LS_F_MOPS_FWD
#define AL	LS_F_ALIGN

struct row {
	unsigned kind, flags, size, wb;
	uint64_t ea;
	const char *text;
};

#define CASE(k, f, s, e, w, ...) \
	{ LS_##k, f, s, WB_##w, e, #__VA_ARGS__ },
#define WB_NO WB_NONE
#define LS_MOPS_CONT LS_MOPS_CONT

static const struct row rows[] = {
#include "cases.def"
};

static uint64_t reg(unsigned n, int base)
{
	if (n == 31)
		return base ? SP : 0;	/* SP as a base, XZR as an index */
	if (n == 28)
		return (uint64_t)-8;
	if (n == 29)
		return 0x100000010ull;
	return R(n);
}

int main(int argc, char **argv)
{
	size_t n = sizeof(rows) / sizeof(rows[0]), i;
	unsigned pass = 0, fail = 0;
	uint32_t *words;
	FILE *f;
	long len;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: %s cases.bin\n", argv[0]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	words = malloc(len);
	if (!words || fread(words, 1, len, f) != (size_t)len) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 2;
	}
	fclose(f);
	if ((size_t)len != n * 4) {
		fprintf(stderr, "%s has %ld words, cases.def %zu rows\n",
			argv[1], len / 4, n);
		return 2;
	}

	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		struct ls_insn d;
		char why[160] = "";
		uint64_t ea = 0;

		ls_decode(words[i], &d);
		if (d.kind != LS_NONE && d.kind != LS_MOPS &&
		    d.kind != LS_MOPS_CONT)
			ea = ls_ea(&d, reg(d.rn, !(d.flags & LS_F_XZR)),
				   reg(d.rm, 0), PCB);
		if (d.kind != r->kind)
			snprintf(why, sizeof(why), "kind %s, want %s",
				 ls_kind_name(d.kind), ls_kind_name(r->kind));
		else if (d.flags != r->flags)
			snprintf(why, sizeof(why), "flags %#x, want %#x",
				 d.flags, r->flags);
		else if (d.size != r->size)
			snprintf(why, sizeof(why), "size %u, want %u",
				 d.size, r->size);
		else if (d.wb != r->wb)
			snprintf(why, sizeof(why), "wb %u, want %u",
				 d.wb, r->wb);
		else if (ea != r->ea)
			snprintf(why, sizeof(why),
				 "ea %#" PRIx64 ", want %#" PRIx64, ea, r->ea);
		if (why[0]) {
			printf("not ok %zu - %08x %s # %s\n", i + 1, words[i],
			       r->text, why);
			fail++;
		} else {
			printf("ok %zu - %08x %s (%s)\n", i + 1, words[i],
			       r->text, d.name ? d.name : "-");
			pass++;
		}
	}
	printf("%u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
