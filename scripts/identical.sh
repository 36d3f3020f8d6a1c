#!/bin/sh
# Byte-identity gate for engine changes: runs `fabricsim sim` with two binaries on the peer cases
# (lossy, PFC, IB credits) and the examples exercising DCQCN, IB CC, lossy incast, link failure,
# pause storm and deadlock, seeds 1 and 7, and compares the JSON (minus the wall-clock keys that
# binaries before `sim --timing` wrote) and
# fct.txt outputs. Usage: scripts/identical.sh BASE_BIN NEW_BIN [PEER_DIR]
set -eu
base=$1; new=$2; peer=${3:-/work/shared/peer-scenarios}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; bad=0
for c in ft8_perm128 ft8_incast128; do
  for fc in none:roce pfc:roce credits:ib; do
    f=${fc%%:*}; fab=${fc##*:}
    cat > "$tmp/$c-$f.toml" <<TOML
[sim]
topology_file = "$peer/$c.topo.txt"
fabric = "$fab"
flow_control = "$f"
until = "3ms"
[traffic]
kind = "ns3"
flow_file = "$peer/$c.flow.txt"
TOML
  done
done
set -- "$tmp"/*.toml
for e in roce-incast-dcqcn roce-congestion-spreading ib-congestion-spreading sim-incast-lossy \
         sim-link-failure roce-pause-storm roce-deadlock sim-ns3-flows; do
  set -- "$@" "$root/examples/$e.toml"
done
for s in "$@"; do
  for seed in 1 7; do
    name=$(basename "$s" .toml)-$seed
    for b in base new; do
      eval bin=\$$b
      "$bin" sim "$s" --seed $seed --out "$tmp/$name.$b.json" --fct "$tmp/$name.$b.fct" \
        > "$tmp/$name.$b.log" 2>&1 || echo "exit $? $b" >> "$tmp/$name.$b.log"
      # wall-clock keys: written by binaries before `sim --timing` (they differ between runs)
      grep -v '"wall_s"\|_per_s"' "$tmp/$name.$b.json" > "$tmp/$name.$b.j" 2>/dev/null || true
    done
    n=$((n + 1))
    if cmp -s "$tmp/$name.base.j" "$tmp/$name.new.j" && cmp -s "$tmp/$name.base.fct" "$tmp/$name.new.fct" \
       && [ -s "$tmp/$name.base.j" ]; then
      echo "same  $name ($(wc -c < "$tmp/$name.base.json") B json, $(wc -l < "$tmp/$name.base.fct") fct lines)"
    else
      bad=$((bad + 1)); echo "DIFF  $name"; tail -n 3 "$tmp/$name.base.log" "$tmp/$name.new.log"
    fi
  done
done
echo "$n runs, $bad differ"
[ $bad -eq 0 ]
