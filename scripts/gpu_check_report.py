#!/usr/bin/env python3
"""The verdicts scripts/gpu-check writes into its summary, read from what the steps left.
  gpu_check_report.py gtest NAME LOG STATUS [--expected-skips REGEX] [--slowest N]
      one GoogleTest program's output (LOG, its exit STATUS; 124 when it was stopped): a verdict
      line, each skipped or failed test with its message, then the tests' durations, slowest first
      (all of them, or the N slowest). Read from the output rather than the JUnit XML so that a
      program that crashed or was stopped still gets its durations and names the test it was in.
      Exit status 0 for a pass, 1 for a failure (an unexpected skip counts as one), 124 when the
      program was stopped.
  gpu_check_report.py telemetry RUN_DIR DEVICE
      the telemetry of one run on a GPU: its samples of DEVICE in telemetry.csv and run.json's
      telemetry_note. Exit status 1 when NVML reported a problem: a note, no sample of the device,
      or a field every sample left empty that NVML reads on any current NVIDIA GPU."""
import argparse
import csv
import json
import os
import re
import sys

# A parameterized test's line adds ", where GetParam() = ..." (or TypeParam) before the time.
RESULT = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+?)(?:, where .*)? \((\d+) ms\)")
RUN = re.compile(r"^\[ RUN      \] (\S+)")
# NVML reads these on every NVIDIA GPU gpulab supports; an empty column is a problem to report.
REQUIRED_FIELDS = ["util_percent", "mem_used_bytes", "mem_total_bytes", "temperature_c"]


def parse_gtest(lines):
    """[(name, result, ms, message)] in the order they ran; result OK, FAILED, SKIPPED or
    UNFINISHED (started and never ended: the program crashed or was stopped there)."""
    tests, running, message = [], None, []
    for line in lines:
        line = line.rstrip("\n")
        started = RUN.match(line)
        if started:
            running, message = started.group(1), []
            continue
        ended = RESULT.match(line)
        if ended and ended.group(2) == running:
            text = next((m for m in message if m.strip()), "")
            tests.append((running, ended.group(1), int(ended.group(3)), text.strip()))
            running = None
        elif running:
            # The line after gtest's "file:line: Skipped" or "Failure" says why.
            if re.search(r":\d+: (Skipped|Failure)$", line):
                message = []
            else:
                message.append(line)
    if running:
        tests.append((running, "UNFINISHED", 0, ""))
    return tests


def gtest(args):
    with open(args.log, errors="replace") as f:
        tests = parse_gtest(f)
    count = lambda result: sum(1 for t in tests if t[1] == result)
    expected = re.compile(args.expected_skips) if args.expected_skips else None
    unexpected = [t for t in tests if t[1] == "SKIPPED" and not (expected and expected.search(t[3]))]
    total_s = sum(t[2] for t in tests) / 1000
    stopped = args.status in (124, 137)
    if stopped:
        verdict = "TIMED OUT"
    elif count("FAILED") or count("UNFINISHED") or args.status != 0 or not tests:
        verdict = "FAILED"
    elif unexpected:
        verdict = "FAILED (unexpected skips)"
    else:
        verdict = "pass"
    print("%s: %s: %d passed, %d failed, %d skipped%s in %.1f s (exit status %d)" % (
        args.name, verdict, count("OK"), count("FAILED"), count("SKIPPED"),
        ", ended inside %s" % tests[-1][0] if tests and tests[-1][1] == "UNFINISHED" else "",
        total_s, args.status))
    for name, result, ms, text in tests:
        if result == "FAILED":
            print("  failed: %s: %s" % (name, text))
        elif result == "SKIPPED":
            print("  skipped%s: %s: %s" % ("" if (expected and expected.search(text)) else " (unexpected)",
                                          name, text))
    shown = sorted(tests, key=lambda t: -t[2])
    if args.slowest:
        shown = shown[:args.slowest]
    if shown:
        print("  durations%s:" % (" (the %d slowest)" % len(shown) if args.slowest else ""))
        for name, result, ms, _ in shown:
            print("    %8.3f s  %s%s" % (ms / 1000, name, "" if result == "OK" else "  [%s]" % result))
    return 124 if stopped else (0 if verdict == "pass" else 1)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def telemetry(args):
    problems, notes = [], []
    info = {}
    try:
        with open(os.path.join(args.run_dir, "run.json")) as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        problems.append("run.json unreadable: %s" % e)
    if info.get("telemetry_note"):
        problems.append("run.json: " + info["telemetry_note"])
    rows = []
    try:
        with open(os.path.join(args.run_dir, "telemetry.csv")) as f:
            rows = [r for r in csv.DictReader(f) if r.get("device") == args.device]
    except OSError as e:
        problems.append("telemetry.csv unreadable: %s" % e)
    if not rows:
        problems.append("no %s sample in telemetry.csv" % args.device)
    else:
        empty = [c for c in rows[0] if c not in ("time_s", "device") and all(number(r[c] or "") is None for r in rows)]
        problems += ["%s is empty in every %s sample" % (c, args.device) for c in empty if c in REQUIRED_FIELDS]
        notes += ["%s is empty in every sample (NVML has no reading for it here)" % c
                  for c in empty if c not in REQUIRED_FIELDS]

        def peak(column, scale=1.0, unit=""):
            values = [number(r[column] or "") for r in rows]
            values = [v for v in values if v is not None]
            return "%s max %.0f%s" % (column, max(values) * scale, unit) if values else None

        readings = [p for p in (peak("util_percent"), peak("mem_used_bytes", 1 / 2**20, " MiB"),
                                peak("power_w"), peak("temperature_c"), peak("sm_clock_mhz")) if p]
        notes.insert(0, "%d %s samples, %s" % (len(rows), args.device, ", ".join(readings)))
    verdict = "FAILED: " + "; ".join(problems) if problems else "pass"
    print("telemetry on %s: %s%s" % (args.device, verdict, " (" + "; ".join(notes) + ")" if notes else ""))
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gtest")
    g.add_argument("name")
    g.add_argument("log")
    g.add_argument("status", type=int)
    g.add_argument("--expected-skips", default="")
    g.add_argument("--slowest", type=int, default=0)
    t = sub.add_parser("telemetry")
    t.add_argument("run_dir")
    t.add_argument("device")
    args = parser.parse_args()
    sys.exit(gtest(args) if args.command == "gtest" else telemetry(args))


if __name__ == "__main__":
    main()
