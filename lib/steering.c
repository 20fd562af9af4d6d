/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "steering.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

static const char *const sched_ext_names[] = {
        [SCHED_EXT_DISABLED] = "disabled",
        [SCHED_EXT_ENABLING] = "enabling",
        [SCHED_EXT_ENABLED] = "enabled",
        [SCHED_EXT_DISABLING] = "disabling",
};

/* text without one trailing newline equals word */
static bool is_word(const char *text, const char *word) {
        size_t n = strlen(word);

        return strncmp(text, word, n) == 0 && (text[n] == '\0' || streq(text + n, "\n"));
}

int steering_parse_sched_ext(const char *text, SchedExtState *ret) {
        if (!text || !ret)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(sched_ext_names); i++)
                if (sched_ext_names[i] && is_word(text, sched_ext_names[i])) {
                        *ret = (SchedExtState) i;
                        return 0;
                }
        return -EBADMSG;
}

int steering_parse_numa_balancing(const char *text, int *ret) {
        if (!text || !ret)
                return -EINVAL;
        for (int v = 0; v <= 2; v++) {
                char word[2] = { (char) ('0' + v), '\0' };

                if (is_word(text, word)) {
                        *ret = v;
                        return 0;
                }
        }
        return -EBADMSG;
}

bool steering_sched_ext_active(const Steering *s) {
        return s->sched_ext == SCHED_EXT_ENABLING || s->sched_ext == SCHED_EXT_ENABLED ||
               s->sched_ext == SCHED_EXT_DISABLING;
}

/* root/path's text in *ret; -ENOENT passed up for the caller to take as "absent". */
static int read_under(const char *root, const char *path, char **ret) {
        _cleanup_free_ char *full = NULL;

        if (asprintf(&full, "%s%s", root, path) < 0)
                return -ENOMEM;
        return read_text_at(AT_FDCWD, full, 4096, ret, NULL);
}

/* Is a process named numad running (a /proc/PID/comm of "numad")? */
static int find_numad(const char *root, bool *ret) {
        _cleanup_free_ char *proc = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        char path[300];
        int r;

        if (asprintf(&proc, "%s/proc", root) < 0)
                return -ENOMEM;
        d = opendir(proc);
        if (!d)
                return -errno;
        *ret = false;
        while ((de = readdir(d))) {
                _cleanup_free_ char *comm = NULL;

                if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                    strspn(de->d_name, "0123456789") != strlen(de->d_name))
                        continue;
                if (snprintf(path, sizeof path, "%s/comm", de->d_name) >= (int) sizeof path)
                        continue;
                r = read_text_at(dirfd(d), path, 64, &comm, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) /* gone since, or not ours to read: not numad as far as we can tell */
                        continue;
                if (is_word(comm, "numad")) {
                        *ret = true;
                        return 0;
                }
        }
        return 0;
}

int steering_read(const char *root, Steering *ret) {
        _cleanup_free_ char *state = NULL, *ops = NULL, *nb = NULL;
        Steering s = { .sched_ext = SCHED_EXT_ABSENT, .numa_balancing = -1 };
        int r;

        if (!ret)
                return -EINVAL;
        root = root ? root : "";
        r = read_under(root, "/sys/kernel/sched_ext/state", &state);
        if (r >= 0) {
                r = steering_parse_sched_ext(state, &s.sched_ext);
                if (r < 0)
                        return r;
        } else if (r != -ENOENT)
                return r;
        r = read_under(root, "/sys/kernel/sched_ext/root/ops", &ops);
        if (r >= 0)
                (void) snprintf(s.sched_ext_ops, sizeof s.sched_ext_ops, "%.*s",
                                (int) strcspn(ops, "\n"), ops);
        else if (r != -ENOENT)
                return r;
        r = read_under(root, "/proc/sys/kernel/numa_balancing", &nb);
        if (r >= 0) {
                r = steering_parse_numa_balancing(nb, &s.numa_balancing);
                if (r < 0)
                        return r;
        } else if (r != -ENOENT)
                return r;
        r = find_numad(root, &s.numad);
        if (r < 0 && r != -ENOENT)
                return r;
        *ret = s;
        return 0;
}

void steering_describe(const Steering *s, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
#define ADD(...)                                                           \
        do {                                                               \
                int n_ = snprintf(buf + len, size - len, __VA_ARGS__);     \
                if (n_ > 0)                                                \
                        len = MIN(len + (size_t) n_, size ? size - 1 : 0); \
        } while (0)
        if (steering_sched_ext_active(s))
                ADD("the sched_ext scheduler %s%s%s is %s: most such schedulers ignore cpu.weight "
                    "and cpu.idle, so cgbalanced changes neither while it is loaded and keeps to "
                    "CPU affinity and bandwidth limits.",
                    s->sched_ext_ops[0] ? "'" : "", s->sched_ext_ops[0] ? s->sched_ext_ops : "",
                    s->sched_ext_ops[0] ? "'" : "", sched_ext_names[s->sched_ext]);
        if (s->numad)
                ADD("%snumad runs: it binds processes to nodes itself; a task whose affinity it "
                    "narrowed is foreign to cgbalanced, which leaves it where numad put it (unless "
                    "override_foreign_affinity), and a cpuset it set bounds every move.",
                    len ? " " : "");
        if (s->numa_balancing > 0)
                ADD("%sthe kernel's NUMA balancing is on (numa_balancing=%d): it moves tasks and "
                    "pages toward their memory inside the CPUs a task may use; cgbalanced's node "
                    "moves set those CPUs, so the kernel then balances within the new node.",
                    len ? " " : "", s->numa_balancing);
#undef ADD
}
