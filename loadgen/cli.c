/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-levers.h"
#include "cli.h"
#include "log.h"
#include "load.h"
#include "macro.h"
#include "parse.h"

volatile sig_atomic_t cli_stop;
SandboxStatic cli_static;

static void on_stop_signal(int sig) {
        cli_stop = sig;
}

int cli_install_stop_handlers(void) {
        struct sigaction sa = { .sa_handler = on_stop_signal };

        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
                return negative_errno();
        return 0;
}

void cli_stop_rearm(void) {
        cli_stop = 0;
        (void) cli_install_stop_handlers();
}

int cli_interrupted(void) {
        log_error(
                "Interrupted: every process of the run was ended, its cgroups and files removed.");
        return 128 + (int) cli_stop;
}

void cli_common_done(CliCommon *c) {
        c->cpus = cpumask_free(c->cpus);
}

/* --cpus: a cpulist of CPUs loadgen may use. */
static int parse_cpus(const char *s, CpuMask **ret) {
        _cleanup_cpumask_ CpuMask *m = NULL, *allowed = cpumask_new(CPUMASK_MAX_CPUS);
        size_t errpos = 0;
        int r;

        if (!allowed)
                return log_error_errno(ENOMEM, "Out of memory.");
        r = cpumask_parse(s, CPUMASK_MAX_CPUS, &m, &errpos);
        if (r < 0 || cpumask_is_empty(m)) {
                log_error("Invalid --cpus \"%s\": want a CPU list such as 0-1 or 0,2.", s);
                return -EINVAL;
        }
        if (sched_getaffinity(0, cpumask_cpu_set_size(allowed), cpumask_cpu_set(allowed)) < 0)
                return log_error_errno(errno, "Failed to read the CPUs loadgen may use: %m");
        if (!cpumask_is_subset(m, allowed)) {
                _cleanup_free_ char *a = NULL;

                (void) cpumask_format(allowed, &a);
                log_error("--cpus %s names CPUs this machine does not have or loadgen may not use "
                          "(it may use %s).",
                          s, a ? a : "?");
                return -EINVAL;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int cli_parse_common(int c, const char *arg, CliCommon *o) {
        switch (c) {
        case 'c':
                o->cpus = cpumask_free(o->cpus);
                return parse_cpus(arg, &o->cpus) < 0 ? -EINVAL : 1;
        case 'm':
                if (parse_size(arg, &o->ram_bytes) < 0 || o->ram_bytes < (UINT64_C(4) << 20)) {
                        log_error("Invalid --mem \"%s\": want a size of at least 4M, e.g. 256M.",
                                  arg);
                        return -EINVAL;
                }
                return 1;
        case 'D': o->dir = arg; return 1;
        case 'O': o->other_dir = arg; return 1;
        case 'd':
                if (parse_seconds(arg, &o->duration_usec) < 0) {
                        log_error("Invalid --duration \"%s\": want seconds > 0, e.g. 2.5.", arg);
                        return -EINVAL;
                }
                return 1;
        case 'L': o->label = arg; return 1;
        case 'j': o->json = arg ? arg : ""; return 1;
        case 'q': o->quick = true; return 1;
        case CLI_ARG_TREE_FILES:
                return cli_parse_unsigned("tree-files", arg, 1, TREE_MAX_FILES, &o->tree_files) < 0
                               ? -EINVAL
                               : 1;
        case 'S': o->no_sandbox = true; return 1;
        case CLI_ARG_NO_HOST_RESERVE: o->no_host_reserve = true; return 1;
        default: return 0;
        }
}

void cli_tree_options(const CliCommon *co, TreeOptions *ret) {
        tree_options_init(ret, co->quick);
        if (co->tree_files > 0)
                ret->files = co->tree_files;
}

void cli_take_report(const CliCommon *co, const char **label, const char **json) {
        if (label && co->label)
                *label = co->label;
        *json = co->json;
}

CliJsonTo cli_json_to(const char *json) {
        if (!json)
                return CLI_JSON_NONE;
        return json[0] == '\0' || streq(json, "-") ? CLI_JSON_STDOUT : CLI_JSON_FILE;
}

int cli_json_open(const char *json, FILE **ret, bool *ret_owned) {
        FILE *f;

        switch (cli_json_to(json)) {
        case CLI_JSON_NONE: f = NULL; break;
        case CLI_JSON_STDOUT: f = stdout; break;
        default:
                f = fopen(json, "we");
                if (!f)
                        return log_error_errno(errno, "Failed to open %s: %m", json);
        }
        *ret = f;
        *ret_owned = f && f != stdout;
        return 0;
}

int cli_report(const char *json, CliTableFn table, CliJsonFn write_json, void *userdata) {
        Json j = { 0 };
        bool owned = false;
        int r;

        r = cli_json_open(json, &j.f, &owned);
        if (r < 0)
                return r;
        if (j.f != stdout)
                table(stdout, userdata);
        if (j.f)
                write_json(&j, userdata);
        if (fflush(stdout) != 0)
                r = log_error_errno(EIO, "Failed to write the report: %m");
        if (owned && (ferror(j.f) | fclose(j.f)) != 0 && r == 0)
                r = log_error_errno(EIO, "Failed to write %s: %m", json);
        return r;
}

int cli_parse_unsigned(const char *name, const char *arg, unsigned min, unsigned max,
                       unsigned *ret) {
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || v < min || v > max) {
                log_error("Invalid --%s \"%s\": want a number from %u to %u.", name, arg, min, max);
                return -EINVAL;
        }
        *ret = (unsigned) v;
        return 0;
}

/* One SETTING of --static, the n bytes at s, into *ret. */
static int parse_static_one(const char *s, size_t n, SandboxStatic *ret, char *why,
                            size_t why_size) {
        const char *eq = memchr(s, '=', n), *v;
        size_t name_n, v_n;
        SandboxSetting *set = NULL;
        uint64_t w;

        if (n == 0) {
                snprintf(why, why_size, "an empty setting (a '+' too many?)");
                return -EINVAL;
        }
        if (!eq) {
                snprintf(why, why_size, "\"%.*s\" is not GROUP=SETTING", (int) n, s);
                return -EINVAL;
        }
        name_n = (size_t) (eq - s);
        for (int p = SANDBOX_RUN + 1; p < _SANDBOX_PART_MAX; p++)
                if (strlen(sandbox_part_name(p)) == name_n &&
                    memcmp(sandbox_part_name(p), s, name_n) == 0)
                        set = &ret->part[p];
        if (!set) { /* a scenario's [group NAME], checked against the scenario when it runs */
                SandboxNamedSetting *named;

                if (name_n == 0 || name_n >= SANDBOX_GROUP_NAME_MAX ||
                    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") <
                            name_n) {
                        snprintf(why, why_size,
                                 "\"%.*s\" is no group name (job, load, or a scenario's group: "
                                 "letters, digits, '_' and '-', at most %u)",
                                 (int) name_n, s, SANDBOX_GROUP_NAME_MAX - 1);
                        return -EINVAL;
                }
                for (size_t i = 0; i < ret->n_named; i++)
                        if (strlen(ret->named[i].name) == name_n &&
                            memcmp(ret->named[i].name, s, name_n) == 0)
                                set = &ret->named[i].set;
                if (!set) {
                        if (ret->n_named >= SANDBOX_STATIC_MAX_NAMED) {
                                snprintf(why, why_size, "more than %u scenario groups",
                                         SANDBOX_STATIC_MAX_NAMED);
                                return -EINVAL;
                        }
                        named = &ret->named[ret->n_named++];
                        memcpy(named->name, s, name_n);
                        named->name[name_n] = '\0';
                        set = &named->set;
                }
        }
        if (set->weight || set->idle) {
                snprintf(why, why_size, "%.*s is set twice (one setting a group)", (int) name_n, s);
                return -EINVAL;
        }
        v = eq + 1;
        v_n = n - name_n - 1;
        if (v_n == 4 && memcmp(v, "idle", 4) == 0) {
                set->idle = true;
                return 0;
        }
        if (v_n > 7 && memcmp(v, "weight:", 7) == 0) {
                if (parse_u64_span(v + 7, v_n - 7, &w) < 0 || w < CGROUP_WEIGHT_MIN ||
                    w > CGROUP_WEIGHT_MAX) {
                        snprintf(why, why_size, "weight \"%.*s\" is not a number from %u to %u",
                                 (int) (v_n - 7), v + 7, CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX);
                        return -EINVAL;
                }
                set->weight = w;
                return 0;
        }
        snprintf(why, why_size, "\"%.*s\" is not weight:N or idle", (int) v_n, v);
        return -EINVAL;
}

int cli_parse_static(const char *spec, SandboxStatic *ret, char *why, size_t why_size) {
        SandboxStatic s = { 0 };

        for (const char *p = spec;;) {
                const char *end = strchrnul(p, '+');
                int r = parse_static_one(p, (size_t) (end - p), &s, why, why_size);

                if (r < 0)
                        return r;
                if (!*end)
                        break;
                p = end + 1;
        }
        *ret = s;
        return 0;
}

int cli_check_static_groups(const SandboxStatic *s, const char *const *names, size_t n,
                            const char *what) {
        for (size_t i = 0; s && i < s->n_named; i++) {
                bool found = false;

                for (size_t k = 0; k < n && !found; k++)
                        found = streq(names[k], s->named[i].name);
                if (found)
                        continue;
                if (!what) {
                        log_error("--static names the group \"%s\": a run, contest or benchmark "
                                  "has only job and load; other names are a scenario's "
                                  "[group NAME].",
                                  s->named[i].name);
                        return -EINVAL;
                }
                char list[1024] = "none";
                size_t used = 0;

                for (size_t k = 0; k < n && used < sizeof list; k++)
                        used += (size_t) snprintf(list + used, sizeof list - used, "%s%s",
                                                  k ? ", " : "", names[k]);
                log_error("--static names the group \"%s\", which %s does not have (its "
                          "groups: %s).",
                          s->named[i].name, what, list);
                return -EINVAL;
        }
        return 0;
}

int cli_check_static(const SandboxStatic *s, const char *spec) {
        CgroupLayout l;

        if (!sandbox_static_has_idle(s))
                return 0;
        /* Without a cpu controller, or not root: the sandbox's own error says it better. */
        if (cgroup_layout_detect(&l) < 0 || !l.cpu_path[0] || cgroup_create(&l, SANDBOX_SLICE) < 0)
                return 0;
        return cli_check_static_at(&l, s, spec);
}

int cli_check_static_at(const CgroupLayout *l, const SandboxStatic *s, const char *spec) {
        bool idle;
        int r;

        if (!sandbox_static_has_idle(s))
                return 0;
        r = cgroup_get_cpu_idle(l, SANDBOX_SLICE, &idle);
        if (r == -EOPNOTSUPP) {
                log_error("--static %s sets cpu.idle, which this kernel's cpu controller lacks "
                          "(Linux 5.15 and later have it, on cgroup v1 and v2). Use a weight "
                          "instead.",
                          spec);
                return r;
        }
        return 0;
}

/* Says once why the run's group could not be capped; the run goes on without the reserve. */
static void warn_host_reserve(const Sandbox *sb) {
        uint64_t slice_quota = CGROUP_QUOTA_NONE;
        int r = sandbox_host_reserve(sb, NULL, NULL);

        if (r >= 0 || r == -ENODATA)
                return;
        /* v1 refuses a quota above a capped parent's; the parent's cap then keeps the share */
        if (r == -EINVAL &&
            cgroup_get_cpu_quota(sandbox_layout(sb), SANDBOX_SLICE, &slice_quota, NULL) >= 0 &&
            slice_quota != CGROUP_QUOTA_NONE)
                log_warning(
                        "Could not cap the run's cgroup at all CPUs but half of one: " SANDBOX_SLICE
                        " is capped lower already, and the kernel refuses a "
                        "higher cap below it. Going on under the slice's.");
        else
                log_warning_errno(r, "Could not cap the run's cgroup at all CPUs but half of one, "
                                     "which the rest of the machine should keep: %m. Going on "
                                     "without it: this run may starve its host.");
}

int cli_make_sandbox(const CliCommon *c, Sandbox **ret) {
        SandboxOptions so = {
                .cpus = c->cpus,
                .mem_bytes = c->ram_bytes,
                .dir = c->dir,
                .cgroups = !c->no_sandbox,
                .statics = &cli_static,
                .no_host_reserve = c->no_host_reserve,
        };
        int r;

        if (c->no_sandbox && sandbox_static_is_set(&cli_static)) {
                log_error("--static sets the run's cgroups, which --no-sandbox leaves out.");
                return -EINVAL;
        }
        r = sandbox_new(&so, ret);
        if (r == -EACCES || r == -EPERM || r == -EROFS)
                return log_error_errno(r,
                                       "Failed to create the run's cgroups under " SANDBOX_SLICE
                                       ": %m. Run as root%s.",
                                       c->no_sandbox ? "" : ", or pass --no-sandbox");
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "This host lacks a cgroup controller the sandbox needs "
                                          "(cpu, and memory for --mem; cpu.idle for --static "
                                          "GROUP=idle, Linux 5.15+).");
        if (r < 0)
                return log_error_errno(r, "Failed to set up the run's sandbox: %m");
        warn_host_reserve(*ret);
        return 0;
}
