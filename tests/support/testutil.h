/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers shared by the Criterion tests. Each aborts the test (cr_assert) on failure. */

#include <stdbool.h>
#include <sys/types.h>

#include "cpumask.h"

/* Absolute path of FIXTURES_DIR/rel; returns a malloc'ed string. */
char *fixture_path(const char *rel);
/* O_DIRECTORY|O_PATH-free dirfd of FIXTURES_DIR/rel, for the rooted readers. */
int fixture_dirfd(const char *rel);
/* A fresh directory under $TMPDIR (or /tmp); removed by rm_rf(). Returns a malloc'ed path. */
char *make_tmpdir(void);
/* Writes content to dirfd/path, creating missing parent directories. */
void write_file_at(int dirfd, const char *path, const char *content);
/* Recursively copies FIXTURES_DIR/rel into dest (an existing directory). */
void copy_fixture(const char *rel, const char *dest);
/* rm -rf path; quiet if it does not exist. */
void rm_rf(const char *path);
/* True when running as root (euid 0). */
bool running_as_root(void);
/* The whole of a file as a string (caller frees); "" when it is missing or unreadable. */
char *read_all(const char *path);
/* A wait() status of a normal exit with code. */
bool exited_with(int status, int code);
/* In a forked child: die with the test (PR_SET_PDEATHSIG), so nothing outlives a crashed or
 * timed-out test; _exit(125) if the parent is already gone. */
void die_with_parent(pid_t parent);
/* cpumask_format() of m, asserted; the caller frees it. */
char *cpumask_text(const CpuMask *m);
/* Expects m to format as want; what names the mask in the message. */
void expect_cpumask(const CpuMask *m, const char *want, const char *what);
