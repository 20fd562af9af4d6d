#!/bin/bash
# vm: nodes=2 cpus=2
#
# The escalation ladder on cgroup v2 (issue 17): a protected group that stays pressed with its
# weight at weight_max gets steps on the group that contends with it, and loses them in reverse
# once its pressure is gone; SIGTERM puts back what is up, and after a SIGKILL the next start puts
# it back from the record. Every figure is read from the cgroup files (cpu.idle, cpu.max,
# cpu.weight), the reasons from the daemon's log.
#
# As in 20-weights, both groups share one CPU by their cpuset: one protected busy task, three
# noisy ones, so the protected task waits about three quarters of the time at equal weights and
# still half of it at weight_max 200. Two runs, one per lever:
#   idle:  cpu.idle 0 -> 1 on the noisy group; its task stopped (SIGSTOP, no pressure), 1 -> 0;
#          up again, then SIGTERM: cpu.idle 0, the weight at its base.
#   quota: cpu.max from max down to the floor (10% of a CPU, halving from half the group's use);
#          the task stopped, back up by doubling while it binds, then lifted; up again, SIGKILL:
#          the limit outlives the daemon; a start with no protected group puts it back.
# On the way up the idle run may step back while cpu.idle holds the pressure under half the
# target, and up again: that is the ladder's hysteresis, not a fault; the case waits for states.
set -u
. "$(dirname "$0")/../lib.sh"

NOISY=3
WAIT=60 # seconds for one state (an emulated guest is slow)

cgb_init
cgb_one_cpu_groups lad-prot lad-noisy
prot=$CGB_PROT noisy=$CGB_NOISY
[[ -e $noisy/cpu.idle ]] || cgb_skip "no cpu.idle in $noisy (kernel before 5.15)"
cgb_busy_start lad-prot 1
ptask=$CGB_TASK_PID
cgb_busy_start lad-noisy "$NOISY"
base=$(<"$prot/cpu.weight")
max0=$(<"$noisy/cpu.max")
[[ $(<"$noisy/cpu.idle") == 0 && $max0 == max* ]] ||
        cgb_fail "the noisy group starts with cpu.idle $(<"$noisy/cpu.idle") and cpu.max $max0"

config() {
        cat <<EOF
[daemon]
interval = 250ms

[balance]
max_moves_per_tick = 0

[weights]
protected_cgroups = cgbalance.slice/lad-prot
pressure_target = 10
pressure_hold = 0
weight_step = 100
weight_max = 200

[escalation]
escalate_hold = 500ms
escalate_steps = $1
quota_floor = 10
EOF
}

idle_is() { [[ $(<"$noisy/cpu.idle") == "$1" ]]; }
quota_lifted() { [[ $(<"$noisy/cpu.max") == max* ]]; }
quota_at_floor() { # 10% of a CPU: a tenth of the period
        local q p
        read -r q p <"$noisy/cpu.max"
        [[ $q != max ]] && ((q * 10 <= p))
}
levers() { printf 'cpu.idle %s, cpu.max "%s", protected cpu.weight %s' \
        "$(<"$noisy/cpu.idle")" "$(<"$noisy/cpu.max")" "$(<"$prot/cpu.weight")"; }
# The daemon's lever lines, "Set cpu.idle of ... 0 -> 1" / "Set the CPU quota of ... A -> B".
lever_steps() {
        sed -n 's/^cgbalanced: Set \(cpu.idle\|the CPU quota\) of [^ ]* \([0-9]* -> [0-9]*\).*/\2/p' \
                "$CGB_DAEMON_LOG" | paste -sd, -
}
at_base() { idle_is 0 && quota_lifted && [[ $(<"$prot/cpu.weight") == "$base" ]]; }

# ---- idle: up, down, up, SIGTERM
cgb_daemon_start "$CGB_OUT/daemon-idle.log" <<<"$(config idle)"
cgb_say "cgbalanced: $(cgb_config_show interval pressure_target pressure_hold weight_step weight_max escalate_hold escalate_steps quota_floor)"
cgb_wait_until "$WAIT" idle_is 1 || cgb_fail "no cpu.idle on the noisy group within $WAIT s: $(levers)"
up=$(grep -m 1 '^cgbalanced: Set cpu.idle of ' "$CGB_DAEMON_LOG")
cgb_say "idle up: $(levers); ${up#cgbalanced: }"
[[ $up == *"for cgbalance.slice/lad-prot"* ]] || cgb_fail "the step is not for the protected group: $up"
kill -STOP "$ptask"
cgb_wait_until "$WAIT" idle_is 0 || cgb_fail "cpu.idle still 1 $WAIT s after the protected task stopped"
cgb_say "idle down (protected task stopped): $(levers)"
kill -CONT "$ptask"
cgb_wait_until "$WAIT" idle_is 1 || cgb_fail "no cpu.idle again within $WAIT s: $(levers)"
idle_steps=$(lever_steps)
cgb_daemon_stop
cgb_say "idle SIGTERM: $(levers); steps $idle_steps"
at_base || cgb_fail "SIGTERM did not put back cpu.idle and the weight: $(levers), base weight $base"

# ---- quota: down to the floor, back up to lifted, down again, SIGKILL, reconcile
cgb_daemon_start "$CGB_OUT/daemon-quota.log" <<<"$(config quota)"
cgb_wait_until "$WAIT" quota_at_floor || cgb_fail "no cpu.max at the floor within $WAIT s: $(levers)"
cgb_say "quota up: $(levers); steps $(lever_steps)"
downs=$(grep -c '^cgbalanced: Set the CPU quota of ' "$CGB_DAEMON_LOG")
kill -STOP "$ptask"
cgb_wait_until "$WAIT" quota_lifted || cgb_fail "cpu.max still set $WAIT s after the protected task stopped: $(levers)"
kill -CONT "$ptask"
cgb_say "quota back (protected task stopped): $(levers); steps $(lever_steps)"
((downs >= 1)) || cgb_fail "no quota step logged on the way up"
cgb_wait_until "$WAIT" quota_at_floor || cgb_fail "no cpu.max again within $WAIT s: $(levers)"
kill -KILL "$CGB_DAEMON_PID"
wait "$CGB_DAEMON_PID" 2>/dev/null
CGB_DAEMON_PID=
killed=$(levers)
quota_at_floor || cgb_fail "SIGKILL cannot put back a limit, yet it is gone: $killed"
cgb_say "quota SIGKILL: $killed"
cgb_daemon_start "$CGB_OUT/daemon-calm.log" <<EOF
[daemon]
interval = 250ms

[balance]
max_moves_per_tick = 0
EOF
put_back=$(cgb_daemon_put_back)
cgb_say "restart with no protected group: put back ${put_back:-none}; $(levers)"
at_base || cgb_fail "the restart did not put back the limit and the weight: $(levers), base weight $base"
((${put_back:-0} >= 2)) || cgb_fail "the restart says it put back ${put_back:-0} changes, want the limit and the weight"
cgb_daemon_stop
problems=
for CGB_DAEMON_LOG in "$CGB_OUT"/daemon-{idle,quota,calm}.log; do problems+=$(cgb_daemon_problems); done
[[ -z $problems ]] || cgb_fail "cgbalanced logged problems: $problems"
cgb_say "ladder: idle 0 -> 1 -> 0 -> 1, SIGTERM back to 0; quota max -> floor -> max -> floor, SIGKILL kept, restart put back ${put_back:-0}"
exit 0
