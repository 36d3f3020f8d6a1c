"""Ctrl-C stops a long run (the GIL released, the engines asked to stop) and the next call runs."""

import signal
import subprocess
import sys
import time

from conftest import EXAMPLES

SCRIPT = f"""
import sys, time, fabricsim
long = {{"engine": "packet", "sim": {{"topology_file": {str(EXAMPLES / "sim-ft4.topo.txt")!r}, "fabric": "roce"}},
        "traffic": {{"kind": "permutation", "bytes": "10GB"}}}}
print("start", flush=True)
t = time.monotonic()
try:
    fabricsim.sim(long)
    print("finished")
except KeyboardInterrupt:
    print("interrupted", round(time.monotonic() - t, 1))
r = fabricsim.sim({str(EXAMPLES / "sim-permutation.toml")!r}, seed=3)
print("next", r["sim"]["status"])
"""


def test_ctrl_c_stops_a_run_and_the_next_call_runs():
    p = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    lines = out.split("\n")
    assert lines[0].startswith("interrupted"), out
    assert lines[1] == "next complete", out
