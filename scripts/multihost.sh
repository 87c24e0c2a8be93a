#!/usr/bin/env bash
# Several "machines" on one host, to prove rshperf's multi-machine path (test support;
# tests/integration/multihost.rs runs it). Builds K+1 network namespaces on a bridge
# (its own namespace too), each with its own address from 198.18.0.0/24 (RFC 2544's
# benchmark range) and no route out: nginx on 198.18.0.1, rshperf clients on
# 198.18.0.2 … Then, under GNU parallel and under a one-node Slurm cluster configured
# here (munged, slurmctld and slurmd started and stopped by PID; `srun -n K`, each task
# entering its namespace with `ip netns exec`), runs
#   (a) a partitioned run (--partition auto) and merges it;
#   (b) a partitioned sweep (--partition auto --start-at T) and merges it;
# and checks: the merged counts equal the single-machine run of the same workload
# exactly; nginx's access log shows each client address at its share; the global
# schedule interleaves (arrival k from partition k mod K, within a tolerance, from the
# log's $msec stamps).
#
#   scripts/multihost.sh [K]      K clients (default 2); needs root, iproute2, nginx,
#                                 parallel, slurmctld, slurmd, srun, munged, python3
# Environment: RSHPERF (default target/release/rshperf). Prints the merged reports and
# sweeps; exit status 0 when every check passed. Everything it makes (namespaces,
# daemons, the work directory) is removed on every exit path.
set -euo pipefail
K=${1:-2}
here=$(cd "$(dirname "$0")" && pwd)
rshperf=$(realpath "${RSHPERF:-$here/../target/release/rshperf}")
[ "$(id -u)" = 0 ] || { echo "multihost: needs root (network namespaces)" >&2; exit 2; }
for c in ip nginx parallel slurmctld slurmd srun munged python3 timeout; do
  command -v "$c" >/dev/null || { echo "multihost: $c is not installed" >&2; exit 2; }
done
[ -x "$rshperf" ] || { echo "multihost: no rshperf at $rshperf (cargo build --release)" >&2; exit 2; }

