#!/bin/bash
# vm: nodes=2 cpus=2
#
# Memory in the cost (issue 18): three CPU-bound tasks on node 0 (taskset, with
# override_foreign_affinity = yes: see 10-node-imbalance.sh), two of them holding 48 MiB each
# (touched there, so on node 0), the third only its shell's few MiB and the highest pid (the
# policy's last tie-break: without memory in the choice a heavy one would go). One move evens
# the nodes out, and any of the three makes the same balance: the light one must be the one that
# moves, the heavy ones stay with their memory. The case's shell and the daemon run on node 1,
# which has room for one task beside them.
set -u
. "$(dirname "$0")/../lib.sh"

WATCH_TICKS=15

cgb_init 2
((${#CGB_NODES[@]} == 2)) || cgb_skip "written for 2 nodes, the guest has ${#CGB_NODES[@]}"
node0=$(cgb_node_cpus "${CGB_NODES[0]}")
taskset -pc "$(cgb_node_cpus "${CGB_NODES[1]}")" $$ >/dev/null || cgb_fail "cannot pin the case to node 1"
heavy=()
for _ in 1 2; do
        # bash keeps the 48 MiB string it read: resident, first touched on node 0.
        cgb_task_start mem 'm=$(head -c 48M /dev/zero | tr "\0" x); while :; do :; done' "$node0"
        heavy+=("$CGB_TASK_PID")
done
cgb_busy_start mem 1 "$node0"
light=${CGB_LAST_PIDS[0]}
pids=("${heavy[@]}" "$light")
rss() { awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$1/status"; }
big() { (($(rss "${heavy[0]}") >= 48 && $(rss "${heavy[1]}") >= 48)); }
cgb_wait_until 60 big || cgb_fail "the heavy tasks hold $(rss "${heavy[0]}") and $(rss "${heavy[1]}") MiB, not 48"
before=$(cgb_node_counts "${pids[@]}")
[[ $before == 3/0 ]] || cgb_fail "tasks did not start all on node 0: $before"
n0mem() { awk -v n="N${CGB_NODES[0]}=" '{ for (i = 1; i <= NF; i++) if (index($i, n) == 1) { split($i, a, "="); s += a[2] } } END { print int(s * 4 / 1024) }' "/proc/$1/numa_maps"; }
cgb_say "heavy pids ${heavy[*]}: $(rss "${heavy[0]}") and $(rss "${heavy[1]}") MiB resident, $(n0mem "${heavy[0]}") and $(n0mem "${heavy[1]}") MiB on node 0; light pid $light: $(rss "$light") MiB"

cgb_daemon_start <<EOF2
[daemon]
interval = 200ms

[manage]
override_foreign_affinity = yes

[balance]
node_imbalance_hold = 400ms
max_moves_per_tick = 1
EOF2
one() { (($(cgb_moves_count) >= 1)); }
cgb_wait_until 120 one || cgb_say "(no move after 120 s)"
cgb_daemon_wait_ticks "$WATCH_TICKS"
after=$(cgb_node_counts "${pids[@]}")
cgb_daemon_stop
cgb_tasks_stop "${pids[@]}"
moved=$(cgb_moves_list | awk '{ print $2 }' | tr '\n' ' ')
grep '^cgbalanced: Moved pid' "$CGB_DAEMON_LOG" | sed 's/^cgbalanced: /  daemon: /'
cgb_say "memory: 3/0 -> $after; moved: ${moved:-none} (light $light, heavy ${heavy[*]})"
[[ $moved == "$light " ]] || cgb_fail "moved ${moved:-none}, not the light task $light alone"
[[ $after == 2/1 ]] || cgb_fail "tasks per node $after, not 2/1"
problems=$(cgb_daemon_problems)
[[ -z $problems ]] || cgb_fail "cgbalanced logged problems: $problems"
exit 0
