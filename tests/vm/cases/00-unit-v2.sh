#!/bin/bash
# vm: nodes=4 cpus=2
# The unit tests that touch real cgroups, CPUs and nodes, run where those are what the daemon is
# for: cgroup v2 with cpu and cpuset, four nodes. On a v1 or one-node host several of them skip;
# here they must run and pass. Prints each binary's counts, its skips with their reasons and its
# failures with their first diagnostics.
# Each binary runs the suites that read or change this machine (its cgroups, processes, sysfs);
# the suites over fixture trees (cgroup, cgroup_walk, cgroup_cpuset, sampler_fixture and the
# topology tests of a fixture root or a synthetic topology) read the same files on any host and
# run on the host in both builds. Under TCG they took 70 of this case's 121 s. Of test-actuator,
# the tests of cgroup files (weights, cpu.idle, cpu.max, cpusets), of memory and of nodes run
# here; its tests of affinity alone (masks, threads, the record) make the same syscalls on any
# host and run there in both builds (here they took 20 of the binary's 33-50 s).
set -u
bins=(
        "test-cgroup cgroup_live/*"
        "test-topology topology/system_*"
        "test-sampler sampler_live/*"
        "test-actuator actuator/@(*weight*|*idle*|*quota*|*lever*|*partition*|*cross_node*|*memory*|*cpuset*)"
)
bin_timeout=${CGB_UNIT_TIMEOUT:-200} # guest seconds per binary

cgroups() { find /sys/fs/cgroup -mindepth 1 -type d | sort; }

# A binary must remove the cgroups and end the processes it made; what it left is named (it fails
# the binary) and removed here, so the next binary and the next case start clean.
left_behind() {
        local b=$1 before=$2 new=() pids=() cg
        mapfile -t pids < <(pgrep -x "${b:0:15}")
        if [ "${#pids[@]}" -gt 0 ]; then
                echo "    $b left ${#pids[@]} processes running: ${pids[*]}"
                kill -KILL "${pids[@]}" 2>/dev/null
        fi
        mapfile -t new < <(cgroups | comm -13 "$before" - | sort -r)
        if [ "${#new[@]}" -gt 0 ]; then
                echo "    $b left cgroups: ${new[*]}"
                for cg in "${new[@]}"; do echo 1 >"$cg/cgroup.kill"; done 2>/dev/null
                sleep 0.2
                for cg in "${new[@]}"; do rmdir "$cg"; done
        fi
        [ "${#pids[@]}" -eq 0 ] && [ "${#new[@]}" -eq 0 ]
}

nodes=$(find /sys/devices/system/node -maxdepth 1 -name "node[0-9]*" | wc -l)
echo "machine: $(nproc) CPUs, $nodes nodes, cgroup2 controllers '$(cat /sys/fs/cgroup/cgroup.subtree_control)'"
if [ "$nodes" -lt 2 ] || ! grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control; then
        echo "this machine is not what the '# vm:' line asks for (nodes $nodes); refusing to judge"
        exit 1
fi

failed_bins=() total_pass=0 total_fail=0 total_skip=0
for entry in "${bins[@]}"; do
        read -r b filter <<<"$entry"
        exe=$CGB_BUILD/tests/$b
        if [ ! -x "$exe" ]; then
                echo "$b: missing: $exe is not built (make BUILD=... $exe)"
                failed_bins+=("$b")
                continue
        fi
        tap=$CGB_OUT/$b.tap
        cgroups >"$CGB_OUT/$b.cgroups-before"
        t0=$(date +%s)
        timeout -k 5 "$bin_timeout" "$exe" --jobs=1 --filter="$filter" --output=tap:"$tap" >"$CGB_OUT/$b.log" 2>&1
        rc=$?
        secs=$(($(date +%s) - t0))
        clean=1
        left_behind "$b" "$CGB_OUT/$b.cgroups-before" || clean=0
        if [ "$rc" -eq 124 ]; then
                echo "$b: timed out after $bin_timeout s (CGB_UNIT_TIMEOUT); the last tests it ran:"
                grep '^\[\(PASS\|FAIL\|SKIP\)\]' "$CGB_OUT/$b.log" | tail -n 3 | sed 's/^/    /'
                failed_bins+=("$b")
                continue
        fi
        if [ ! -s "$tap" ]; then
                echo "$b: wrote no TAP results (exit $rc); its output:"
                tail -n 20 "$CGB_OUT/$b.log" | sed 's/^/    /'
                failed_bins+=("$b")
                continue
        fi
        ok=$(grep -c '^ok ' "$tap")
        # Criterion lists the tests its filter left out as skipped, "test was skipped".
        other=$(grep -c '^ok .*# SKIP test was skipped$' "$tap")
        skip=$(($(grep -c '^ok .*# SKIP' "$tap") - other))
        ok=$((ok - other))
        fail=$(grep -c '^not ok' "$tap")
        pass=$((ok - skip))
        echo "$b $filter: $pass passed, $fail failed, $skip skipped ($secs s; $other left to the host)"
        grep '^ok .*# SKIP' "$tap" | grep -v '# SKIP test was skipped$' | sed 's/^ok - /    skipped: /'
        awk '/^not ok/ { n = 8; print "    FAILED: " $0; next } /^(ok|not ok)/ { n = 0 }
                n > 0 && /^ / { print "    " $0; n-- }' "$tap"
        total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
        [ $((ok + fail)) -eq 0 ] && echo "    no test matched '$filter'"
        if [ "$fail" -gt 0 ] || [ "$rc" -ne 0 ] || [ "$clean" -eq 0 ] || [ $((ok + fail)) -eq 0 ]; then
                [ "$fail" -eq 0 ] && echo "    exited $rc outside any test (see $b.log)"
                failed_bins+=("$b")
        fi
done

echo "unit tests on cgroup v2, $nodes nodes: $total_pass passed, $total_fail failed, $total_skip skipped"
if [ "${#failed_bins[@]}" -gt 0 ]; then
        echo "failing: ${failed_bins[*]}"
        exit 1
fi
