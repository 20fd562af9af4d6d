/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sweep_replay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare_merge.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"

#define OUTPUT_MAX (1u << 20)

typedef struct ReplayRow {
        char *value;
        uint64_t ticks, moves, cross, weights, levers, differ;
        double seconds;
} ReplayRow;

/* Runs argv with its stdout into *ret (NUL-terminated), stderr passed through; its exit code. */
static int capture(char *const argv[], char **ret) {
        _cleanup_close_ int rfd = -EBADF;
        int fds[2], status, r;
        size_t size = 0;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Failed to make a pipe: %m");
        pid = fork();
        if (pid < 0) {
                r = log_error_errno(errno, "Failed to fork: %m");
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (pid == 0) {
                if (dup2(fds[1], STDOUT_FILENO) < 0)
                        _exit(127);
                execv(argv[0], argv);
                _exit(127);
        }
        close(fds[1]);
        rfd = fds[0];
        r = read_full_fd(rfd, OUTPUT_MAX, ret, &size);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for %s: %m", argv[0]);
        if (r < 0)
                return log_error_errno(r, "Failed to read what %s printed: %m", argv[0]);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool get_u64(json_object *o, const char *a, const char *b, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, a, &v))
                return false;
        if (b && !json_object_object_get_ex(v, b, &v))
                return false;
        if (!json_object_is_type(v, json_type_int))
                return false;
        *ret = (uint64_t) json_object_get_int64(v);
        return true;
}

