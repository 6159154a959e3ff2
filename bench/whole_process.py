#!/usr/bin/env python3
"""Whole-process speed of the pipesim CLI against the issue-19 targets, paired in one run.

    bench/whole_process.py BUILD/tools/pipesim [--baseline OLD/pipesim] [--replay PATH] [--rounds 7] [--quick]

Every round runs every case once, in the same order, so a busy moment of a shared machine
lands on all cases alike; the table gives each case's median wall time over the rounds,
its peak resident memory (from one more run of each, through /usr/bin/time's %M where it is
installed, else wait4's ru_maxrss, which cannot read lower than the forking Python's own
resident size: the first row, /bin/true, shows the floor either way), ops per second where the case has a fixed op
count, and the ratio to the speed-of-light replay (../shared/bench/replay.cpp: 1F1B op
lists replayed in one ready-list pass, no event queue, free links) where the target is
one. --replay defaults to building that file with g++ -O2 into a temporary folder.
--quick leaves out the p=1024 m=8192 cases (about 10 s a round). --baseline runs every
pipesim case with a second binary too, in the same rounds (before / after a change, paired),
and adds its median and the ratio after / before.

Exit status 0 whatever the figures: a shared machine cannot fail a build over timing. The
PASS/MISS column says how each median compares with its target.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

OPS_128_8192 = 2 * 128 * 8192 + 128  # F and B of every micro-batch on every stage, one OPT per stage


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_once(argv, rss_file=None):
    """Wall seconds and peak RSS (KiB) of one process; output discarded. With `rss_file`
    (and /usr/bin/time installed) through /usr/bin/time, whose start adds to the wall time."""
    full = [TIME, "-f", "%M", "-o", rss_file] + argv if TIME and rss_file else argv
    start = time.perf_counter()
    proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"whole_process.py: {' '.join(argv)} failed:\n{err}")
    if TIME and rss_file:
        with open(rss_file) as f:
            return wall, int(f.read().split()[-1])
    return wall, usage.ru_maxrss


def build_replay(source, folder):
    exe = os.path.join(folder, "replay")
    subprocess.run(["g++", "-O2", "-std=c++20", "-o", exe, source], check=True)
    return exe


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipesim")
    parser.add_argument("--baseline", help="a second pipesim binary run beside the first, paired")
    parser.add_argument("--replay", help="speed-of-light replay binary (default: build ../shared/bench/replay.cpp)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="leave out p=1024 m=8192")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="pipesim-bench-")
    try:
        replay = args.replay or build_replay(os.path.join(here, "..", "..", "shared", "bench", "replay.cpp"), tmp)
        out = os.path.join(tmp, "out")
        P = args.pipesim
        # name, argv, ops (for ops/s), target: ("ratio", replay case, max) | ("ops", min ops/s) | ("time", max s, max KiB)
        cases = [
            ("/bin/true (the RSS floor)", ["/bin/true"], None, None),
            ("replay p=128 m=2048", [replay, "128", "2048"], None, None),
            ("simulate 1f1b p=128 m=2048 --json", [P, "simulate", "--schedule", "1f1b", "-p", "128", "-m", "2048", "--json"],
             None, ("ratio", "replay p=128 m=2048", 3.0)),
            ("pipesim --version", [P, "--version"], None, ("time", 0.015, 30 * 1024)),
            ("check p=128 m=8192", [P, "check", "--schedule", "1f1b", "-p", "128", "-m", "8192"],
             OPS_128_8192, ("ops", 5e6)),
            # To standard output (discarded), as the issue measured; -o adds the file's write.
            ("schedule --format text p=128 m=8192",
             [P, "schedule", "--schedule", "1f1b", "-p", "128", "-m", "8192", "--format", "text"],
             OPS_128_8192, ("ops", 5e6)),
            ("schedule --format csv p=128 m=8192",
             [P, "schedule", "--schedule", "1f1b", "-p", "128", "-m", "8192", "--format", "csv"],
             OPS_128_8192, ("ops", 20e6)),
            ("schedule --format csv p=128 m=8192 -o FILE",
             [P, "schedule", "--schedule", "1f1b", "-p", "128", "-m", "8192", "--format", "csv", "-o", out],
             OPS_128_8192, None),
        ]
        if not args.quick:
            cases += [
                ("replay p=1024 m=8192", [replay, "1024", "8192"], None, None),
                ("simulate 1f1b p=1024 m=8192 --json",
                 [P, "simulate", "--schedule", "1f1b", "-p", "1024", "-m", "8192", "--json"], None,
                 ("ratio", "replay p=1024 m=8192", 2.0)),
            ]
        if args.baseline:  # the same pipesim cases with the other binary, right after each
            cases = [c for case in cases for c in (
                [case, ("  before: " + case[0], [args.baseline] + case[1][1:], case[2], None)] if case[1][0] == P else [case])]
        walls = {c[0]: [] for c in cases}
        rss = {c[0]: 0 for c in cases}
        for name, argv, _, _ in cases:  # memory: once each, through /usr/bin/time (not timed)
            rss[name] = run_once(argv, os.path.join(tmp, "rss"))[1]
        t0 = time.perf_counter()
        for r in range(args.rounds):
            for name, argv, _, _ in cases:
                walls[name].append(run_once(argv)[0])
            done = r + 1
            eta = (time.perf_counter() - t0) / done * (args.rounds - done)
            print(f"\rround {done}/{args.rounds}, ETA {eta:5.1f} s", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    median = {name: statistics.median(w) for name, w in walls.items()}
    rows = []
    for name, _, ops, target in cases:
        m = median[name]
        ops_s = f"{ops / m / 1e6:.2f} M" if ops else ""
        ratio, verdict, goal = "", "", ""
        if name.startswith("  before: "):
            ratio = f"after/before {median[name[len('  before: '):]] / m:.2f}"
        if target and target[0] == "ratio":
            ratio = f"{m / median[target[1]]:.2f}x"
            goal = f"<= {target[2]:g}x replay"
            verdict = "PASS" if m / median[target[1]] <= target[2] else "MISS"
        elif target and target[0] == "ops":
            goal = f">= {target[1] / 1e6:g} M ops/s"
            verdict = "PASS" if ops / m >= target[1] else "MISS"
        elif target and target[0] == "time":
            goal = f"<= {target[1] * 1e3:g} ms, <= {target[2] // 1024} MiB"
            verdict = "PASS" if m <= target[1] and rss[name] <= target[2] else "MISS"
        rows.append((name, f"{m * 1e3:.1f} ms", f"{rss[name] / 1024:.1f} MiB", ops_s, ratio, goal, verdict))
    head = ("case", "median wall", "peak RSS", "ops/s", "vs replay", "target", "")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    align = ["<", ">", ">", ">", ">", "<", "<"]
    line = lambda r: "  ".join(f"{str(v):{a}{w}}" for v, a, w in zip(r, align, widths)).rstrip()
    print(f"{args.rounds} rounds, medians; load average at the end {os.getloadavg()[0]:.2f}")
    print(line(head))
    print("-" * len(line(head)))
    for r in rows:
        print(line(r))


if __name__ == "__main__":
    main()
