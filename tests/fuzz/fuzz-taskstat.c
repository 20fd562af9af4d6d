/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc text parsers on arbitrary input: no crash, no read past the text, and what parses
 * holds its promises. A parsed stat line, printed back the kernel's way, parses to the same
 * values; /proc/stat utilisations stay within 0..10000; id lists come out sorted and positive.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool task_stat_equal(const TaskStat *a, const TaskStat *b) {
        return a->tid == b->tid && streq(a->comm, b->comm) && a->state == b->state &&
               a->ppid == b->ppid && a->flags == b->flags && a->utime_ticks == b->utime_ticks &&
               a->stime_ticks == b->stime_ticks && a->nice == b->nice &&
               a->num_threads == b->num_threads && a->starttime_ticks == b->starttime_ticks &&
               a->processor == b->processor && a->rt_priority == b->rt_priority &&
               a->policy == b->policy;
}

static void check_task_stat(const char *text) {
        char line[PROC_TASK_STAT_BUF_SIZE];
        TaskStat s, again;
        int n;

        if (proc_task_stat_parse(text, &s) < 0)
                return;
        if (strlen(s.comm) >= PROC_COMM_SIZE)
                abort();
        n = snprintf(line, sizeof line,
                     "%d (%s) %c %d 0 0 0 0 %u 0 0 0 0 %" PRIu64 " %" PRIu64
                     " 0 0 0 %d %u 0 %" PRIu64 " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 %u %u %u\n",
                     (int) s.tid, s.comm, s.state, (int) s.ppid, s.flags, s.utime_ticks,
                     s.stime_ticks, s.nice, s.num_threads, s.starttime_ticks, s.processor,
                     s.rt_priority, s.policy);
        if (n < 0 || (size_t) n >= sizeof line)
                abort();
        if (proc_task_stat_parse(line, &again) < 0 || !task_stat_equal(&s, &again))
                abort();
}

static void check_proc_stat(const char *text) {
        _cleanup_proc_stat_ ProcStat *s = NULL;

        if (proc_stat_parse(text, &s) < 0)
                return;
        if (!s->total.present || s->n_cpus > CPUMASK_MAX_CPUS)
                abort();
        for (unsigned c = 0; c < s->n_cpus; c++) {
                const CpuTimes *t = proc_stat_cpu(s, c);
                CpuTicksDelta d;
                unsigned util;

                if (!t)
                        continue;
                /* Any pair of samples, even one "going backwards", gives a sane ratio. */
                if (cpu_times_delta(t, &s->total, &d) < 0 || d.busy_ticks > d.total_ticks)
                        abort();
                if (cpu_ticks_util_permyriad(&d, &util) == 0 && util > 10000)
                        abort();
        }
}

static void check_task_ids(const char *text) {
        _cleanup_free_ pid_t *ids = NULL;
        size_t n;

        if (proc_task_ids_parse(text, &ids, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                if (ids[i] <= 0 || (i > 0 && ids[i - 1] >= ids[i]))
                        abort();
}

static void check_status(const char *text) {
        _cleanup_cpumask_ CpuMask *m = NULL;

        (void) proc_status_cpus_allowed_parse(text, 4096, &m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1);

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        check_task_stat(text);
        check_proc_stat(text);
        check_task_ids(text);
        check_status(text);
        return 0;
}
