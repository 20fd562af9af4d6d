#!/bin/bash
# vm: nodes=4 cpus=2 dist=10,16,22,28;16,10,16,22;22,16,10,16;28,22,16,10
#
# Unequal distances: from node 0, node 1 is at 16, node 2 at 22, node 3 at 28. 6 CPU-bound
# tasks start on node 0 (taskset, with override_foreign_affinity = yes: see
# 10-node-imbalance.sh) and cgbalanced moves one a tick (max_moves_per_tick = 1). Nearest room
# first: a task waiting on node 0 goes to the nearest node with an idle CPU, so node 1 takes two,
# then node 2 two, and node 3 (the farthest) none: every task has a CPU without going that far,
# 2/2/2/0 in the 4 moves that takes. Prints the destinations in move order. This script (and so
# the daemon it starts) runs pinned to node 3, which then has room too (they use 0.5-0.8 of a CPU
# under emulation; see 14-nearest-room.sh): room nearer must still come first.
set -u
. "$(dirname "$0")/../lib.sh"

cgb_init 4
((${#CGB_NODES[@]} == 4)) || cgb_skip "written for 4 nodes, the guest has ${#CGB_NODES[@]}"
dist=$(tr '\n' ' ' </sys/devices/system/node/node0/distance)
cgb_say "distances from node 0: $dist"
[[ $dist == "10 16 22 28 " ]] || cgb_skip "the guest's distances from node 0 are $dist, not 10 16 22 28"

taskset -pc "$(cgb_node_cpus "${CGB_NODES[3]}")" $$ >/dev/null || cgb_fail "cannot pin the case to node 3"
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
# 6/0/0/0 -> 5/1/0/0 -> 4/2/0/0 -> 3/2/1/0 -> 2/2/2/0: 4 moves, then no task waits.
spread() { (($(cgb_moves_count) >= 4)); }
cgb_wait_until 120 spread || cgb_say "(only $(cgb_moves_count) moves after 120 s)"
cgb_daemon_wait_ticks 15
order=$(cgb_moves_list | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $4 }')
after=$(cgb_node_counts "${pids[@]}")
cgb_say "moves in order (tick pid from->to): $(cgb_moves_list | awk '{ printf "%s%s %s %s->%s", (NR > 1 ? ", " : ""), $1, $2, $3, $4 }')"
cgb_say "distances: destinations in move order: $order (node 1 at 16, node 2 at 22, node 3 at 28); after: $after"
cgb_daemon_stop
cgb_tasks_stop "${pids[@]}"
[[ $order == "1 1 2 2" ]] || cgb_fail "destinations in move order $order, not 1 1 2 2 (the nearest room first)"
[[ $after == 2/2/2/0 ]] || cgb_fail "tasks per node $after, not 2/2/2/0"
cgb_say "distances: node 1 filled first, then node 2; node 3 (farthest) none, with every task on a CPU of its own"
exit 0
