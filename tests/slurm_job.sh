#!/usr/bin/env bash
# A single-node Slurm (Debian's slurm-wlm and munge) started for one job and stopped after it:
# its own slurm.conf, munge key and socket, spool, state and logs under WORKDIR, its own ports on
# 127.0.0.1. It submits a batch script, waits for it and prints its output.
#
#   tests/slurm_job.sh WORKDIR TIMEOUT_S SBATCH_ARGUMENT... BATCH_SCRIPT [--- SBATCH_ARGUMENT...]
#
# Jobs separated by --- run one after the other, each for at most TIMEOUT_S.
# Exit status: the first failed job's (sbatch --wait), 124 when one ran past TIMEOUT_S, 77 (a skip, its reason
# on the last line) where Slurm cannot start here: not root, a program missing, a daemon that does
# not come up. The daemons are stopped on every exit (the trap), Ctrl-C and errors included.
set -uo pipefail

skip() {
  printf 'slurm_job: SKIP: %s\n' "$*"
  exit 77
}
fail() {
  printf 'slurm_job: %s\n' "$*" >&2
  exit 1
}

(($# >= 3)) || fail "usage: slurm_job.sh WORKDIR TIMEOUT_S SBATCH_ARGUMENT... BATCH_SCRIPT [--- ...]"
WORK="$1"
TIMEOUT_S="$2"
shift 2

((EUID == 0)) || skip "not root: slurmd runs the job's steps as their user and needs root"
for program in munged slurmctld slurmd sbatch scontrol srun ss; do
  command -v "$program" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"
  command -v "$program" >/dev/null 2>&1 ||
    skip "$program not found: install slurm-wlm and munge (scripts/setup does)"
done

mkdir -p "$WORK"/{munge,state,spool,log,tmp} || fail "cannot create the folders under $WORK"
chmod 700 "$WORK" "$WORK/munge"

PIDS=()
# shellcheck disable=SC2317  # called by the trap
stop_all() {
  local pid
  # slurmd first (it ends the job's steps), then the controller, then munge.
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do kill -KILL "$pid" 2>/dev/null; done
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Two free TCP ports on 127.0.0.1: random ones that nothing uses.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 30000))
    [[ $port == "${1:-}" ]] && continue
    ss -Htan "( sport = :$port )" 2>/dev/null | grep -q . && continue
    printf '%s' "$port"
    return 0
  done
  return 1
}
CTLD_PORT="$(free_port)" || skip "no free TCP port on 127.0.0.1"
SLURMD_PORT="$(free_port "$CTLD_PORT")" || skip "no free TCP port on 127.0.0.1"

# munge: its own key and socket, so the machine's munged (if any) is neither used nor disturbed.
SOCKET="$WORK/munge/munge.socket"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
munged --foreground --force --socket="$SOCKET" --key-file="$WORK/munge/munge.key" \
  --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/log/munged.log" \
  --seed-file="$WORK/munge/munged.seed" >>"$WORK/log/munged.log" 2>&1 &
PIDS=("$!" "${PIDS[@]+"${PIDS[@]}"}")
for _ in $(seq 50); do [[ -S $SOCKET ]] && break; sleep 0.1; done
[[ -S $SOCKET ]] || skip "munged did not start: $(tail -n 1 "$WORK/log/munged.log")"

NODE="$(hostname -s)"
CPUS="$(nproc)"
export SLURM_CONF="$WORK/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# A one-node cluster for one test: everything under $WORK.
ClusterName=gpulabtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
# The job's temporaries (PMIx's folders among them) apart from another cluster's with the same ids.
TmpFS=$WORK/tmp
# No cgroups: a container may not let slurmd have them, and one job needs no confinement. Tasks
# are bound to their CPUs (task/affinity: sched_setaffinity), as a site's Slurm binds them, so
# the test sees what each rank may run on.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS State=UNKNOWN
PartitionName=gpulabtest Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF

slurmctld -D -i -f "$SLURM_CONF" >>"$WORK/log/slurmctld.log" 2>&1 &
PIDS=("$!" "${PIDS[@]}")
slurmd -D -f "$SLURM_CONF" -N "$NODE" >>"$WORK/log/slurmd.log" 2>&1 &
PIDS=("$!" "${PIDS[@]}")

# Up when the node is idle: the controller answers and slurmd has registered.
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1)"
  [[ $state == idle ]] && break
  sleep 0.2
done
if [[ $state != idle ]]; then
  printf '%s\n' "--- slurmctld.log" && tail -n 5 "$WORK/log/slurmctld.log"
  printf '%s\n' "--- slurmd.log" && tail -n 5 "$WORK/log/slurmd.log"
  skip "Slurm did not come up (node state '${state:-no answer}'; logs in $WORK/log)"
fi
printf 'slurm_job: Slurm %s up on 127.0.0.1 ports %s/%s, node %s with %s CPUs\n' \
  "$(sinfo -V | awk '{print $2}')" "$CTLD_PORT" "$SLURMD_PORT" "$NODE" "$CPUS"

# Each job in turn, in WORK (its default output and working folder); its output file named by its
# id.
submit() {
  local rc=0 job
  timeout --kill-after=5 "$TIMEOUT_S" sbatch --wait --parsable --chdir="$WORK" \
    --output="$WORK/slurm-%j.out" "$@" \
    >"$WORK/sbatch.out" 2>&1 || rc=$?
  job="$(head -n 1 "$WORK/sbatch.out" | cut -d';' -f1)"
  if [[ ! $job =~ ^[0-9]+$ ]]; then
    printf 'slurm_job: sbatch failed (%s): %s\n' "$rc" "$(cat "$WORK/sbatch.out")"
    return "$((rc ? rc : 1))"
  fi
  if ((rc == 124 || rc == 137)); then
    printf 'slurm_job: job %s ran past %s s: %s\n' "$job" "$TIMEOUT_S" \
      "$(squeue -h -j "$job" -o '%T %R' 2>/dev/null)"
    scancel "$job" 2>/dev/null
  fi
  printf 'slurm_job: job %s ended with %s; its output (%s):\n' "$job" "$rc" "$WORK/slurm-$job.out"
  if [[ -f $WORK/slurm-$job.out ]]; then cat "$WORK/slurm-$job.out"; else cat "$WORK/sbatch.out"; fi
  return "$rc"
}
status=0
args=()
for arg in "$@" ---; do
  if [[ $arg == --- ]]; then
    if ((${#args[@]})); then
      submit "${args[@]}" || { rc=$?; ((status)) || status=$rc; }
    fi
    args=()
  else
    args+=("$arg")
  fi
done
exit "$status"
