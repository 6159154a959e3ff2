#!/usr/bin/env python3
"""The gaps between a device's consecutive ops, predicted against measured, from
`pipesim validate --trace T.json` (docs/validation/cpu.md).

    bench/validate-trace-gaps.py T.json [--top 12]

A gap is the time from one op's end to the next op's start on the same device. Each is keyed
by the kinds of the two ops and by what the second one waited for: "message" (its input
message arrived after the first op ended), "collective" (a GradSync of the device ran in the
gap) or "none" (nothing it had to wait for: the device thread's own work, or a wait the trace
does not show). Per key, over every device: the count and the total and mean gap, predicted
and measured, largest measured excess first. Where a key's measured total exceeds the
predicted one, the run spent time there that the simulation did not.
"""
import argparse
import collections

import validate_trace


def gaps_of(events, pids):
    total, count = collections.defaultdict(float), collections.Counter()
    for pid in pids:
        mine = [e for e in events if e.get("ph") == "X" and e["pid"] == pid]
        ops = sorted((e for e in mine if e["tid"] == 0), key=lambda e: e["ts"])
        arrived = {e["args"]["to"]: e["ts"] + e["dur"] for e in mine if e["tid"] == 2}
        syncs = sorted(e["ts"] for e in mine if e["tid"] == 3)
        for a, b in zip(ops, ops[1:]):
            end = a["ts"] + a["dur"]
            at = arrived.get(b["name"])
            if at is not None and at > end:
                why = "message"
            elif any(end <= s < b["ts"] for s in syncs):
                why = "collective"
            else:
                why = "none"
            key = (a["cat"], b["cat"], why)
            total[key] += b["ts"] - end
            count[key] += 1
    return total, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    events, predicted, measured = validate_trace.read(a.trace)
    pt, pc = gaps_of(events, predicted)
    mt, mc = gaps_of(events, measured)
    keys = sorted(set(pt) | set(mt), key=lambda k: -(mt.get(k, 0) - pt.get(k, 0)))[: a.top]
    print(f"{'op':10} {'next op':10} {'waited for':10} {'gaps':>5} {'predicted':>12} {'mean':>10} "
          f"{'measured':>12} {'mean':>10} {'excess':>12}")
    for k in keys:
        n = max(pc.get(k, 0), mc.get(k, 0))
        p, m = pt.get(k, 0), mt.get(k, 0)
        print(f"{k[0]:10} {k[1]:10} {k[2]:10} {n:5d} {p / 1e3:9.2f} ms {p / max(1, pc.get(k, 0)):7.1f} us "
              f"{m / 1e3:9.2f} ms {m / max(1, mc.get(k, 0)):7.1f} us {(m - p) / 1e3:+9.2f} ms")


if __name__ == "__main__":
    main()
