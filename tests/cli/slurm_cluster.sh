#!/usr/bin/env bash
# A one-node Slurm cluster on loopback, for tests: Debian's munge and slurm-wlm, a
# generated munge key and slurm.conf, every file under one temporary folder, all daemons
# as root in the foreground (so their pids are ours to stop). Source this file, then
#
#   slurm_cluster_start DIR   starts munged, slurmctld and slurmd, waits (bounded) until the
#                             node is idle; exports SLURM_CONF; returns 77 when the packages
#                             or root are missing (ctest's skip code), 1 when it does not come up
#   slurm_cluster_stop        stops all three and waits for them (call it from an EXIT trap)
#
# What works on these VMs (Debian 12, Slurm 22.05, no systemd, cgroup v2 not delegated):
# proctrack/linuxproc and task/none (the cgroup plugins need a cgroup tree slurmd owns),
# select/cons_tres with CR_Core_Memory (so --mem is honoured), no accounting storage (sacct
# then has nothing: nnperf reads job states from squeue, which keeps ended jobs for
# MinJobAge seconds). Two partitions on the one node, "cpu" and "cpu-small", and a
# node feature "nnptest", so plans can name partitions and constraints.

slurm_cluster_pids=()

slurm_cluster_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

slurm_cluster_stop() {
  local p
  for p in "${slurm_cluster_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${slurm_cluster_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  slurm_cluster_pids=()
}

slurm_cluster_start() {
  local dir=$1 host cpus
  [ "$(id -u)" -eq 0 ] || { echo "slurm cluster: needs root (the daemons run as root here)"; return 77; }
  for b in munged slurmctld slurmd sbatch squeue scancel; do
    command -v "$b" >/dev/null || { echo "slurm cluster: $b missing (scripts/install-deps.sh installs munge, slurmctld, slurmd, slurm-client)"; return 77; }
  done
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir"
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  host=$(hostname -s)
  cpus=$(nproc)
  local ctl_port slurmd_port
  ctl_port=$(slurm_cluster_free_port)
  slurmd_port=$(slurm_cluster_free_port)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=nnptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
KillWait=2
MinJobAge=900
SlurmdTimeout=60
NodeName=nnpnode1 NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=2048 Features=nnptest State=UNKNOWN
PartitionName=cpu Nodes=nnpnode1 Default=YES MaxTime=30 State=UP
PartitionName=cpu-small Nodes=nnpnode1 MaxTime=30 State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  munged -F -f --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munged.seed" >"$dir/log/munged.out" 2>&1 &
  slurm_cluster_pids+=($!)
  for _ in $(seq 50); do [ -S "$dir/munge.socket" ] && break; sleep 0.1; done
  slurmctld -D -f "$dir/slurm.conf" >"$dir/log/slurmctld.out" 2>&1 &
  slurm_cluster_pids+=($!)
  slurmd -D -N nnpnode1 -f "$dir/slurm.conf" >"$dir/log/slurmd.out" 2>&1 &
  slurm_cluster_pids+=($!)
  local state=""
  for _ in $(seq 60); do
    state=$(sinfo -h -n nnpnode1 -o %T 2>/dev/null | head -1)
    [ "$state" = idle ] && return 0
    sleep 0.5
  done
  echo "slurm cluster: node not idle after 30 s (state '$state'); logs in $dir/log:"
  tail -n 5 "$dir"/log/*.log "$dir"/log/*.out 2>/dev/null
  return 1
}
