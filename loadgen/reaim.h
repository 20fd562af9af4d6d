/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * reaim, OSDL's re-aim-7 after AIM Suite VII (seed 003): the workfile parser, the weighted draw of
 * each child's jobs, the arithmetic of a step (JPM, JPM/child, JTI) and the table rows, apart
 * from the processes, so the tests can check them with inputs they choose.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A test's hits (its weight in the workfile). */
#define REAIM_HITS_MAX 1000000u
/* A workfile is read whole; it is a few lines. */
#define REAIM_WORKFILE_MAX_BYTES (1u << 20)
/* AIM7's crossover: the step where jobs per minute per child falls below 1.0. */
#define REAIM_DEFAULT_CROSSOVER 1.0

/* What a test gets: where its files go, and who runs it. */
typedef struct ReaimEnv {
        const char *dir; /* an existing directory of the run's, shared by the children */
        unsigned child;
        uint64_t rng; /* the child's own random state, for the tests' data */
} ReaimEnv;

typedef struct ReaimTest {
        const char *name;
        const char *description;
        /* One job: a few milliseconds of real work. 0, or a negative errno. */
        int (*run)(ReaimEnv *e);
} ReaimTest;

extern const ReaimTest reaim_tests[];
extern const size_t n_reaim_tests;

/* The test called name, or NULL. */
const ReaimTest *reaim_test_find(const char *name);

/* The workfile used without --workfile. */
extern const char reaim_default_workfile[];

typedef struct ReaimEntry {
        const ReaimTest *test;
        unsigned hits;
        unsigned line;
} ReaimEntry;

typedef struct ReaimWorkfile {
        ReaimEntry entries[32]; /* each test at most once */
        size_t n;
        uint64_t total_hits;
} ReaimWorkfile;

typedef struct ReaimParseError {
        unsigned line; /* 1-based; 0 for the file as a whole (no tests) */
        char message[256];
} ReaimParseError;

/*
 * Parses a workfile: lines "<hits> <test>", hits from 1 to REAIM_HITS_MAX, test one of
 * reaim_tests; '#' starts a comment; blank lines are skipped. A test may be named once. Returns 0
 * and fills *ret, or -EINVAL with *ret_error saying where and what: not "<hits> <test>", a bad
 * weight, an unknown test (listing the known ones), a test named twice, something after the test
 * name, a NUL byte, or no test at all (line 0).
 */
int reaim_workfile_parse(const char *text, size_t size, ReaimWorkfile *ret,
                         ReaimParseError *ret_error);

/* splitmix64: the next number of *state. */
uint64_t reaim_random(uint64_t *state);

/*
 * How many of `jobs` jobs each entry of w gets, in proportion to its hits: the largest
 * remainders get the jobs left over, ties to the earlier entry. counts has w->n elements; they
 * add up to jobs.
 */
void reaim_apportion(const ReaimWorkfile *w, unsigned jobs, unsigned *counts);

/*
 * The jobs one child runs, in order: reaim_apportion()'s counts of each entry, shuffled
 * (Fisher-Yates) with a random state made from seed and child, so every child runs the same mix
 * in an order of its own, the same for the same seed at every step. ret_order gets `jobs` entry
 * indices.
 */
void reaim_draw(const ReaimWorkfile *w, unsigned jobs, uint64_t seed, unsigned child,
                unsigned *ret_order);

/* One step's figures. */
typedef struct ReaimStep {
        unsigned users;
        uint64_t real_usec; /* from the release to the last child's exit */
        double jpm; /* jobs per child / real minutes x users */
        double jpm_per_child; /* jpm / users */
        double jti; /* 100 x (1 - the coefficient of variation of the child times), 0..100 */
        double child_mean_usec, child_stddev_usec; /* population standard deviation */
        uint64_t child_min_usec, child_max_usec;
} ReaimStep;

/* The figures of a step of `users` children of jobs_per_child jobs each, that took real_usec in
 * all and child_usec[i] each. real_usec 0 gives jpm 0. */
ReaimStep reaim_step(unsigned users, unsigned jobs_per_child, uint64_t real_usec,
                     const uint64_t *child_usec);

/* Whether stepping stops after s: its JPM/child is below crossover. */
bool reaim_crossed(const ReaimStep *s, double crossover);

/* The table's header "Users JPM JPM/child JTI\n". Returns what snprintf returns. */
int reaim_format_header(char *buf, size_t size);
/* One row, "4 5406.68 1351.67 98\n". Returns what snprintf returns. */
int reaim_format_row(char *buf, size_t size, const ReaimStep *s);
/* The seed's summary: "\n2 CPU:\nKernel Throughput\nLABEL 1337.11\n". */
int reaim_format_throughput(char *buf, size_t size, unsigned ncpus, const char *label,
                            double max_jpm);
