#!/usr/bin/env python3
"""Summarises bench/cpu-validation-rounds.sh's JSON: one line per case and round (predicted,
measured, error, inside the interval, the core-speed drift during the run, and where the
JSON has it the error split: the simulator's part and the cost model's, this one split into
its op times and its links and collectives, docs/validation/README.md; a GradSync member's
copies predicted and measured; with more threads than cores the threads' CPU shares in those
copies and outside their ops and copies), then the counts within the tolerance and inside
the interval, and the simulator's part within the tolerance.

    bench/cpu-validation-summary.py OUT
"""
import glob
import json
import os
import sys

out = sys.argv[1]
within = inside = total = sim_within = split = 0
calibrated = calibrated_inside = 0
for rdir in sorted(glob.glob(os.path.join(out, "round*"))):
    for path in sorted(glob.glob(os.path.join(rdir, "*.json"))):
        try:
            j = json.load(open(path))
        except (ValueError, OSError):
            print(f"{path}: no JSON (see {path[:-5]}.err)")
            continue
        model = "gpt-small" if "small" in os.path.basename(path) else "gpt-tiny"
        for s in j.get("schedules", [j]):
            err = s["time_per_iteration_error"]
            tol = s["tolerance"]
            drift = s.get("speed_probes", {}).get("drift", 0)
            total += 1
            within += abs(err) <= tol
            inside += bool(s["inside_interval"])
            c = s.get("calibrated_interval")
            cal = ""
            if c and c.get("widening") is not None:
                calibrated += 1
                calibrated_inside += bool(c["inside"])
                cal = f"  calibrated {'inside' if c['inside'] else 'outside'} (+-{c['widening']*100:.1f} %)"
            r = s.get("replay")
            parts = ""
            if r:
                split += 1
                sim_within += abs(r["simulator_part"]) <= tol
                parts = f"  simulator {r['simulator_part']*100:+6.1f} %  cost model {r['cost_model_part']*100:+6.1f} %"
                if "cost_model_ops_part" in r:  # its op times and its links and collectives
                    parts += f" (ops {r['cost_model_ops_part']*100:+6.1f} %, comm {r['cost_model_comm_part']*100:+5.1f} %)"
                c = r.get("grad_sync_copies")
                if c:  # a member's copies out and in, the profile's and the run's
                    parts += f"  copies {c['predicted_s']*1e6:.0f}/{c['measured_s']*1e6:.0f} us"
            use = s.get("core_use")
            if use and use.get("thread_cpu_grad_sync_copies") is not None:
                parts += (f"  threads' CPU: copies {use['thread_cpu_grad_sync_copies']*100:.1f} %,"
                          f" other {use['thread_cpu_outside_ops']*100:.1f} %")
            print(f"{os.path.basename(rdir)}  {model:9} {s['schedule']:8} predicted {s['predicted']['time_per_iteration_s']*1e3:9.2f} ms"
                  f"  measured {s['measured']['time_per_iteration_s']*1e3:9.2f} ms  error {err*100:+6.1f} %"
                  f"  {'inside' if s['inside_interval'] else 'outside'}{cal}  drift {drift*100:4.1f} %{parts}")
print(f"within the tolerance: {within} of {total}; inside [p5, p95]: {inside} of {total}")
if calibrated:
    print(f"inside the calibrated [p5, p95]: {calibrated_inside} of {calibrated}")
if split:
    print(f"the simulator's part within the tolerance: {sim_within} of {split}")
