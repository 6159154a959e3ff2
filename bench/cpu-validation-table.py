#!/usr/bin/env python3
"""The Markdown table of docs/validation/cpu.md's "Results" for one set of
bench/cpu-validation-rounds.sh: a row per case (model, schedule), each round's error in %
(with the core-speed probes' drift where above 10 %), how many within the tolerance, inside
the sampled and the calibrated [p5, p95] (with the widening), and the range of the
simulator's part of the error.

    bench/cpu-validation-table.py OUT
"""
import glob, json, os, sys
out = sys.argv[1]
rows = {}
for rdir in sorted(glob.glob(os.path.join(out, "round*")), key=lambda x: int(x.split('round')[-1])):
    r = int(rdir.split('round')[-1])
    for path in sorted(glob.glob(os.path.join(rdir, "*.json"))):
        try: j = json.load(open(path))
        except Exception: continue
        model = "gpt-small" if "small" in os.path.basename(path) else "gpt-tiny"
        for s in j.get("schedules", [j]):
            key = (model, s["schedule"])
            rows.setdefault(key, {})[r] = s
order = [(m, s) for m in ("gpt-small", "gpt-tiny") for s in ("1f1b", "chimera", "amp", "amdp")]
rounds = sorted({r for v in rows.values() for r in v})
print("| model | schedule | " + " | ".join(f"round {r}" for r in rounds) + " | within 5 % | inside [p5, p95] | inside the calibrated [p5, p95] (widening) | the simulator's parts |")
print("|---|---|" + "---|" * len(rounds) + "---|---|---|---|")
for key in order:
    if key not in rows: continue
    v = rows[key]; cells = []; w = ins = cal = 0; sims = []; widen = None
    for r in rounds:
        s = v.get(r)
        if not s: cells.append("-"); continue
        e = s["time_per_iteration_error"]; d = s["speed_probes"]["drift"]
        cells.append(("%+.1f" % (100 * e)) + (" (drift %d %%)" % round(100 * d) if d > 0.1 else ""))
        w += abs(e) <= s["tolerance"]; ins += bool(s["inside_interval"])
        c = s.get("calibrated_interval")
        if c: cal += bool(c["inside"]); widen = c["widening"]
        sims.append(s["replay"]["simulator_part"])
    name = key[1] + (" (4 threads, 2 cores)" if key[1] == "amdp" else "")
    print(f"| {key[0]} | {name} | " + " | ".join(cells) + f" | {w} of {len(sims)} | {ins} | {cal} (+-{100*widen:.1f} %) | {100*min(sims):+.1f} .. {100*max(sims):+.1f} % |")