tag=rshp$$
w=$(mktemp -d /tmp/rshperf-multihost.XXXXXX)
chmod 755 "$w"
pids=()
nss=()
cleanup() {
  local rc=$?
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if [ -f "$w/nginx/nginx.pid" ]; then kill "$(cat "$w/nginx/nginx.pid")" 2>/dev/null; fi
  for ns in "${nss[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$w"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the machines -------------------------------------------------------------
sw=$tag-sw
ip netns add "$sw"; nss+=("$sw")
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
ip -n "$sw" link set lo up
machine() { # NAME ADDRESS-SUFFIX
  local ns=$tag-$1 n=$2
  ip netns add "$ns"; nss+=("$ns")
  ip link add "v$tag$n" type veth peer name eth0 netns "$ns"
  ip link set "v$tag$n" netns "$sw"
  ip -n "$sw" link set "v$tag$n" master br0 up
  ip -n "$ns" addr add "198.18.0.$n/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}
machine srv 1
for i in $(seq 0 $((K - 1))); do machine "c$i" $((i + 2)); done
# No route out: each namespace has only its /24 and loopback.
for ns in "${nss[@]}"; do
  if ip -n "$ns" route show default | grep -q .; then echo "multihost: $ns has a default route" >&2; exit 1; fi
done

# --- nginx on 198.18.0.1 --------------------------------------------------------
log=$w/nginx/access.log
NGINX_DIR=$w/nginx LISTEN_ADDR=198.18.0.1 LISTEN_IPV6=off ACCESS_LOG=$log \
  HTTP_PORT=80 TLS_PORT=443 H2C_PORT=8082 H2_PORT=8444 bash "$here/nginx.sh" config >/dev/null
chmod -R a+rX "$w/nginx"
ip netns exec "$tag-srv" nginx -p "$w/nginx" -c "$w/nginx/nginx.conf" -e "$w/nginx/error.log"
for _ in $(seq 100); do
  ip netns exec "$tag-c0" bash -c 'exec 3<>/dev/tcp/198.18.0.1/80' 2>/dev/null && break
  sleep 0.1
done
ip netns exec "$tag-c0" bash -c 'exec 3<>/dev/tcp/198.18.0.1/80' || { echo "multihost: nginx does not answer" >&2; exit 1; }

# --- the workloads --------------------------------------------------------------
RATE=200 CONNS=400
run_args=(--server=198.18.0.1 --port=80 --uri=/1k.html --rate=$RATE --num-conns=$CONNS --timeout=5)
sweep_args=(sweep --server=198.18.0.1 --port=80 --uri=/1k.html --timeout=5
  --low-rate 100 --high-rate 200 --rate-step 100 --const-test-time 1 --cool-down 1)
in_ns() { local i=$1; shift; ip netns exec "$tag-c$i" "$@"; }
start_at() { python3 -c 'import time; print(round(time.time() + float(__import__("sys").argv[1]), 3))' "$1"; }
mark() { wc -l < "$log"; } # access-log lines so far

check() { # NAME FIRST-LOG-LINE START DIR: the run's merged counts, shares, schedule
  python3 "$here/multihost_check.py" run "$1" "$log" "$2" "$3" "$RATE" "$CONNS" "$K" \
    "$w/single.json" "$4/merged.json" "$single_first"
}
check_sweep() { # NAME DIR
  python3 "$here/multihost_check.py" sweep "$1" "$2/merged.json" "$w/single-sweep.json" "$K"
}

# The single-machine references: the same workloads from one namespace.
single_first=$(mark)
in_ns 0 "$rshperf" "${run_args[@]}" --json="$w/single.json" >/dev/null 2>&1
in_ns 0 "$rshperf" "${sweep_args[@]}" --json "$w/single-sweep.json" >/dev/null 2>&1

# --- GNU parallel -----------------------------------------------------------------
d=$w/parallel; mkdir -p "$d"
first=$(mark); T=$(start_at 2)
seq 0 $((K - 1)) | timeout 60 parallel --will-cite -j "$K" --halt now,fail=1 \
  ip netns exec "$tag-c{}" "$rshperf" "${run_args[@]}" --partition=auto/$K --start-at=$T \
  --json="$d/part-{}.json" ">" "$d/part-{}.txt" "2>" "$d/part-{}.err"
echo "== GNU parallel: partitioned run"
"$rshperf" merge --json="$d/merged.json" "$d"/part-*.json
check parallel "$first" "$T" "$d"
T=$(start_at 2)
seq 0 $((K - 1)) | timeout 60 parallel --will-cite -j "$K" --halt now,fail=1 \
  ip netns exec "$tag-c{}" "$rshperf" "${sweep_args[@]}" --partition auto --partitions $K \
  --start-at $T --json "$d/sweep-{}.json" ">" "$d/sweep-{}.txt" "2>" "$d/sweep-{}.err"
echo "== GNU parallel: partitioned sweep"
"$rshperf" merge --json="$d/merged.json" "$d"/sweep-*.json
check_sweep parallel "$d"

# --- Slurm: one node, this host ---------------------------------------------------
s=$w/slurm; mkdir -p "$s/state" "$s/spool" "$s/munge"
chmod 700 "$s/munge"
dd if=/dev/urandom bs=1 count=1024 of="$s/munge/munge.key" 2>/dev/null
chmod 400 "$s/munge/munge.key"
munged -F --force --key-file="$s/munge/munge.key" --socket="$s/munge/munge.sock" \
  --pid-file="$s/munge/munged.pid" --log-file="$s/munge/munged.log" \
  --seed-file="$s/munge/munged.seed" 2>>"$s/munge/munged.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$s/munge/munge.sock" ] && break; sleep 0.1; done
node=$(hostname -s)
# Two free, consecutive ports below the ephemeral range, so that no test's outgoing
# connection can take one between this check and the daemons' bind.
port=$(python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
def free(p):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", p)); return True
    except OSError:
        return False
    finally:
        s.close()
ports = range(10000, (low if low > 12000 else 32768) - 1)
for p in random.sample(ports, min(2000, len(ports))):
    if free(p) and free(p + 1):
        print(p); break
else:
    raise SystemExit("multihost: no two free ports below the ephemeral range")
PY
)
cat > "$s/slurm.conf" <<CONF
ClusterName=rshperf
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$s/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$K State=UNKNOWN
PartitionName=rshperf Nodes=$node Default=YES MaxTime=10 State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$s/slurm.conf
slurmctld -D -i -f "$s/slurm.conf" 2>>"$s/slurmctld.log" &
pids+=($!)
slurmd -D -f "$s/slurm.conf" -N "$node" 2>>"$s/slurmd.log" &
pids+=($!)
up=
for _ in $(seq 150); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then up=1; break; fi
  sleep 0.2
done
[ -n "$up" ] || { echo "multihost: the Slurm node did not come up" >&2; tail -n 5 "$s"/*.log "$s"/munge/*.log >&2; sinfo >&2; exit 1; }
d=$w/slurm-out; mkdir -p "$d"
# Each task enters the namespace of its own index and names its document by its index;
# the partition comes from SLURM_PROCID and SLURM_NTASKS (--partition auto).
task() { # FILE-PREFIX: the command line srun runs in each task
  printf '%s' 'exec ip netns exec '"$tag"'-c$SLURM_PROCID "$0" "$@" --json='"$1"'-$SLURM_PROCID.json'
}
first=$(mark); T=$(start_at 3)
timeout 60 srun -n "$K" -o "$d/part-%t.txt" bash -c "$(task "$d/part")" "$rshperf" \
  "${run_args[@]}" --partition=auto --start-at=$T
echo "== Slurm: partitioned run"
"$rshperf" merge --json="$d/merged.json" "$d"/part-*.json
check slurm "$first" "$T" "$d"
T=$(start_at 3)
timeout 60 srun -n "$K" -o "$d/sweep-%t.txt" -e "$d/sweep-%t.err" bash -c "$(task "$d/sweep")" \
  "$rshperf" "${sweep_args[@]}" --partition auto --start-at "$T"
echo "== Slurm: partitioned sweep"
"$rshperf" merge --json="$d/merged.json" "$d"/sweep-*.json
check_sweep slurm "$d"
echo "multihost: all checks passed"
