/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen compare / loadgen sweep: see compare.h. This file runs the rows: the suite as a child
 * loadgen, cgbalanced beside it for a daemon row, the timeline sampled while they run; the pure
 * half (the suites' layouts, merging the captured tables, row names, sweeps, generated configs)
 * is compare_merge.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchmark.h"
#include "child.h"
#include "cli.h"
#include "compare.h"
#include "sweep_replay.h"
#include "config.h"
#include "fileio.h"
#include "json.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "sandbox.h"
#include "timeline.h"
#include "topology.h"
#include "tunables.h"

#define USEC_PER_SEC UINT64_C(1000000)
#define SAMPLE_INTERVAL_USEC USEC_PER_SEC
#define POLL_MAX_MSEC 100 /* how soon a child's exit or a signal is seen */
#define DAEMON_READY_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define DAEMON_STOP_TIMEOUT_USEC (30 * USEC_PER_SEC) /* it restores every mask and weight first */
#define SUITE_STOP_TIMEOUT_USEC \
        (120 * USEC_PER_SEC) /* it ends its processes, removes its cgroups */
#define OUTPUT_MAX (UINT64_C(16) << 20)
#define RESULT_MAX (UINT64_C(256) << 20)
#define DAEMON_LINE_MAX 4096
#define DAEMON_TAIL_LINES 8 /* of its log, quoted when it fails */
#define DAEMON_NAME "cgbalanced"

/* ---- a compare run */

typedef struct Row {
        char *name;
        bool daemon;
        char *source; /* where its config came from, for the generated file's header */
        char *config_text; /* daemon rows: the file cgbalanced is started with */
        const char *static_spec; /* static rows: --static's SPEC (borrowed), passed to the suite
                                  * as loadgen --static; else NULL */
        char *config_path, *state_dir, *result_path, *log_path;
        char *output; /* the suite's stdout */
        char *result; /* the suite's --json */
        Timeline *timeline;
        uint64_t elapsed_usec;
} Row;

typedef struct Compare {
        const char *command; /* "compare" or "sweep" */
        const CompareSuite *suite;
        char **suite_args; /* argv after SUITE, borrowed */
        size_t n_suite_args;
        Row *rows;
        size_t n_rows;
        const char *json_path; /* --json=FILE */
        bool json_stdout; /* --json: the JSON on stdout instead of the table */
        const char *daemon_arg; /* --daemon */
        char *daemon_path;
        char *self_path; /* loadgen's own executable */
        char *tmp_dir;
        bool keep_tmp; /* a daemon log of a failed row lives there */
        int proc_fd, notify_fd;
        char *notify_path;
        Topology *topo;
        const char *replay_path; /* sweep -- replay RECORDING */
} Compare;

static void compare_done(Compare *c) {
        for (size_t i = 0; i < c->n_rows; i++) {
                Row *r = &c->rows[i];

                free(r->name);
                free(r->source);
                free(r->config_text);
                free(r->config_path);
                free(r->state_dir);
                free(r->result_path);
                free(r->log_path);
                free(r->output);
                free(r->result);
                timeline_free(r->timeline);
        }
        free(c->rows);
        if (c->tmp_dir && !c->keep_tmp)
                (void) load_remove_tree(c->tmp_dir);
        else if (c->tmp_dir)
                log_error("The run's files are kept in %s.", c->tmp_dir);
        free(c->tmp_dir);
        free(c->daemon_path);
        free(c->self_path);
        free(c->notify_path);
        if (c->proc_fd >= 0)
                (void) close(c->proc_fd);
        if (c->notify_fd >= 0)
                (void) close(c->notify_fd);
        topology_free(c->topo);
}

static int add_row(Compare *c, const char *name, bool daemon, const char *source) {
        Row *rows;

        for (size_t i = 0; i < c->n_rows; i++)
                if (streq(c->rows[i].name, name)) {
                        log_error("Two rows would be called \"%s\": every configuration needs a "
                                  "name of its own (a --config file's base name, a sweep value).",
                                  name);
                        return -EINVAL;
                }
        if (!name[0] || strpbrk(name, " \t\n")) {
                log_error("The row name \"%s\" is empty or holds a blank: the table's columns "
                          "are split at blanks. Rename the file or choose another value.",
                          name);
                return -EINVAL;
        }
        rows = reallocarray(c->rows, c->n_rows + 1, sizeof *rows);
        if (!rows)
                return log_error_errno(ENOMEM, "Out of memory.");
        c->rows = rows;
        rows[c->n_rows] = (Row){ .name = strdup(name), .daemon = daemon };
        if (source)
                rows[c->n_rows].source = strdup(source);
        c->n_rows++;
        if (!rows[c->n_rows - 1].name || (source && !rows[c->n_rows - 1].source))
                return log_error_errno(ENOMEM, "Out of memory.");
        return 0;
}

/* ---- the daemon's binary and config */

static bool is_executable(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/*
 * loadgen's own executable, which each row runs. By its real path, not /proc/self/exe: the
 * child's comm is the file's name, and a sandbox whose loadgen is not called "loadgen" looks
 * stale to every other loadgen run, which kills it (loadgen/sandbox.c).
 */
static int find_self(Compare *c) {
        c->self_path = realpath("/proc/self/exe", NULL);
        if (!c->self_path)
                return log_error_errno(errno, "Failed to find loadgen's own executable: %m");
        return 0;
}

/* --daemon, else cgbalanced beside loadgen (the build tree), else in ../sbin (installed), else
 * in $PATH. */
static int find_daemon(Compare *c) {
        _cleanup_free_ char *dir = NULL;
        char *slash, *path = NULL;
        const char *env = getenv("PATH");

        if (c->daemon_arg) {
                if (!is_executable(c->daemon_arg)) {
                        log_error("--daemon=%s is not an executable file.", c->daemon_arg);
                        return -EINVAL;
                }
                c->daemon_path = strdup(c->daemon_arg);
                return c->daemon_path ? 0 : log_error_errno(ENOMEM, "Out of memory.");
        }
        slash = strrchr(c->self_path, '/');
        dir = strndup(c->self_path, (size_t) (slash - c->self_path));
        if (!dir)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (asprintf(&path, "%s/" DAEMON_NAME, dir) >= 0 && is_executable(path))
                goto found;
        free(path);
        if (asprintf(&path, "%s/../sbin/" DAEMON_NAME, dir) >= 0 && is_executable(path))
                goto found;
        free(path);
        path = NULL;
        for (const char *p = env ? env : ""; *p;) {
                const char *end = strchrnul(p, ':');

                if (end > p && asprintf(&path, "%.*s/" DAEMON_NAME, (int) (end - p), p) >= 0) {
                        if (is_executable(path))
                                goto found;
                        path = mfree(path);
                }
                p = *end ? end + 1 : end;
        }
        log_error(DAEMON_NAME " not found beside loadgen (%s), in %s/../sbin, nor in $PATH; "
                              "pass --daemon=PATH.",
                  dir, dir);
        return -ENOENT;
found:
        c->daemon_path = path;
        return 0;
}

/*
 * Whether the cgbalanced pid may touch loadgen's groups (cgbalance.slice/loadgen-PID): from its
 * command line (--config, --root, --dry-run, the one-shot actions) and the config it names,
 * read as it reads it. One whose config cannot be read is taken to manage them. *ret_config is
 * the config's path, for the message.
 */
static bool daemon_conflicts(const Compare *c, pid_t pid, char **ret_config) {
        _cleanup_(tunables_free) Tunables t = { 0 };
        _cleanup_free_ char *path = NULL, *cmdline = NULL, *probe = NULL;
        const char *config = NULL;
        bool quiet = false;
        size_t size = 0;
        ConfigError e = { 0 };

        if (asprintf(&path, "%d/cmdline", (int) pid) < 0 ||
            read_full_at(c->proc_fd, path, 65536, &cmdline, &size) < 0)
                return true;
        /* Its argv: NUL-separated words. */
        for (const char *a = cmdline; a < cmdline + size; a += strlen(a) + 1) {
                const char *next = a + strlen(a) + 1 < cmdline + size ? a + strlen(a) + 1 : NULL;

                if ((streq(a, "--config") || streq(a, "-c")) && next)
                        config = next;
                else if (!strncmp(a, "--config=", 9))
                        config = a + 9;
                else if (!strncmp(a, "-c", 2) && a[2])
                        config = a + 2;
                else if (streq(a, "--root") || !strncmp(a, "--root=", 7) || streq(a, "--once") ||
                         streq(a, "--check-config") || streq(a, "--dump-topology") ||
                         streq(a, "--print-defaults") || streq(a, "--dry-run") || streq(a, "-n"))
                        quiet = true; /* it changes nothing */
        }
        free(path);
        path = NULL;
        if (!config)
                path = strdup(TUNABLES_DEFAULT_PATH);
        else if (config[0] != '/') {
                if (asprintf(&path, "/proc/%d/cwd/%s", (int) pid, config) < 0)
                        path = NULL; /* asprintf() leaves it undefined */
        } else
                path = strdup(config);
        *ret_config = path ? strdup(path) : NULL;
        if (quiet)
                return false;
        if (!path || tunables_load(path, /* optional= */ !config, &t, &e) < 0)
                return true;
        if (t.dry_run)
                return false;
        if (asprintf(&probe, SANDBOX_SLICE "/loadgen-%d", (int) getpid()) < 0)
                return true;
        return tunables_cgroup_matches(t.cgroups, probe) &&
               !tunables_cgroup_matches(t.exclude_cgroups, probe);
}

/*
 * Another cgbalanced managing loadgen's groups would fight the one compare starts, and make the
 * no-daemon row no such thing: refused. One that manages other groups (a test's) is let be.
 */
static int check_no_daemon_running(const Compare *c, bool verbose) {
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        int r;

        r = proc_pid_list_at(c->proc_fd, &pids, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to list the processes in /proc: %m");
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *comm = NULL, *path = NULL, *config = NULL;

                if (asprintf(&path, "%d/comm", (int) pids[i]) < 0)
                        return log_error_errno(ENOMEM, "Out of memory.");
                if (read_full_at(c->proc_fd, path, 64, &comm, NULL) < 0)
                        continue; /* gone */
                comm[strcspn(comm, "\n")] = '\0';
                if (!streq(comm, DAEMON_NAME))
                        continue;
                if (daemon_conflicts(c, pids[i], &config)) {
                        log_error(DAEMON_NAME
                                  " is already running (pid %d, config %s) and "
                                  "manages " SANDBOX_SLICE
                                  "/loadgen-*: two balancers would fight over the same tasks, "
                                  "and the rows would not compare what they say. Stop it first "
                                  "(systemctl stop cgbalance).",
                                  (int) pids[i], config ? config : "?");
                        return -EBUSY;
                }
                if (verbose)
                        log_notice("Another " DAEMON_NAME " runs (pid %d, config %s), managing "
                                   "none of loadgen's groups: going on.",
                                   (int) pids[i], config ? config : "?");
        }
        return 0;
}

/* The base configuration of a row: the file's (with its drop-ins, as the daemon reads it) or
 * the compiled-in defaults. Errors name the file and line. */
static int load_base(const char *path, Tunables *ret) {
        ConfigError e = { 0 };
        int r;

        if (!path)
                r = tunables_defaults(ret);
        else
                r = tunables_load(path, /* optional= */ false, ret, &e);
        if (r < 0) {
                if (!path || !e.message[0])
                        return log_error_errno(r, "Failed to load %s: %m",
                                               path ? path : "the defaults");
                log_error("%s", e.message);
        }
        return r;
}

/* Sets key to value in t through the daemon's parser; every error names the key. */
static int set_key(Tunables *t, const char *key, const char *value) {
        ConfigError e = { 0 };
        const ConfigKey *k;
        int r;

        r = config_lookup(&tunables_schema, key, &k);
        if (r == -ENOTUNIQ) {
                log_error("The key \"%s\" is in more than one section: write SECTION.%s.", key,
                          key);
                return r;
        }
        if (r < 0) {
                log_error("Unknown key \"%s\": see cgbalance.conf(5) or cgbalanced "
                          "--print-defaults.",
                          key);
                return r;
        }
        if (streq(k->name, "state_directory") && streq(k->section, "daemon")) {
                log_error("The key \"%s\" cannot be swept: loadgen gives each row's daemon a "
                          "state directory of its own.",
                          key);
                return -EINVAL;
        }
        r = config_set_one(&tunables_schema, t, key, value, &e);
        if (r < 0)
                log_error("Invalid value \"%s\" for %s: %s.", value, key, e.message);
        return r;
}

/*
 * Writes row's config into the run's directory: base (a file or NULL for the defaults), the
 * sweep's key=value if any, the row's own state directory; then loads the file back as the
 * daemon will, so that no row starts on a config the daemon would refuse.
 */
static int make_row_config(Compare *c, size_t index, const char *base, const char *key,
                           const char *value) {
        _cleanup_(tunables_free) Tunables t = { 0 }, check = { 0 };
        _cleanup_free_ char *comment = NULL;
        Row *row = &c->rows[index];
        ConfigError e = { 0 };
        FILE *f;
        int r;

        if (asprintf(&row->config_path, "%s/row-%zu.conf", c->tmp_dir, index) < 0 ||
            asprintf(&row->state_dir, "%s/row-%zu.state", c->tmp_dir, index) < 0 ||
            asprintf(&comment,
                     "Written by loadgen %s for its row \"%s\": %s%s%s%s%s,\n"
                     "with a state directory of the row's own.",
                     c->command, row->name, base ? base : "the compiled-in defaults",
                     key ? " with " : "", key ? key : "", key ? "=" : "", key ? value : "") < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (mkdir(row->state_dir, 0700) < 0)
                return log_error_errno(errno, "Failed to make %s: %m", row->state_dir);
        r = load_base(base, &t);
        if (r < 0)
                return r;
        if (key && (r = set_key(&t, key, value)) < 0)
                return r;
        r = config_set_one(&tunables_schema, &t, "daemon.state_directory", row->state_dir, &e);
        if (r < 0)
                return log_error_errno(r, "Failed to set the state directory %s: %s",
                                       row->state_dir, e.message);
        r = compare_config_text(&t, comment, &row->config_text);
        if (r < 0)
                return log_error_errno(r, "Failed to write the config of row %s: %m", row->name);
        f = fopen(row->config_path, "we");
        if (!f || fputs(row->config_text, f) < 0 || fclose(f) != 0)
                return log_error_errno(errno, "Failed to write %s: %m", row->config_path);
        r = tunables_load(row->config_path, /* optional= */ false, &check, &e);
        if (r < 0)
                return log_error_errno(r, "The config generated for row %s does not load: %s",
                                       row->name, e.message);
        return 0;
}

/* ---- child processes */

/* Variables of loadgen's own service manager that are not the daemon's: its stderr is our pipe,
 * its readiness goes to our socket. */
static const char *const daemon_env_drop[] = { "JOURNAL_STREAM", "WATCHDOG_USEC", "WATCHDOG_PID",
                                               "LISTEN_FDS",     "LISTEN_PID",    "NOTIFY_SOCKET" };

/*
 * Starts a child of compare: it dies with loadgen (a daemon restores what it changed on SIGTERM;
 * a suite cleans up), stdin from /dev/null, stdout (and stderr) to a pipe in ret->out_fd.
 */
static int spawn(const char *path, char *const argv[], bool stderr_too, bool daemon,
                 const char *notify_path, Child *ret) {
        _cleanup_free_ char *notify = NULL;
        _cleanup_free_ char **envp = NULL;
        ChildSpec spec = {
                .exec_path = path,
                .argv = (const char *const *) argv,
                .pdeathsig = SIGTERM,
                /* The daemon in its own process group: a terminal's Ctrl-C reaches loadgen,
                 * which stops the suite first and the daemon last. */
                .new_pgrp = daemon,
                .exec_error_to_stderr = true,
                .stdin_fd = CHILD_FD_NULL,
                .stdout_fd = CHILD_FD_PIPE,
                .stderr_fd = stderr_too ? CHILD_FD_PIPE : CHILD_FD_INHERIT,
        };

        if (daemon && asprintf(&notify, "NOTIFY_SOCKET=%s", notify_path) < 0)
                return -ENOMEM;
        if (daemon)
                envp = child_environ(daemon_env_drop, ELEMENTSOF(daemon_env_drop), notify);
        else /* the suite reports to no one */
                envp = child_environ((const char *const[]){ "NOTIFY_SOCKET" }, 1, NULL);
        if (!envp)
                return -ENOMEM;
        spec.envp = envp;
        return child_spawn(&spec, ret);
}

/* ---- the daemon of a row */

typedef struct Daemon {
        Child ch;
        int log_fd;
        char line[DAEMON_LINE_MAX + 1];
        size_t len;
        char *tail[DAEMON_TAIL_LINES];
        size_t n_lines;
        uint64_t start_usec;
} Daemon;

static void daemon_done(Daemon *d) {
        if (d->ch.out_fd >= 0)
                (void) close(d->ch.out_fd);
        child_done(&d->ch);
        if (d->log_fd >= 0)
                (void) close(d->log_fd);
        for (size_t i = 0; i < DAEMON_TAIL_LINES; i++)
                free(d->tail[i]);
}

/* One line of its stderr: into its log with the time since the row started, into the tail
 * kept for an error message. (Its moves come through its events pipe, not its words.) */
static void daemon_line(Daemon *d, const char *line) {
        uint64_t now = now_usec(), t = now - MIN(now, d->start_usec);

        if (d->log_fd >= 0)
                (void) dprintf(d->log_fd, "[%5" PRIu64 ".%03" PRIu64 "] %s\n", t / USEC_PER_SEC,
                               t % USEC_PER_SEC / 1000, line);
        free(d->tail[d->n_lines % DAEMON_TAIL_LINES]);
        d->tail[d->n_lines % DAEMON_TAIL_LINES] = strdup(line);
        d->n_lines++;
}

/* Reads what the daemon wrote: its events into the timeline, complete lines of its stderr to
 * daemon_line(). */
static void daemon_read(Daemon *d, Row *row) {
        if (timeline_read_events(row->timeline) == -ENOMEM)
                log_warning("Out of memory: daemon events are missing from row %s's timeline.",
                            row->name);
        for (;;) {
                ssize_t k;
                char *nl;

                if (d->ch.out_fd < 0)
                        return;
                k = read(d->ch.out_fd, d->line + d->len, DAEMON_LINE_MAX - d->len);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (k <= 0) { /* EOF, or an error: no more lines */
                        if (d->len > 0) {
                                d->line[d->len] = '\0';
                                daemon_line(d, d->line);
                        }
                        d->len = 0;
                        (void) close(d->ch.out_fd);
                        d->ch.out_fd = -1;
                        return;
                }
                d->len += (size_t) k;
                while ((nl = memchr(d->line, '\n', d->len))) {
                        *nl = '\0';
                        daemon_line(d, d->line);
                        d->len -= (size_t) (nl + 1 - d->line);
                        memmove(d->line, nl + 1, d->len);
                }
                if (d->len == DAEMON_LINE_MAX) { /* a line this long: cut it */
                        d->line[d->len] = '\0';
                        daemon_line(d, d->line);
                        d->len = 0;
                }
        }
}

static void log_status(const char *what, int status, char *buf, size_t size) {
        if (WIFSIGNALED(status))
                snprintf(buf, size, "%s was killed by signal %d (%s)", what, WTERMSIG(status),
                         strsignal(WTERMSIG(status)));
        else
                snprintf(buf, size, "%s exited with status %d", what, WEXITSTATUS(status));
}

/* Logs that the daemon of row failed (why), with the last lines it wrote and where its log is. */
static int daemon_failed(Compare *c, const Daemon *d, const Row *row, const char *why) {
        size_t first = d->n_lines > DAEMON_TAIL_LINES ? d->n_lines - DAEMON_TAIL_LINES : 0;

        log_error("Row %s: " DAEMON_NAME " %s. Its last lines:", row->name, why);
        for (size_t i = first; i < d->n_lines; i++)
                fprintf(stderr, "  %s\n", d->tail[i % DAEMON_TAIL_LINES]);
        log_error("Its whole log: %s", row->log_path);
        if (!c->json_path)
                c->keep_tmp = true;
        return -EIO;
}

static bool notify_ready(int fd) {
        char buf[4096];
        bool ready = false;
        ssize_t k;

        while ((k = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT)) >= 0) {
                buf[k] = '\0';
                for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l;
                     l = strtok_r(NULL, "\n", &save))
                        ready = ready || streq(l, "READY=1");
        }
        return ready;
}

static int daemon_start(Compare *c, Row *row, size_t index, Daemon *d) {
        _cleanup_free_ char *file = NULL, *events = NULL;
        uint64_t deadline;
        int events_fd, r;

        file = strdup(row->name);
        if (!file)
                return log_error_errno(ENOMEM, "Out of memory.");
        for (char *p = file; *p; p++)
                if (*p == '/') /* a sweep value with a '/' makes no directory */
                        *p = '_';
        if (c->json_path)
                r = asprintf(&row->log_path, "%s.daemon-%s.log", c->json_path, file);
        else
                r = asprintf(&row->log_path, "%s/row-%zu.daemon.log", c->tmp_dir, index);
        if (r < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        d->log_fd = open(row->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (d->log_fd < 0)
                return log_error_errno(errno, "Failed to open the daemon's log %s: %m",
                                       row->log_path);
        (void) notify_ready(c->notify_fd); /* a previous row's leftovers */
        r = check_no_daemon_running(c, /* verbose= */ false);
        if (r < 0)
                return r;
        r = timeline_open_events(row->timeline, &events_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to make a pipe for the daemon's events: %m");
        if (asprintf(&events, "--events=%d", events_fd) < 0) {
                (void) close(events_fd);
                return log_error_errno(ENOMEM, "Out of memory.");
        }
        r = spawn(c->daemon_path,
                  (char *[]){ (char *) DAEMON_NAME, (char *) "--config", row->config_path, events,
                              NULL },
                  /* stderr_too= */ true, /* daemon= */ true, c->notify_path, &d->ch);
        (void) close(events_fd); /* the daemon's now: EOF when it is gone */
        if (r < 0)
                return log_error_errno(r, "Failed to start %s: %m", c->daemon_path);
        log_info("Row %s: started %s --config %s (pid %d).", row->name, c->daemon_path,
                 row->config_path, (int) d->ch.pid);
        deadline = now_usec() + DAEMON_READY_TIMEOUT_USEC;
        for (;;) {
                struct pollfd p[2] = { { .fd = c->notify_fd, .events = POLLIN },
                                       { .fd = d->ch.out_fd, .events = POLLIN } };
                char why[128];

                if (notify_ready(c->notify_fd))
                        return 0;
                daemon_read(d, row);
                if (cli_stop)
                        return -EINTR;
                if (child_reap(&d->ch)) {
                        daemon_read(d, row);
                        log_status("exited before it was ready: it", d->ch.status, why, sizeof why);
                        return daemon_failed(c, d, row, why);
                }
                if (now_usec() > deadline) {
                        snprintf(why, sizeof why, "was not ready after %" PRIu64 " s",
                                 DAEMON_READY_TIMEOUT_USEC / USEC_PER_SEC);
                        return daemon_failed(c, d, row, why);
                }
                (void) poll(p, d->ch.out_fd >= 0 ? 2 : 1, POLL_MAX_MSEC);
        }
}

/* SIGTERM, which makes it restore every mask and weight it changed, and a bounded wait. */
static int daemon_stop(Compare *c, Row *row, Daemon *d) {
        uint64_t deadline = now_usec() + DAEMON_STOP_TIMEOUT_USEC;
        char why[160];

        if (d->ch.pid <= 0)
                return 0;
        (void) child_signal(&d->ch, SIGTERM);
        while (!child_reap(&d->ch)) {
                struct pollfd p = { .fd = d->ch.out_fd, .events = POLLIN };

                daemon_read(d, row);
                if (now_usec() > deadline) {
                        child_kill(&d->ch);
                        snprintf(why, sizeof why,
                                 "did not stop within %" PRIu64
                                 " s of SIGTERM and was killed: what it changed may not be "
                                 "restored",
                                 DAEMON_STOP_TIMEOUT_USEC / USEC_PER_SEC);
                        return daemon_failed(c, d, row, why);
                }
                if (d->ch.out_fd >= 0)
                        (void) poll(&p, 1, POLL_MAX_MSEC);
                else
                        (void) usleep(POLL_MAX_MSEC * 1000);
        }
        daemon_read(d, row);
        if (!WIFEXITED(d->ch.status) || WEXITSTATUS(d->ch.status) != 0) {
                log_status("exited with an error on SIGTERM: it", d->ch.status, why, sizeof why);
                return daemon_failed(c, d, row, why);
        }
        return 0;
}

/* ---- the suite of a row */

typedef struct Output {
        char *buf;
        size_t len, cap;
        bool too_long;
} Output;

static void output_read(Child *ch, Output *o) {
        for (;;) {
                char chunk[65536];
                ssize_t k;

                if (ch->out_fd < 0)
                        return;
                k = read(ch->out_fd, chunk, sizeof chunk);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (k <= 0) {
                        (void) close(ch->out_fd);
                        ch->out_fd = -1;
                        return;
                }
                if (o->len + (size_t) k > OUTPUT_MAX ||
                    greedy_realloc((void **) &o->buf, &o->cap, o->len + (size_t) k + 1, 1, 4096) <
                            0) {
                        o->too_long = true;
                        continue;
                }
                memcpy(o->buf + o->len, chunk, (size_t) k);
                o->len += (size_t) k;
                o->buf[o->len] = '\0';
        }
}

static int suite_start(Compare *c, Row *row, size_t index, Child *s) {
        _cleanup_free_ char *label = NULL, *json = NULL, *statics = NULL;
        _cleanup_free_ char **argv = NULL;
        size_t n = 0;
        int r;

        if (asprintf(&row->result_path, "%s/row-%zu.json", c->tmp_dir, index) < 0 ||
            asprintf(&label, "--label=%s", row->name) < 0 ||
            asprintf(&json, "--json=%s", row->result_path) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (row->static_spec && asprintf(&statics, "--static=%s", row->static_spec) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        argv = calloc(c->n_suite_args + 6, sizeof *argv);
        if (!argv)
                return log_error_errno(ENOMEM, "Out of memory.");
        argv[n++] = (char *) "loadgen";
        if (statics) /* loadgen's own option: every group is made with it */
                argv[n++] = statics;
        argv[n++] = (char *) c->suite->name;
        for (size_t i = 0; i < c->n_suite_args; i++)
                argv[n++] = c->suite_args[i];
        /* Last, so they win over anything before them. */
        if (c->suite->takes_label)
                argv[n++] = label;
        argv[n++] = json;
        r = spawn(c->self_path, argv, /* stderr_too= */ false, /* daemon= */ false, NULL, s);
        if (r < 0)
                return log_error_errno(r, "Failed to start loadgen %s: %m", c->suite->name);
        log_info("Row %s: started loadgen %s (pid %d).", row->name, c->suite->name, (int) s->pid);
        return 0;
}

/*
 * Runs the suite of row to its end, beside the daemon d (NULL for none), sampling the timeline
 * every second and reading the daemon's lines as they come. A stop signal is passed on to the
 * suite, which ends its processes and removes its cgroups. 0; -EINTR; -EIO (logged) when the
 * suite or the daemon failed.
 */
static int suite_run(Compare *c, Row *row, size_t index, Daemon *d) {
        Child s = CHILD_NULL;
        Output out = { 0 };
        uint64_t next_sample = now_usec() + SAMPLE_INTERVAL_USEC, stop_deadline = 0;
        bool daemon_died = false;
        char why[160];
        int r;

        r = suite_start(c, row, index, &s);
        if (r < 0)
                return r;
        while (!child_reap(&s)) {
                struct pollfd p[3] = { { .fd = s.out_fd, .events = POLLIN },
                                       { .fd = d ? d->ch.out_fd : -1, .events = POLLIN },
                                       { .fd = c->notify_fd, .events = POLLIN } };
                uint64_t now = now_usec();
                int timeout = POLL_MAX_MSEC;

                if (now >= next_sample) {
                        if (timeline_sample(row->timeline, now) < 0)
                                log_warning("Failed to sample /proc/stat for row %s's timeline.",
                                            row->name);
                        next_sample += SAMPLE_INTERVAL_USEC *
                                       ((now - next_sample) / SAMPLE_INTERVAL_USEC + 1);
                }
                timeout = (int) MIN((uint64_t) timeout,
                                    (next_sample - MIN(next_sample, now)) / 1000 + 1);
                if ((cli_stop || daemon_died) && stop_deadline == 0) {
                        (void) child_signal(&s, cli_stop ? (int) cli_stop : SIGTERM);
                        stop_deadline = now + SUITE_STOP_TIMEOUT_USEC;
                } else if (stop_deadline > 0 && now > stop_deadline) {
                        log_error("loadgen %s did not end within %" PRIu64
                                  " s of the signal: killing it; the next run removes what it "
                                  "left.",
                                  c->suite->name, SUITE_STOP_TIMEOUT_USEC / USEC_PER_SEC);
                        (void) child_signal(&s, SIGKILL);
                }
                if (d && !daemon_died && child_reap(&d->ch)) {
                        daemon_read(d, row);
                        daemon_died = true;
                }
                (void) poll(p, 3, timeout);
                output_read(&s, &out);
                if (d)
                        daemon_read(d, row);
                (void) notify_ready(c->notify_fd); /* STATUS= lines: not kept */
        }
        output_read(&s, &out); /* what is left; a grandchild holding the pipe is not waited for */
        if (s.out_fd >= 0)
                (void) close(s.out_fd);
        child_done(&s);
        row->output = out.buf ? out.buf : strdup("");
        if (!row->output)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (out.too_long)
                log_warning("Row %s: loadgen %s printed more than %" PRIu64
                            " MiB; the rest is cut.",
                            row->name, c->suite->name, OUTPUT_MAX >> 20);
        if (daemon_died) {
                log_status("stopped while the suite ran: it", d->ch.status, why, sizeof why);
                return daemon_failed(c, d, row, why);
        }
        if (cli_stop)
                return -EINTR;
        if (!WIFEXITED(s.status) || WEXITSTATUS(s.status) != 0) {
                log_status("", s.status, why, sizeof why);
                log_error("Row %s: loadgen %s failed:%s.", row->name, c->suite->name, why);
                return WIFEXITED(s.status) && WEXITSTATUS(s.status) == EXIT_USAGE ? -EINVAL : -EIO;
        }
        r = read_full_at(AT_FDCWD, row->result_path, RESULT_MAX, &row->result, NULL);
        if (r < 0)
                return log_error_errno(r, "Row %s: failed to read loadgen %s's JSON %s: %m",
                                       row->name, c->suite->name, row->result_path);
        if (row->result[strspn(row->result, " \t\r\n")] == '\0')
                return log_error_errno(EBADMSG, "Row %s: loadgen %s wrote no JSON to %s.",
                                       row->name, c->suite->name, row->result_path);
        return 0;
}

static int row_run(Compare *c, size_t index) {
        Row *row = &c->rows[index];
        Daemon d = { .ch = CHILD_NULL, .log_fd = -1 };
        uint64_t start;
        int r, k;

        log_info("Row %zu of %zu: %s%s.", index + 1, c->n_rows, row->name,
                 row->daemon ? "" : ", no " DAEMON_NAME);
        r = timeline_new(c->proc_fd, c->topo, &row->timeline);
        if (r < 0)
                return log_error_errno(r, "Failed to set up row %s's timeline: %m", row->name);
        start = d.start_usec = now_usec();
        if (timeline_sample(row->timeline, start) < 0) /* the baseline: t = 0 */
                log_warning("Failed to sample /proc/stat for row %s's timeline.", row->name);
        if (row->daemon) {
                r = daemon_start(c, row, index, &d);
                if (r == 0)
                        log_info("Row %s: " DAEMON_NAME " ready after %" PRIu64 " ms.", row->name,
                                 (now_usec() - start) / 1000);
        } else
                r = check_no_daemon_running(c, /* verbose= */ false);
        if (r == 0 && row->static_spec)
                log_info("Row %s: the suite sets %s on its groups, left so.", row->name,
                         row->static_spec);
        if (r == 0)
                r = suite_run(c, row, index, row->daemon ? &d : NULL);
        row->elapsed_usec = now_usec() - start;
        if (row->daemon) {
                k = daemon_stop(c, row, &d);
                if (r == 0)
                        r = k;
        }
        daemon_done(&d);
        if (r == 0)
                log_info("Row %s done in %" PRIu64 ".%01" PRIu64 " s.", row->name,
                         row->elapsed_usec / USEC_PER_SEC,
                         row->elapsed_usec % USEC_PER_SEC / 100000);
        return r;
}

/* ---- output */

static int print_table(const Compare *c) {
        _cleanup_free_ const char **labels = calloc(c->n_rows, sizeof *labels);
        _cleanup_free_ const char **outputs = calloc(c->n_rows, sizeof *outputs);
        _cleanup_free_ char *table = NULL;
        int r;

        if (!labels || !outputs)
                return log_error_errno(ENOMEM, "Out of memory.");
        for (size_t i = 0; i < c->n_rows; i++) {
                labels[i] = c->rows[i].name;
                outputs[i] = c->rows[i].output;
        }
        r = compare_merge(c->suite, labels, outputs, c->n_rows, &table);
        if (r == -EBADMSG) {
                log_warning("The rows' tables differ in shape; printing each in full.");
                r = compare_table(c->suite, labels, outputs, c->n_rows, &table);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to merge the tables: %m");
        fputs(table, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(EIO, "Failed to write the table: %m");
}

/* Every row's config, the suite's JSON and the timeline, as one JSON object. */
static void compose_json(const Compare *c, Json *j) {
        json_begin(j, '{');
        json_string(j, "loadgen", CGBALANCE_VERSION);
        json_string(j, "command", c->command);
        json_string(j, "suite", c->suite->name);
        json_key(j, "suite_args");
        json_begin(j, '[');
        for (size_t i = 0; i < c->n_suite_args; i++)
                json_string(j, NULL, c->suite_args[i]);
        json_end(j, ']');
        json_key(j, "rows");
        json_begin(j, '[');
        for (size_t i = 0; i < c->n_rows; i++) {
                const Row *row = &c->rows[i];

                json_begin(j, '{');
                json_string(j, "name", row->name);
                json_bool(j, "daemon", row->daemon);
                if (row->static_spec)
                        json_string(j, "static", row->static_spec);
                else
                        json_null(j, "static");
                if (row->config_text)
                        json_string(j, "config", row->config_text);
                else
                        json_null(j, "config");
                if (row->log_path)
                        json_string(j, "daemon_log", row->log_path);
                json_u64(j, "elapsed_usec", row->elapsed_usec);
                json_raw(j, "result", row->result);
                timeline_write_json(row->timeline, j, "timeline");
                json_end(j, '}');
        }
        json_end(j, ']');
        json_end(j, '}');
}

/* --json=FILE: written whole or not at all (a temporary file renamed). */
static int write_json(const Compare *c) {
        _cleanup_free_ char *tmp = NULL;
        Json j = { 0 };
        int r = 0;

        if (asprintf(&tmp, "%s.tmp", c->json_path) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        j.f = fopen(tmp, "we");
        if (!j.f)
                return log_error_errno(errno, "Failed to write %s: %m", tmp);
        compose_json(c, &j);
        if (ferror(j.f))
                r = -EIO;
        if (fclose(j.f) != 0 && r == 0)
                r = negative_errno();
        if (r == 0 && rename(tmp, c->json_path) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlink(tmp);
                return log_error_errno(r, "Failed to write %s: %m", c->json_path);
        }
        return 0;
}

/* ---- the commands */

static void help(bool sweep) {
        if (sweep)
                printf("Usage: loadgen sweep KEY=V1,V2,... [OPTIONS] -- SUITE [SUITE OPTIONS]\n"
                       "\n"
                       "Runs SUITE once per value of one cgbalanced tunable, as seed 001 swept\n"
                       "prio_bonus_ratio: each row starts " DAEMON_NAME
                       " on BASE.conf (or the compiled-in\n"
                       "defaults) with KEY (SECTION.KEY or a key of one section) set to the\n"
                       "value, runs the suite, stops the daemon; then prints the suite's table\n"
                       "with a row (or column) per value, named KEY=V.\n"
                       "\n"
                       "With \"-- replay RECORDING\" as the suite (cgbalance-record(5)), nothing\n"
                       "runs live: each value replays the recording with KEY set in the recorded\n"
                       "configuration (or BASE.conf), and the table has per value the moves,\n"
                       "cross-node moves, weight changes and lever steps, and the ticks whose\n"
                       "plan differs from the recorded configuration's.\n"
                       "\n"
                       "  -c --config=BASE.conf  The configuration every value is set in.\n");
        else
                printf("Usage: loadgen compare [OPTIONS] -- SUITE [SUITE OPTIONS]\n"
                       "\n"
                       "Runs SUITE once per configuration, starting and stopping " DAEMON_NAME "\n"
                       "itself, and prints the suite's table with a row (or column) per\n"
                       "configuration, as the seed mails compared kernels: no-daemon (with\n"
                       "--no-daemon), one per --static, default (the compiled-in defaults;\n"
                       "not with --no-default), then one per --config file, named by its base\n"
                       "name without .conf.\n"
                       "\n"
                       "  -c --config=FILE       A configuration to compare (repeatable).\n"
                       "     --static=SPEC       A row with no " DAEMON_NAME
                       " where the suite's groups\n"
                       "                         are set once, as an operator would instead,\n"
                       "                         and left (repeatable, a row each, named\n"
                       "                         static:SPEC). SPEC: GROUP=weight:N (cpu.weight\n"
                       "                         1..10000, cpu.shares on v1) or GROUP=idle\n"
                       "                         (cpu.idle 1, Linux 5.15+), several joined by\n"
                       "                         +; GROUP: job (the compile, the benchmark) or\n"
                       "                         load (the background load). E.g.\n"
                       "                         --static job=weight:1000 --static load=idle.\n"
                       "     --no-default        No row with the compiled-in defaults.\n");
        printf("     --no-daemon         First a row with no " DAEMON_NAME " running.\n"
               "  -j --json[=FILE]       Every row's config, the suite's own JSON and the\n"
               "                         timeline (per-node load each second, the daemon's\n"
               "                         moves), for loadgen plot: on stdout instead of the\n"
               "                         table, or in FILE beside it; with FILE each daemon's\n"
               "                         log is kept beside it, in FILE.daemon-ROW.log.\n"
               "     --daemon=PATH       The " DAEMON_NAME " to run (default: the one beside\n"
               "                         loadgen, in ../sbin from it, or in $PATH).\n"
               "  -h --help              Show this help.\n"
               "\n"
               "SUITE, with its own options but --label and --json, which %s sets, is one of:\n"
               " ",
               sweep ? "sweep" : "compare");
        for (size_t i = 0; i < n_compare_suites; i++)
                printf(" %s", compare_suites[i].name);
        printf("\nRun as root. See loadgen(1).\n");
}

typedef struct Args {
        const char **configs;
        size_t n_configs;
        const char **statics; /* --static SPECs */
        size_t n_statics;
        bool no_daemon, no_default;
        const char *sweep; /* KEY=V1,V2 */
        char *key; /* parsed from it */
        char **values;
} Args;

static void args_done(Args *a) {
        free(a->key);
        compare_strv_free(a->values);
}

/* Options before "--", SUITE and its options after. 1 after --help, 0, or -EINVAL (logged). */
static int parse_args(int argc, char *argv[], bool sweep, Compare *c, Args *a) {
        enum { ARG_NO_DAEMON = 0x100, ARG_DAEMON, ARG_STATIC, ARG_NO_DEFAULT };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "no-daemon", no_argument, NULL, ARG_NO_DAEMON },
                { "static", required_argument, NULL, ARG_STATIC },
                { "no-default", no_argument, NULL, ARG_NO_DEFAULT },
                CLI_OPT_JSON,
                { "daemon", required_argument, NULL, ARG_DAEMON },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int dd = 1, ch;

        while (dd < argc && !streq(argv[dd], "--"))
                dd++;
        optind = 0;
        while ((ch = getopt_long(dd, argv, "c:" CLI_SHORT_JSON "h", options, NULL)) >= 0) {
                switch (ch) {
                case 'c':
                        if (sweep && a->n_configs > 0) {
                                log_error("sweep takes one --config, the base of every value.");
                                return -EINVAL;
                        }
                        a->configs[a->n_configs++] = optarg;
                        break;
                case ARG_NO_DAEMON: a->no_daemon = true; break;
                case ARG_STATIC:
                case ARG_NO_DEFAULT:
                        if (sweep) {
                                log_error("sweep takes no --%s: its rows are the values; use "
                                          "loadgen compare.",
                                          ch == ARG_STATIC ? "static" : "no-default");
                                return -EINVAL;
                        }
                        if (ch == ARG_STATIC)
                                a->statics[a->n_statics++] = optarg;
                        else
                                a->no_default = true;
                        break;
                case 'j':
                        c->json_stdout = cli_json_to(optarg ? optarg : "") == CLI_JSON_STDOUT;
                        c->json_path = c->json_stdout ? NULL : optarg;
                        break;
                case ARG_DAEMON: c->daemon_arg = optarg; break;
                case 'h': help(sweep); return 1;
                default: return -EINVAL;
                }
        }
        if (dd >= argc) {
                log_error("Missing \"--\" before the suite: loadgen %s [OPTIONS] -- SUITE "
                          "[SUITE OPTIONS].",
                          c->command);
                return -EINVAL;
        }
        if (sweep && optind < dd)
                a->sweep = argv[optind++];
        if (optind < dd) {
                log_error("Unexpected argument \"%s\"; see loadgen %s --help.", argv[optind],
                          c->command);
                return -EINVAL;
        }
        if (sweep && !a->sweep) {
                log_error("Missing KEY=V1,V2,...; see loadgen sweep --help.");
                return -EINVAL;
        }
        if (dd + 1 >= argc) {
                log_error("Missing SUITE after \"--\": contest or a benchmark.");
                return -EINVAL;
        }
        if (sweep && streq(argv[dd + 1], "replay")) {
                if (argc - dd - 2 != 1) {
                        log_error("sweep -- replay takes one recording (cgbalance-record(5)).");
                        return -EINVAL;
                }
                c->replay_path = argv[dd + 2];
                return 0;
        }
        c->suite = compare_suite_find(argv[dd + 1]);
        if (!c->suite) {
                log_error("Unknown suite \"%s\" after \"--\": want contest or a benchmark (see "
                          "loadgen list).",
                          argv[dd + 1]);
                return -EINVAL;
        }
        c->suite_args = argv + dd + 2;
        c->n_suite_args = (size_t) (argc - dd - 2);
        for (size_t i = 0; i < c->n_suite_args; i++) {
                const char *s = c->suite_args[i];

                if (streq(s, "--json") || !strncmp(s, "--json=", 7) || streq(s, "--label") ||
                    !strncmp(s, "--label=", 8)) {
                        log_error("%s after the suite: %s sets it for each row; give loadgen %s "
                                  "--json=FILE for the results.",
                                  s, c->command, c->command);
                        return -EINVAL;
                }
        }
        return 0;
}

/* A row per --static, each SPEC parsed and, for cpu.idle, checked against the kernel. */
static int plan_static_rows(Compare *c, const Args *a) {
        for (size_t i = 0; i < a->n_statics; i++) {
                _cleanup_free_ char *name = NULL;
                SandboxStatic s;
                char why[160];

                if (cli_parse_static(a->statics[i], &s, why, sizeof why) < 0) {
                        log_error("Invalid --static \"%s\": %s.", a->statics[i], why);
                        return -EINVAL;
                }
                /* compare's suites are contest and the benchmarks: job and load only */
                if (cli_check_static_groups(&s, NULL, 0, NULL) < 0)
                        return -EINVAL;
                if (asprintf(&name, "static:%s", a->statics[i]) < 0)
                        return log_error_errno(ENOMEM, "Out of memory.");
                if (cli_check_static(&s, a->statics[i]) < 0 || add_row(c, name, false, NULL) < 0)
                        return -EINVAL;
                c->rows[c->n_rows - 1].static_spec = a->statics[i];
        }
        return 0;
}

/* The rows, in order, with every --config and sweep value checked: nothing is written yet. */
static int plan_rows(Compare *c, Args *a, bool sweep) {
        int r = 0;

        if (a->no_daemon && add_row(c, "no-daemon", false, NULL) < 0)
                return -EINVAL;
        if (!sweep) {
                r = plan_static_rows(c, a);
                if (r == 0 && !a->no_default)
                        r = add_row(c, "default", true, NULL);
                for (size_t i = 0; r == 0 && i < a->n_configs; i++) {
                        _cleanup_(tunables_free) Tunables t = { 0 };
                        _cleanup_free_ char *name = NULL;

                        if (compare_row_name(a->configs[i], &name) < 0) {
                                log_error("--config %s: no row name in it (want NAME.conf).",
                                          a->configs[i]);
                                r = -EINVAL;
                        } else if ((r = load_base(a->configs[i], &t)) == 0)
                                r = add_row(c, name, true, a->configs[i]);
                }
                if (r == 0 && c->n_rows == 0) {
                        log_error("No rows: --no-default wants --no-daemon, a --static or a "
                                  "--config.");
                        r = -EINVAL;
                }
                return r < 0 ? -EINVAL : 0;
        }
        r = compare_parse_sweep(a->sweep, &a->key, &a->values);
        if (r < 0) {
                log_error("Invalid sweep \"%s\": want KEY=V1,V2,... with no empty value.",
                          a->sweep);
                return -EINVAL;
        }
        for (size_t i = 0; r == 0 && a->values[i]; i++) {
                _cleanup_(tunables_free) Tunables t = { 0 };
                _cleanup_free_ char *name = NULL;

                r = load_base(a->n_configs ? a->configs[0] : NULL, &t);
                if (r == 0)
                        r = set_key(&t, a->key, a->values[i]);
                if (r == 0 && asprintf(&name, "%s=%s", a->key, a->values[i]) < 0)
                        r = log_error_errno(ENOMEM, "Out of memory.");
                if (r == 0)
                        r = add_row(c, name, true, a->n_configs ? a->configs[0] : NULL);
        }
        return r < 0 ? -EINVAL : 0;
}

/* Each daemon row's config, written into the run's directory and loaded back. */
static int write_configs(Compare *c, const Args *a) {
        for (size_t i = 0, v = 0; i < c->n_rows; i++) {
                int r;

                if (!c->rows[i].daemon)
                        continue;
                r = make_row_config(c, i, c->rows[i].source, a->key,
                                    a->key ? a->values[v++] : NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* What every row needs: /proc, the topology, the notify socket, the run's directory. */
static int prepare(Compare *c) {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } addr = { .un = { .sun_family = AF_UNIX } };
        const char *tmp = getenv("TMPDIR");
        int r;

        c->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->proc_fd < 0)
                return log_error_errno(errno, "Failed to open /proc: %m");
        r = topology_new_from_system(&c->topo);
        if (r < 0)
                return log_error_errno(r, "Failed to read this machine's topology: %m");
        if (asprintf(&c->tmp_dir, "%s/loadgen-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", c->command) <
            0)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (!mkdtemp(c->tmp_dir)) {
                r = log_error_errno(errno, "Failed to make a directory %s: %m", c->tmp_dir);
                c->tmp_dir = mfree(c->tmp_dir);
                return r;
        }
        if (asprintf(&c->notify_path, "%s/notify", c->tmp_dir) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        if (strlen(c->notify_path) >= sizeof addr.un.sun_path)
                return log_error_errno(ENAMETOOLONG, "%s: too long for a socket; set TMPDIR.",
                                       c->notify_path);
        strcpy(addr.un.sun_path, c->notify_path);
        c->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->notify_fd < 0 || bind(c->notify_fd, &addr.sa, sizeof addr.un) < 0)
                return log_error_errno(errno, "Failed to make the notify socket %s: %m",
                                       c->notify_path);
        return 0;
}

static int run(int argc, char *argv[], bool sweep) {
        _cleanup_(compare_done) Compare c = { .command = sweep ? "sweep" : "compare",
                                              .proc_fd = -1,
                                              .notify_fd = -1 };
        _cleanup_free_ const char **configs = calloc((size_t) argc, sizeof *configs);
        _cleanup_free_ const char **statics = calloc((size_t) argc, sizeof *statics);
        _cleanup_(args_done) Args a = { .configs = configs, .statics = statics };
        bool any_daemon = false;
        int r;

        if (!configs || !statics)
                return log_error_errno(ENOMEM, "Out of memory."), 1;
        r = parse_args(argc, argv, sweep, &c, &a);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (c.replay_path) {
                if (find_self(&c) < 0)
                        return 1;
                if (find_daemon(&c) < 0)
                        return c.daemon_arg ? EXIT_USAGE : 1;
                return sweep_replay_run(
                        &(const SweepReplay){ .sweep = a.sweep,
                                              .recording = c.replay_path,
                                              .base_config = a.n_configs ? a.configs[0] : NULL,
                                              .daemon_path = c.daemon_path,
                                              .json_path = c.json_path,
                                              .json_stdout = c.json_stdout });
        }
        if (plan_rows(&c, &a, sweep) < 0)
                return EXIT_USAGE;
        if (find_self(&c) < 0)
                return 1;
        if (find_daemon(&c) < 0)
                return c.daemon_arg ? EXIT_USAGE : 1;
        if (prepare(&c) < 0 || write_configs(&c, &a) < 0)
                return 1;
        for (size_t i = 0; i < c.n_rows; i++)
                any_daemon = any_daemon || c.rows[i].daemon;
        if (any_daemon && geteuid() != 0) {
                log_error("loadgen %s starts " DAEMON_NAME ", which needs root: run it as root.",
                          c.command);
                return 1;
        }
        if (check_no_daemon_running(&c, /* verbose= */ true) < 0)
                return 1;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        for (size_t i = 0; i < c.n_rows; i++) {
                if (cli_stop)
                        return cli_interrupted();
                r = row_run(&c, i);
                if (r == -EINTR || cli_stop)
                        return cli_interrupted();
                if (r < 0)
                        return r == -EINVAL ? EXIT_USAGE : 1;
        }
        if (c.json_stdout) {
                compose_json(&c, &(Json){ .f = stdout });
                return fflush(stdout) == 0 ? 0 : 1;
        }
        if (print_table(&c) < 0)
                return 1;
        if (c.json_path && write_json(&c) < 0)
                return 1;
        return 0;
}

int compare_main(int argc, char *argv[]) {
        return run(argc, argv, /* sweep= */ false);
}

int sweep_main(int argc, char *argv[]) {
        return run(argc, argv, /* sweep= */ true);
}
