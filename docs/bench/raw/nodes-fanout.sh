#!/bin/bash
# Cross-node fan-out measurement. Starts redis + nodes, records PIDs, runs benches, stops by PID.
set -u
BIN=/work/wt/crossnode/.build/release/longlink
OUT=/tmp/xn
RP=26391; A=27101; B=27102; C=27103; M=27104
redis-server --port $RP --bind 127.0.0.1 --save '' --appendonly no --maxclients 20000 > $OUT/redis.log 2>&1 &
echo $! > $OUT/redis.pid
sleep 1
COMMON="--insecure-dev --metrics-listen off --connection-rate 0 --max-connections-per-address 0 --publish-rate 0 --outbound-limit 64MiB --max-subscriptions 1024 --log-level warning"
REDISFLAGS="--store redis://127.0.0.1:$RP/0 --broker redis://127.0.0.1:$RP"
for p in $A $B; do
  $BIN serve --listen 127.0.0.1:$p $COMMON $REDISFLAGS > $OUT/node$p.log 2>&1 &
  echo $! > $OUT/node$p.pid
done
$BIN serve --listen 127.0.0.1:$M $COMMON --store memory > $OUT/node$M.log 2>&1 &
echo $! > $OUT/node$M.pid
sleep 2
for f in $OUT/*.pid; do echo "$f $(cat $f)"; done
FAN="--subscribers 2000 --routes 1000 --messages 20000 --rate 2000 --threads 2 --duration 20s --timeout 60s --json"
rss() { grep VmRSS /proc/$1/status; }
cpu() { for n in node$A node$B node$M redis; do awk -v n=$n '{printf "%s cpu_ticks=%d ", n, $14+$15}' /proc/$(cat $OUT/$n.pid)/stat; done; echo; }
cpu; echo "== cross"; $BIN bench fanout --server 127.0.0.1:$A --publish-server 127.0.0.1:$B $FAN > $OUT/cross.json 2> $OUT/cross.err
cpu; echo "== single-redis"; $BIN bench fanout --server 127.0.0.1:$A $FAN > $OUT/single-redis.json 2> $OUT/single-redis.err
cpu; echo "== single-memory"; $BIN bench fanout --server 127.0.0.1:$M $FAN > $OUT/single-memory.json 2> $OUT/single-memory.err
cpu; echo "== cross again"; $BIN bench fanout --server 127.0.0.1:$A --publish-server 127.0.0.1:$B $FAN > $OUT/cross2.json 2> $OUT/cross2.err; cpu
for p in $A $B $M; do echo "node $p $(rss $(cat $OUT/node$p.pid))"; done
echo "redis $(rss $(cat $OUT/redis.pid))"
for n in node$A node$B node$M redis; do kill $(cat $OUT/$n.pid); done
sleep 2
for n in node$A node$B node$M redis; do kill -0 $(cat $OUT/$n.pid) 2>/dev/null && echo "$n still running"; done
echo done
