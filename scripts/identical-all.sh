#!/bin/sh
# Byte-identity gate for every command: `scripts/identical.sh` (sim, 28 runs), then plan (every
# example, JSON, with the DOT and ns-3 exports of one), collective (flow and packet engine),
# train (analytic and flow_dag), compare (flow engine, text, JSON and HTML), a small sweep (CSV,
# JSON, SVG) and bench's event counts (its timing columns dropped), old binary against new.
# Usage: scripts/identical-all.sh BASE_BIN NEW_BIN [PEER_DIR]
# FULL=1 also runs the default `compare` (auto engine: packet runs, minutes).
set -eu
base=$1; new=$2; peer=${3:-/work/shared/peer-scenarios}
root=$(cd "$(dirname "$0")/.." && pwd)
ex=$root/examples
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; bad=0

# run NAME CMD...: runs CMD with each binary in its own directory (outputs named in CMD land
# there), then compares stdout, stderr, the exit status and every file written.
run() {
  name=$1; shift
  for b in base new; do
    eval bin=\$$b
    mkdir -p "$tmp/$b/$name"
    (cd "$tmp/$b/$name" && "$bin" "$@" > stdout 2> stderr; echo "exit $?" > status) || true
  done
  n=$((n + 1))
  if diff -r "$tmp/base/$name" "$tmp/new/$name" > "$tmp/$name.diff"; then
    echo "same  $name"
  else
    bad=$((bad + 1)); echo "DIFF  $name"; head -20 "$tmp/$name.diff"
  fi
}

"$root/scripts/identical.sh" "$base" "$new" "$peer" || bad=$((bad + 1))

for s in "$ex"/*.toml; do
  run "plan-$(basename "$s" .toml)" plan "$s" --format json
done
run plan-exports plan "$ex/ib-ndr-1024-fat-tree.toml" --export-dot t.dot --export-ns3 t.topo.txt
run plan-flags-csv plan --gpus 2048 --fabric roce-400g --oversubscription 2:1 --format csv

run collective-flow collective "$ex/collective-ib-ndr-16.toml" --engine flow --format json
run collective-packet collective "$ex/collective-ib-ndr-16.toml" --engine packet --max-bytes 4M
run collective-a2a collective --gpus 32 --fabric roce-400g --engine flow --op all_to_all --fit

run train-70b train "$ex/train-llama3-70b.toml" --format json
run train-mixtral train "$ex/train-mixtral-8x7b.toml"
run train-flow-dag train "$ex/train-llama3-70b.toml" --step-model flow_dag

run compare-flow compare --engine flow --html c.html
run compare-flow-json compare --engine flow --format json
if [ "${FULL:-0}" = 1 ]; then
  run compare-default compare --format json
fi

run sweep-small sweep --param loss_rate=0,0.001 --param transport=go-back-n,selective-repeat \
  --engine flow --threads 1 --csv s.csv --json s.json --svg s.svg

# bench: events, packets, simulated end and completions must agree; wall time and rates not.
for b in base new; do
  eval bin=\$$b
  "$bin" bench --dir "$peer" > "$tmp/bench.$b" 2>&1 || echo "exit $?" >> "$tmp/bench.$b"
  awk '$1 == "case" || (NF >= 10 && $4 ~ /^[0-9]+$/) { $6 = $7 = $8 = "" } { print }' "$tmp/bench.$b" > "$tmp/bench.$b.ev"
done
n=$((n + 1))
if cmp -s "$tmp/bench.base.ev" "$tmp/bench.new.ev"; then
  echo "same  bench (events)"; cat "$tmp/bench.new.ev"
else
  bad=$((bad + 1)); echo "DIFF  bench (events)"; diff "$tmp/bench.base.ev" "$tmp/bench.new.ev" || true
fi

echo "identical-all: $n checks (besides identical.sh), $bad differ"
[ $bad -eq 0 ]
