/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The foreground job's source tree: a C program loadgen writes itself, so contest and kernbench
 * compile something real without a download. The same options give the same bytes on every
 * machine (a private splitmix64 stream, no rand(), no clock, no locale).
 *
 * Layout of a tree of N files:
 *   Makefile           $(CC) -O2 -Wall, pattern rule obj/%.o: src/%.c, -MMD dependencies, links
 *                      "prog" from every object (the serial step at the end), `make clean`
 *                      removes obj/ and prog. Only CC comes from the environment.
 *   include/common.h   shared structs and static inline helpers
 *   include/util.h     what every module includes: common.h, libc headers, list and bitmap
 *                      helpers and 512 small inline functions, most of them only parsed
 *   include/mNNNN.h    one per module: its record struct, an inline helper, its prototypes
 *   src/mNNNN.c        funcs_per_file functions: loops over arrays, switches, integer mixing,
 *                      calls into its own functions and those of up to three earlier modules
 *   src/main.c         calls every module once and prints a checksum; exits 0
 * The program is plain unsigned arithmetic: no undefined behaviour, runs in milliseconds, and
 * prints the same checksum built by gcc or clang; neither says a word with -Wall -Wextra.
 */

#include <stdbool.h>
#include <stdint.h>

/*
 * Calibrated on 2 CPUs (gcc 12, make -j8, tree evicted, nothing else running): the default build
 * takes 38-47 s elapsed (73-86 s user: about 0.6 s of cc1 per file, a fifth of it parsing the
 * headers), the quick one 2.3-3.0 s. Build time grows with files x functions, plus the headers'
 * cost once per file.
 */
#define TREE_DEFAULT_FILES 130u
#define TREE_DEFAULT_FUNCS_PER_FILE 16u
#define TREE_QUICK_FILES 7u
#define TREE_QUICK_FUNCS_PER_FILE 16u
#define TREE_DEFAULT_SEED UINT64_C(0x636f6e7465737432) /* "contest2" */

/* Limits tree_generate() accepts: beyond them a build takes hours, not minutes. */
#define TREE_MAX_FILES 10000u
#define TREE_MAX_FUNCS_PER_FILE 1000u

typedef struct TreeOptions {
        unsigned files; /* src/mNNNN.c files (src/main.c comes on top) */
        unsigned funcs_per_file; /* functions in each */
        uint64_t seed; /* same options, same bytes */
} TreeOptions;

/* The default size, or --quick's; TREE_DEFAULT_SEED either way. */
void tree_options_init(TreeOptions *o, bool quick);

/*
 * Writes the tree into dir, which must exist and be empty. Returns 0, -EINVAL for no files or no
 * functions, -ERANGE beyond TREE_MAX_*, -ENOTEMPTY if dir holds anything, or the error of
 * creating or writing a file (the files written so far are left for the caller to remove).
 */
int tree_generate(const char *dir, const TreeOptions *o);

/*
 * Drops the tree's files from the page cache, so a run starts with cold sources: every regular
 * file below dir (symlinks are not followed, other file systems not entered) is fdatasync()ed,
 * then posix_fadvise(POSIX_FADV_DONTNEED)ed. Directories and inodes stay cached: no unprivileged
 * call evicts those. Returns 0 or the first error (after trying every file).
 */
int tree_evict(const char *dir);
