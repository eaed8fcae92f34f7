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

/*
 * Range operands: TLBI RVALE1IS, X1 with BaseADDR 0x12345, NUM 1, SCALE 0
 * (4 pages of the granule TG). The base is VA[48:12], [50:14] or [52:16]
 * by granule, and VA[52:16] for every granule when TCR_EL1.DS is set: Linux
 * with 52-bit VAs and 4K pages (LPA2) shifts the start right by 16.
 */
#define TLBI_RVALE1IS_X1	0xd50882a1u
#define RANGE_XT(tg)		((uint64_t)(tg) << 46 | 1ull << 39 | 0x12345)

static const struct range_row {
	unsigned tg;
	bool ds;
	uint64_t start, end, mask;
	const char *text;
} range_rows[] = {
	{ 1, false, 0x12345ull << 12, (0x12345ull << 12) + (4 << 12),
	  (1ull << 49) - 1, "4K" },
	{ 1, true, 0x12345ull << 16, (0x12345ull << 16) + (4 << 12),
	  (1ull << 53) - 1, "4K, TCR_EL1.DS" },
	{ 2, false, 0x12345ull << 14, (0x12345ull << 14) + (4 << 14),
	  (1ull << 51) - 1, "16K" },
	{ 2, true, 0x12345ull << 16, (0x12345ull << 16) + (4 << 14),
	  (1ull << 53) - 1, "16K, TCR_EL1.DS" },
	{ 3, false, 0x12345ull << 16, (0x12345ull << 16) + (4 << 16),
	  (1ull << 53) - 1, "64K" },
};

/*
 * The ASID a TLBI names (xt[63:48]), if it is limited to one; words from
 * aarch64-linux-gnu-as, operand x1 (x31 for VMALLE1).
 */
static const struct asid_row {
	uint32_t word;
	bool limited;
	const char *text;
} asid_rows[] = {
	{ 0xd5088321u, true, "tlbi vae1is" },
	{ 0xd50887a1u, true, "tlbi vale1" },
	{ 0xd50881a1u, true, "tlbi vale1os" },
	{ 0xd5088741u, true, "tlbi aside1" },
	{ 0xd5088341u, true, "tlbi aside1is" },
	{ 0xd5088221u, true, "tlbi rvae1is" },
	{ 0xd5088761u, false, "tlbi vaae1" },
	{ 0xd5088261u, false, "tlbi rvaae1is" },
	{ 0xd508871fu, false, "tlbi vmalle1" },
};

static bool asid_ok(const struct asid_row *r)
{
	uint16_t asid = 0;
	bool limited = sys_tlbi_asid(r->word, 0xbeef000000012345ull, &asid);

	return limited == r->limited && (!limited || asid == 0xbeef);
}

int main(int argc, char **argv)
{
	size_t n = sizeof(rows) / sizeof(rows[0]), i;
	size_t nr = sizeof(range_rows) / sizeof(range_rows[0]);
	size_t na = sizeof(asid_rows) / sizeof(asid_rows[0]);
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
	printf("TAP version 13\n1..%zu\n", n + nr + na);
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
		if (ok && s.kind == SYS_MSR_UAO)
			ok = s.imm == r->rt;
		printf("%sok %zu - %08x %s: %s%s\n", ok ? "" : "not ",
		       i + 1, words[i], r->text, sys_kind_name(s.kind),
		       s.kind != SYS_TLBI ? "" : s.bcast ? " broadcast" :
		       " local");
		if (ok)
			pass++;
		else
			fail++;
	}
	for (i = 0; i < nr; i++) {
		const struct range_row *r = &range_rows[i];
		struct sys_tlbi_range got;
		bool ok;

		sys_tlbi_range(TLBI_RVALE1IS_X1, RANGE_XT(r->tg), r->ds, &got);
		ok = got.start == r->start && got.end == r->end &&
		     got.mask == r->mask;
		printf("%sok %zu - TLBI RVALE1IS range, %s: [%#llx, %#llx) "
		       "mask %#llx\n", ok ? "" : "not ", n + i + 1, r->text,
		       (unsigned long long)got.start,
		       (unsigned long long)got.end,
		       (unsigned long long)got.mask);
		if (ok)
			pass++;
		else
			fail++;
	}
	for (i = 0; i < na; i++) {
		bool ok = asid_ok(&asid_rows[i]);

		printf("%sok %zu - %s: %s\n", ok ? "" : "not ",
		       n + nr + i + 1, asid_rows[i].text,
		       asid_rows[i].limited ? "one ASID" : "every ASID");
		if (ok)
			pass++;
		else
			fail++;
	}
	printf("%u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