/* One value: cgbalanced --replay FILE [--config BASE] --set KEY=VALUE --json. */
static int replay_value(const SweepReplay *s, const char *key, ReplayRow *row) {
        _cleanup_free_ char *set = NULL, *out = NULL;
        char *argv[12];
        size_t n = 0;
        json_object *o, *secs;
        int r;

        if (asprintf(&set, "--set=%s=%s", key, row->value) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        argv[n++] = (char *) s->daemon_path;
        argv[n++] = (char *) "--replay";
        argv[n++] = (char *) s->recording;
        if (s->base_config) {
                argv[n++] = (char *) "--config";
                argv[n++] = (char *) s->base_config;
        }
        argv[n++] = set;
        argv[n++] = (char *) "--json";
        argv[n] = NULL;
        r = capture(argv, &out);
        if (r < 0)
                return r;
        /* 2: the recorded configuration's replay differs from the record somewhere; the
         * what-if is still what was asked for. */
        if (r != 0 && r != 2)
                return log_error_errno(EINVAL, "%s --replay %s with %s=%s failed (exit %d).",
                                       s->daemon_path, s->recording, key, row->value, r);
        o = json_tokener_parse(out);
        if (!o)
                return log_error_errno(EINVAL, "%s --replay printed no JSON.", s->daemon_path);
        if (!get_u64(o, "ticks", NULL, &row->ticks) ||
            !get_u64(o, "other_configuration", "moves", &row->moves) ||
            !get_u64(o, "other_configuration", "cross_node_moves", &row->cross) ||
            !get_u64(o, "other_configuration", "weight_changes", &row->weights) ||
            !get_u64(o, "other_configuration", "lever_changes", &row->levers) ||
            !get_u64(o, "ticks_differing", NULL, &row->differ)) {
                json_object_put(o);
                return log_error_errno(EINVAL,
                                       "%s --replay --json lacks a member this loadgen "
                                       "reads (ticks, other_configuration, "
                                       "ticks_differing).",
                                       s->daemon_path);
        }
        row->seconds =
                json_object_object_get_ex(o, "seconds", &secs) ? json_object_get_double(secs) : 0.0;
        json_object_put(o);
        return 0;
}

static void print_rows(const SweepReplay *s, const char *key, const ReplayRow *rows, size_t n) {
        int w = (int) strlen(key);

        for (size_t i = 0; i < n; i++)
                w = MAX(w, (int) strlen(rows[i].value));
        printf("loadgen sweep %s over the recording %s (%" PRIu64 " ticks, %.1f s), each value "
               "set in %s:\n",
               key, s->recording, n ? rows[0].ticks : 0, n ? rows[0].seconds : 0.0,
               s->base_config ? s->base_config : "the recorded configuration");
        printf("%-*s %7s %6s %8s %7s  %s\n", w, key, "moves", "cross", "weights", "levers",
               "ticks whose plan differs from the recorded configuration's");
        for (size_t i = 0; i < n; i++)
                printf("%-*s %7" PRIu64 " %6" PRIu64 " %8" PRIu64 " %7" PRIu64 "  %" PRIu64
                       " of %" PRIu64 "\n",
                       w, rows[i].value, rows[i].moves, rows[i].cross, rows[i].weights,
                       rows[i].levers, rows[i].differ, rows[i].ticks);
}

/* json-c here, as loadgen plot reads it: lib/json.h's writer and json-c share names. */
static int json_rows(const SweepReplay *s, const char *key, const ReplayRow *rows, size_t n,
                     FILE *f) {
        json_object *o = json_object_new_object(), *a = json_object_new_array();
        int r = 0;

        if (!o || !a) {
                json_object_put(o);
                json_object_put(a);
                return log_error_errno(ENOMEM, "Out of memory.");
        }
        json_object_object_add(o, "suite", json_object_new_string("replay"));
        json_object_object_add(o, "recording", json_object_new_string(s->recording));
        json_object_object_add(o, "key", json_object_new_string(key));
        json_object_object_add(o, "rows", a);
        for (size_t i = 0; i < n; i++) {
                json_object *row = json_object_new_object();

                if (!row) {
                        r = log_error_errno(ENOMEM, "Out of memory.");
                        break;
                }
                json_object_object_add(row, "value", json_object_new_string(rows[i].value));
                json_object_object_add(row, "ticks", json_object_new_uint64(rows[i].ticks));
                json_object_object_add(row, "moves", json_object_new_uint64(rows[i].moves));
                json_object_object_add(row, "cross_node_moves",
                                       json_object_new_uint64(rows[i].cross));
                json_object_object_add(row, "weight_changes",
                                       json_object_new_uint64(rows[i].weights));
                json_object_object_add(row, "lever_changes",
                                       json_object_new_uint64(rows[i].levers));
                json_object_object_add(row, "ticks_differing",
                                       json_object_new_uint64(rows[i].differ));
                json_object_array_add(a, row);
        }
        if (r >= 0)
                fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
        json_object_put(o);
        return r;
}

int sweep_replay_run(const SweepReplay *s) {
        _cleanup_free_ char *key = NULL;
        char **values = NULL;
        ReplayRow *rows = NULL;
        size_t n = 0;
        int r;

        r = compare_parse_sweep(s->sweep, &key, &values);
        if (r < 0) {
                log_error("Bad sweep \"%s\": want KEY=V1,V2,...", s->sweep);
                return 2; /* EXIT_USAGE */
        }
        while (values[n])
                n++;
        rows = calloc(n ? n : 1, sizeof *rows);
        if (!rows) {
                compare_strv_free(values);
                return log_error_errno(ENOMEM, "Out of memory."), 1;
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                rows[i].value = values[i];
                r = replay_value(s, key, &rows[i]);
        }
        if (r >= 0) {
                if (s->json_stdout)
                        r = json_rows(s, key, rows, n, stdout);
                else
                        print_rows(s, key, rows, n);
                if (s->json_path) {
                        FILE *f = fopen(s->json_path, "we");

                        if (!f)
                                r = log_error_errno(errno, "Failed to write %s: %m", s->json_path);
                        else {
                                r = json_rows(s, key, rows, n, f);
                                if (fclose(f) != 0)
                                        r = log_error_errno(errno, "Failed to write %s: %m",
                                                            s->json_path);
                        }
                }
        }
        free(rows);
        compare_strv_free(values);
        return r < 0 ? 1 : 0;
}
