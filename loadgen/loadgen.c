/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen: the loads and benchmarks kernel scheduler developers judged balancers with. `list`
 * names the loads, `run` runs one in its sandbox for a duration, `contest` runs Con Kolivas'
 * contest: a compile timed beside each load, one table per load.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "compare.h"
#include "simulate.h"
#include "contest.h"
#include "cpumask.h"
#include "json.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "plot.h"
#include "runner.h"
#include "sandbox.h"
#include "scenario.h"
#include "scenario_run.h"
#include "tree.h"

#define MAX_LOADS 32 /* above n_loads + 1: --loads refuses repeats */

/* ---- commands */

static void help(void) {
        printf("Usage: loadgen [OPTIONS] COMMAND ...\n"
               "\n"
               "Reproduces the loads and benchmarks kernel scheduler developers judged balancers\n"
               "with, in a sandbox cgroup under " SANDBOX_SLICE " that cgbalanced manages.\n"
               "\n"
               "Commands:\n"
               "  list                 List the loads: name, unit of work, description.\n"
               "  run LOAD [OPTIONS]   Run one load on its own and report its work (see\n"
               "                       loadgen run --help).\n"
               "  contest [OPTIONS]    Time a compile beside each load, as contest did, and print\n"
               "                       one table per load (see loadgen contest --help).\n"
               "  BENCHMARK [OPTIONS]  Run one of the scheduler benchmarks below, sweeping its\n"
               "                       axis, and print the seed mail's table (see loadgen\n"
               "                       BENCHMARK --help).\n"
               "  compare [OPTIONS] -- SUITE [SUITE OPTIONS]\n"
               "                       Run contest or a benchmark once with no daemon and once\n"
               "                       per cgbalanced config, starting the daemon itself, and\n"
               "                       print one table with a row per config (see loadgen\n"
               "                       compare --help).\n"
               "  sweep KEY=V1,V2,... [OPTIONS] -- SUITE [SUITE OPTIONS]\n"
               "                       The same across values of one tunable (see loadgen\n"
               "                       sweep --help); SUITE may be \"replay RECORDING\", a\n"
               "                       cgbalanced recording (cgbalance-record(5)).\n"
               "  simulate [OPTIONS]   cgbalanced's policy against the kernel's spreading on\n"
               "                       model machines (see loadgen simulate --help).\n"
               "  plot RESULTS.json    Draw compare's or sweep's results with gnuplot, as PNG\n"
               "                       and SVG (see loadgen plot --help).\n"
               "\n"
               "Benchmarks:\n");
        for (size_t i = 0; i < n_benchmarks; i++)
                printf("  %-20s %s\n", benchmarks[i].name, benchmarks[i].summary);
        printf("\n"
               "  -h --help            Show this help.\n"
               "     --version         Show the version.\n"
               "     --static=SPEC     Before run, contest or a benchmark: set the run's groups\n"
               "                       once, as an operator would instead of running\n"
               "                       cgbalanced, and leave them. SPEC: GROUP=weight:N\n"
               "                       (cpu.weight 1..10000) or GROUP=idle (cpu.idle 1),\n"
               "                       several joined by +; GROUP: job or load, or a\n"
               "                       scenario's [group NAME] for run SCENARIO. E.g.\n"
               "                       job=weight:1000, load=idle, job=weight:1000+load=idle,\n"
               "                       rings=idle (run burst-rings).\n"
               "\n"
               "See loadgen(1).\n");
}

