#!/bin/bash
# vm: nodes=4 cpus=2
#
# schedbench (seed 002's numa_test) inside the guest with cgbalanced off, then on: each run's
# per-node residency table (start node iSched, most-used node MSched, '*' where they differ) and
# a summary line (tasks, mismatches, the daemon's cross-node moves from its log).
# Timings in an emulated guest mean nothing, so none is asserted; what is: both runs complete,
# each table has one row per task with a column per online node, every task's start and
# most-used nodes are online nodes, and with the daemon on its log shows its ticks and every
# cross-node move it made went to an online node, with that node's CPUs as the mask.
# Size: one task per CPU and small arrays, so that a run takes seconds of emulated time; no
# hackbench 20 beside them (--no-disturb): its 800 processes take minutes under emulation.
set -u
. "$(dirname "$0")/../lib.sh"

SIZE=${CGB_SB_SIZE:-50000} # elements per array: about 1 MB a task
SWEEPS=${CGB_SB_SWEEPS:-200}

cgb_init 2
tasks=$((${#CGB_NODES[@]} * ${VM_CPUS_PER_NODE:-2}))
online_nodes=" $(cgb_cpulist_expand "$(</sys/devices/system/node/online)") "
# loadgen makes cgbalance.slice if it is not there; it is the case's to remove then.
[[ -d $CGB_SLICE ]] || cgb_on_cleanup "rmdir $CGB_SLICE 2>/dev/null"

# Runs schedbench labelled $1; its table in CGB_OUT/schedbench-$1.txt, its JSON beside it.
run_schedbench() {
        local label=$1 out=$CGB_OUT/schedbench-$1.txt t0=$SECONDS
        "${CGB_NICE0[@]}" "$CGB_BUILD/loadgen" schedbench --tasks "$tasks" --size "$SIZE" --sweeps "$SWEEPS" \
                --no-disturb --label "$label" \
                --json="$CGB_OUT/schedbench-$label.json" >"$out" 2>"$CGB_OUT/schedbench-$label.err" ||
                cgb_fail "loadgen schedbench ($label) failed: $(tail -n 3 "$CGB_OUT/schedbench-$label.err")"
        cgb_say "schedbench $label: $tasks tasks x $SIZE elements x $SWEEPS sweeps, done in $((SECONDS - t0)) s of guest time"
}

# Prints the residency table of run $1 and checks its rows; sets mismatches.
check_table() {
        local label=$1 out=$CGB_OUT/schedbench-$1.txt header rows bad
        header=$(grep '^Job ' "$out") || cgb_fail "$label: no residency table in $out"
        sed -n '/^Job /,/^Mismatches:/p' "$out"
        # One column per online node, in order.
        [[ $(echo "$header" | grep -o 'node[0-9]*' | sed 's/node0*\([0-9]\)/\1/' | tr '\n' ' ') == "${online_nodes# }" ]] ||
                cgb_fail "$label: table columns '$header' are not the online nodes${online_nodes% }"
        rows=$(sed -n '/^Job /,/^Mismatches:/p' "$out" | grep -c '^ *[0-9]')
        ((rows == tasks)) || cgb_fail "$label: $rows rows in the table, not $tasks"
        # Each row: the shares add up to 100, iSched and MSched are online nodes, '*' iff they differ.
        bad=$(sed -n '/^Job /,/^Mismatches:/p' "$out" | grep '^ *[0-9]' | awk -v online="$online_nodes" -v n="${#CGB_NODES[@]}" '
                { split($0, half, "|"); split(half[1], a, " "); split(half[2], b, " ")
                  sum = 0; for (i = 2; i <= n + 1; i++) sum += a[i]
                  if (sum < 99 || sum > 101) { print "job " a[1] ": shares add up to " sum; next }
                  if (index(online, " " b[1] " ") == 0 || index(online, " " b[2] " ") == 0) {
                          print "job " a[1] ": iSched " b[1] " MSched " b[2] " not both online nodes"; next }
                  if ((b[1] != b[2]) != (b[3] == "*")) print "job " a[1] ": mismatch mark wrong" }')
        [[ -z $bad ]] || cgb_fail "$label: $bad"
        mismatches=$(sed -n 's/^Mismatches: \([0-9]*\) of \([0-9]*\);.*/\1/p' "$out")
        [[ -n $mismatches ]] || cgb_fail "$label: no Mismatches line in $out"
        local marked
        marked=$(sed -n '/^Job /,/^Mismatches:/p' "$out" | grep -c '| *[0-9-]* *[0-9-]* \* |')
        ((marked == mismatches)) || cgb_fail "$label: $marked rows marked '*', the line says $mismatches"
}

# ---- off
run_schedbench off
check_table off
off_mismatches=$mismatches

# ---- on
cgb_daemon_start <<EOF
[daemon]
interval = 250ms

[balance]
node_imbalance_hold = 500ms
EOF
ticks0=$(cgb_daemon_tick)
run_schedbench on
cgb_daemon_wait_ticks 1
ticks=$(($(cgb_daemon_tick) - ticks0))
cgb_daemon_stop
check_table on
on_mismatches=$mismatches
moves=$(cgb_moves_count)
all_moves=$(grep -c '^cgbalanced: Moved pid ' "$CGB_DAEMON_LOG")
moved=$(cgb_moves_list | awk '{ printf "%s%s->%s", (NR > 1 ? ", " : ""), $3, $4 }')
cgb_say "daemon: $ticks ticks during the run, $all_moves moves logged, $moves across nodes${moved:+: $moved}"

# Every move went to an online node, with that node's CPUs (or some of them) as the mask.
bad=
while read -r line; do
        [[ -n $line ]] || continue
        to=$(sed -n 's/.* node [0-9]* -> \([0-9]*\), CPUs \([0-9,-]*\):.*/\1 \2/p' <<<"$line")
        read -r node cpus <<<"$to"
        [[ -n $node ]] || { bad+=" unparsed: $line;"; continue; }
        [[ $online_nodes == *" $node "* ]] || { bad+=" to offline node $node;"; continue; }
        for c in $(cgb_cpulist_expand "$cpus"); do
                [[ ${CGB_CPU_NODE[c]:-} == "$node" ]] || bad+=" CPU $c is not on node $node;"
        done
done <<<"$(grep '^cgbalanced: Moved pid ' "$CGB_DAEMON_LOG")"
[[ -z $bad ]] || cgb_fail "moves:$bad"
((ticks >= 2)) || cgb_fail "the daemon logged $ticks ticks during the run"

cgb_say "schedbench off: $tasks tasks, $off_mismatches mismatches, no daemon"
cgb_say "schedbench on:  $tasks tasks, $on_mismatches mismatches, $moves cross-node moves (daemon log)"
exit 0
