#!/bin/sh
# Byte-identity gate for flow-engine changes: runs `compare`, `collective`, `train` and `sim`
# on the flow engine with two binaries (the default comparison, an ib-ndr all-to-all, a
# roce-400g all-reduce, a flow_dag train step, a loss sweep, DCQCN incast and PFC spreading) and compares their JSON outputs minus the
# wall-clock keys. Usage: scripts/flow_identical.sh BASE_BIN NEW_BIN
set -eu
base=$1; new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; bad=0
run() {
  name=$1; shift
  for b in base new; do
    eval bin=\$$b
    "$bin" "$@" > "$tmp/$name.$b.out" 2> "$tmp/$name.$b.err" || echo "exit $?" >> "$tmp/$name.$b.out"
    grep -v '"wall_s"\|_per_s"\|wall\|CPU\|cpu_s' "$tmp/$name.$b.out" > "$tmp/$name.$b.j" || true
  done
  n=$((n + 1))
  if cmp -s "$tmp/$name.base.j" "$tmp/$name.new.j" && [ -s "$tmp/$name.base.j" ]; then
    echo "same  $name ($(wc -c < "$tmp/$name.base.j") B)"
  else
    bad=$((bad + 1)); echo "DIFF  $name"; diff "$tmp/$name.base.j" "$tmp/$name.new.j" | head -5
  fi
}
run compare compare --engine flow --format json
run coll-ib-a2a collective --gpus 128 --fabric ib-ndr --op all_to_all --max-bytes 16M --engine flow --format json
run coll-roce-ar collective --gpus 1024 --fabric roce-400g --op all_reduce --max-bytes 64M --engine flow --format json
run train-flow-dag train --model llama3-70b --gpus 1024 --tp 8 --pp 4 --dp 32 --fabric roce-400g --step-model flow_dag --format json
run sweep-loss sweep --engine flow --param loss_rate=0,1e-4,1e-3 --param transport=go-back-n,selective-repeat --threads 1 --json /dev/stdout
for e in roce-incast-dcqcn roce-congestion-spreading; do
  for seed in 1 7; do
    run "sim-$e-$seed" sim "$root/examples/$e.toml" --engine flow --seed $seed --out /dev/stdout
  done
done
echo "$n runs, $bad differ"
[ $bad -eq 0 ]
