"""A notebook's first cell: compare fabrics for one job and chart the step time per fabric.

    python examples/python/compare_chart.py [OUT.png]

Runs `fabricsim compare` in-process on the HPCC example (a 64-GPU Llama 3 70B step on RoCE 400G
under DCQCN and under HPCC), over 3 seeds, and draws each fabric's step time with its 95% interval and
its cost per million tokens into a PNG (matplotlib, headless).
"""

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the file
import matplotlib.pyplot as plt

import fabricsim

HERE = pathlib.Path(__file__).resolve().parent
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "compare.png")

report = fabricsim.compare(HERE.parent / "compare-hpcc.toml", seeds=3, claims="off")
fabrics = report["fabrics"]
names = [f["name"] for f in fabrics]
step = [f["delivered"]["step_time_s"] for f in fabrics]
mean = [s["mean"] for s in step]
err = [[s["mean"] - s["lo"] for s in step], [s["hi"] - s["mean"] for s in step]]
usd = [f["delivered"]["usd_per_million_tokens"]["mean"] for f in fabrics]

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.bar(names, mean, yerr=err, capsize=4, color="#4c72b0")
left.set_ylabel("step time (s), 95% interval")
right.bar(names, usd, color="#dd8452")
right.set_ylabel("USD per million tokens")
for ax in (left, right):
    ax.tick_params(axis="x", labelrotation=15)
fig.suptitle(report["name"])
fig.tight_layout()
fig.savefig(out, dpi=100)
print(f"{out}: {', '.join(f'{n} {m:.3f} s' for n, m in zip(names, mean))}")
