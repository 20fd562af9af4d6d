#!/bin/bash
# starve.sh: the starvation of issue 17, reproduced with nothing but cgroupfs. Token rings of
# processes that wake each other ~100k times a second (loadgen's process_load shape: 2 rings of 4)
# run in cgbalance.slice/xring beside busy loops (one per CPU used) in the sibling group
# cgbalance.slice/xjob; each MODE changes one thing, and the loops' work is printed as % of what
# they do alone on the same CPUs.
#
# Usage: tests/starve/starve.sh [-d SECS] [-r RUNS] [-c CPULIST] MODE...
#   -d SECS     how long the busy loops run in each run (default 8, at most 8: see HAZARD)
#   -r RUNS     runs of each MODE (default 1)
#   -c CPULIST  the CPUs the experiment uses (default: all); one busy loop per CPU
#   MODE        alone    the busy loops only (the baseline; measured anyway, once per CPU set)
#               none     rings beside loops, equal weights (cpu.shares 1024 / cpu.weight 100)
#               weight   the job group's weight x10
#               idle     cpu.idle = 1 on the ring group
#               quota    the ring group limited to half a CPU (cfs quota / cpu.max)
#               root     the busy loops in the root cgroup instead of a sibling group
#               threads  the rings made of threads instead of processes
#               ring2    one ring of 2 processes;  ring4: one ring of 4 processes
#               onecpu   rings and loops on one CPU (the last of CPULIST), one loop per CPU still
#               ringcpu  the rings on one CPU (the last of CPULIST), the loops on all
#               batch    the ring members SCHED_BATCH: they never preempt a running task at wake-up
#               anchor   a nice-19 busy loop on each CPU in the ring group too: the group then
#                        stays queued on every CPU instead of leaving and rejoining with the tokens
#               all      every mode above but alone, in that order
# Per run it prints: the loops' work (% of alone); their share of the CPU time the two groups used
# while the loops ran (50% is fair at equal weights; unlike % of alone it does not move with what
# the rest of the machine takes); the CPU time the kernel charged them (% of their CPUs) and their
# work per CPU second (% of alone: below 100 when interrupts they suffer are charged to them);
# how long they waited runnable and how often they were preempted; the rings' token passes per
# second, CPUs and wait per pass; reschedule and function-call IPIs per second; steal time.
#
# Needs root and the cpu controller: cgroup v1 at /sys/fs/cgroup/cpu or v2 at /sys/fs/cgroup.
# Builds its helper (tests/starve/starve-load.c) with cc into ${TMPDIR:-/tmp}/starve-load-$UID/.
# Other cgroup tests use the same group names: on a shared machine run it under their lock,
# `flock /tmp/cgbalance-test.lock tests/starve/starve.sh none`.
#
# HAZARD: the rings starve every other group on the CPUs they run on, the root group and so the
# machine's own services included; a run of a minute stalled a machine for minutes. So the slice
# is capped at the CPUs used but half of one (cfs quota / cpu.max, restored after) and a run is at
# most 8 s. The groups, the cap and every process are undone on exit, Ctrl-C included.
set -u

prog=starve.sh
here=$(cd "$(dirname "$0")" && pwd -P)
ALL_MODES=(none weight idle quota root threads ring2 ring4 onecpu ringcpu batch anchor)

die() {
        echo "$prog: $*" >&2
        exit 2
}
usage() {
        sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2
        exit 2
}

secs=8 runs=1 cpulist=
while getopts d:r:c:h opt; do
        case $opt in
        d) secs=$OPTARG ;;
        r) runs=$OPTARG ;;
        c) cpulist=$OPTARG ;;
        *) usage ;;
        esac
done
shift $((OPTIND - 1))
(($#)) || usage
[[ $secs =~ ^[1-8]$ ]] || die "-d '$secs': want whole seconds, 1 to 8"
[[ $runs =~ ^[1-9][0-9]?$ ]] || die "-r '$runs': want a number of runs, 1 to 99"
modes=()
for m in "$@"; do
        case $m in
        all) modes+=("${ALL_MODES[@]}") ;;
        alone | none | weight | idle | quota | root | threads | ring2 | ring4 | onecpu | ringcpu | batch | anchor)
                modes+=("$m") ;;
        *) die "unknown MODE '$m' (see $0 -h)" ;;
        esac
done
((EUID == 0)) || die "must run as root (it writes cgroupfs)"
for t in cc taskset; do
        command -v $t >/dev/null || die "needs $t"
done

