#!/bin/bash
# vm: nodes=4 cpus=2 dist=10,16,22,28;16,10,16,22;22,16,10,16;28,22,16,10
#
# Unequal distances: from node 0, node 1 is at 16, node 2 at 22, node 3 at 28. 6 CPU-bound
# tasks start on node 0 (taskset, with override_foreign_affinity = yes: see
# 10-node-imbalance.sh) and cgbalanced moves one a tick (max_moves_per_tick = 1). Tasks leaving
# node 0 must go to the nearer nodes first: the farthest node (3) gets its first task last,
# and node 1 gets its first before node 2. Prints the destinations in move order. This script
# (and so the daemon it starts) runs pinned to node 0, the source, so that the destinations are
# idle; the policy counts loads within a tenth of a CPU as equal and then prefers the nearer.
set -u
. "$(dirname "$0")/../lib.sh"

cgb_init 4
((${#CGB_NODES[@]} == 4)) || cgb_skip "written for 4 nodes, the guest has ${#CGB_NODES[@]}"
dist=$(tr '\n' ' ' </sys/devices/system/node/node0/distance)
cgb_say "distances from node 0: $dist"
[[ $dist == "10 16 22 28 " ]] || cgb_skip "the guest's distances from node 0 are $dist, not 10 16 22 28"

taskset -pc "$(cgb_node_cpus "${CGB_NODES[0]}")" $$ >/dev/null || cgb_fail "cannot pin the case to node 0"
cgb_busy_start far 6 "$(cgb_node_cpus "${CGB_NODES[0]}")"
pids=("${CGB_LAST_PIDS[@]}")
sleep 1
before=$(cgb_node_counts "${pids[@]}")
cgb_say "before: tasks per node $before"
[[ $before == 6/0/0/0 ]] || cgb_fail "tasks did not start all on node 0: $before"

cgb_daemon_start <<EOF2
[daemon]
interval = 200ms

[manage]
override_foreign_affinity = yes

[balance]
node_imbalance_hold = 400ms
max_moves_per_tick = 1
EOF2
cgb_say "cgbalanced: $(cgb_config_show interval node_imbalance_pct node_min_imbalance node_imbalance_hold max_moves_per_tick)"
# 6/0/0/0 -> 3/1/1/1 (a gap of 2 is within "auto"), then 2/2/1/1 (node 0 overloaded, node 1
# has an idle CPU): 4 moves.
spread() { (($(cgb_moves_count) >= 4)); }
cgb_wait_until 120 spread || cgb_say "(only $(cgb_moves_count) moves after 120 s)"
cgb_daemon_wait_ticks 5
order=$(cgb_moves_list | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $4 }')
after=$(cgb_node_counts "${pids[@]}")
cgb_say "moves in order (tick pid from->to): $(cgb_moves_list | awk '{ printf "%s%s %s %s->%s", (NR > 1 ? ", " : ""), $1, $2, $3, $4 }')"
cgb_say "distances: destinations in move order: $order (node 1 at 16, node 2 at 22, node 3 at 28); after: $after"
cgb_daemon_stop
# The position of each node's first arrival.
first() { awk -v n="$1" '{ for (i = 1; i <= NF; i++) if ($i == n) { print i; exit } } END { if (!NR) print 0 }' <<<"$order"; }
f1=$(first 1) f2=$(first 2) f3=$(first 3)
[[ -n $f1 && -n $f2 && -n $f3 ]] || cgb_fail "not every node got a task: $order"
((f1 < f2 && f2 < f3)) ||
        cgb_fail "first arrivals at move $f1 (node 1), $f2 (node 2), $f3 (node 3): not nearest first"
cgb_say "distances: first task on node 1 at move $f1, node 2 at move $f2, node 3 (farthest) at move $f3"
exit 0
