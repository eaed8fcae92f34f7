#!/usr/bin/env python3
"""The report of make bench, from the emulator's per-row records.

    bench/report.py RUN_DIR [--elapsed SECONDS]
        read RUN_DIR/kernels, RUN_DIR/NAME.records and RUN_DIR/NAME.log,
        write RUN_DIR/report.md, RUN_DIR/overhead.png, RUN_DIR/summary.txt
        and print the summary; exit 1 if a row is missing or failed
    bench/report.py --compare RUN_A RUN_B
        two runs side by side (the rerun check): medians per row and kernel,
        exit 1 if instructions differ by more than 1% anywhere
    bench/report.py --smoke-check BASELINE_RECORDS HARDENED_RECORDS
        make check's smoke row: the counters are non-zero, the hardened
        kernel writes POR_EL1 in the row and the baseline kernel does not

Record lines (poe-emu, option bench=FILE):
    poe-bench: row=NAME rep=N insns=.. insns_el0=.. ... window_insns=..
Guest lines (guest/bench/kpkeys_bench.c, in the boot log):
    kpkeys-bench: row=NAME rep=N key=value...
    kpkeys-bench: row-time row=NAME seconds=S
    ok N NAME / not ok N NAME # reason
"""

import argparse
import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ["base", "baseline", "no-batching", "HEAD", "HEAD-off"]
OFF_GOAL = 0.003        # issue 45: HEAD booted with the protection off vs baseline
# The overhead columns: kernel, the kernel it is compared with, heading.
COLUMNS = [("baseline", "base", "baseline vs base"),
           ("no-batching", "baseline", "no-batching"),
           ("HEAD", "baseline", "HEAD"),
           ("HEAD-off", "baseline", "HEAD, off at boot")]
EVENTS = ["por_el1_writes", "isb", "tlbi_bcast", "tlbi_local", "dsb",
          "exceptions", "irqs"]
SMOKE_ROW = "smoke/fork"
# The TLB model's counts (poe-emu tlb=on), by exception level; runs made
# without it have none, and count them as 0.
TLB_COUNTERS = ["tlb_access_el0", "tlb_access_el1", "tlb_l1_miss_el0",
                "tlb_l1_miss_el1", "tlb_walk_el0", "tlb_walk_el1"]
COUNTERS = ["insns", "insns_el0", "insns_el1", "por_el1_writes", "isb", "dsb",
            "dmb", "tlbi_bcast", "tlbi_local", "exceptions", "irqs",
            "window_insns"] + TLB_COUNTERS
# What a timer interrupt adds to a row (exceptions: only synchronous ones
# are counted there, so none).
TICK_KEYS = ["insns", "insns_el0", "insns_el1", "por_el1_writes", "isb", "dsb",
             "dmb", "tlbi_bcast", "tlbi_local", "window_insns"] + TLB_COUNTERS
SPREAD_FLAG = 0.02      # flag a row whose repetitions spread more than 2%
SIGNIFICANT = 0.01      # and never call less than 1% significant

# Rows of the main table, in the seed's order, then ours. "unit" names
# what the per-operation counts are divided by (a key of the guest's
# kpkeys-bench lines).
MICROMM = [("fork/h:0", "ptes", "PTE"), ("fork/h:1", "ptes", "PTE"),
           ("munmap/h:0", "ptes", "PTE"), ("munmap/h:1", "ptes", "PTE")]
VMALLOC = ["fix_size_alloc/p:%d/h:0" % p for p in (1, 4, 16, 64, 256)] + \
          ["fix_size_alloc/p:%d/h:1" % p for p in (16, 64, 256)] + \
          ["random_size_alloc/p:1/h:0", "vm_map_ram/p:1/h:0"]
EMPTY = "vmalloc/empty"
MACRO = "shell-loop"
EXTRA = [("mprotect/h:0", "ptes", "PTE"), ("mprotect/h:1", "ptes", "PTE"),
         ("sparse/touch", "pte_tables", "PTE table"),
         ("sparse/munmap", "pte_tables", "PTE table"),
         ("pagecache/read", "pages", "page"),
         ("ctxsw/pipe", "switches", "context switch")]
IDLE = "idle/1s"
BBML3 = "-bbml3"        # suffix of the boots with BBML3 advertised
TLB_GOAL = 0.005        # issue 33: HEAD's TLB term against baseline, both BBML3
PTES_PER_TABLE = 512   # 4 KiB pages: PTEs per PTE table


def parse_kv(text):
    out = {}
    for m in re.finditer(r'(\w+)=("[^"]*"|\S+)', text):
        v = m.group(2).strip('"')
        out[m.group(1)] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return out


def read_records(path):
    """{row: [counts of rep 0, rep 1, ...]} from a bench=FILE file."""
    rows = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("poe-bench: "):
                continue
            kv = parse_kv(line[len("poe-bench: "):])
            rows.setdefault(kv.pop("row"), []).append(kv)
    for reps in rows.values():
        reps.sort(key=lambda r: r["rep"])
    return rows


def read_guest(path):
    """Guest info lines, row times and TAP results of one boot log."""
    info, times, tap = {}, {}, []
    with open(path, errors="replace") as f:
        for line in f:
            line = re.sub(r"^\[\s*\d+\.\d+\]\s?", "", line.rstrip("\r\n"))
            if line.startswith("kpkeys-bench: rows="):
                info["_options"] = parse_kv(line)
            elif line.startswith("kpkeys-bench: row-time "):
                kv = parse_kv(line)
                times[kv["row"]] = float(kv["seconds"])
            elif line.startswith("kpkeys-bench: row="):
                kv = parse_kv(line)
                info.setdefault(kv["row"], {}).setdefault(kv["rep"], {}).update(kv)
            m = re.match(r"^(not ok|ok) \d+ (\S+)(?: # (.*))?$", line)
            if m:
                tap.append((m.group(1) == "ok", m.group(2), m.group(3) or ""))
    return info, times, tap


def read_model(path):
    consts, calib, ticks = {}, None, False
    with open(path) as f:
        for line in f:
            w = line.split("#")[0].split()
            if not w:
                continue
            if w[0] == "tick-correction":
                ticks = w[1] == "on"
            elif w[0] == "constant":
                consts[w[1]] = (float(w[2]), float(w[3]))
            elif w[0] == "calibrate":
                calib = {"row": w[1], "column": w[2], "seed": w[3],
                         "percent": float(w[4]), "constant": w[5]}
    return consts, calib, ticks


def read_seed(path):
    seed = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = [c.strip() for c in line.split("|")]
            seed[cols[0]] = {"name": cols[1], "v4-no-batching": cols[2],
                             "v4-batching": cols[3], "v5-corrected": cols[4]}
    return seed


def seed_value(cell):
    return float(re.search(r"-?\d+(\.\d+)?", cell).group(0))


def model_set(consts, which):
    i = 0 if which == "low" else 1
    return {k: v[i] for k, v in consts.items()}


def tlb_cycles(c, k, el):
    """The TLB model's term at exception level el (0 or 1): L1 misses that
    hit in the L2 TLB, and page walks. 0 for runs without tlb=on."""
    walks = c.get("tlb_walk_el%d" % el, 0)
    l2_hits = c.get("tlb_l1_miss_el%d" % el, 0) - walks
    return l2_hits * k.get("tlb_l2_hit", 0) + walks * k.get("tlb_walk", 0)