# ---- the CPUs: the set, its last CPU, the cap
expand() { # "0-1,3" -> "0 1 3"
        local part lo hi i out=()
        IFS=, read -ra parts <<<"$1"
        for part in "${parts[@]}"; do
                if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
                        lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
                        for ((i = lo; i <= hi; i++)); do out+=("$i"); done
                elif [[ $part =~ ^[0-9]+$ ]]; then
                        out+=("$part")
                else
                        return 1
                fi
        done
        echo "${out[*]}"
}
[[ -n $cpulist ]] || cpulist=$(taskset -pc $$ | sed 's/.*: //')
cpus=$(expand "$cpulist") || cpus=''
[[ -n $cpus ]] || die "-c '$cpulist' is not a CPU list such as 0-1 or 2,3"
for c in $cpus; do
        [[ -d /sys/devices/system/cpu/cpu$c ]] || die "-c '$cpulist': there is no CPU $c"
done
read -ra cpu_arr <<<"$cpus"
ncpu=${#cpu_arr[@]}
last=${cpu_arr[ncpu - 1]}
cpus_csv=${cpus// /,}
period=100000
cap=$((ncpu * period - period / 2))

# ---- the cgroup hierarchy: v2 (unified) or v1's cpu controller
if [[ -r /sys/fs/cgroup/cgroup.controllers ]]; then
        v=2 root=/sys/fs/cgroup
        grep -qw cpu $root/cgroup.controllers || die "cgroup v2 without the cpu controller"
elif [[ -r /sys/fs/cgroup/cpu/cpu.shares ]]; then
        v=1 root=/sys/fs/cgroup/cpu
else
        die "no cpu controller: neither cgroup v2 at /sys/fs/cgroup nor v1 at /sys/fs/cgroup/cpu"
fi
slice=$root/cgbalance.slice ring_g=$slice/xring job_g=$slice/xjob

# ---- the helper
bin=${TMPDIR:-/tmp}/starve-load-$EUID
mkdir -p "$bin" || die "cannot create $bin"
if [[ ! -x $bin/starve-load || $here/starve-load.c -nt $bin/starve-load ]]; then
        cc -O2 -Wall -pthread -o "$bin/starve-load.tmp" "$here/starve-load.c" ||
                die "cannot build $here/starve-load.c"
        mv "$bin/starve-load.tmp" "$bin/starve-load"
fi
tmp=$(mktemp -d) || die "mktemp -d failed"

# ---- cleanup: every process started, the groups, the cap, the slice if made here
pids=() made_slice=0 saved_cap=
kill_group() {
        local g=$1 p
        [[ -d $g ]] || return 0
        if [[ -e $g/cgroup.kill ]]; then
                echo 1 >"$g/cgroup.kill" 2>/dev/null
        else
                while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$g/cgroup.procs"
        fi
}
remove_group() {
        local g=$1 i
        [[ -d $g ]] || return 0
        kill_group "$g"
        for ((i = 0; i < 50; i++)); do
                rmdir "$g" 2>/dev/null && return 0
                sleep 0.1
        done
        echo "$prog: could not remove $g" >&2
}
cleanup() {
        local p
        trap - EXIT INT TERM
        for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
        wait 2>/dev/null
        remove_group "$ring_g"
        remove_group "$job_g"
        if [[ -n $saved_cap ]]; then
                if ((v == 2)); then
                        echo "$saved_cap" >"$slice/cpu.max"
                else
                        echo "${saved_cap#* }" >"$slice/cpu.cfs_period_us"
                        echo "${saved_cap% *}" >"$slice/cpu.cfs_quota_us"
                fi
        fi
        ((made_slice)) && rmdir "$slice" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM

# ---- the slice, capped
if [[ ! -d $slice ]]; then
        mkdir "$slice" || die "cannot create $slice"
        made_slice=1
fi
if ((v == 2)); then
        grep -qw cpu $root/cgroup.subtree_control || echo +cpu >$root/cgroup.subtree_control ||
                die "cannot enable cpu in $root/cgroup.subtree_control"
        grep -qw cpu "$slice/cgroup.subtree_control" || echo +cpu >"$slice/cgroup.subtree_control" ||
                die "cannot enable cpu in $slice/cgroup.subtree_control"
        saved_cap=$(<"$slice/cpu.max")
        echo "$cap $period" >"$slice/cpu.max" || die "cannot cap $slice/cpu.max"
else
        saved_cap="$(<"$slice/cpu.cfs_quota_us") $(<"$slice/cpu.cfs_period_us")"
        { echo $period >"$slice/cpu.cfs_period_us" && echo $cap >"$slice/cpu.cfs_quota_us"; } ||
                die "cannot cap $slice/cpu.cfs_quota_us"
fi

# ---- one run
wfile() { # FILE VALUE: writes or dies
        echo "$2" >"$1" 2>/dev/null || die "cannot write '$2' to $1"
}
group_setup() { # GROUP WEIGHT(1024 = default) IDLE QUOTA_USEC(0 = none)
        local g=$1 w=$2 idle=$3 q=$4
        [[ -d $g ]] || mkdir "$g" || die "cannot create $g"
        if ((v == 2)); then
                wfile "$g/cpu.weight" $((w * 100 / 1024))
                if ((q)); then wfile "$g/cpu.max" "$q $period"; else wfile "$g/cpu.max" "max $period"; fi
        else
                wfile "$g/cpu.shares" "$w"
                wfile "$g/cpu.cfs_period_us" $period
                if ((q)); then wfile "$g/cpu.cfs_quota_us" "$q"; else wfile "$g/cpu.cfs_quota_us" -1; fi
        fi
        if [[ -e $g/cpu.idle ]]; then
                wfile "$g/cpu.idle" "$idle"
        elif ((idle)); then
                die "this kernel has no $g/cpu.idle (5.15+)"
        fi
}
irqs() { # reschedule + function-call IPIs so far, all CPUs
        awk '$1 == "RES:" || $1 == "CAL:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i }
             END { print n + 0 }' /proc/interrupts
}
steal() { awk '$1 == "cpu" { print $9 + 0 }' /proc/stat; } # ticks (USER_HZ)
group_cpu() { # GROUP: CPU time of its threads so far, usec (schedstat sum_exec_runtime)
        local list=$1/tasks t c n=0
        ((v == 2)) && list=$1/cgroup.threads
        while read -r t; do
                read -r c _ 2>/dev/null </proc/"$t"/schedstat && n=$((n + c / 1000))
        done <"$list"
        echo $n
}

# run MODE [JOB_CPUS]: one run; sets loops, per, jcpu, jdelay, jpre, hops, rcpu, rdelay, ipi,
# stealpct, ring_run, share. Prints nothing.
run() {
        local mode=$1 rings=2 size=4 kind=proc batch='' ring_cpus=$cpus_csv job_cpus=${2:-$cpus_csv}
        local job_w=1024 ring_idle=0 ring_q=0 job_in=$job_g ring_secs i f i0 i1 s0 s1 r0 r1 t0 t1 l c d p
        case $mode in
        weight) job_w=10240 ;;
        idle) ring_idle=1 ;;
        quota) ring_q=$((period / 2)) ;;
        root) job_in=$root ;;
        threads) kind=thread ;;
        ring2) rings=1 size=2 ;;
        ring4) rings=1 size=4 ;;
        onecpu) ring_cpus=$last job_cpus=$last ;;
        ringcpu) ring_cpus=$last ;;
        batch) batch='batch' ;;
        esac
        group_setup "$job_g" "$job_w" 0 0
        group_setup "$ring_g" 1024 "$ring_idle" "$ring_q"
        ring_secs=$((secs + 8)) # a bound if this script dies: it stops them when the loops are done
        rm -f "$tmp"/burn.* "$tmp/ring"
        if [[ $mode != alone ]]; then
                (echo $BASHPID >"$ring_g/cgroup.procs" &&
                        exec taskset -c "$ring_cpus" "$bin/starve-load" ring $ring_secs $rings $size $kind $batch) \
                        >"$tmp/ring" &
                pids+=($!)
                if [[ $mode == anchor ]]; then
                        for c in $cpus; do
                                (echo $BASHPID >"$ring_g/cgroup.procs" &&
                                        exec taskset -c "$c" nice -n 19 "$bin/starve-load" burn $((secs + 8))) \
                                        >/dev/null &
                        done
                fi
                sleep 1 # the rings at full speed before the loops start
        fi
        [[ $mode != alone ]] && kill -USR1 "${pids[-1]}" # the rings count from here
        i0=$(irqs) s0=$(steal) r0=$(group_cpu "$ring_g") t0=${EPOCHREALTIME/./}
        for ((i = 0; i < ncpu; i++)); do
                (echo $BASHPID >"$job_in/cgroup.procs" &&
                        exec taskset -c "$job_cpus" "$bin/starve-load" burn "$secs") >"$tmp/burn.$i" &
                pids+=($!)
        done
        for ((i = 0; i < ncpu; i++)); do wait "${pids[-1 - i]}"; done
        i1=$(irqs) s1=$(steal) r1=$(group_cpu "$ring_g") t1=${EPOCHREALTIME/./}
        if [[ $mode != alone ]]; then
                kill -TERM "${pids[-1 - ncpu]}"
                wait "${pids[-1 - ncpu]}"
        fi
        pids=()
        loops=0 jcpu=0 jdelay=0 jpre=0 per=()
        for f in "$tmp"/burn.*; do
                read -r l c d p <"$f" || die "a busy loop reported nothing ($mode); see above"
                loops=$((loops + l)) jcpu=$((jcpu + c)) jdelay=$((jdelay + d)) jpre=$((jpre + p))
                per+=("$l")
        done
        hops=0 rcpu=0 rdelay=0 ring_run=1
        if [[ $mode != alone ]]; then
                read -r hops rcpu rdelay ring_run <"$tmp/ring" ||
                        die "the rings reported nothing ($mode)"
        fi
        ipi=$(((i1 - i0) / secs)) stealpct=$(((s1 - s0) * 100 / (secs * $(getconf CLK_TCK) * ncpu)))
        # The loops' share of what both groups used while the loops ran (CPUs each): 50% is
        # fair at equal weights, whatever the rest of the machine takes from the slice.
        share=$(awk -v j="$jcpu" -v s="$secs" -v r=$((r1 - r0)) -v w=$((t1 - t0)) \
                'BEGIN { j /= s * 1e6; r = w > 0 ? r / w : 0; printf "%.1f", (j + r > 0 ? 100 * j / (j + r) : 0) }')
        kill_group "$ring_g"
        remove_group "$ring_g"
        remove_group "$job_g"
        sleep 0.5
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b; else print "-" }'; }
declare -A base_loops=() base_eff=()
baseline() { # CPUSET: the loops' work alone on those CPUs (once)
        [[ -n ${base_loops[$1]:-} ]] && return 0
        run alone "$1"
        base_loops[$1]=$loops
        base_eff[$1]=$(awk -v l="$loops" -v c="$jcpu" 'BEGIN { printf "%.6f", (c > 0 ? l / c : 0) }')
        printf '%-8s loops %s (%s) on CPUs %s: CPU %s%%, preempted %d/s; IPIs %d/s\n' alone "$loops" \
                "${per[*]}" "$1" "$(pct "$jcpu" $((secs * ncpu * 1000000)))" $((jpre / secs)) "$ipi"
}

