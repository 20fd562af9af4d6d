/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record_parse() on arbitrary text: no crash, no leak, the output untouched on failure
 * and a fault line within the text. What parses formats (record_format() takes every
 * record the parser gives), and that text parses back to an equal record that formats to the
 * same text again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small enough that a listed CPU beyond it is common in the corpus, to test that error too. */
#define CAPACITY 256u

static bool task_change_equal(const RecordTask *a, const RecordTask *b) {
        return a->pid == b->pid && a->starttime_ticks == b->starttime_ticks &&
               cpumask_equal(a->orig, b->orig) && cpumask_equal(a->set, b->set) &&
               a->when_usec == b->when_usec;
}

static bool cgroup_equal(const RecordCgroup *a, const RecordCgroup *b) {
        if (!streq(a->path, b->path))
                return false;
        for (size_t i = 0; i < _RECORD_CGROUP_ATTR_MAX; i++)
                if (a->values[i].recorded != b->values[i].recorded ||
                    a->values[i].orig != b->values[i].orig || a->values[i].set != b->values[i].set)
                        return false;
        return true;
}

static bool record_equal(const Record *a, const Record *b) {
        if (a->n_tasks != b->n_tasks || a->n_cgroups != b->n_cgroups)
                return false;
        for (size_t i = 0; i < a->n_tasks; i++)
                if (!task_change_equal(&a->tasks[i], &b->tasks[i]))
                        return false;
        for (size_t i = 0; i < a->n_cgroups; i++)
                if (!cgroup_equal(&a->cgroups[i], &b->cgroups[i]))
                        return false;
        return true;
}

/* Lines of text, a cut last one included; an empty text is reported at line 1 (no header). */
static unsigned count_lines(const char *text) {
        unsigned n = 0;

        for (const char *p = text; *p; n++) {
                p = strchr(p, '\n');
                if (!p)
                        return n + 1;
                p++;
        }
        return n > 0 ? n : 1;
}

static void check_round_trip(const Record *rec) {
        _cleanup_record_ Record *again = NULL;
        _cleanup_free_ char *text = NULL, *text_again = NULL;

        /* -ENOMEM aside, every record the parser gives formats. */
        if (record_format(rec, &text) < 0)
                abort();
        if (record_parse(text, CAPACITY, &again, NULL) < 0)
                abort();
        if (!record_equal(rec, again))
                abort();
        if (record_format(again, &text_again) < 0 || !streq(text, text_again))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_record_ Record *rec = NULL;
        _cleanup_free_ char *text = malloc(size + 1);
        Record untouched, *none = &untouched;
        unsigned line = 4242;
        int r;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        r = record_parse(text, CAPACITY, &none, &line);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                if (r != -EBADMSG || none != &untouched || line > count_lines(text))
                        abort();
                return 0;
        }
        rec = none;
        check_round_trip(rec);
        return 0;
}
