#!/usr/bin/env bash
# slurm_cluster.sh -- bring up / tear down a real one-node SLURM cluster on
# this machine, built from Debian's packages, for tests and CI.
#
# Usage:
#   scripts/slurm_cluster.sh install [--accounting]
#       apt-get install the packages that are missing (slurm-wlm, munge;
#       with --accounting also slurmdbd, mariadb-server).
#   scripts/slurm_cluster.sh start [--accounting] DIR
#       write every config/state/log/pid file under DIR, start munged,
#       (mariadb + slurmdbd,) slurmctld and slurmd, wait until the node is
#       idle, then print `export ...` lines (also written to DIR/env.sh).
#       Typical use:  eval "$(scripts/slurm_cluster.sh start "$DIR")"
#   scripts/slurm_cluster.sh stop DIR
#       cancel the cluster's jobs and stop every daemon started for DIR, by
#       the PIDs in DIR/run/*.pid; wait until they have exited.
#
# Must run as root (CI runs as root). No systemd needed: every daemon is
# started directly. munged runs as user munge, all other daemons as root.
#
# Environment knobs (all optional):
#   SLURM_CLUSTER_PORT_BASE  first of 4 TCP ports: slurmctld, slurmd,
#                            slurmdbd, mariadb (default 6817 -> 6817..6820)
#   SLURM_CLUSTER_PARTITION  partition name (default "debug")
#   SLURM_CLUSTER_NAME       ClusterName (default "ssvmbench")
#   SLURM_CLUSTER_TIMEOUT    seconds to wait for the node to be idle (60)
#   SLURM_CLUSTER_CRED_EXPIRE  job credential lifetime in s (default 10,
#                            SLURM's minimum 5, SLURM's default 120); a
#                            requeued job may start again after this + 1 s
#
# Notes on the chosen slurm.conf values (SLURM 22.05):
#   * A requeued batch job gets BeginTime = now + cred_expire + 1, where
#     cred_expire is the job credential lifetime (AuthInfo=cred_expire=N,
#     default 120 s, minimum 5). We set cred_expire=10, so a requeued job is
#     eligible again after ~11 s instead of ~121 s. (Not lower by default:
#     a step must be launched within cred_expire of its credential's
#     creation, and a loaded 2-core CI machine should not make that flaky.)
#   * --signal=SIG@T is sent by slurmctld's time-limit pass, which runs every
#     30 s (PERIODIC_TIMEOUT, hard-coded) and fires once
#     remaining time <= T + 30 s. Without the "B:" prefix the signal goes to
#     the job steps only (e.g. `srun ...`), not to the batch shell.
set -euo pipefail

readonly PORT_BASE="${SLURM_CLUSTER_PORT_BASE:-6817}"
readonly PARTITION="${SLURM_CLUSTER_PARTITION:-debug}"
readonly CLUSTER_NAME="${SLURM_CLUSTER_NAME:-ssvmbench}"
readonly START_TIMEOUT="${SLURM_CLUSTER_TIMEOUT:-60}"
readonly CRED_EXPIRE="${SLURM_CLUSTER_CRED_EXPIRE:-10}"
readonly CTLD_PORT=$((PORT_BASE))
readonly SLURMD_PORT=$((PORT_BASE + 1))
readonly DBD_PORT=$((PORT_BASE + 2))
readonly MYSQL_PORT=$((PORT_BASE + 3))
readonly BASE_PACKAGES=(slurm-wlm munge)
readonly ACCT_PACKAGES=(slurmdbd mariadb-server)
# Daemons in start order; `stop` goes through them in reverse.
readonly DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)

# ---------------------------------------------------------------- helpers --

# log MSG...: progress messages go to stderr; stdout is kept for `export`s.
log() { echo "slurm_cluster: $*" >&2; }

# die MSG...: print an error and exit non-zero.
die() { echo "slurm_cluster: ERROR: $*" >&2; exit 1; }

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

