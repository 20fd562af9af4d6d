#!/bin/bash
# vm: nodes=4 cpus=2
#
# Restore: after cgbalanced moved tasks (sched_setaffinity) and raised a weight (cpu.weight),
# SIGTERM puts every mask and weight back; and after a SIGKILL, the next start reconciles from
# the record it keeps in its state_directory (lib.sh gives each case its own; the default is
# /run/cgbalance). Everything is checked from outside: masks with sched_getaffinity (taskset -p),
# weights from each group's cpu.weight file, against what they were before the daemon ran.
#
# What it changes: 4 busy tasks pinned to node 0's CPUs (taskset, as in 10-node-imbalance; the
# daemon may fix them: override_foreign_affinity = yes) get moved to other nodes; a protected
# group sharing one CPU with a noisy group (as in 20-weights) gets more weight.
# The restart after the SIGKILL runs with moves and weights off (max_moves_per_tick = 0, no
# protected_cgroups), so whatever is back while it runs was put back by the reconcile alone.
set -u
. "$(dirname "$0")/../lib.sh"

cgb_init 2
node0=$(cgb_node_cpus "${CGB_NODES[0]}")
cpu=$(cgb_cpulist_expand "$(cgb_node_cpus "${CGB_NODES[-1]}")")
cpu=${cpu%% *}

cgb_busy_start wts-rs-imb 4 "$node0"
pids=("${CGB_LAST_PIDS[@]}")
cgb_group_create wts-rs-prot
prot=$CGB_GROUP_DIR
cgb_group_create wts-rs-noisy
noisy=$CGB_GROUP_DIR
for g in "$prot" "$noisy"; do
        echo "$cpu" >"$g/cpuset.cpus" || cgb_fail "cannot write $cpu to $g/cpuset.cpus"
done
cgb_busy_start wts-rs-prot 1
pids+=("${CGB_LAST_PIDS[@]}")
cgb_busy_start wts-rs-noisy 3
pids+=("${CGB_LAST_PIDS[@]}")
groups=("${CGB_GROUPS[@]}")