def modeled(c, k, cls="all"):
    """Modeled cycles of counts c under constants k. cls: all, sys, user."""
    user = c.get("insns_el0", 0) / k["ipc"] + tlb_cycles(c, k, 0)
    if cls == "user":
        return user
    sys_ = (c.get("insns_el1", c["insns"] - c.get("insns_el0", 0)) / k["ipc"]
            + c["isb"] * k["isb"] + c["por_el1_writes"] * k["por_el1_write"]
            + c["tlbi_bcast"] * k["tlbi_bcast"] + c["tlbi_local"] * k["tlbi_local"]
            + c["dsb"] * k["dsb"]
            + (c["exceptions"] + c.get("irqs", 0)) * k["exception"]
            + tlb_cycles(c, k, 1))
    if cls == "sys":
        return sys_
    # insns may include instructions outside both halves (idmap): count
    # them as system time.
    other = (c["insns"] - c.get("insns_el0", 0) - c.get("insns_el1", 0)) / k["ipc"]
    return sys_ + user + max(other, 0)


def spread(values):
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else 0.0


class Bench:
    def __init__(self, run):
        self.run = run
        self.kernels = []
        with open(os.path.join(run, "kernels")) as f:
            for line in f:
                cols = [c.strip() for c in line.split("|")]
                if len(cols) >= 7:
                    self.kernels.append(dict(zip(
                        ["name", "commit", "src", "frags", "out", "alias", "note"], cols)))
        self.names = [k["name"] for k in self.kernels]
        self.rec, self.info, self.times, self.tap = {}, {}, {}, {}
        for n in self.names:
            self.rec[n] = read_records(os.path.join(run, n + ".records"))
            self.info[n], self.times[n], self.tap[n] = read_guest(
                os.path.join(run, n + ".log"))
        # Boots on a CPU that advertises BBML3 (tools/bench BENCH_BBML3):
        # kernels of their own for the BBML3 table, not in self.names.
        self.bbml3 = []
        for n in self.names:
            path = os.path.join(run, n + BBML3 + ".records")
            if os.path.exists(path):
                self.rec[n + BBML3] = read_records(path)
                self.info[n + BBML3], _, _ = read_guest(
                    os.path.join(run, n + BBML3 + ".log"))
                self.bbml3.append(n)
        self.consts, self.calib, self.tick_correction = read_model(
            os.path.join(HERE, "cost-model"))
        # With the instruction clock a row lasts the ticks its instructions
        # take, as on hardware: they are part of its cost, not an artefact.
        self.insn_clock = self.meta("clock", "host") == "insns"
        if self.insn_clock:
            self.tick_correction = False
        self.seed = read_seed(os.path.join(HERE, "seed-table"))
        self.sets = {s: model_set(self.consts, s) for s in ("low", "high")}
        self.problems = []
        self.check()
        self.calibrate()

    # -- data --

    def ticks(self, kernel, row, rep):
        """Timer ticks a repetition lasted (the guest's jiffies), or, from
        an older guest, the interrupts it took."""
        t = self.info[kernel].get(row, {}).get(rep["rep"], {}).get("ticks")
        return rep["irqs"] if t is None else t

    def per_tick(self, kernel):
        """What one timer tick costs on this kernel: the idle row's counts
        per tick, median over its repetitions (None without an idle row)."""
        idle = self.rec[kernel].get(IDLE)
        if not self.tick_correction or not idle:
            return None
        reps = [(r, self.ticks(kernel, IDLE, r)) for r in idle]
        reps = [(r, t) for r, t in reps if t]
        if not reps:
            return None
        return {k: statistics.median(r[k] / t for r, t in reps)
                for k in TICK_KEYS if k in reps[0][0]}

    def corrected(self, kernel, row):
        """Counts per repetition, minus the cost of the timer ticks the row
        lasted (their number follows host time under TCG, not the kernel)."""
        reps = self.rec[kernel].get(row, [])
        v = self.per_tick(kernel)
        if v is None or row == IDLE:
            return reps
        out = []
        for r in reps:
            c = dict(r)
            t = self.ticks(kernel, row, r)
            for k, per in v.items():
                c[k] = max(c[k] - t * per, 0)
            c["irqs"] = 0
            out.append(c)
        return out

    def reps(self, kernel, row):
        """Counts per repetition, tick-corrected; vmalloc rows net of the
        empty insmod (its median)."""
        reps = self.corrected(kernel, row)
        if row in VMALLOC and self.rec[kernel].get(EMPTY):
            empty = self.median_counts(kernel, EMPTY)
            reps = [{k: (v - empty.get(k, 0)) if k in COUNTERS else v
                     for k, v in r.items()} for r in reps]
        return reps

    def median_counts(self, kernel, row):
        reps = self.corrected(kernel, row)
        return {k: statistics.median(r[k] for r in reps)
                for k in reps[0] if k in COUNTERS}

    def unit(self, kernel, row, key):
        reps = self.info[kernel].get(row, {}) if row != "_options" else {}
        vals = {r.get(key) for r in reps.values()}
        return vals.pop() if len(vals) == 1 else None

    def cost(self, kernel, row, kset, cls="all"):
        """(median, min, max) of the modeled cycles of a row."""
        k = kset if isinstance(kset, dict) else self.sets[kset]
        vals = [modeled(r, k, cls) for r in self.reps(kernel, row)]
        if not vals:
            return None
        return statistics.median(vals), min(vals), max(vals)

    def overhead(self, kernel, ref, row, kset, cls="all"):
        a, b = self.cost(kernel, row, kset, cls), self.cost(ref, row, kset, cls)
        if not a or not b or not b[0]:
            return None
        return a[0] / b[0] - 1

    def row_spread(self, kernel, row, cls="all"):
        """Largest relative spread of instructions and modeled cycles."""
        reps = self.reps(kernel, row)
        if len(reps) < 2:
            return 0.0
        key = {"all": "insns", "sys": "insns_el1", "user": "insns_el0"}[cls]
        s = [spread([r[key] for r in reps])]
        for kset in ("low", "high"):
            s.append(spread([modeled(r, self.sets[kset], cls) for r in reps]))
        return max(s)

    def significance(self, kernel, ref, row, cls="all"):
        lo = self.overhead(kernel, ref, row, "low", cls)
        hi = self.overhead(kernel, ref, row, "high", cls)
        if lo is None or hi is None:
            return ""
        noise = max(SIGNIFICANT, self.row_spread(kernel, row, cls) +
                    self.row_spread(ref, row, cls))
        if min(lo, hi) > noise:
            return "(R) "
        if max(lo, hi) < -noise:
            return "(I) "
        return ""

    def check(self):
        for n in self.names:
            for ok, row, why in self.tap[n]:
                if not ok:
                    self.problems.append("%s: guest row %s failed: %s" % (n, row, why))
            if not self.tap[n]:
                self.problems.append("%s: the guest printed no result" % n)
            for ok, row, _ in self.tap[n]:
                if ok and row not in self.rec[n]:
                    self.problems.append("%s: no emulator record for row %s" % (n, row))

    def rows_present(self, rows):
        return [r for r in rows if all(r in self.rec[n] for n in self.names)]

    # -- calibration --

    def calibrate(self):
        """Fit one constant per set on the seed's row (see cost-model)."""
        self.fit = {}
        c = self.calib
        if not c or c["column"] not in self.names or "baseline" not in self.names:
            return
        row, r = c["row"], c["percent"] / 100 + 1
        if row not in self.rec[c["column"]] or row not in self.rec["baseline"]:
            return
        for s in ("low", "high"):
            k = dict(self.sets[s])
            k[c["constant"]] = 0.0
            a_h = self.cost(c["column"], row, k)[0]
            a_b = self.cost("baseline", row, k)[0]
            cnt = {"isb": "isb", "por_el1_write": "por_el1_writes",
                   "tlbi_bcast": "tlbi_bcast", "tlbi_local": "tlbi_local",
                   "dsb": "dsb"}[c["constant"]]
            n_h = self.median_counts(c["column"], row)[cnt]
            n_b = self.median_counts("baseline", row)[cnt]
            if n_h - r * n_b > 0:
                val = (r * a_b - a_h) / (n_h - r * n_b)
                if val > 0:
                    k[c["constant"]] = val
                    self.fit[s] = k

    # -- output --

    def pct(self, v):
        return "n/a" if v is None else "%+.2f%%" % (100 * v)

    def cell(self, kernel, ref, row, cls="all"):
        if kernel not in self.names or ref not in self.names:
            return "n/a"
        lo = self.overhead(kernel, ref, row, "low", cls)
        hi = self.overhead(kernel, ref, row, "high", cls)
        if lo is None:
            return "n/a"
        flag = self.significance(kernel, ref, row, cls)
        return "%s%s … %s" % (flag, self.pct(lo), self.pct(hi))

    def cal_cell(self, kernel, row, cls="all"):
        if "low" not in self.fit or kernel not in self.names:
            return "n/a"
        vals = [self.overhead(kernel, "baseline", row, self.fit[s], cls)
                for s in ("low", "high") if s in self.fit]
        return " … ".join(self.pct(v) for v in vals)

    def table_rows(self):
        out = []
        if MACRO in self.rec.get("baseline", {}):
            out.append((MACRO, "shell loop, system (EL1)", "sys"))
        for row, _, _ in MICROMM:
            out.append((row, row, "all"))
        for row in VMALLOC:
            out.append((row, row, "all"))
        for row, _, _ in EXTRA:
            out.append((row, row, "all"))
        if MACRO in self.rec.get("baseline", {}):
            out.append((MACRO, "shell loop, user (EL0)", "user"))
            out.append((MACRO, "shell loop, total", "all"))
        return [r for r in out if r[0] in self.rows_present([r[0]])]

    def flagged(self, row, cls="all"):
        return any(self.row_spread(n, row, cls) > SPREAD_FLAG for n in self.names
                   if row in self.rec[n])

    def main_table(self):
        hdr = ("| Benchmark | baseline vs base | no-batching | HEAD | HEAD, calibrated "
               "| HEAD, off at boot "
               "| seed v4 no batching | seed v4 batching | seed v5-corrected batching |")
        lines = [hdr, "|" + "---|" * 9]
        for row, label, cls in self.table_rows():
            seedkey = row if (cls in ("all", "sys") and
                              not (row == MACRO and cls == "all")) else None
            s = self.seed.get(seedkey, {}) if seedkey else {}
            mark = " †" if self.flagged(row, cls) else ""
            name = label + (" (%s)" % s["name"] if s else "") + mark
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, self.cell("baseline", "base", row, cls),
                self.cell("no-batching", "baseline", row, cls),
                self.cell("HEAD", "baseline", row, cls),
                self.cal_cell("HEAD", row, cls),
                self.cell("HEAD-off", "baseline", row, cls),
                s.get("v4-no-batching", ""), s.get("v4-batching", ""),
                s.get("v5-corrected", "")))
        return "\n".join(lines)

    def calib_table(self):
        c = self.calib
        if not self.fit:
            return ("The calibration could not be done (no %s and baseline "
                    "records of %s, or no positive fit)." % (c["column"], c["row"])
                    if c else "No calibration configured.")
        fits = ", ".join("%s set: c_%s = %.1f cycles (was %g)" % (
            s, c["constant"], self.fit[s][c["constant"]],
            self.sets[s][c["constant"]]) for s in ("low", "high") if s in self.fit)
        lines = ["Fitted on %s, %s vs baseline = +%.2f%% (the seed's %s): %s." % (
            c["row"], c["column"], c["percent"], c["seed"], fits), "",
            "| row | seed v4 no batching | our no-batching, fitted low set | "
            "fitted high set | predicted / measured (low set) |", "|---|---|---|---|---|"]
        errs = []
        for row, s in self.seed.items():
            cls = "sys" if row == MACRO else "all"
            if row not in self.rows_present([row]) or "no-batching" not in self.names:
                continue
            meas = seed_value(s["v4-no-batching"])
            pred = [self.overhead("no-batching", "baseline", row, self.fit[k], cls)
                    for k in ("low", "high") if k in self.fit]
            ratio = (100 * pred[0] / meas) if meas else float("nan")
            if row != c["row"]:
                errs.append(abs(math.log(max(100 * pred[0], 0.01) / meas)) if meas > 0 else 0)
            lines.append("| %s%s | %s | %s | %s | %.2f |" % (
                row, " (fitted)" if row == c["row"] else "", s["v4-no-batching"],
                self.pct(pred[0]), self.pct(pred[-1]), ratio))
        if errs:
            g = math.exp(statistics.median(errs))
            lines += ["", "Median factor between prediction and the seed's measurement "
                      "over the %d other rows: %.2fx (1.00x = perfect)." % (len(errs), g)]
        return "\n".join(lines)

    def per_op(self, n, row):
        """(divisor, name) of a row's operation: what its per-operation
        counts are counted per."""
        units = {r: (k, u) for r, k, u in MICROMM + EXTRA}
        if row in units:
            div, per = self.unit(n, row, units[row][0]), units[row][1]
        elif row in VMALLOC:
            div, per = self.unit(n, row, "loops"), "call (net of empty insmod)"
        elif row == MACRO:
            div, per = self.unit(n, row, "iterations"), "iteration"
        else:
            div, per = 1, "row"
        return div or 1, per

    def has_tlb(self):
        return any("tlb_access_el1" in reps[0]
                   for n in self.names for reps in self.rec[n].values() if reps)

    def tlb_table(self):
        """The TLB model's misses per operation, and its term in HEAD's
        modeled overhead against baseline."""
        lines = ["| row | kernel | per | L1 misses EL1 | page walks EL1 | "
                 "L1 misses EL0 | page walks EL0 | TLB term vs baseline (low … high) |",
                 "|" + "---|" * 8]
        for row in [r for r, _, _ in MICROMM] + VMALLOC + [r for r, _, _ in EXTRA] + \
                [MACRO]:
            for n in self.names:
                if n == "base" or row not in self.rec[n]:
                    continue
                div, per = self.per_op(n, row)
                m = self.med(n, row)
                term = "-"
                if n != "baseline" and row in self.rec.get("baseline", {}):
                    cls = "sys" if row == MACRO else "all"
                    t = [dict(self.terms(n, "baseline", row, s, cls))["TLB"]
                         for s in ("low", "high")]
                    term = "%s … %s" % (self.pct(t[0]), self.pct(t[1]))
                lines.append("| %s | %s | %s | %s | %s |" % (
                    row, n, per, " | ".join("%.3f" % (m[k] / div) for k in (
                        "tlb_l1_miss_el1", "tlb_walk_el1", "tlb_l1_miss_el0",
                        "tlb_walk_el0")), term))
        return "\n".join(lines)

    def bbml3_table(self):
        """Overheads with BBML3 advertised: what the page-granular linear map
        costs the baseline kernel, and HEAD against baseline when both run
        where Linux keeps the linear map in blocks."""
        if not {"baseline", "HEAD"} <= set(self.bbml3):
            return None
        lines = ["| row | baseline, pages against blocks | HEAD against baseline, BBML3 "
                 "| its TLB term | TLB term ≤ %.1f%% |" % (100 * TLB_GOAL),
                 "|---|---|---|---|---|"]
        rows = [r for r, _, _ in MICROMM] + VMALLOC + [r for r, _, _ in EXTRA] + [MACRO]
        b3, h3 = "baseline" + BBML3, "HEAD" + BBML3
        for row in rows:
            if not all(row in self.rec[k] for k in ("baseline", b3, h3)):
                continue
            cls = "sys" if row == MACRO else "all"
            pages = [self.overhead("baseline", b3, row, s, cls) for s in ("low", "high")]
            head = [self.overhead(h3, b3, row, s, cls) for s in ("low", "high")]
            tlb = [dict(self.terms(h3, b3, row, s, cls))["TLB"] for s in ("low", "high")]
            lines.append("| %s | %s … %s | %s … %s | %s … %s | %s |" % (
                row + (" (EL1)" if cls == "sys" else ""),
                self.pct(pages[0]), self.pct(pages[1]), self.pct(head[0]),
                self.pct(head[1]), self.pct(tlb[0]), self.pct(tlb[1]),
                "met" if max(tlb) <= TLB_GOAL else "**not met**"))
        return "\n".join(lines)

    def per_op_table(self):
        lines = ["| row | kernel | per | instructions | POR_EL1 writes | ISB | "
                 "TLBI bcast | TLBI local | DSB | exceptions | irqs (as counted) | window insns |",
                 "|" + "---|" * 12]
        for row in [r for r, _, _ in MICROMM] + VMALLOC + [r for r, _, _ in EXTRA] + \
                [MACRO, EMPTY, IDLE]:
            for n in self.names:
                if row not in self.rec[n]:
                    continue
                div, per = self.per_op(n, row)
                reps = self.reps(n, row)
                med = {k: statistics.median(r.get(k, 0) for r in reps)
                       for k in ["insns"] + EVENTS + ["window_insns"]}
                med["irqs"] = statistics.median(r["irqs"] for r in self.rec[n][row])
                fmt = lambda v: ("%.3f" % (v / div)).rstrip("0").rstrip(".") \
                    if div != 1 else "%d" % v
                lines.append("| %s | %s | %s | %s |" % (
                    row, n, per, " | ".join(fmt(med[k]) for k in
                                            ["insns"] + EVENTS + ["window_insns"])))
        return "\n".join(lines)

    def window_share(self, name, row):
        """Median share of a row's EL1 instructions run in a page-table
        write window, in percent; None without EL1 instructions."""
        reps = self.reps(name, row)
        el1 = statistics.median(r.get("insns_el1", 0) for r in reps)
        if not el1:
            return None
        return 100.0 * statistics.median(r.get("window_insns", 0) for r in reps) / el1

    def window_table(self):
        """Window instructions against EL1 instructions, per row and kernel."""
        kernels = [n for n in self.names if n != "base"]
        lines = ["| row | %s |" % " | ".join(kernels), "|---|%s" % ("---|" * len(kernels))]
        rows = [r for r, _, _ in MICROMM] + VMALLOC + [r for r, _, _ in EXTRA] + [MACRO]
        for row in rows:
            cells = []
            for n in kernels:
                share = self.window_share(n, row) if row in self.rec[n] else None
                cells.append("-" if share is None else "%.1f%%" % share)
            if any(c != "-" for c in cells):
                lines.append("| %s | %s |" % (row, " | ".join(cells)))
        return "\n".join(lines)

    def por_table(self, kernel="HEAD", top=5):
        """A kernel's POR_EL1 writes by the function that makes them
        (BENCH_PROFILE=1: NAME.por), per operation and repetition: each
        row's functions that open the most windows. None without them."""
        path = os.path.join(self.run, kernel + ".por")
        if not os.path.exists(path) or kernel not in self.rec:
            return None
        by_row = {}
        with open(path) as f:
            for line in f:
                row, fn, caller, opens, other = line.split()
                by_row.setdefault(row, []).append((fn, caller, int(opens),
                                                   int(other)))
        lines = ["| row | per | function | caller (x30) | windows opened "
                 "| other POR_EL1 writes |", "|---|---|---|---|---|---|"]
        for row in sorted(by_row):
            if row not in self.rec[kernel]:
                continue
            div, per = self.per_op(kernel, row)
            if row in VMALLOC:
                per = "call"    # not net of the empty insmod here
            div *= len(self.reps(kernel, row)) or 1
            fns = sorted(by_row[row], key=lambda t: (-t[2], -t[3], t[0], t[1]))
            for fn, caller, opens, other in fns[:top]:
                lines.append("| %s | %s | %s | %s | %.3f | %.3f |" % (
                    row, per, fn, caller, opens / div, other / div))
        return "\n".join(lines) if len(lines) > 2 else None

    def row_detail(self):
        lines = ["| row | kernel | reps | instructions as counted: median (min – max) "
                 "| ticks | after tick correction: median | spread |",
                 "|---|---|---|---|---|---|---|"]
        rows = sorted({r for n in self.names for r in self.rec[n]
                       if not r.startswith("setup/")})
        for row in rows:
            for n in self.names:
                reps = self.rec[n].get(row)
                if not reps:
                    continue
                v = [r["insns"] for r in reps]
                sp = self.row_spread(n, row)
                lines.append("| %s | %s | %d | %d (%d – %d) | %s | %d | %.2f%%%s |" % (
                    row, n, len(reps), statistics.median(v), min(v), max(v),
                    "–".join(str(x) for x in sorted({min(self.ticks(n, row, r) for r in reps),
                                                     max(self.ticks(n, row, r) for r in reps)})),
                    statistics.median(c["insns"] for c in self.corrected(n, row)),
                    100 * sp, " †" if sp > SPREAD_FLAG else ""))
        return "\n".join(lines)

    def time_table(self):
        tot = {}
        for n in self.names:
            for row, s in self.times[n].items():
                tot[row] = tot.get(row, 0) + s
        rows = sorted(tot.items(), key=lambda x: -x[1])
        lines = ["| row | guest seconds, all kernels (incl. set-up and warm-up) |",
                 "|---|---|"]
        lines += ["| %s | %.0f |" % (r, s) for r, s in rows]
        return "\n".join(lines), rows

    def off_verdict(self):
        """HEAD booted with kpkeys_hardened_pgtables=off against baseline."""
        worst = None
        for row, label, cls in self.table_rows():
            for c in ("low", "high"):
                v = self.overhead("HEAD-off", "baseline", row, c, cls)
                if v is not None and (worst is None or abs(v) > abs(worst[0])):
                    worst = (v, label)
        if worst is None:
            return "HEAD, off at boot: no row to compare with baseline"
        return ("HEAD, off at boot, against baseline: largest difference %s (%s); "
                "goal within %.1f%% on every row: %s" % (
                    self.pct(worst[0]), worst[1], 100 * OFF_GOAL,
                    "met" if abs(worst[0]) <= OFF_GOAL else "not met"))

    def significant_rows(self):
        """One line per column: which rows are significant, which not."""
        out = []
        for k, ref, col in COLUMNS:
            if k not in self.names or ref not in self.names:
                continue
            yes, no = [], []
            for row, label, cls in self.table_rows():
                flag = self.significance(k, ref, row, cls)
                (yes if flag else no).append(label + (" " + flag.strip() if flag else ""))
            if not no:
                what = "every row is significant"
            elif not yes:
                what = "no row is significant"
            elif len(yes) >= len(no):
                what = "significant except %s" % ", ".join(no)
            else:
                what = "significant: %s; the others are not" % ", ".join(yes)
            out.append("- %s: %s." % (col, what))
        return out

    def kernel_lines(self):
        lines = []
        for k in self.kernels:
            frags = " + ".join("configs/%s.config" % f for f in k["frags"].split())
            lines.append("- **%s**: commit %s (%s tree), allnoconfig + %s%s" % (
                k["name"], k["commit"][:12], k["src"], frags,
                "; " + k["note"] if k["note"] else ""))
        return "\n".join(lines)

    def tick_note(self):
        if self.insn_clock:
            return ("Timer ticks: the guest's clock counted instructions (1 ns each, "
                    "QEMU -icount), so a row lasts the ticks its own instructions take, "
                    "as on hardware, whatever the emulator's speed; they are part of "
                    "what it costs and no correction is made.")
        lines = []
        for n in self.names:
            v = self.per_tick(n)
            if v:
                lines.append("%s %d instructions, %.1f ISBs, %.1f POR_EL1 writes" % (
                    n, v["insns"], v["isb"], v["por_el1_writes"]))
        if not lines:
            return "No tick correction (no idle row, or switched off in bench/cost-model)."
        return ("Timer ticks: under TCG the guest timer follows host time, so a "
                "kernel that the emulator runs more slowly (every kernel store is checked "
                "while the series restricts a key) lasts more ticks in the same row, and "
                "so does any row while the host is busy. All figures above are corrected "
                "for that: each repetition loses the ticks it lasted (the guest's jiffies) "
                "times what one tick costs on the same kernel, measured by the idle row "
                "(one second asleep): " + "; ".join(lines) + ". The repetition table "
                "below shows the counts before and after the correction.")

    def chart(self, path):
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            self.problems.append("matplotlib missing: no chart")
            return False
        rows = self.table_rows()
        series = [("baseline", "base", "baseline vs base (low … high)", "#7f7f7f"),
                  ("no-batching", "baseline", "no-batching (low … high)", "#d62728"),
                  ("HEAD", "baseline", "HEAD (low … high)", "#1f77b4")]
        alias = {k["name"]: k["alias"] for k in self.kernels if k.get("alias")}
        series = [s for s in series if s[0] in self.names and s[1] in self.names
                  and s[0] not in alias]
        seeds = [("v4-no-batching", "seed v4 no batching", "#ff9896"),
                 ("v5-corrected", "seed v5-corrected batching", "#aec7e8")]
        n = len(series) + len(seeds)
        h = 0.8 / n
        fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) * n / 2 + 2))
        for i, (row, label, cls) in enumerate(rows):
            y0 = len(rows) - 1 - i
            j = 0
            for k, ref, name, color in series:
                lo = self.overhead(k, ref, row, "low", cls)
                hi = self.overhead(k, ref, row, "high", cls)
                if lo is None:
                    continue
                y = y0 + 0.4 - (j + 0.5) * h
                ax.barh(y, 100 * lo, h, color=color, label=name if i == 0 else None)
                ax.barh(y, 100 * (hi - lo), h, left=100 * lo, color=color, alpha=0.35)
                j += 1
            s = self.seed.get(row) if not (row == MACRO and cls != "sys") else None
            j = len(series)
            for key, name, color in seeds:
                if s:
                    y = y0 + 0.4 - (j + 0.5) * h
                    ax.barh(y, seed_value(s[key]), h, color=color, hatch="//",
                            label=name if name not in
                            ax.get_legend_handles_labels()[1] else None)
                j += 1
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r[1] for r in reversed(rows)], fontsize=8)
        ax.set_xscale("symlog", linthresh=10)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("overhead, % (modeled cycles; symlog scale); no POE silicon: "
                      "emulator counts + bench/cost-model")
        ax.set_title("kpkeys page-table hardening: modeled overhead per row\n"
                     "(dark = low constants, light = up to high constants%s)" % "".join(
                         "; %s = %s" % (k, v) for k, v in alias.items()), fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return True

    # -- issue 9's goals --

    def med(self, kernel, row):
        """Medians of every counter over the repetitions as reported
        (tick-corrected, vmalloc rows net of the empty insmod)."""
        reps = self.reps(kernel, row)
        return {k: statistics.median(r.get(k, 0) for r in reps) for k in COUNTERS}

    def terms(self, kernel, ref, row, kset, cls="all"):
        """The modeled overhead split by term: [(name, fraction of the
        reference's modeled cycles)]."""
        k = self.sets[kset]
        a, b = self.med(kernel, row), self.med(ref, row)
        base = modeled(b, k, cls)
        ins = {"all": "insns", "sys": "insns_el1", "user": "insns_el0"}[cls]
        out = [("instructions", (a[ins] - b[ins]) / k["ipc"])]
        els = {"all": (0, 1), "sys": (1,), "user": (0,)}[cls]
        out.append(("TLB", sum(tlb_cycles(a, k, el) - tlb_cycles(b, k, el)
                               for el in els)))
        if cls != "user":
            for name, key, const in (("ISB", "isb", "isb"),
                                     ("POR_EL1 writes", "por_el1_writes", "por_el1_write"),
                                     ("TLBI bcast", "tlbi_bcast", "tlbi_bcast"),
                                     ("TLBI local", "tlbi_local", "tlbi_local"),
                                     ("DSB", "dsb", "dsb"),
                                     ("exceptions", "exceptions", "exception")):
                out.append((name, (a[key] - b[key]) * k[const]))
        return [(n, v / base) for n, v in out]

    def goal_limit(self, row, cls):
        """(limit, how it was set) of issue 9 for a row of the table."""
        s = self.seed.get(row) if cls in ("all", "sys") and \
            not (row == MACRO and cls == "all") else None
        lim, why = 0.01, "1%"
        if s:
            half = seed_value(s["v4-batching"]) / 200
            if half > lim:
                lim, why = half, "half the seed's v4 batching %+.2f%%" % seed_value(
                    s["v4-batching"])
            else:
                why = "1%% (half the seed's v4 batching %+.2f%% is less)" % seed_value(
                    s["v4-batching"])
        special = {"vm_map_ram/p:1/h:0": (0.05, "vm_map_ram p:1 ≤ 5%")}
        for r, _, _ in MICROMM:
            special[r] = (0.01, "fork and munmap ≤ 1%")
        if row == MACRO and cls != "user":
            special[row] = (0.005, "macro row ≤ 0.5%")
        if row in special and special[row][0] < lim:
            lim, why = special[row][0], "%s (stricter than %s)" % (special[row][1], why)
        elif row in special:
            why += "; " + special[row][1]
        return lim, why

    def goals(self):
        """bench/results/DATE/goals.md: issue 9's goals, row by row. Returns
        (markdown, [rows that miss their goal]), or (None, None) if the run
        has no row to check (it needs the baseline and HEAD kernels)."""
        if not all(n in self.names for n in ("baseline", "HEAD")):
            return None, None
        pct = lambda v: "%+.2f%%" % (100 * v)
        missed = []
        out = ["# Issue 9 goals, checked row by row", "",
               "HEAD (with batching) against baseline, modeled overhead under the low and "
               "the high constants of `bench/cost-model` (not the fitted ones). A goal is "
               "met when both are at or below the limit. The last column splits the "
               "high-constants overhead into its terms (only terms of at least 0.05 "
               "points): extra instructions at the model's IPC, and each event's count "
               "difference times its constant.", "",
               "## Modeled overhead", "",
               "| row | limit | HEAD low … high | verdict | made of (high constants) |",
               "|---|---|---|---|---|"]
        for row, label, cls in self.table_rows():
            lim, why = self.goal_limit(row, cls)
            lo = self.overhead("HEAD", "baseline", row, "low", cls)
            hi = self.overhead("HEAD", "baseline", row, "high", cls)
            if lo is None or hi is None:
                continue
            if max(lo, hi) <= lim:
                verdict = "met"
            elif min(lo, hi) <= lim:
                verdict = "**not met** under the %s constants (by %.2f points)" % (
                    "high" if hi > lim else "low", 100 * (max(lo, hi) - lim))
                missed.append(label)
            else:
                verdict = "**not met** (by %.2f … %.2f points)" % (100 * (lo - lim),
                                                                    100 * (hi - lim))
                missed.append(label)
            made = ", ".join("%s %s" % (n, pct(v)) for n, v in
                             self.terms("HEAD", "baseline", row, "high", cls)
                             if abs(v) >= 0.0005) or "nothing measurable"
            out.append("| %s | ≤ %.2f%%: %s | %s … %s | %s | %s |" % (
                label, 100 * lim, why, pct(lo), pct(hi), verdict, made))

        out += ["", "## Per lazy-MMU section: ≤ 2 POR_EL1 writes and ≤ 1 ISB beyond "
                "baseline", "",
                "The emulator does not count lazy-MMU sections; fork (copy_pte_range), "
                "munmap (zap_pte_range) and mprotect (change_pte_range) open at least one "
                "section per PTE table they walk (mprotect walks them twice: two calls), "
                "so the whole row's extra events divided by the PTE tables walked bound "
                "the extra per section from above. The bound also counts everything else "
                "the row adds: fork allocates a PTE table and writes a PMD per section, "
                "munmap frees them; mprotect adds nothing else, so its figure is closest "
                "to the cost of a section. no-batching for comparison.", "",
                "| row | PTE tables walked | extra POR_EL1 writes per table: HEAD "
                "(no-batching) | extra ISBs per table: HEAD (no-batching) | verdict |",
                "|---|---|---|---|---|"]
        sect = [r for r, _, _ in MICROMM] + ["mprotect/h:0", "mprotect/h:1"]
        for row in self.rows_present(sect):
            ptes = self.unit("HEAD", row, "ptes")
            if not ptes:
                continue
            tables = ptes / PTES_PER_TABLE * (2 if row.startswith("mprotect/") else 1)
            b = self.med("baseline", row)
            h = self.med("HEAD", row)
            nb = self.med("no-batching", row) if "no-batching" in self.names else None
            por = (h["por_el1_writes"] - b["por_el1_writes"]) / tables
            isb = (h["isb"] - b["isb"]) / tables
            nbp = " (%.1f)" % ((nb["por_el1_writes"] - b["por_el1_writes"]) / tables) \
                if nb else ""
            nbi = " (%.1f)" % ((nb["isb"] - b["isb"]) / tables) if nb else ""
            ok = por <= 2 and isb <= 1
            if not ok:
                missed.append(row + " (per section)")
            out.append("| %s | %d | %.3f%s | %.3f%s | %s |" % (
                row, tables, por, nbp, isb, nbi, "met" if ok else "**not met**"))

        out += ["", "## Per page-table allocation or free in steady state: 0 TLBIs "
                "(amortised ≤ 1 per 64), barriers only per batch (≤ 4 DSBs per 64)", "",
                "sparse/touch allocates one PTE table per touch (8192 of them), "
                "sparse/munmap frees them; the fork and munmap rows allocate and free the "
                "512 PTE tables of 1 GiB. TLBIs (broadcast + local) and DSBs per table: "
                "HEAD minus baseline (no-batching minus baseline, which keys and unkeys "
                "every table in the linear map). A batch of 64 costs one key change of "
                "its range (one DSB) and one TLB flush (two); a DSB per table means the "
                "key changes paid the barriers of each page.", "",
                "| row | PTE tables | TLBIs per table: baseline / HEAD / no-batching | "
                "extra TLBIs per table: HEAD (no-batching) | extra DSBs per table: HEAD "
                "(no-batching) | verdict |",
                "|---|---|---|---|---|---|"]
        for row, key in (("sparse/touch", "pte_tables"), ("sparse/munmap", "pte_tables"),
                         ("fork/h:0", "ptes"), ("munmap/h:0", "ptes")):
            if row not in self.rows_present([row]):
                continue
            n = self.unit("HEAD", row, key)
            if not n:
                continue
            tables = n if key == "pte_tables" else n / PTES_PER_TABLE
            kernels = [k for k in ("baseline", "HEAD", "no-batching") if k in self.names]
            t = {k: (lambda m: (m["tlbi_bcast"] + m["tlbi_local"]) / tables)(self.med(k, row))
                 for k in kernels}
            d = {k: self.med(k, row)["dsb"] / tables for k in kernels}
            extra = t["HEAD"] - t["baseline"]
            extra_dsb = d["HEAD"] - d["baseline"]
            ok = extra <= 1 / 64 and extra_dsb <= 4 / 64
            if extra > 1 / 64:
                missed.append(row + " (TLBIs per table)")
            if extra_dsb > 4 / 64:
                missed.append(row + " (DSBs per table)")
            nb = "no-batching" in t
            out.append("| %s | %d | %.4f / %.4f / %s | %.4f (%s) | %.4f (%s) | %s |" % (
                row, tables, t["baseline"], t["HEAD"],
                "%.4f" % t["no-batching"] if nb else "n/a", extra,
                "%.4f" % (t["no-batching"] - t["baseline"]) if nb else "n/a", extra_dsb,
                "%.4f" % (d["no-batching"] - d["baseline"]) if nb else "n/a",
                "met" if ok else "**not met**"))
        out += self.pgt_cache_table()
        out += ["", "Goals not met: %s." % (", ".join(missed) if missed else "none"), ""]
        return "\n".join(out), missed

    def pgt_cache_table(self):
        """HEAD's page-table cache counters per row (debugfs, read by the
        guest around each repetition): what the cache saved and still paid."""
        # zero_batches: kernels that zeroed freed tables in batches; zeroed and
        # refused: kernels that clear each one as it is handed out and check
        # the key of each page that goes in
        keys = ["hits", "misses", "refills", "drains", "tlb_flushes", "direct",
                "zero_batches", "zeroed", "refused"]
        lines = []
        for row, reps in self.info.get("HEAD", {}).items():
            vals = [r for r in reps.values() if "pgt_cache_hits" in r] \
                if row != "_options" else []
            if not vals:
                continue
            # a counter the kernel did not have yet (older runs) shows "-"
            med = ["%g" % statistics.median(r["pgt_cache_" + k] for r in vals)
                   if all("pgt_cache_" + k in r for r in vals) else "-"
                   for k in keys]
            lines.append("| %s | %s |" % (row, " | ".join(med)))
        if not lines:
            return []
        return ["", "## The page-table cache in HEAD", "",
                "Counters of `/sys/kernel/debug/kpkeys/pgtable_cache`, read by the "
                "guest before and after each repetition (outside the row), median "
                "over the repetitions. A miss refills the cache with a batch of 64 "
                "keyed pages and a drain gives 64 back, each with one TLB flush. "
                "Freed tables are cleared before reuse: by zero batches of 64 KiB in "
                "one write window in older kernels, one by one as they are handed out "
                "(zeroed) in kernels that keep the cache in keyed memory, where "
                "refused counts pages turned away for lack of the page-table key.",
                "", "| row | %s |" % " | ".join(k.replace("_", " ") for k in keys),
                "|---|%s" % ("---|" * len(keys))] + lines

    def goals_verdict(self):
        """One line on issue 9's goals for the summary."""
        missed = getattr(self, "missed", None)
        if missed is None:
            return "not checked: the run needs the baseline and HEAD kernels"
        if missed:
            return "not met (goals.md): " + ", ".join(missed)
        return "all met (goals.md)"

    def report(self, elapsed=None):
        stamp = os.path.basename(os.path.normpath(self.run))
        tt, trows = self.time_table()
        sig = self.significant_rows()
        flagged = sorted({label for row, label, cls in self.table_rows()
                          if self.flagged(row, cls)})
        reps = sorted({len(v) for n in self.names for v in self.rec[n].values()})
        c = self.calib
        bbml3 = self.bbml3_table()
        por = self.por_table()
        parts = [
            "# make bench: %s" % stamp, "",
            "No POE silicon exists: these are exact instruction and event counts from "
            "the POE emulator (QEMU TCG plugin) turned into cycles by a stated cost model "
            "(`bench/cost-model`). Upstream had no hardware either and mocked POR_EL1 with "
            "CONTEXTIDR_EL1 on AWS Graviton3; its figures are the seed columns.", "",
            "## How to read the table", "",
            "Each cell is the overhead of a kernel against a reference kernel for one row, "
            "under the cost model: \"+4.29%\" means the operation takes 4.29% longer with "
            "the feature than without, if instructions and events cost what the model "
            "says. Our cells give two numbers, \"low … high\": the low constants (cheap "
            "barriers and TLB maintenance, slow plain code) and the high constants "
            "(expensive barriers, fast plain code); a real CPU is expected in between. "
            "\"HEAD, calibrated\" uses the low and high sets with the ISB constant fitted "
            "to the seed (see Calibration).", "",
            "- **baseline vs base**: what the series costs a user who leaves "
            "CONFIG_KPKEYS_HARDENED_PGTABLES off (baseline against Linux without the "
            "series). It should be about 0.",
            "- **no-batching** and **HEAD**: the option on, against baseline. "
            "no-batching is HEAD without the batching patches (the seed's method for its "
            "\"no batching\" column).",
            "- **seed** columns: the seed's published percentages (`bench/seed-table`), "
            "measured on hardware with a mock; compare trends, not digits.",
            "- **(R)**: significant regression: both the low and the high model say the "
            "row costs more, by more than the sum of the two kernels' run-to-run spreads "
            "and at least 1%. **(I)**: the same for an improvement. No mark: not "
            "significant.",
            "- **†**: a kernel's repetitions of that row spread by more than 2% "
            "(max − min over median, instructions or modeled cycles).", "",
            "## Kernels", "",
            self.kernel_lines(), "",
            "Base: Linux %s (Debian linux-source, tag `base` of build/linux). The same "
            "fragments for all kernels, only the kpkeys option differs; each run "
            "directory holds the exact `.config` of each kernel (`NAME.config`). All "
            "boots: QEMU `-M virt -cpu max -smp 1 -m %s`, POE emulator on "
            "(`stats=on,bench=FILE`), no icount; %s repetition(s) per row%s." % (
                self.linux_version(), self.meta("mem"), "/".join(map(str, reps)),
                self.warmup_text()), "",
            "## Overhead per row (the seed's table)", "",
            self.main_table(), "",
            "Rows after the seed's: our own (mprotect: PROT_READ then PROT_READ|PROT_WRITE "
            "over the region; sparse: one page touched per 2 MiB over %s GiB, i.e. one new "
            "PTE table per touch, then munmap; shell loop by class)." % self.sparse_gib(), "",
            "Significance (within this run; `tools/bench compare` shows how two "
            "runs differ):", ""] + sig + ["",
            "Rows whose repetitions spread by more than 2%%: %s." % (
                ", ".join(flagged) if flagged else "none"), "",
            "## Calibration", "", self.calib_table(), "",
            "## Per-operation event counts", "",
            "Medians over the repetitions, divided by the operation count: per PTE of the "
            "1 GiB region (262144 PTEs; one fork, munmap or pair of mprotect calls per "
            "row), per PTE table (sparse), per vmalloc call (the row minus the median of "
            "the empty insmod, divided by the loop count), per shell-loop iteration. "
            "\"window insns\" are kernel instructions executed with the page-table write "
            "right (POR_EL1 granting write to every key).", "",
            self.per_op_table(), "",
            self.tick_note(), "",
            "## Window share", "",
            "Kernel instructions executed in a page-table write window, as a share of "
            "the row's EL1 instructions (medians over the repetitions). A lazy MMU "
            "section is one window, so this is what runs with the right to write page "
            "tables; make check's hardened boot reports which functions outside the "
            "page-table code (tools/window-allow) run there.", "",
            self.window_table(), "",
        ] + ([
            "## TLB misses", "",
            "The emulator's model of a core's data TLBs (poe-emu tlb=on: a 48-entry "
            "L1 data TLB and a 2048-entry, 8-way L2 TLB by default, entries the size "
            "of the leaf the walk found): data accesses that missed the L1 TLB, and "
            "of those the ones that missed the L2 TLB too (page walks), per "
            "operation. The cost model charges both (bench/cost-model: tlb_l2_hit, "
            "tlb_walk); the last column is that term of the kernel's overhead "
            "against baseline. Both kernels map the linear map page by page here "
            "(no BBML3 advertised), so it shows what page-table pages and their "
            "keys cost in TLB reach, not what block mappings win back.", "",
            self.tlb_table(), "",
        ] if self.has_tlb() else []) + ([
            "## With BBML3", "",
            "base, baseline and HEAD booted a second time on a CPU that advertises "
            "BBML3 (poe-emu bbm=3), where Linux 7.3 keeps the linear map in block "
            "mappings (rodata=full) and splits them on demand. The first column is "
            "what mapping it page by page costs the kernel without the feature "
            "(baseline on the usual CPU against baseline with BBML3); the others "
            "compare HEAD with baseline when both run with BBML3, which is what POE "
            "hardware will have. HEAD keeps the 2 MiB blocks there (patches "
            "36-38); on the usual CPU it maps the linear map page by page. "
            "Issue 33's goal: the TLB term of HEAD against baseline at most "
            "%.1f%% on every row." % (100 * TLB_GOAL), "",
            bbml3, "",
        ] if bbml3 else []) + ([
            "## POR_EL1 writes by function (HEAD)", "",
            "With BENCH_PROFILE=1: the POR_EL1 writes of each row, by the kernel "
            "function whose MSR made them (tools/profile por), per operation and "
            "repetition; the functions that open the most page-table write windows "
            "first (at most 5 a row), with the function x30 points into at the MSR: "
            "the caller of an out-of-line opener (kpkeys_open_write_window(), "
            "pgt_cache_open()), little more than noise where the MSR is inlined "
            "after a call. \"windows opened\" are writes that grant "
            "write to every key; \"other\" are the rest: the closes, wherever the "
            "window's end is, and the switches of exception entry and return. "
            "Where the open is inlined, the function is its caller's.", "",
            por, "",
        ] if por else []) + [
            "## Repetitions", "", self.row_detail(), "",
            "## Run time", "",
            ("`make bench` took %d s (%.1f min). " % (elapsed, elapsed / 60)
             if elapsed else "") +
            ("Guest time per row, on the instruction clock (a guest second is 10^9 "
             "instructions; the host time of a row follows it, times the emulator's cost "
             "per instruction, which is higher on the kernels that restrict a key):"
             if self.insn_clock else
             "Guest time per row (not a result, only where the run time goes):"), "",
            tt, "",
        ]
        if self.problems:
            parts += ["## Problems", ""] + ["- " + p for p in self.problems] + [""]
        with open(os.path.join(self.run, "report.md"), "w") as f:
            f.write("\n".join(parts))
        self.chart(os.path.join(self.run, "overhead.png"))
        goals, self.missed = self.goals()
        if goals:
            with open(os.path.join(self.run, "goals.md"), "w") as f:
                f.write(goals)
        summ = self.summary(elapsed, trows)
        with open(os.path.join(self.run, "summary.txt"), "w") as f:
            f.write(summ)
        print(summ, end="")
        return not self.problems

    def summary(self, elapsed, trows):
        lines = ["make bench: modeled overhead (low … high cost constants); "
                 "no POE silicon: emulator counts + bench/cost-model", ""]
        fmt = "%-34s %-22s %-22s %-22s %-22s %-14s %-14s"
        lines.append(fmt % (("row",) + tuple(c[2] for c in COLUMNS) +
                            ("seed v4 nb", "seed v5-corr")))
        for row, label, cls in self.table_rows():
            s = self.seed.get(row, {}) if not (row == MACRO and cls != "sys") else {}
            lines.append(fmt % ((label[:34],) +
                                tuple(self.cell(k, ref, row, cls) for k, ref, _ in COLUMNS) +
                                (s.get("v4-no-batching", ""), s.get("v5-corrected", ""))))
        lines.append("")
        if "HEAD-off" in self.names:
            lines.append(self.off_verdict())
        if self.fit:
            lines.append(self.calib_table().split("\n")[0])
        for k in self.kernels:
            if k["note"]:
                lines.append("%s: %s" % (k["name"], k["note"]))
        if "HEAD" in self.names:
            lines.append("issue 9 goals: " + self.goals_verdict())
            if MACRO in self.rec["HEAD"]:
                share = self.window_share("HEAD", MACRO)
                if share is not None:
                    lines.append("HEAD: %.1f%% of the shell loop's EL1 instructions "
                                 "run in a page-table write window (report.md: "
                                 "window share)" % share)
        if trows:
            lines.append("rows that take the most time: " + ", ".join(
                "%s %.0fs" % r for r in trows[:4]))
        if elapsed:
            lines.append("make bench took %d s" % elapsed)
        lines.append("report: %s" % os.path.join(self.run, "report.md"))
        for p in self.problems:
            lines.append("PROBLEM: " + p)
        return "\n".join(lines) + "\n"

    def linux_version(self):
        for n in self.names:
            try:
                with open(os.path.join(self.run, n + ".log"), errors="replace") as f:
                    m = re.search(r"Linux version (\S+)", f.read())
                    if m:
                        return m.group(1)
            except OSError:
                pass
        return "?"

    def warmup_text(self):
        w = {self.info[n].get("_options", {}).get("warmup", 0) for n in self.names}
        w = max(w) if w else 0
        return ", after %d unmarked warm-up repetition(s)" % w if w else ""

    def meta(self, key, default="?"):
        try:
            with open(os.path.join(self.run, "meta")) as f:
                return parse_kv(f.read()).get(key, default)
        except OSError:
            return default

    def sparse_gib(self):
        for n in self.names:
            g = self.unit(n, "sparse/touch", "gib")
            if g:
                return g
        return "?"


def smoke_check(baseline, hardened, out=sys.stdout):
    """make check: the harness and the per-row counters work."""
    results = []

    def check(ok, what):
        results.append((bool(ok), what))

    recs = {}
    for name, path in (("baseline", baseline), ("hardened", hardened)):
        rows = read_records(path) if os.path.exists(path) else {}
        reps = rows.get(SMOKE_ROW, [])
        check(reps, "%s: a record of row %s" % (name, SMOKE_ROW))
        recs[name] = reps[0] if reps else None
        c = recs[name] or {}
        for key in ("insns", "insns_el1", "exceptions", "dsb"):
            check(c.get(key, 0) > 0, "%s: %s > 0 (%s)" % (name, key, c.get(key)))
        tlbi = c.get("tlbi_bcast", 0) + c.get("tlbi_local", 0)
        check(tlbi > 0, "%s: TLBIs > 0 (%d)" % (name, tlbi))
    h, b = recs["hardened"] or {}, recs["baseline"] or {}
    check(h.get("por_el1_writes", 0) > 0,
          "hardened writes POR_EL1 in the row (%s)" % h.get("por_el1_writes"))
    check(h.get("window_insns", 0) > 0,
          "hardened runs instructions in the page-table window (%s)" % h.get("window_insns"))
    check(b and b.get("por_el1_writes", -1) == 0,
          "baseline does not write POR_EL1 in the row (%s)" % b.get("por_el1_writes"))
    check(b and b.get("window_insns", -1) == 0,
          "baseline has no page-table window (%s)" % b.get("window_insns"))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d bench smoke: %s" % ("ok" if ok else "not ok", i, what), file=out)
    p = sum(ok for ok, _ in results)
    print("bench smoke: %d passed, %d failed" % (p, len(results) - p), file=out)
    return p == len(results)


def compare(run_a, run_b, out=sys.stdout):
    """Two runs of make bench: per row and kernel, the medians of the
    instructions and of each event (tick-corrected, as in the report) and
    how far apart they are. Exit status: instructions within 1% everywhere."""
    a, b = Bench(run_a), Bench(run_b)
    keys = ["por_el1_writes", "isb", "tlbi_bcast", "tlbi_local", "dsb", "exceptions",
            "window_insns"]
    rows = []
    print("| row | kernel | instructions a / b | diff | largest event difference |",
          file=out)
    print("|---|---|---|---|---|", file=out)
    for n in a.names:
        if n not in b.names or any(k["name"] == n and k.get("alias") for k in a.kernels):
            continue
        for row in sorted(set(a.rec[n]) & set(b.rec[n])):
            if row.startswith("setup/") or row == IDLE:
                continue
            ma, mb = a.median_counts(n, row), b.median_counts(n, row)
            d = abs(ma["insns"] - mb["insns"]) / max(ma["insns"], 1)
            ev, evd = "none", 0.0
            for k in keys:
                x, y = round(ma.get(k, 0)), round(mb.get(k, 0))
                e = abs(x - y) / max(x, y, 1)
                if e > evd:
                    ev, evd = "%s %d / %d (%.2f%%)" % (k, x, y, 100 * e), e
            rows.append((n, row, d, evd))
            print("| %s | %s | %d / %d | %.2f%% | %s |" % (
                row, n, ma["insns"], mb["insns"], 100 * d, ev), file=out)
    print("", file=out)
    for what, idx in (("instructions", 2), ("events", 3)):
        vals = sorted(r[idx] for r in rows)
        if not vals:
            continue
        big = [r for r in rows if r[idx] > 0.01]
        print("%s: median difference %.2f%%, largest %.2f%%; %d of %d rows differ by more "
              "than 1%%%s" % (what, 100 * statistics.median(vals), 100 * vals[-1], len(big),
                              len(rows), (": " + ", ".join("%s %s %.1f%%" % (r[0], r[1],
                                                                           100 * r[idx])
                                                          for r in big)) if big else ""),
              file=out)
    return all(r[2] <= 0.01 for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run", nargs="?")
    ap.add_argument("--elapsed", type=int)
    ap.add_argument("--smoke-check", nargs=2, metavar=("BASELINE", "HARDENED"))
    ap.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"))
    a = ap.parse_args()
    if a.smoke_check:
        return 0 if smoke_check(*a.smoke_check) else 1
    if a.compare:
        return 0 if compare(*a.compare) else 1
    if not a.run:
        ap.error("RUN_DIR required")
    return 0 if Bench(a.run).report(a.elapsed) else 1


if __name__ == "__main__":
    sys.exit(main())
