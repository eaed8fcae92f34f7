/*
 * test-sys.c - host unit test of sysdec.c against real encodings
 *
 * Usage: test-sys sys.bin (tests/sys.S assembled, one word per row of
 * tests/sys.def). Prints TAP and "N passed, N failed"; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../sysdec.h"

struct row {
	unsigned kind, bcast, rt;
	const char *text;
};

#define SYS(k, b, r, ...) { SYS_##k, b, r, #__VA_ARGS__ },

static const struct row rows[] = {
#include "sys.def"
};

int main(int argc, char **argv)
{
	size_t n = sizeof(rows) / sizeof(rows[0]), i;
	unsigned pass = 0, fail = 0;
	uint32_t words[512];
	size_t len;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: %s sys.bin\n", argv[0]);
		return 2;
	}
	len = fread(words, 4, 512, f);
	fclose(f);
	if (len != n) {
		fprintf(stderr, "%s has %zu words, sys.def %zu rows\n",
			argv[1], len, n);
		return 2;
	}
	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		struct sys_insn s;
		bool ok;

		sys_decode(words[i], &s);
		ok = s.kind == r->kind;
		if (ok && s.kind == SYS_TLBI)
			ok = s.bcast == r->bcast && s.rt == r->rt;
		if (ok && (s.kind == SYS_MRS || s.kind == SYS_MSR))
			ok = s.rt == r->rt;
		printf("%sok %zu - %08x %s: %s%s\n", ok ? "" : "not ",
		       i + 1, words[i], r->text, sys_kind_name(s.kind),
		       s.kind != SYS_TLBI ? "" : s.bcast ? " broadcast" :
		       " local");
		if (ok)
			pass++;
		else
			fail++;
	}
	printf("%u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