# What the daemon must put back.
declare -A mask0=() weight0=()
for pid in "${pids[@]}"; do mask0[$pid]=$(cgb_task_affinity "$pid"); done
for g in "${groups[@]}"; do weight0[$g]=$(<"$g/cpu.weight"); done
cgb_say "start: ${#pids[@]} tasks (4 pinned to node 0's CPUs $node0, 4 confined to CPU $cpu), ${#groups[@]} groups, weights $(for g in "${groups[@]}"; do printf '%s=%s ' "${g#"$CGB_CGROOT"/}" "${weight0[$g]}"; done)"

# Compares with the start: sets n_masks, n_weights (how many differ) and what (a description).
diff_state() {
        local pid g m w
        n_masks=0 n_weights=0 what=
        for pid in "${pids[@]}"; do
                m=$(cgb_task_affinity "$pid")
                [[ -n $m ]] || cgb_fail "task $pid is gone"
                if [[ $m != "${mask0[$pid]}" ]]; then
                        n_masks=$((n_masks + 1)) what+=" pid $pid ${mask0[$pid]}->$m"
                fi
        done
        for g in "${groups[@]}"; do
                w=$(<"$g/cpu.weight")
                if [[ $w != "${weight0[$g]}" ]]; then
                        n_weights=$((n_weights + 1)) what+=" ${g#"$CGB_CGROOT"/} ${weight0[$g]}->$w"
                fi
        done
}
changed_enough() { diff_state; ((n_masks >= 1 && n_weights >= 1)); }
# Waits until the daemon has moved a task and changed a weight.
wait_for_changes() {
        cgb_wait_until 40 changed_enough ||
                cgb_fail "within 40 s the daemon changed only $n_masks masks and $n_weights weights:${what:- nothing}"
}
config() {
        cat <<EOF
[daemon]
interval = 250ms

[manage]
override_foreign_affinity = yes

[balance]
node_imbalance_hold = 500ms

[weights]
protected_cgroups = cgbalance.slice/wts-rs-prot
pressure_hold = 1s
weight_step = 100

# Masks and weights only: the ladder's steps and their restore are 23-ladder's. Left on, a slow
# guest's SIGKILL came 3 s after weight_max and cpu.idle on the noisy group (its cpu.weight then
# reads 0) was counted a weight the record lacked.
[escalation]
escalate = no
EOF
}
# The daemon's own count of what SIGTERM put back, from its log ($1).
restored_logged() { sed -n 's/^cgbalanced: Restored \([0-9]*\) changed masks and weights\./\1/p' "$1" | tail -n 1; }

# ---- 1: SIGTERM
cgb_daemon_start "$CGB_OUT/daemon-1.log" <<<"$(config)"
wait_for_changes
cgb_say "run 1 changed: $n_masks masks and $n_weights weights:$what"
changed=$((n_masks + n_weights))
cgb_daemon_stop
logged=$(restored_logged "$CGB_DAEMON_LOG")
diff_state
cgb_say "run 1 SIGTERM: $((changed - n_masks - n_weights)) of $changed restored (masks by sched_getaffinity, weights by cpu.weight); the daemon logged ${logged:-no count of} restores"
((n_masks + n_weights == 0)) || cgb_fail "after SIGTERM $n_masks masks and $n_weights weights are not back:$what"
[[ -n $logged ]] && ((logged >= changed)) ||
        cgb_fail "the daemon logged ${logged:-no} restores for the $changed changes seen"

# ---- 2: SIGKILL, then a restart reconciles from the record
record=$CGB_TMP/state/changes
# The kill lands where the record and the protected group's cpu.weight agree: stopped in the
# window between writing the record (the next value first) and writing cpu.weight, the daemon
# leaves a record whose value the group does not have, and the next start, seeing a weight that
# is not the one it set, leaves it as someone else's (a known defect, for the reliability
# issue: the record keeps one value per attribute). SIGSTOP, compare, SIGKILL or go on.
record_agrees() {
        local set
        kill -STOP "$CGB_DAEMON_PID"
        set=$(sed -n 's|^cgroup [0-9]* \([0-9]*\) cgbalance.slice/wts-rs-prot$|\1|p' "$record" 2>/dev/null)
        [[ -n $set && $set == "$(<"$prot/cpu.weight")" ]] && return 0
        kill -CONT "$CGB_DAEMON_PID"
        return 1
}
cgb_daemon_start "$CGB_OUT/daemon-2.log" <<<"$(config)"
wait_for_changes
cgb_wait_until 20 record_agrees || cgb_fail "the record never agreed with the protected group's weight"
kill -KILL "$CGB_DAEMON_PID"
wait "$CGB_DAEMON_PID" 2>/dev/null
CGB_DAEMON_PID=
diff_state
killed_masks=$n_masks killed_weights=$n_weights
[[ -s $record ]] || cgb_fail "no record at $record after the SIGKILL"
rec_tasks=$(grep -c '^task ' "$record") rec_groups=$(grep -c '^cgroup ' "$record")
cgb_say "run 2 SIGKILL: left $killed_masks masks and $killed_weights weights changed:$what; record $record: $rec_tasks tasks, $rec_groups groups"
((killed_masks >= 1 && killed_weights >= 1)) ||
        cgb_fail "the changes did not outlive the SIGKILL (a restore without the daemon?)"
((rec_tasks >= killed_masks && rec_groups >= killed_weights)) ||
        cgb_fail "the record holds $rec_tasks tasks and $rec_groups groups, fewer than changed"

cgb_daemon_start "$CGB_OUT/daemon-3.log" <<EOF
[daemon]
interval = 250ms

[balance]
max_moves_per_tick = 0
EOF
found=$(grep -m1 '^cgbalanced: Found the record of a previous run' "$CGB_DAEMON_LOG")
put_back=$(cgb_daemon_put_back)
diff_state
cgb_say "run 3 (restart, moves and weights off): ${found#cgbalanced: }; put back ${put_back:-none}; now $n_masks masks and $n_weights weights differ from the start${what:+:$what}"
[[ -n $found ]] || cgb_fail "the restart did not read the record"
((n_masks + n_weights == 0)) || cgb_fail "the restart did not put back $n_masks masks and $n_weights weights:$what"
((${put_back:-0} == killed_masks + killed_weights)) ||
        cgb_fail "the restart says it put back ${put_back:-0} changes, $((killed_masks + killed_weights)) were left"
cgb_daemon_stop
diff_state
rec_left=$(grep -c '^\(task\|cgroup\) ' "$record" 2>/dev/null)
cgb_say "run 3 SIGTERM: $n_masks masks and $n_weights weights differ from the start; record entries left: ${rec_left:-0}"
((n_masks + n_weights == 0)) || cgb_fail "after the restart's stop $n_masks masks and $n_weights weights differ:$what"
((${rec_left:-0} == 0)) || cgb_fail "the record still lists $rec_left changes after a clean stop"
cgb_say "restore: SIGTERM put back $changed of $changed changes; after SIGKILL the restart reconciled $put_back of $((killed_masks + killed_weights)) from its record"
exit 0
