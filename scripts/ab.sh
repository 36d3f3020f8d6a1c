#!/bin/sh
# A/B timing of bench case CASE, alternating two binaries N times each. Prints per binary the
# bench's own run wall time (wall_s) and the process's user CPU time, sorted, with medians. On a
# shared machine the user time is the steadier figure (waiting for a core does not count).
# Usage: scripts/ab.sh BASE_BIN NEW_BIN [N] [CASE] [PEER_DIR]
set -eu
a=$1; b=$2; n=${3:-8}; case=${4:-ft16_perm1024}; peer=${5:-/work/shared/peer-scenarios}
out=$(mktemp); trap 'rm -f "$out"' EXIT
i=0
while [ $i -lt $n ]; do
  for x in a b; do
    eval bin=\$$x
    /usr/bin/time -f "user %U" -o "$out.t" "$bin" bench --dir "$peer" --only "$case" --repeat 1 \
      | awk -v c="$case" -v x=$x '$1 == c {print x, "wall", $6}' >> "$out"
    sed "s/^/$x /" "$out.t" >> "$out"
  done
  i=$((i + 1))
done
rm -f "$out.t"
for x in a b; do
  eval bin=\$$x
  for k in wall user; do
    awk -v x=$x -v k=$k '$1 == x && $2 == k {print $3}' "$out" | sort -n |
      awk -v l="$x $bin $k" '{v[NR]=$1; s=s" "$1} END {m=(NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); print l ":" s "  median " m}'
  done
done
uptime
