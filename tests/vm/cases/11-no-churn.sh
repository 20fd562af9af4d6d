#!/bin/bash
# vm: nodes=4 cpus=2
#
# No churn. (1) CPU-bound tasks already spread, one on each node: cgbalanced makes zero moves
# over 60 ticks. One a node, not two: every node then has an idle CPU, so node balancing runs
# every idle_node_multiplier ticks (not every busy_node_multiplier), the stricter test; and the
# emulated guest stays responsive with half its vCPUs idle. (2) An oscillating load that shifts
# between node 0 and node 1 every second (3 tasks on each, busy 1 s and idle 1 s, in opposite
# phases; 3 busy tasks overload a node of 2 CPUs while the other idles, so moves are wanted):
# the moves stay under the bound the configuration gives, min(tasks x (span /
# migrate_cooldown + 1), max_moves_per_tick x node balancing ticks).
#
# The tasks are placed with taskset, and override_foreign_affinity = yes lets the daemon move
# them all (see 10-node-imbalance.sh): zero moves is then the daemon's choice, not a task it may
# not touch. Short time scales: interval 200ms, so 60 ticks are 12 s.
set -u
. "$(dirname "$0")/../lib.sh"

TICKS=60
cgb_init 4
((${#CGB_NODES[@]} == 4)) || cgb_skip "written for 4 nodes, the guest has ${#CGB_NODES[@]}"

config() {
        cat <<CONF
[daemon]
interval = 200ms

[manage]
override_foreign_affinity = yes

[balance]
node_imbalance_hold = 400ms
migrate_cooldown = 5s
max_moves_per_tick = 1
CONF
}

# (1) already spread
pids=()
for n in "${CGB_NODES[@]}"; do
        cgb_busy_start spread 1 "$(cgb_node_cpus "$n")"
        pids+=("${CGB_LAST_PIDS[@]}")
done
sleep 1
before=$(cgb_node_counts "${pids[@]}")
cgb_say "spread: tasks per node $before, busy CPUs per node $(cgb_node_loads 2)"
[[ $before == 1/1/1/1 ]] || cgb_fail "tasks did not start one per node: $before"
cgb_daemon_start "$CGB_OUT/daemon-spread.log" <<<"$(config)"
cgb_say "cgbalanced: $(cgb_config_show interval node_imbalance_pct node_min_imbalance node_imbalance_hold max_moves_per_tick migrate_cooldown)"
start=$(cgb_daemon_tick)
cgb_daemon_wait_ticks "$TICKS"
moves=$(cgb_moves_count)
after=$(cgb_node_counts "${pids[@]}")
cgb_say "no churn: 4 tasks spread 1/1/1/1 -> $after, $moves moves in $(($(cgb_daemon_tick) - start)) ticks (want 0 in $TICKS)"
cgb_daemon_stop
((moves == 0)) || cgb_fail "$moves moves on a spread load: $(cgb_moves_list | tr '\n' ';')"
[[ $after == 1/1/1/1 ]] || cgb_fail "tasks per node $after after $TICKS ticks"
cgb_tasks_stop "${pids[@]}"

# (2) a load that shifts between node 0 and node 1 every second
cgb_osc_start osc 3 1000 1000 "$(cgb_node_cpus "${CGB_NODES[0]}")" 0
osc=("${CGB_LAST_PIDS[@]}")
cgb_osc_start osc 3 1000 1000 "$(cgb_node_cpus "${CGB_NODES[1]}")" 1000
osc+=("${CGB_LAST_PIDS[@]}")
cgb_daemon_start "$CGB_OUT/daemon-osc.log" <<<"$(config)"
start=$(cgb_daemon_tick)
cgb_daemon_wait_ticks "$TICKS"
end=$(cgb_daemon_tick)
moves=$(cgb_moves_count)
ticks=$((end - start + 1))
ms=$(cgb_interval_ms)
cooldown=$(cgb_duration_ms "$(cgb_config_get migrate_cooldown)")
cap=$(cgb_config_get max_moves_per_tick)
mult=$(cgb_config_get idle_node_multiplier)
# Each task moves at most once per cooldown: over span ms, span/cooldown + 1 times.
span=$((end * ms))
by_cooldown=$((${#osc[@]} * (span / cooldown + 1)))
by_cap=$((cap * ((end + mult - 1) / mult)))
bound=$((by_cooldown < by_cap ? by_cooldown : by_cap))
cgb_say "oscillating: ${#osc[@]} tasks, busy 1 s / idle 1 s, node 0 and node 1 in opposite phases, over $end ticks: tasks per node at the end $(cgb_node_counts "${osc[@]}")"
cgb_say "oscillating: moves in order (tick pid from->to): $(cgb_moves_list | awk '{ printf "%s%s %s %s->%s", (NR > 1 ? ", " : ""), $1, $2, $3, $4 }')"
cgb_say "no churn: oscillating load, $moves moves in $end ticks, bound $bound (${#osc[@]} tasks x (${span} ms / ${cooldown} ms cooldown + 1) = $by_cooldown, ${cap}/tick x ceil($end / multiplier $mult) = $by_cap)"
cgb_daemon_stop
((moves <= bound)) || cgb_fail "$moves moves, over the bound $bound"
problems=$(cgb_daemon_problems)
[[ -z $problems ]] || cgb_fail "cgbalanced logged problems: $problems"
exit 0
