"""Reading a `pipesim validate --trace` file for the bench/validate-trace-*.py scripts: its
events, and the process ids of its predicted and measured devices (process groups named
"predicted: device N" and "measured: device N"). Exits with one line naming the file when it
is not such a trace.
"""
import json
import sys


def read(path):
    """(events, predicted pids, measured pids), each list of pids in device order."""
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{path}: not a trace of `pipesim validate --trace` ({e})")
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    devices = {label: sorted(p for p, n in names.items() if n.startswith(label + ": device"))
               for label in ("predicted", "measured")}
    if not devices["predicted"] or not devices["measured"]:
        sys.exit(f"{path}: no 'predicted: device N' and 'measured: device N' process groups; "
                 "expected a `pipesim validate --trace` file")
    return events, devices["predicted"], devices["measured"]