echo "$prog: cgroup v$v, kernel $(uname -r), CPUs $cpus_csv, slice capped at $cap/$period us, ${secs} s a run, load average $(cut -d" " -f1-3 /proc/loadavg)"
for mode in "${modes[@]}"; do
        set_cpus=$cpus_csv
        [[ $mode == onecpu ]] && set_cpus=$last
        if [[ $mode == alone ]]; then
                base_loops[$set_cpus]= # measure it again, and print it
                baseline "$set_cpus"
                continue
        fi
        baseline "$set_cpus"
        for ((r = 1; r <= runs; r++)); do
                run "$mode"
                eff=$(awk -v l="$loops" -v c="$jcpu" -v b="${base_eff[$set_cpus]}" \
                        'BEGIN { printf "%.0f", ((c > 0 && b > 0) ? 100 * l / c / b : 0) }')
                printf '%-8s work %5s%% of alone (loops %s); share %s%%; CPU %s%%, work/CPU %s%%, waited %s%%, preempted %d/s; rings %s hops/s, %s CPUs, %s us waited/hop; IPIs %d/s; steal %d%%\n' \
                        "$mode" "$(pct "$loops" "${base_loops[$set_cpus]}")" "${per[*]}" "$share" \
                        "$(pct "$jcpu" $((secs * ncpu * 1000000)))" "$eff" \
                        "$(pct "$jdelay" $((secs * ncpu * 1000000)))" $((jpre / secs)) \
                        "$(awk -v h="$hops" -v s="$ring_run" 'BEGIN { printf "%.0f", h * 1e6 / s }')" \
                        "$(awk -v c="$rcpu" -v s="$ring_run" 'BEGIN { printf "%.2f", c / s }')" \
                        "$(awk -v d="$rdelay" -v h="$hops" 'BEGIN { printf "%.1f", (h > 0 ? d / h : 0) }')" \
                        "$ipi" "$stealpct"
        done
done