static int compare_strings(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The shipped scenarios, by name, with their descriptions (or why one does not parse). */
static void list_scenarios(void) {
        _cleanup_free_ char *dir = NULL;
        char *names[256];
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        if (scenario_dir(&dir) < 0 || !(d = opendir(dir)))
                return;
        while ((de = readdir(d)) && n < ELEMENTSOF(names)) {
                size_t len = strlen(de->d_name);

                if (de->d_name[0] != '.' && len > 5 && streq(de->d_name + len - 5, ".conf"))
                        names[n++] = strndup(de->d_name, len - 5);
        }
        closedir(d);
        qsort(names, n, sizeof *names, compare_strings);
        printf("\nScenarios (loadgen run NAME; %s):\n", dir);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                _cleanup_scenario_ Scenario *s = NULL;
                ConfigError e = { 0 };

                if (!names[i] || asprintf(&path, "%s/%s.conf", dir, names[i]) < 0)
                        continue;
                if (scenario_load(path, NULL, &s, &e) < 0)
                        printf("  %-16s (does not parse: %s)\n", names[i], e.message);
                else
                        printf("  %-16s %s\n", names[i], s->f.description);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
}

static int cmd_list(void) {
        printf("Loads (loadgen run LOAD, loadgen contest):\n");
        for (size_t i = 0; i < n_loads; i++)
                printf("  %-14s %-18s %s\n", loads[i].name, loads[i].contest_unit,
                       loads[i].description);
        printf("\nBenchmarks (loadgen BENCHMARK):\n");
        for (size_t i = 0; i < n_benchmarks; i++)
                printf("  %-14s seed %-8s %s\n", benchmarks[i].name, benchmarks[i].seed,
                       benchmarks[i].summary);
        list_scenarios();
        return 0;
}

static void run_help(void) {
        printf("Usage: loadgen run LOAD|SCENARIO [OPTIONS]\n"
               "\n"
               "Runs LOAD in the run's load cgroup until the duration ends or SIGINT/SIGTERM,\n"
               "ends every process it started, removes its files and cgroups, then prints the\n"
               "work done, the elapsed time, the CPU used and the load group's memory peak.\n"
               "\n"
               "SCENARIO is a scenario file (a path, or a name ending in .conf) or a shipped\n"
               "scenario's name (loadgen list): its groups are made below the run's, its tasks\n"
               "started where it says, and at the end each task's CPU time, work, per-node\n"
               "residency and latency are printed. See loadgen-scenario(5).\n"
               "\n"
               "  -d --duration=SECONDS  How long to run, from when the load is ready (default\n"
               "                         1; a scenario's own duration by default).\n" CLI_HELP_CPUS
                       CLI_HELP_MEM CLI_HELP_DIR CLI_HELP_OTHER_DIR CLI_HELP_QUICK
                               CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "     --quiet             A scenario: no progress lines on stderr.\n"
               "  -h --help              Show this help.\n");
}

/* What loadgen run LOAD reports. */
typedef struct RunReport {
        const Load *l;
        const LoadResult *res;
        uint64_t cpu_usec, peak;
        int peak_r;
} RunReport;

static uint64_t run_cpu_pct(const RunReport *rr) {
        return rr->res->elapsed_usec ? rr->cpu_usec * 100 / rr->res->elapsed_usec : 0;
}

static void run_json(Json *j, void *userdata) {
        const RunReport *rr = userdata;

        json_begin(j, '{');
        json_string(j, "load", rr->l->name);
        json_string(j, "unit", rr->l->unit);
        json_u64(j, "work", rr->res->work);
        json_u64(j, "contest_scale", rr->l->contest_scale);
        json_u64(j, "elapsed_usec", rr->res->elapsed_usec);
        json_u64(j, "cpu_usec", rr->cpu_usec);
        json_u64(j, "cpu_pct", run_cpu_pct(rr));
        if (rr->peak_r >= 0)
                json_u64(j, "memory_peak_bytes", rr->peak);
        json_bool(j, "interrupted", rr->res->interrupted);
        json_end(j, '}');
}

static void run_table(FILE *f, void *userdata) {
        const RunReport *rr = userdata;
        const LoadResult *res = rr->res;

        fprintf(f, "%s: %" PRIu64 " %s in %" PRIu64 ".%02" PRIu64 " s, CPU %" PRIu64 "%%",
                rr->l->name, res->work, rr->l->unit, res->elapsed_usec / 1000000,
                res->elapsed_usec % 1000000 / 10000, run_cpu_pct(rr));
        if (rr->peak_r >= 0)
                fprintf(f, ", memory peak %" PRIu64 " MiB", rr->peak >> 20);
        fprintf(f, "%s\n", res->interrupted ? " (interrupted)" : "");
}

/* Runs l in sb until its duration ends or a signal; prints its report. */
static int run_in_sandbox(const Load *l, LoadOptions *lo, Sandbox *sb, bool quick,
                          const char *json) {
        _cleanup_load_run_ LoadRun *lr = NULL;
        _cleanup_free_ char *tree = sandbox_path(sb, "tree"), *work = sandbox_path(sb, "load");
        TreeOptions to;
        LoadResult res;
        uint64_t cpu = 0, peak = 0;
        int r, peak_r;

        if (!tree || !work)
                return log_error_errno(ENOMEM, "Out of memory.");
        tree_options_init(&to, quick);
        if (mkdir(tree, 0700) < 0 || mkdir(work, 0700) < 0)
                return log_error_errno(errno, "Failed to make the run's directories: %m");
        r = tree_generate(tree, &to);
        if (r < 0)
                return log_error_errno(r, "Failed to generate the tree for %s: %m", l->name);
        lo->tree_dir = tree;
        lo->work_dir = work;
        r = load_run_start(l, lo, sb, &cli_stop, &lr);
        if (r == -EINTR)
                return cli_interrupted();
        if (r < 0)
                return log_error_errno(r, "%s failed to start: %m", l->name);
        while (!cli_stop && !load_run_finished(lr))
                load_nap(UINT64_MAX, 50000);
        r = load_run_stop(lr, &res, &cpu);
        if (r < 0)
                return log_error_errno(r, "%s failed: %m", l->name);
        peak_r = sandbox_memory_peak(sb, SANDBOX_LOAD, &peak);
        return cli_report(json, run_table, run_json, &(RunReport){ l, &res, cpu, peak, peak_r }) < 0
                       ? 1
                       : 0;
}

/* loadgen run FILE|NAME: the scenario at path, in its sandbox. */
/* What loadgen run SCENARIO reports. */
typedef struct ScenarioReport {
        const Scenario *s;
        const ScenarioResult *res;
        const Sandbox *sb;
} ScenarioReport;

static void scenario_table(FILE *f, void *userdata) {
        const ScenarioReport *sr = userdata;

        scenario_print_report(f, sr->s, sr->res);
}

static void scenario_json(Json *j, void *userdata) {
        const ScenarioReport *sr = userdata;

        scenario_write_json(j, sr->s, sr->res, sr->sb);
}

/* --static's scenario groups against s's. */
static int check_static_groups(const Scenario *s) {
        _cleanup_free_ char *what = NULL;
        _cleanup_free_ const char **names = NULL;
        size_t n = scenario_n_groups(s);

        names = calloc(MAX(n, 1u), sizeof *names);
        if (!names || asprintf(&what, "scenario %s", s->f.name) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        for (size_t g = 0; g < n; g++)
                names[g] = scenario_group_name(s, g);
        return cli_check_static_groups(&cli_static, names, n, what);
}

static int run_scenario(const char *path, CliCommon *co, bool quiet) {
        _cleanup_topology_ Topology *t = NULL;
        _cleanup_scenario_ Scenario *s = NULL;
        _cleanup_sandbox_ Sandbox *sb = NULL;
        _cleanup_(scenario_result_done) ScenarioResult res = { 0 };
        ScenarioRunOptions o = { .duration_usec = co->duration_usec, .quiet = quiet };
        ConfigError e = { 0 };
        int r;

        r = topology_new_from_system(&t);
        if (r < 0)
                return log_error_errno(r, "Failed to read this machine's topology: %m"), 1;
        r = scenario_load(path, t, &s, &e);
        if (r < 0) {
                log_error("%s", e.message);
                return EXIT_USAGE;
        }
        r = check_static_groups(s);
        if (r < 0)
                return r == -ENOMEM ? 1 : EXIT_USAGE;
        if (!co->cpus && !cpumask_is_empty(s->f.cpus)) {
                co->cpus = cpumask_copy(s->f.cpus);
                if (!co->cpus)
                        return log_error_errno(ENOMEM, "Out of memory."), 1;
        }
        if (co->ram_bytes)
                s->mem_bytes = co->ram_bytes; /* --mem: each group's limit, over the file's */
        co->ram_bytes = 0; /* no limit on the sandbox's load group: the scenario's groups get it */
        o.machine = t;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        r = scenario_run(s, sb, &o, &res);
        if (r < 0)
                return cli_stop ? cli_interrupted() : 1;
        if (cli_report(co->json, scenario_table, scenario_json, &(ScenarioReport){ s, &res, sb }) <
            0)
                return 1;
        return res.interrupted ? cli_interrupted() : 0;
}

static int cmd_run(int argc, char *argv[]) {
        enum { ARG_QUIET = 0x100 };
        static const struct option options[] = {
                CLI_OPT_DURATION,
                CLI_OPT_JSON,
                { "quiet", no_argument, NULL, ARG_QUIET },
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_CPUS,
                CLI_OPT_MEM,
                CLI_OPT_DIR,
                CLI_OPT_OTHER_DIR,
                CLI_OPT_QUICK,
                CLI_OPT_HELP,
                {},
        };
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_sandbox_ Sandbox *sb = NULL;
        LoadOptions lo;
        const Load *l;
        bool quiet = false;
        int c, r;

        load_options_init(&lo);
        optind = 0; /* glibc: reinitialise for the subcommand's argv */
        while ((c = getopt_long(argc, argv, "d:j::c:m:qh", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &co);
                if (r < 0)
                        return EXIT_USAGE;
                if (r > 0)
                        continue;
                switch (c) {
                case ARG_QUIET: quiet = true; break;
                case 'h': run_help(); return 0;
                default: return EXIT_USAGE; /* getopt said why */
                }
        }
        if (optind != argc - 1) {
                log_error("%s; see loadgen run --help.",
                          optind >= argc ? "Missing LOAD" : "Too many arguments");
                return EXIT_USAGE;
        }
        l = load_find(argv[optind]);
        if (!l) {
                _cleanup_free_ char *path = NULL;

                r = scenario_find(argv[optind], &path);
                if (r == -ENOMEM)
                        return log_error_errno(r, "Out of memory."), 1;
                if (r < 0) {
                        log_error("\"%s\" is no load, no shipped scenario and no scenario file; "
                                  "see loadgen list.",
                                  argv[optind]);
                        return EXIT_USAGE;
                }
                return run_scenario(path, &co, quiet);
        }
        if (cli_check_static_groups(&cli_static, NULL, 0, NULL) < 0)
                return EXIT_USAGE;
        if (co.duration_usec)
                lo.duration_usec = co.duration_usec;
        if (!co.ram_bytes)
                co.ram_bytes = co.quick ? QUICK_RAM_BYTES : LOAD_DEFAULT_RAM_BYTES;
        lo.ram_bytes = co.ram_bytes;
        lo.other_dir = co.other_dir;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(&co, &sb) < 0)
                return 1;
        lo.ncpus = sandbox_ncpus(sb);
        r = run_in_sandbox(l, &lo, sb, co.quick, co.json);
        if (r == 0 && cli_stop)
                return 0; /* the report says "(interrupted)" */
        return r < 0 ? 1 : r;
}

static void contest_help(void) {
        printf("Usage: loadgen contest [OPTIONS]\n"
               "\n"
               "Times the foreground job, a compile of a generated C tree with make -j (4 x\n"
               "CPUs), beside each background load in turn, each load --runs times, no_load\n"
               "first, then prints one table per load as the contest mails did:\n"
               "\n"
               "  process_load:\n"
               "  Kernel [runs] Time CPU%% Loads LCPU%% Ratio\n"
               "  default [3] 49.0 144 10 50 1.35\n"
               "\n"
               "Time: the job's seconds; CPU%%: its (user+sys)/Time; Loads: the load's work "
               "during\n"
               "the job in the unit of loadgen list; LCPU%%: the load's CPU over the same time;\n"
               "Ratio: Time over no_load's Time. Means over the runs.\n"
               "\n"
               "  -l --loads=LIST        Comma-separated loads (default: all, in contest's order;\n"
               "                         no_load is added first if missing).\n"
               "  -n --runs=N            Runs of each load (default 3).\n"
               "  -L --label=NAME        The first column (default \"default\").\n" CLI_HELP_JSON
               "                         Every run's raw figures, the machine and the\n"
               "                         parameters. -J FILE is --json=FILE.\n"
               "     --jobs=N            make -j N (default 4 x the run's CPUs).\n"
               "     --lead=SECONDS      The load runs this long before the job starts (default\n"
               "                         3, 1 with --quick).\n" CLI_HELP_CPUS CLI_HELP_MEM
                       CLI_HELP_DIR CLI_HELP_OTHER_DIR CLI_HELP_QUICK CLI_HELP_TREE_FILES
                               CLI_HELP_NO_HOST_RESERVE
               "     --quiet             No progress lines on stderr.\n"
               "  -h --help              Show this help.\n");
}

/* --loads: names in order, no_load first. */
static int parse_loads(const char *s, const Load **ret, size_t *ret_n) {
        _cleanup_free_ char *copy = strdup(s);
        const Load *picked[MAX_LOADS];
        size_t n = 0;
        char *save = NULL;

        if (!copy)
                return log_error_errno(ENOMEM, "Out of memory.");
        picked[n++] = load_find("no_load");
        for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                const Load *l = load_find(w);
                bool dup = false;

                if (!l) {
                        log_error("Unknown load \"%s\" in --loads; see loadgen list.", w);
                        return -EINVAL;
                }
                for (size_t i = 0; i < n; i++)
                        dup = dup || picked[i] == l;
                if (dup && l->run != no_load_run) {
                        log_error("--loads names %s twice.", w);
                        return -EINVAL;
                }
                if (!dup)
                        picked[n++] = l;
        }
        memcpy(ret, picked, n * sizeof *picked);
        *ret_n = n;
        return 0;
}

/* What loadgen contest reports. */
typedef struct ContestReport {
        const ContestResults *res;
        const ContestOptions *o;
        const Sandbox *sb;
} ContestReport;

static void contest_table(FILE *f, void *userdata) {
        const ContestReport *cr = userdata;

        contest_print_tables(f, cr->res, cr->o->label);
}

static void contest_json(Json *j, void *userdata) {
        const ContestReport *cr = userdata;

        contest_write_json(j, cr->res, cr->o, cr->sb);
}

static int cmd_contest(int argc, char *argv[]) {
        enum { ARG_JOBS = 0x100, ARG_LEAD, ARG_QUIET };
        static const struct option options[] = {
                { "loads", required_argument, NULL, 'l' },
                { "runs", required_argument, NULL, 'n' },
                CLI_OPT_LABEL,
                CLI_OPT_JSON,
                { "jobs", required_argument, NULL, ARG_JOBS },
                { "lead", required_argument, NULL, ARG_LEAD },
                { "quiet", no_argument, NULL, ARG_QUIET },
                CLI_OPT_CPUS,
                CLI_OPT_MEM,
                CLI_OPT_DIR,
                CLI_OPT_OTHER_DIR,
                CLI_OPT_QUICK,
                CLI_OPT_TREE_FILES,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_(contest_results_done) ContestResults res = { 0 };
        _cleanup_sandbox_ Sandbox *sb = NULL;
        const Load *chosen[MAX_LOADS];
        const char *json = NULL;
        ContestOptions o = { .loads = chosen, .runs = 3, .label = "default" };
        bool lead_given = false;
        unsigned long v;
        char *end;
        int c, r;

        for (size_t i = 0; i < n_loads; i++)
                chosen[o.n_loads++] = &loads[i];
        optind = 0;
        while ((c = getopt_long(argc, argv, "l:n:L:j::J:c:m:qh", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &co);
                if (r < 0)
                        return EXIT_USAGE;
                if (r > 0)
                        continue;
                switch (c) {
                case 'l':
                        if (parse_loads(optarg, chosen, &o.n_loads) < 0)
                                return EXIT_USAGE;
                        break;
                case 'n':
                case ARG_JOBS:
                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end || v == 0 || v > 1000 ||
                            optarg[0] == '-') {
                                log_error("Invalid --%s \"%s\": want a number from 1 to 1000.",
                                          c == 'n' ? "runs" : "jobs", optarg);
                                return EXIT_USAGE;
                        }
                        *(c == 'n' ? &o.runs : &o.jobs) = (unsigned) v;
                        break;
                case 'J': co.json = optarg; break; /* as before --json took an optional FILE */
                case ARG_LEAD:
                        if (parse_seconds(optarg, &o.lead_usec) < 0) {
                                log_error("Invalid --lead \"%s\": want seconds > 0, e.g. 3.",
                                          optarg);
                                return EXIT_USAGE;
                        }
                        lead_given = true;
                        break;
                case ARG_QUIET: o.quiet = true; break;
                case 'h': contest_help(); return 0;
                default: return EXIT_USAGE;
                }
        }
        cli_take_report(&co, &o.label, &json);
        if (optind != argc) {
                log_error("Unexpected argument \"%s\"; see loadgen contest --help.", argv[optind]);
                return EXIT_USAGE;
        }
        if (!lead_given)
                o.lead_usec = co.quick ? CONTEST_QUICK_LEAD_USEC : CONTEST_LEAD_USEC;
        if (!co.ram_bytes)
                co.ram_bytes = co.quick ? QUICK_RAM_BYTES : LOAD_DEFAULT_RAM_BYTES;
        o.ram_bytes = co.ram_bytes;
        o.other_dir = co.other_dir;
        o.stop = &cli_stop;
        cli_tree_options(&co, &o.tree);

        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(&co, &sb) < 0)
                return 1;
        r = contest_run(&o, sb, &res);
        if (r == -EINTR || cli_stop)
                return cli_interrupted();
        if (r < 0)
                return 1;
        return cli_report(json, contest_table, contest_json, &(ContestReport){ &res, &o, sb }) < 0
                       ? 1
                       : 0;
}

/* loadgen --static=SPEC into cli_static: once, and checked against the kernel. */
static int parse_static(const char *arg, bool *seen) {
        char why[160];

        if (*seen) {
                log_error("--static is given twice: join the settings with '+', e.g. "
                          "job=weight:1000+load=idle.");
                return -EINVAL;
        }
        *seen = true;
        if (cli_parse_static(arg, &cli_static, why, sizeof why) < 0) {
                log_error("Invalid --static \"%s\": %s.", arg, why);
                return -EINVAL;
        }
        return cli_check_static(&cli_static, arg);
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_STATIC };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "static", required_argument, NULL, ARG_STATIC },
                {},
        };
        const Benchmark *b;
        bool static_seen = false;
        int c;

        log_set_ident("loadgen");
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: puts("loadgen " CGBALANCE_VERSION); return 0;
                case ARG_STATIC:
                        if (parse_static(optarg, &static_seen) < 0)
                                return EXIT_USAGE;
                        break;
                default: return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                log_error("Missing command; see loadgen --help.");
                return EXIT_USAGE;
        }
        if (static_seen && (streq(argv[optind], "list") || streq(argv[optind], "plot") ||
                            streq(argv[optind], "compare") || streq(argv[optind], "sweep"))) {
                log_error("--static sets the groups of a run: give it to run, contest or a "
                          "benchmark (loadgen compare takes its own --static, one row each).");
                return EXIT_USAGE;
        }
        if (!streq(argv[optind], "run") && cli_check_static_groups(&cli_static, NULL, 0, NULL) < 0)
                return EXIT_USAGE; /* a scenario's group names are for run SCENARIO */
        if (streq(argv[optind], "list") && optind == argc - 1)
                return cmd_list();
        if (streq(argv[optind], "run"))
                return cmd_run(argc - optind, argv + optind);
        if (streq(argv[optind], "contest"))
                return cmd_contest(argc - optind, argv + optind);
        if (streq(argv[optind], "plot"))
                return plot_main(argc - optind, argv + optind);
        if (streq(argv[optind], "compare"))
                return compare_main(argc - optind, argv + optind);
        if (streq(argv[optind], "sweep"))
                return sweep_main(argc - optind, argv + optind);
        if (streq(argv[optind], "simulate"))
                return simulate_main(argc - optind, argv + optind);
        b = benchmark_find(argv[optind]);
        if (b) {
                int first = optind;

                optind = 0; /* glibc: reinitialise getopt for the benchmark's argv */
                return b->main(argc - first, argv + first);
        }
        log_error("Unknown command \"%s\"; see loadgen --help.", argv[optind]);
        return EXIT_USAGE;
}