require_root() {
    [[ $(id -u) -eq 0 ]] || die "must run as root"
}

# wait_until SECONDS CMD...: poll CMD every 0.5 s until it succeeds;
# return 1 on timeout.
wait_until() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}

# pid_alive PID: true if PID exists and is not a zombie (PID 1 in a
# container may not reap orphans, so a zombie counts as exited).
pid_alive() {
    local state
    [[ -r /proc/$1/stat ]] || return 1
    state=$(sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [[ -n $state && $state != Z && $state != X ]]
}

# pidfile_pid DIR NAME: print the live PID recorded in DIR/run/NAME.pid, if
# it still runs the program NAME (guards against PID reuse).
pidfile_pid() {
    local file="$1/run/$2.pid" pid comm
    [[ -s $file ]] || return 1
    pid=$(tr -dc '0-9' <"$file")
    [[ -n $pid ]] && pid_alive "$pid" || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    [[ $comm == "$2"* ]] || return 1   # comm is cut at 15 chars
    echo "$pid"
}

# tail_logs DIR: print the last lines of every daemon log (for failures).
tail_logs() {
    local f
    for f in "$1"/log/*.log; do
        [[ -e $f ]] || continue
        echo "----- tail of $f -----" >&2
        tail -n 25 "$f" >&2 || true
    done
}

# fail_start DIR MSG: report a failed start with log tails, stop what was
# started so nothing is left behind, and exit.
fail_start() {
    echo "slurm_cluster: ERROR: $2" >&2
    tail_logs "$1"
    stop_cluster "$1" || true
    exit 1
}

# port_in_use PORT: true if something accepts TCP connections on PORT.
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# check_ports_free ACCOUNTING: die if a port this cluster needs is taken
# (e.g. by another cluster started with the same SLURM_CLUSTER_PORT_BASE).
check_ports_free() {
    local ports=("$CTLD_PORT" "$SLURMD_PORT") port
    (($1)) && ports+=("$DBD_PORT" "$MYSQL_PORT")
    for port in "${ports[@]}"; do
        if port_in_use "$port"; then
            die "TCP port $port is already in use; stop the other cluster" \
                "or set SLURM_CLUSTER_PORT_BASE"
        fi
    done
}

# ---------------------------------------------------------------- install --

# pkg_installed PKG: true if dpkg reports PKG as installed.
pkg_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

# cmd_install [--accounting]: apt-get install what is missing.
cmd_install() {
    local pkgs=("${BASE_PACKAGES[@]}") missing=() p
    [[ ${1:-} == --accounting ]] && pkgs+=("${ACCT_PACKAGES[@]}")
    require_root
    for p in "${pkgs[@]}"; do
        pkg_installed "$p" || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        log "all packages installed: ${pkgs[*]}"
        return 0
    fi
    log "installing: ${missing[*]}"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
}

# ----------------------------------------------------------- config files --

# node_real_memory: RealMemory in MB, 90% of MemTotal (slurmd drains a node
# that has less memory than configured).
node_real_memory() {
    awk '/^MemTotal:/ { printf "%d\n", $2 / 1024 * 0.9 }' /proc/meminfo
}

# make_layout DIR: create the directory tree under DIR.
make_layout() {
    local dir=$1
    mkdir -p "$dir"/{run,log,state/ctld,state/slurmd,munge,tmp}
    # munged runs as user munge: it must be able to reach DIR/munge.
    chmod 755 "$dir" "$dir"/run "$dir"/log
    chown munge:munge "$dir/munge"
    chmod 755 "$dir/munge"   # munged: socket dir must be a+x, not writable
    if ! runuser -u munge -- test -x "$dir/munge"; then
        die "user munge cannot reach $dir/munge (a parent directory is not" \
            "world-searchable); use a DIR under e.g. /tmp"
    fi
}

# write_munge_key DIR: create the cluster's munge key once.
write_munge_key() {
    local key="$1/munge/munge.key"
    if [[ ! -s $key ]]; then
        (umask 077 && head -c 1024 /dev/urandom >"$key")
    fi
    chown munge:munge "$key"
    chmod 400 "$key"
}

# write_slurm_conf DIR ACCOUNTING(0|1): write DIR/slurm.conf.
write_slurm_conf() {
    local dir=$1 acct=$2 host cpus mem storage gather
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(node_real_memory)
    if ((acct)); then
        # AccountingStoragePass is the munge socket used towards slurmdbd
        # (clients ignore AuthInfo there and would use /run/munge).
        storage="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$dir/munge/munge.socket.2"
        gather="JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=10"
    else
        storage="AccountingStorageType=accounting_storage/none"
        gather="JobAcctGatherType=jobacct_gather/none"
    fi
    cat >"$dir/slurm.conf" <<EOF
# Generated by scripts/slurm_cluster.sh -- one-node test cluster.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT

# munge: our own munged, socket under DIR. cred_expire (min 5) also sets how
# long a requeued batch job must wait before it may start again (+1 s).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket.2,cred_expire=$CRED_EXPIRE

StateSaveLocation=$dir/state/ctld
SlurmdSpoolDir=$dir/state/slurmd
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp

# No cgroups: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core

# Quick scheduling and quick turnover for tests.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1,sched_min_interval=100000
JobRequeue=1
MinJobAge=30
KillWait=2
OverTimeLimit=0
InactiveLimit=0
Waittime=0
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=60
ReturnToService=2

MailProg=/bin/true
JobCompType=jobcomp/none
$storage
$gather

NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

# write_slurmdbd_conf DIR: write DIR/slurmdbd.conf (mode 600, as required).
write_slurmdbd_conf() {
    local dir=$1
    (umask 077 && cat >"$dir/slurmdbd.conf" <<EOF
# Generated by scripts/slurm_cluster.sh
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket.2
DbdHost=$(hostname -s)
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$dir/log/slurmdbd.log
PidFile=$dir/run/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$MYSQL_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
    )
    chmod 600 "$dir/slurmdbd.conf"
}

# write_env DIR ACCOUNTING: write DIR/env.sh and print it on stdout.
write_env() {
    cat >"$1/env.sh" <<EOF
export SLURM_CONF=$1/slurm.conf
export SLURM_CLUSTER_DIR=$1
export SLURM_CLUSTER_PARTITION=$PARTITION
export SLURM_CLUSTER_ACCOUNTING=$2
EOF
    cat "$1/env.sh"
}

# ---------------------------------------------------------------- daemons --

# start_munged DIR: start munged as user munge with key/socket/pid in DIR.
start_munged() {
    local m="$1/munge"
    log "starting munged"
    # munged (user munge) writes its own pid and log files: the pid file
    # lives in munge's directory (linked from run/), the log is pre-created.
    ln -sfn ../munge/munged.pid "$1/run/munged.pid"
    touch "$1/log/munged.log"
    chown munge:munge "$1/log/munged.log"
    runuser -u munge -- munged \
        --key-file="$m/munge.key" --socket="$m/munge.socket.2" \
        --pid-file="$m/munged.pid" --log-file="$1/log/munged.log" \
        --seed-file="$m/munged.seed" \
        </dev/null >>"$1/log/munged.log" 2>&1 \
        || fail_start "$1" "munged failed to start"
    wait_until 10 munge_works "$1" || fail_start "$1" "munged does not answer"
}

# munge_works DIR: encode+decode a credential through DIR's munged.
munge_works() {
    local s="$1/munge/munge.socket.2"
    munge -n -S "$s" | unmunge -S "$s"
}

# init_mariadb DIR: create the database directory (once) with a user
# slurm/slurm that may use slurm_acct_db.
init_mariadb() {
    local dir=$1
    [[ -d $dir/mysql/mysql ]] && return 0
    log "initialising mariadb in $dir/mysql"
    mariadb-install-db --no-defaults --user=root --datadir="$dir/mysql" \
        --skip-test-db --auth-root-authentication-method=socket \
        >>"$dir/log/mariadb-install.log" 2>&1 \
        || fail_start "$dir" "mariadb-install-db failed"
}

# start_mariadb DIR: run mariadbd as root, data/socket/pid under DIR,
# listening on 127.0.0.1:MYSQL_PORT only.
start_mariadb() {
    local dir=$1 sock="$1/run/mysqld.sock"
    init_mariadb "$dir"
    log "starting mariadb"
    setsid mariadbd --no-defaults --user=root --datadir="$dir/mysql" \
        --socket="$sock" --port="$MYSQL_PORT" --bind-address=127.0.0.1 \
        --pid-file="$dir/run/mariadbd.pid" --log-error="$dir/log/mariadb.log" \
        --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 \
        --innodb-log-file-size=64M \
        </dev/null >>"$dir/log/mariadb.log" 2>&1 &
    wait_until 60 mariadb-admin --no-defaults --socket="$sock" ping \
        || fail_start "$dir" "mariadb did not come up"
    mariadb --no-defaults --socket="$sock" -u root <<'EOF' \
        || fail_start "$dir" "could not create the slurm database user"
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF
}

# start_slurmdbd DIR: start slurmdbd and register the cluster.
start_slurmdbd() {
    local dir=$1
    log "starting slurmdbd"
    slurmdbd </dev/null >>"$dir/log/slurmdbd.log" 2>&1 \
        || fail_start "$dir" "slurmdbd failed to start"
    wait_until 60 sacctmgr -n list cluster \
        || fail_start "$dir" "slurmdbd does not answer"
    if [[ -z $(sacctmgr -n -P list cluster "$CLUSTER_NAME" format=cluster) ]]; then
        sacctmgr -i add cluster "$CLUSTER_NAME" >&2 \
            || fail_start "$dir" "sacctmgr add cluster failed"
    fi
}

# start_slurm DIR: start slurmctld and slurmd (both daemonize themselves).
start_slurm() {
    local dir=$1
    log "starting slurmctld"
    slurmctld </dev/null >>"$dir/log/slurmctld.log" 2>&1 \
        || fail_start "$dir" "slurmctld failed to start"
    wait_until 30 scontrol ping || fail_start "$dir" "slurmctld does not answer"
    log "starting slurmd"
    slurmd </dev/null >>"$dir/log/slurmd.log" 2>&1 \
        || fail_start "$dir" "slurmd failed to start"
}

# node_idle: true once this host's node is idle in sinfo.
node_idle() {
    [[ $(sinfo -h -N -n "$(hostname -s)" -o %T 2>/dev/null) == idle ]]
}

# wait_node_idle DIR: wait START_TIMEOUT s for the node to become idle.
wait_node_idle() {
    local dir=$1
    if ! wait_until "$START_TIMEOUT" node_idle; then
        sinfo -N -l >&2 || true
        fail_start "$dir" "node $(hostname -s) not idle after ${START_TIMEOUT}s"
    fi
}

# cancel_jobs DIR: cancel every job of the cluster and give the steps a
# moment to end, so that stopping slurmd leaves no job processes behind.
cancel_jobs() {
    local jobs
    pidfile_pid "$1" slurmctld >/dev/null || return 0
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null) || return 0
    [[ -n $jobs ]] || return 0
    log "cancelling jobs: $(echo $jobs)"
    # shellcheck disable=SC2086
    timeout 10 scancel $jobs 2>/dev/null || true
    wait_until 20 no_jobs_running || true
}

# no_jobs_running: true when squeue lists no running/completing job.
no_jobs_running() {
    [[ -z $(squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %A 2>/dev/null) ]]
}

# stop_pid NAME PID: SIGTERM, wait up to 30 s, then SIGKILL.
stop_pid() {
    log "stopping $1 (pid $2)"
    kill -TERM "$2" 2>/dev/null || return 0
    if ! wait_until 30 eval "! pid_alive $2"; then
        log "$1 (pid $2) ignored SIGTERM, sending SIGKILL"
        kill -KILL "$2" 2>/dev/null || true
        wait_until 10 eval "! pid_alive $2" || log "$1 (pid $2) still alive"
    fi
}

# stray_stepds DIR: PIDs of slurmstepd processes of this cluster (they
# inherit SLURM_CONF=DIR/slurm.conf from slurmd) that outlived slurmd.
stray_stepds() {
    local p
    for p in /proc/[0-9]*; do
        [[ $(cat "$p/comm" 2>/dev/null) == slurmstepd ]] || continue
        pid_alive "${p#/proc/}" || continue
        tr '\0' '\n' 2>/dev/null <"$p/environ" \
            | grep -qxF "SLURM_CONF=$1/slurm.conf" && echo "${p#/proc/}"
    done
    return 0
}

# stop_cluster DIR: cancel jobs, then stop daemons in reverse start order.
stop_cluster() {
    local dir=$1 i name pid
    export SLURM_CONF="$dir/slurm.conf"
    [[ -e $SLURM_CONF ]] && cancel_jobs "$dir"
    for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
        name=${DAEMONS[i]}
        if [[ $name == munged ]]; then
            for pid in $(stray_stepds "$dir"); do
                stop_pid slurmstepd "$pid"
            done
        fi
        if pid=$(pidfile_pid "$dir" "$name"); then
            stop_pid "$name" "$pid"
        fi
        rm -f "$dir/run/$name.pid"
    done
}

# --------------------------------------------------------------- commands --

# cmd_start [--accounting] DIR
cmd_start() {
    local acct=0 dir name
    if [[ ${1:-} == --accounting ]]; then acct=1; shift; fi
    [[ $# -eq 1 ]] || usage
    require_root
    for name in slurmctld slurmd munged sinfo; do
        command -v "$name" >/dev/null || die "$name not found; run: $0 install"
    done
    if ((acct)); then
        for name in slurmdbd mariadbd; do
            command -v "$name" >/dev/null \
                || die "$name not found; run: $0 install --accounting"
        done
    fi
    dir=$(realpath -m "$1")
    for name in "${DAEMONS[@]}"; do
        if pidfile_pid "$dir" "$name" >/dev/null; then
            die "$name already runs for $dir; run: $0 stop $dir"
        fi
    done
    # DIR goes verbatim into slurm.conf and a unix socket path (<108 chars).
    [[ $dir =~ ^[A-Za-z0-9/._+-]+$ ]] || die "DIR must not contain spaces or" \
        "special characters: $dir"
    ((${#dir} < 80)) || die "DIR path too long for a unix socket: $dir"
    check_ports_free "$acct"
    mkdir -p "$dir"

    make_layout "$dir"
    write_munge_key "$dir"
    write_slurm_conf "$dir" "$acct"
    export SLURM_CONF="$dir/slurm.conf"
    start_munged "$dir"
    if ((acct)); then
        write_slurmdbd_conf "$dir"
        start_mariadb "$dir"
        start_slurmdbd "$dir"
    fi
    start_slurm "$dir"
    wait_node_idle "$dir"
    log "cluster up: node $(hostname -s), partition $PARTITION, accounting=$acct"
    write_env "$dir" "$acct"
}

# cmd_stop DIR
cmd_stop() {
    [[ $# -eq 1 ]] || usage
    require_root
    [[ -d $1 ]] || die "no such directory: $1"
    stop_cluster "$(realpath "$1")"
    log "stopped"
}

main() {
    local cmd=${1:-}
    [[ -n $cmd ]] || usage
    shift
    case $cmd in
        install) cmd_install "$@" ;;
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        -h | --help | help) usage ;;
        *) usage ;;
    esac
}

main "$@"
