#!/bin/bash
# vm: nodes=4 cpus=2
#
# Weights: a protected group under CPU pressure gets more cpu.weight from cgbalanced, and its
# pressure falls. The weight is read from the group's cpu.weight file, the pressure from its
# cpu.pressure "some total=" (stall usec) over a window, not from avg10, which lags by seconds.
#
# Why both groups share one CPU (their cpuset): CFS balances groups by their per-CPU weight
# share, so on 8 CPUs the kernel gives a few protected tasks CPUs of their own and crowds the
# noisy ones onto the rest; the protected group then shows little pressure (measured here:
# 4 protected beside 16 noisy tasks on 8 CPUs, 14% "some", and no weight could lower it much).
# Two protected tasks on one CPU would stall each other whatever the weight. So: one CPU, one
# protected busy task, three noisy ones. At equal weights the groups split the CPU 50/50 and the
# protected task waits half the time; at weight W against 100 it gets W/(W+100) and waits
# 100/(W+100). The cpuset keeps every task of the case on one emulated CPU, so the others stay
# free for the guest's own work. Node balancing stays on (defaults): a task confined by its
# cpuset is never moved out of it, so every change seen here is a weight.
set -u
. "$(dirname "$0")/../lib.sh"

NOISY=3
WINDOW=3 # seconds per measuring window
SETTLE_MAX=40 # seconds for the weight to settle

cgb_init
cgb_one_cpu_groups wts-prot wts-noisy
prot=$CGB_PROT noisy=$CGB_NOISY cpu=$CGB_ONE_CPU
cgb_busy_start wts-prot 1
cgb_busy_start wts-noisy "$NOISY"
sleep 1

# Measures the protected group over WINDOW s: sets some_pm (stall share, per mille), share_pm
# (its share of the two groups' CPU time, per mille), w0 and w1 (its cpu.weight before, after).
measure() {
        local t0 t1 s0 s1 p0 p1 n0 n1
        w0=$(<"$prot/cpu.weight")
        t0=${EPOCHREALTIME/./} s0=$(cgb_cg_psi_some_usec "$prot")
        p0=$(cgb_cg_usage_usec "$prot") n0=$(cgb_cg_usage_usec "$noisy")
        sleep "$WINDOW"
        t1=${EPOCHREALTIME/./} s1=$(cgb_cg_psi_some_usec "$prot")
        p1=$(cgb_cg_usage_usec "$prot") n1=$(cgb_cg_usage_usec "$noisy")
        w1=$(<"$prot/cpu.weight")
        some_pm=$(((s1 - s0) * 1000 / (t1 - t0)))
        share_pm=$(((p1 - p0) * 1000 / (p1 - p0 + n1 - n0 + 1)))
}
pm() { printf '%d.%d%%' $(($1 / 10)) $(($1 % 10)); }

measure
[[ $w0 == "$w1" ]] || cgb_fail "the protected group's weight changed without the daemon: $w0 -> $w1"
base=$w0 some_before=$some_pm share_before=$share_pm
cgb_say "before (no daemon): weight $base, cpu.pressure some $(pm "$some_before") of ${WINDOW} s, CPU share $(pm "$share_before") (1 protected and $NOISY noisy busy tasks on CPU $cpu)"
((some_before >= 200)) ||
        cgb_fail "the protected group is not under pressure to begin with ($(pm "$some_before") < 20%): the case proves nothing"

# The weight as the daemon raises it, sampled from outside every 0.2 s from before its start.
trace_file=$CGB_TMP/weight-trace
(
        last=
        while :; do
                w=$(<"$prot/cpu.weight")
                [[ $w == "$last" ]] || echo "$w"
                last=$w
                sleep 0.2
        done
) >"$trace_file" &
tracer=$!
cgb_on_cleanup "kill $tracer 2>/dev/null; wait $tracer 2>/dev/null"
t_start=$SECONDS
cgb_daemon_start <<EOF
[daemon]
interval = 250ms

[weights]
protected_cgroups = cgbalance.slice/wts-prot
pressure_hold = 1s
weight_step = 100

# The weight alone: this case checks the weight and that an unprotected group is left alone;
# past weight_max the ladder would give the noisy group cpu.idle (cpu.weight then reads 0).
[escalation]
escalate = no
EOF
target=$(cgb_config_get pressure_target)
wmax=$(cgb_config_get weight_max)
cgb_say "cgbalanced: protected_cgroups $(cgb_config_get protected_cgroups), pressure_target $target%, pressure_hold $(cgb_config_get pressure_hold), weight_step $(cgb_config_get weight_step), weight_max $wmax, interval $(cgb_config_get interval)"

# Settled: at weight_max, or no change for 3 s (pressure between its marks).
last=$(<"$prot/cpu.weight") since=$SECONDS
settled() {
        local w
        w=$(<"$prot/cpu.weight")
        [[ $w == "$last" ]] || last=$w since=$SECONDS
        ((w > base && (w >= wmax || SECONDS - since >= 3)))
}
cgb_wait_until "$SETTLE_MAX" settled ||
        cgb_fail "the protected group's weight went $(echo $(<"$trace_file")) in $SETTLE_MAX s and did not rise and settle"
cgb_say "weight rose: $(echo $(<"$trace_file")) (cpu.weight, sampled every 0.2 s) within $((SECONDS - t_start)) s of the daemon's start"

measure
cgb_say "after: weight $w0 -> $w1 during the window, cpu.pressure some $(pm "$some_pm") of ${WINDOW} s, CPU share $(pm "$share_pm")"
cgb_say "weights: protected weight $base -> $w1, pressure some $(pm "$some_before") -> $(pm "$some_pm"), CPU share $(pm "$share_before") -> $(pm "$share_pm")"
noisy_w=$(<"$noisy/cpu.weight")
changes=$(grep -c '^cgbalanced: Set the weight of ' "$CGB_DAEMON_LOG")
cgb_say "daemon log: $changes weight changes; noisy group weight $noisy_w (unprotected)"
problems=$(cgb_daemon_problems)
[[ -z $problems ]] || cgb_fail "the daemon logged problems: $problems"

((w1 > base)) || cgb_fail "the protected group's weight did not rise: $base -> $w1"
((noisy_w == base)) || cgb_fail "the unprotected noisy group's weight changed: $base -> $noisy_w"
((changes > 0)) || cgb_fail "cpu.weight rose but the daemon logged no weight change"
# At weight W the stall share is about 100/(W+100): expect it at least halved.
((some_pm * 2 <= some_before)) ||
        cgb_fail "pressure did not fall by half: $(pm "$some_before") -> $(pm "$some_pm") at weight $w1"
((share_pm > share_before)) ||
        cgb_fail "the protected group's CPU share did not grow: $(pm "$share_before") -> $(pm "$share_pm")"

cgb_daemon_stop
after_stop=$(<"$prot/cpu.weight")
cgb_say "SIGTERM: protected weight $w1 -> $after_stop (started at $base)"
((after_stop == base)) || cgb_fail "SIGTERM left the protected weight at $after_stop, not $base"
exit 0
