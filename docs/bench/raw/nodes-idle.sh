#!/bin/bash
# Three redis-backed nodes; three idle benches at the same time (one bench process per node, each ≤ 20,000 files).
set -u
BIN=/work/wt/crossnode/.build/release/longlink
OUT=/tmp/xn
N=${N:-18000}
RP=26392; PORTS="27201 27202 27203"
redis-server --port $RP --bind 127.0.0.1 --save '' --appendonly no --maxclients 20000 > $OUT/iredis.log 2>&1 &
echo $! > $OUT/iredis.pid
sleep 1
COMMON="--insecure-dev --metrics-listen off --connection-rate 0 --max-connections-per-address 0 --publish-rate 0 --outbound-limit 64MiB --max-subscriptions 1024 --log-level warning"
for p in $PORTS; do
  $BIN serve --listen 127.0.0.1:$p $COMMON --store redis://127.0.0.1:$RP/0 --broker redis://127.0.0.1:$RP > $OUT/inode$p.log 2>&1 &
  echo $! > $OUT/inode$p.pid
done
sleep 2
for p in $PORTS; do echo "node $p pid $(cat $OUT/inode$p.pid) before: $(grep VmRSS /proc/$(cat $OUT/inode$p.pid)/status)"; done
echo "redis before: $(grep VmRSS /proc/$(cat $OUT/iredis.pid)/status)"
for p in $PORTS; do
  $BIN bench idle --server 127.0.0.1:$p --connections $N --routes 5000 --threads 2 --duration 40s --timeout 120s --json > $OUT/idle$p.json 2> $OUT/idle$p.err &
  echo $! > $OUT/ibench$p.pid
done
# sample while all three hold their connections
for i in $(seq 1 30); do
  sleep 5
  line="t=$((i*5))s"
  total=0
  for p in $PORTS; do
    pid=$(cat $OUT/inode$p.pid)
    est=$(ss -Htn state established "( sport = :$p )" | wc -l)
    total=$((total+est))
    line="$line | $p est=$est $(grep VmRSS /proc/$pid/status | tr -s ' ')"
  done
  echo "$line | total=$total | redis $(grep VmRSS /proc/$(cat $OUT/iredis.pid)/status | tr -s ' ') | slab $(grep ^Slab /proc/meminfo | tr -s ' ')"
  alive=0; for p in $PORTS; do kill -0 $(cat $OUT/ibench$p.pid) 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
done
for p in $PORTS; do wait $(cat $OUT/ibench$p.pid) 2>/dev/null; done
for p in $PORTS; do kill $(cat $OUT/inode$p.pid); done
kill $(cat $OUT/iredis.pid)
sleep 2
for p in $PORTS; do kill -0 $(cat $OUT/inode$p.pid) 2>/dev/null && echo "node $p still running"; done
echo done
