#!/bin/bash
# Single-node Slurm (22.05, Debian 12) on localhost, no slurmdbd (adapted from
# ../shared/infra/slurm-up.sh).  Sourced by tests/services/with-services.sh: `source up.sh DIR`;
# munged, slurmctld and slurmd run in the foreground as children of the caller (pids appended to
# DIR/slurm.pids); exports SLURM_CONF.  Returns 1 on failure.  Packages: slurm-wlm munge.
SD=${1:-/tmp/slurm-ci}; rm -rf "$SD"; mkdir -p "$SD"/{ctld,d,log,munge}
H=$(hostname -s); CPUS=$(nproc)
cat > "$SD/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$SD/ctld
SlurmdSpoolDir=$SD/d
SlurmctldPidFile=$SD/slurmctld.pid
SlurmdPidFile=$SD/slurmd.pid
SlurmctldLogFile=$SD/log/slurmctld.log
SlurmdLogFile=$SD/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SD/log/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
ReturnToService=2
MinJobAge=3600
KillWait=5
InactiveLimit=0
NodeName=$H NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$SD/slurm.conf"
mkdir -p /run/munge && chown munge:munge /run/munge
if ! munge -n >/dev/null 2>&1; then
  [ -f /etc/munge/munge.key ] || { mungekey -c -k /etc/munge/munge.key 2>/dev/null || create-munge-key -f; chown munge:munge /etc/munge/munge.key; }
  runuser -u munge -- /usr/sbin/munged -F >"$SD/log/munged.out" 2>&1 & echo $! >>"$SD/slurm.pids"
  for i in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi
slurmctld -D -f "$SLURM_CONF" >"$SD/log/slurmctld.out" 2>&1 & echo $! >>"$SD/slurm.pids"
slurmd    -D -f "$SLURM_CONF" >"$SD/log/slurmd.out"    2>&1 & echo $! >>"$SD/slurm.pids"
for i in $(seq 100); do [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.2; done
sinfo -h -o %T | grep -qx idle || { echo "slurm did not come up" >&2; tail "$SD"/log/* >&2; return 1; }
echo "services: slurm up (SLURM_CONF=$SLURM_CONF)" >&2
