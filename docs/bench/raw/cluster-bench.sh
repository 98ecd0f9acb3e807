#!/bin/bash
# Redis Cluster measurements (BENCHMARKS.md, "On a Redis Cluster"). Starts one redis-server with a replica and a
# 3-master / 3-replica cluster on fixed loopback ports, runs the benches, stops every process by PID.
set -u
BIN=${BIN:-/work/wt-cluster/.build/release/longlink}
OUT=${OUT:-/tmp/cb}
mkdir -p $OUT
R=26491; RR=26492
CLUSTER_PORTS="26501 26502 26503 26504 26505 26506"
start() { # port, extra flags…; redis-server itself is the background job, so $! is its PID
  local port=$1; shift
  mkdir -p $OUT/r$port
  redis-server --port $port --bind 127.0.0.1 --save "" --appendonly no --maxclients 20000 --protected-mode no \
    --dir $OUT/r$port "$@" > $OUT/r$port/log 2>&1 &
  echo $! > $OUT/r$port.pid
}
start $R
start $RR --replicaof 127.0.0.1 $R
for p in $CLUSTER_PORTS; do
  start $p --cluster-enabled yes --cluster-port $((p + 1000)) --cluster-config-file $OUT/r$p/nodes.conf \
    --cluster-node-timeout 5000 --repl-diskless-sync yes --repl-diskless-sync-delay 0
done
sleep 1
redis-cli --cluster create $(for p in $CLUSTER_PORTS; do echo -n "127.0.0.1:$p "; done) --cluster-replicas 1 --cluster-yes > $OUT/create.log 2>&1
sleep 3
grep -q "All 16384 slots covered" $OUT/create.log || { echo "cluster create failed"; cat $OUT/create.log; }
for f in $OUT/*.pid; do echo "$f $(cat $f) $(ps -o args= -p $(cat $f))"; done
SINGLE=redis://127.0.0.1:$R
CLUSTER=redis-cluster://127.0.0.1:26501,127.0.0.1:26502,127.0.0.1:26503
FAN="--subscribers 2000 --routes 1000 --messages 20000 --threads 2 --rounds 2 --duration 30s --timeout 60s --json"
echo "== cross-node unpaced"; $BIN bench fanout --cross-node "$SINGLE;$CLUSTER" --rate 0 $FAN > $OUT/cluster-fanout-unpaced.json 2> $OUT/cluster-fanout-unpaced.err
echo "== cross-node paced"; $BIN bench fanout --cross-node "$SINGLE;$CLUSTER" --rate 2000 $FAN > $OUT/cluster-fanout-paced.json 2> $OUT/cluster-fanout-paced.err
echo "== store single"; $BIN bench store --messages 40000 --store-url "$SINGLE" --json > $OUT/cluster-store-single.json 2> $OUT/cluster-store-single.err
echo "== store cluster"; $BIN bench store --messages 40000 --store-url "$CLUSTER" --json > $OUT/cluster-store-cluster.json 2> $OUT/cluster-store-cluster.err
for f in $OUT/*.pid; do kill $(cat $f); done
sleep 2
for f in $OUT/*.pid; do kill -0 $(cat $f) 2>/dev/null && echo "$f still running"; done
echo done
