/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "testutil.h"

/*
 * LeakSanitizer reports leaks when the test process exits, which fails neither the test nor the
 * run: a test about releasing memory asks it directly (in the sanitized build).
 */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define leaks_found() (__lsan_do_recoverable_leak_check() != 0)
#else
#define leaks_found() false
#endif

/* A schema with one key of each type, two sections and one name ("enabled") in both. */
typedef enum Mode { MODE_OFF, MODE_OBSERVE, MODE_ENFORCE } Mode;

typedef struct TestConfig {
        bool enabled;
        int64_t offset;
        uint64_t max_moves;
        uint64_t interval_usec;
        uint64_t timeout_usec;
        unsigned imbalance_pct;
        char *name;
        CpuMask *cpus;
        Mode mode;
        char **patterns;
        bool match_enabled;
} TestConfig;

static const char *const mode_names[] = { "off", "observe", "enforce", NULL };

static const ConfigKey test_keys[] = {
        CONFIG_KEY_BOOL("main", "enabled", TestConfig, enabled, "yes", "Balance at all."),
        CONFIG_KEY_INT("main", "offset", TestConfig, offset, "-5", -100, 100, "A signed offset."),
        CONFIG_KEY_UINT("main", "max_moves", TestConfig, max_moves, "10", 1, 1000,
                        "Moves per tick."),
        CONFIG_KEY_DURATION("main", "interval", TestConfig, interval_usec, "1s", 1000, 60000000,
                            "Time between ticks."),
        CONFIG_KEY_DURATION("main", "timeout", TestConfig, timeout_usec, "5s", 0, 0,
                            "Give up after this long; not below interval."),
        CONFIG_KEY_PERCENT("main", "imbalance_pct", TestConfig, imbalance_pct, "125", 100, 1000,
                           "Busiest over idlest node load, in percent, before acting."),
        CONFIG_KEY_STRING("main", "name", TestConfig, name, "cgb", 16, 0, "A label."),
        CONFIG_KEY_CPULIST("main", "cpus", TestConfig, cpus, "0-3", 64, CONFIG_EMPTY_OK,
                           "CPUs to use."),
        CONFIG_KEY_ENUM("main", "mode", TestConfig, mode, "observe", mode_names, "What to do."),
        CONFIG_KEY_STRV("match", "patterns", TestConfig, patterns, "*.slice", 32, CONFIG_EMPTY_OK,
                        "Cgroup globs to manage."),
        CONFIG_KEY_BOOL("match", "enabled", TestConfig, match_enabled, "no", "Match at all."),
};

static int test_validate(const void *config, ConfigContext *ctx) {
        const TestConfig *c = config;

        if (c->timeout_usec < c->interval_usec)
                return config_reject(ctx, "main.timeout", "must not be below interval");
        return 0;
}

static const ConfigSchema schema = CONFIG_SCHEMA(TestConfig, test_keys, test_validate);

static void test_config_free(TestConfig *c) {
        config_free(&schema, c);
}

#define _cleanup_config_ _cleanup_(test_config_free)

/* Loads text as the file "t.conf". */
static int load(const char *text, TestConfig *ret, ConfigError *error) {
        return config_load_string(&schema, "t.conf", text, strlen(text), ret, error);
}

/* The effective config as config_print() writes it. */
static char *printed(const TestConfig *c) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert_not_null(f);
        cr_assert_eq(config_print(&schema, c, f), 0);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

static void expect_error(const char *text, int error, unsigned line, const char *message) {
        TestConfig c = { .offset = 4242 };
        ConfigError e = {};

        cr_expect_eq(load(text, &c, &e), error, "\"%s\"", text);
        cr_expect_eq(e.error, error, "\"%s\"", text);
        cr_expect_eq(e.line, line, "\"%s\": line %u", text, e.line);
        cr_expect_str_eq(e.message, message, "\"%s\"", text);
        cr_expect_eq(c.offset, 4242, "\"%s\" wrote the result on failure", text);
}

/* Loads "[section]\nkey = value\n" and returns the error message ("" on success). */
static char *value_error(const char *section, const char *key, const char *value) {
        _cleanup_free_ char *text = NULL;
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_gt(asprintf(&text, "[%s]\n%s = %s\n", section, key, value), 0);
        if (load(text, &c, &e) >= 0)
                return strdup("");
        return strdup(e.message);
}

/* ---- defaults and files */

Test(config, defaults_apply_when_there_is_no_file) {
        _cleanup_config_ TestConfig c = {};
        _cleanup_free_ char *path = fixture_path("config/none/main.conf");

        cr_assert_eq(config_load(&schema, path, CONFIG_LOAD_MAIN_OPTIONAL, &c, NULL), 0);
        cr_expect(c.enabled);
        cr_expect_eq(c.offset, -5);
        cr_expect_eq(c.max_moves, 10);
        cr_expect_eq(c.interval_usec, 1000000);
        cr_expect_eq(c.timeout_usec, 5000000);
        cr_expect_eq(c.imbalance_pct, 125);
        cr_expect_str_eq(c.name, "cgb");
        cr_expect_eq(cpumask_count(c.cpus), 4);
        cr_expect(cpumask_isset(c.cpus, 3));
        cr_expect_eq(c.mode, MODE_OBSERVE);
        cr_assert_not_null(c.patterns);
        cr_expect_str_eq(c.patterns[0], "*.slice");
        cr_expect_null(c.patterns[1]);
        cr_expect_not(c.match_enabled);
}

Test(config, missing_main_file_is_an_error_unless_optional) {
        _cleanup_free_ char *path = fixture_path("config/none/main.conf");
        _cleanup_free_ char *want = NULL;
        TestConfig c = { .offset = 7 };
        ConfigError e = {};

        cr_assert_eq(config_load(&schema, path, 0, &c, &e), -ENOENT);
        cr_assert_gt(asprintf(&want, "%s: No such file or directory", path), 0);
        cr_expect_str_eq(e.message, want);
        cr_expect_eq(c.offset, 7);
}

Test(config, dropins_override_in_strcmp_order) {
        _cleanup_free_ char *path = fixture_path("config/dropins/main.conf");
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(config_load(&schema, path, 0, &c, &e), 0, "%s", e.message);
        cr_expect_eq(c.max_moves, 100); /* main.conf only */
        cr_expect_eq(c.offset, 20); /* main 1, 10-a 10, 20-b 20 */
        cr_expect_str_eq(c.name, "late"); /* 10-a "from-a", then 9-late, read last */
        cr_expect_str_eq(c.patterns[0], "b.slice");
        cr_expect_null(c.patterns[1]);
}

Test(config, dropins_skip_files_without_conf_suffix_and_hidden_files) {
        _cleanup_free_ char *path = fixture_path("config/dropins/main.conf");
        _cleanup_config_ TestConfig c = {};

        /* README, 30-off.conf.disabled and .hidden.conf would each set offset to 9x. */
        cr_assert_eq(config_load(&schema, path, 0, &c, NULL), 0);
        cr_expect_lt(c.offset, 90);
}

Test(config, dropins_apply_without_main_file_when_optional) {
        _cleanup_free_ char *path = fixture_path("config/dropin-only/main.conf");
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(config_load(&schema, path, CONFIG_LOAD_MAIN_OPTIONAL, &c, NULL), 0);
        cr_expect_eq(c.mode, MODE_ENFORCE);
}

Test(config, bad_dropin_fails_the_load_and_keeps_the_old_config) {
        _cleanup_free_ char *good = fixture_path("config/dropins/main.conf");
        _cleanup_free_ char *bad = fixture_path("config/bad-dropin/main.conf");
        _cleanup_free_ char *want = NULL, *before = NULL, *after = NULL;
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(config_load(&schema, good, 0, &c, NULL), 0);
        before = printed(&c);
        cr_assert_eq(config_load(&schema, bad, 0, &c, &e), -ERANGE);
        cr_assert_gt(
                asprintf(&want, "%s.d/20-bad.conf:3: max_moves: value 0 out of range 1..1000", bad),
                0);
        cr_expect_str_eq(e.message, want);
        cr_expect_eq(e.line, 3);
        after = printed(&c);
        cr_expect_str_eq(after, before);
        cr_expect_str_eq(c.name, "late");
}

Test(config, dropin_path_that_is_a_file_is_an_error) {
        _cleanup_free_ char *dir = make_tmpdir(), *main_path = NULL, *want = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        TestConfig c = {};
        ConfigError e = {};

        write_file_at(fd, "main.conf", "[main]\n");
        write_file_at(fd, "main.conf.d", "[main]\n");
        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        cr_expect_eq(config_load(&schema, main_path, 0, &c, &e), -ENOTDIR);
        cr_assert_gt(asprintf(&want, "%s.d: Not a directory", main_path), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

Test(config, directory_in_place_of_the_main_file_is_a_read_error) {
        _cleanup_free_ char *dir = make_tmpdir(), *main_path = NULL, *want = NULL;
        TestConfig c = {};
        ConfigError e = {};

        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        cr_assert_eq(mkdir(main_path, 0755), 0);
        /* Optional covers a missing file, not one that cannot be read. */
        cr_expect_eq(config_load(&schema, main_path, CONFIG_LOAD_MAIN_OPTIONAL, &c, &e), -EISDIR);
        cr_assert_gt(asprintf(&want, "%s: Is a directory", main_path), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

Test(config, unreadable_main_file_is_an_error) {
        _cleanup_free_ char *dir = NULL, *main_path = NULL, *want = NULL;
        _cleanup_close_ int fd = -EBADF;
        TestConfig c = {};
        ConfigError e = {};

        if (running_as_root())
                cr_skip_test("root reads a mode 000 file; the directory case covers read errors");
        dir = make_tmpdir();
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_file_at(fd, "main.conf", "[main]\n");
        cr_assert_eq(fchmodat(fd, "main.conf", 0, 0), 0);
        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        cr_expect_eq(config_load(&schema, main_path, CONFIG_LOAD_MAIN_OPTIONAL, &c, &e), -EACCES);
        cr_assert_gt(asprintf(&want, "%s: Permission denied", main_path), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

Test(config, fifo_in_place_of_a_file_is_refused_without_blocking) {
        _cleanup_free_ char *dir = make_tmpdir(), *main_path = NULL, *want = NULL;
        TestConfig c = {};
        ConfigError e = {};

        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        cr_assert_eq(mkfifo(main_path, 0600), 0);
        cr_expect_eq(config_load(&schema, main_path, 0, &c, &e), -EBADFD);
        cr_assert_gt(asprintf(&want, "%s: not a regular file", main_path), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

Test(config, file_over_the_size_limit_is_refused) {
        _cleanup_free_ char *dir = make_tmpdir(), *main_path = NULL, *text = NULL, *want = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        TestConfig c = {};
        ConfigError e = {};

        text = malloc(CONFIG_FILE_MAX + 2);
        cr_assert_not_null(text);
        memset(text, '\n', CONFIG_FILE_MAX + 1);
        text[CONFIG_FILE_MAX + 1] = '\0';
        write_file_at(fd, "main.conf", text);
        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        cr_expect_eq(config_load(&schema, main_path, 0, &c, &e), -EFBIG);
        cr_assert_gt(asprintf(&want, "%s: larger than %u bytes", main_path, CONFIG_FILE_MAX), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

/* ---- values */

Test(config, parses_one_key_of_each_type) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("[main]\n"
                          "enabled = off\n"
                          "offset = -100\n"
                          "max_moves = 1000\n"
                          "interval = 250ms\n"
                          "timeout = 2min\n"
                          "imbalance_pct = 150%\n"
                          "name = node-0 balancer\n"
                          "cpus = 0-1,8,63\n"
                          "mode = enforce\n"
                          "[match]\n"
                          "patterns = a.slice  b-*.scope\tc\n"
                          "enabled = yes\n",
                          &c, &e),
                     0, "%s", e.message);
        cr_expect_not(c.enabled);
        cr_expect_eq(c.offset, -100);
        cr_expect_eq(c.max_moves, 1000);
        cr_expect_eq(c.interval_usec, 250000);
        cr_expect_eq(c.timeout_usec, 120000000);
        cr_expect_eq(c.imbalance_pct, 150);
        cr_expect_str_eq(c.name, "node-0 balancer");
        cr_expect_eq(cpumask_count(c.cpus), 4);
        cr_expect(cpumask_isset(c.cpus, 63));
        cr_expect_eq(c.mode, MODE_ENFORCE);
        cr_expect_str_eq(c.patterns[0], "a.slice");
        cr_expect_str_eq(c.patterns[1], "b-*.scope");
        cr_expect_str_eq(c.patterns[2], "c");
        cr_expect_null(c.patterns[3]);
        cr_expect(c.match_enabled);
}

Test(config, parses_every_boolean_spelling) {
        static const struct {
                const char *in;
                bool out;
        } cases[] = {
                { "yes", true }, { "YES", true }, { "true", true },   { "On", true },
                { "1", true },   { "no", false }, { "False", false }, { "off", false },
                { "0", false },  { "NO", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_config_ TestConfig c = { .enabled = !cases[i].out };

                cr_assert_gt(asprintf(&text, "[main]\nenabled = %s\n", cases[i].in), 0);
                cr_assert_eq(load(text, &c, NULL), 0, "%s", cases[i].in);
                cr_expect_eq(c.enabled, cases[i].out, "%s", cases[i].in);
        }
}

Test(config, parses_integers_in_base_10_up_to_the_range_ends) {
        static const struct {
                const char *in;
                int64_t out;
        } cases[] = {
                { "-100", -100 }, { "100", 100 }, { "0", 0 }, { "-0", 0 }, { "010", 10 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_config_ TestConfig c = {};

                cr_assert_gt(asprintf(&text, "[main]\noffset = %s\n", cases[i].in), 0);
                cr_assert_eq(load(text, &c, NULL), 0, "%s", cases[i].in);
                cr_expect_eq(c.offset, cases[i].out, "%s", cases[i].in);
        }
}

Test(config, parses_durations_to_exact_microseconds) {
        static const struct {
                const char *in;
                uint64_t out;
        } cases[] = {
                { "1ms", 1000 },         { "2500us", 2500 },
                { "1000usec", 1000 },    { "500ms", 500000 },
                { "1s", 1000000 },       { "1", 1000000 }, /* bare number: seconds */
                { "1.5s", 1500000 },     { "0.001s", 1000 },
                { "1.0005s", 1000500 },  { "1min", 60000000 },
                { "0.5min", 30000000 },  { "1s500ms", 1500000 },
                { "2s 250ms", 2250000 }, { "1.000000000000000000000s", 1000000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_config_ TestConfig c = {};
                ConfigError e = {};

                cr_assert_gt(asprintf(&text, "[main]\ninterval = %s\ntimeout = 1h\n", cases[i].in),
                             0);
                cr_assert_eq(load(text, &c, &e), 0, "%s: %s", cases[i].in, e.message);
                cr_expect_eq(c.interval_usec, cases[i].out, "%s: %" PRIu64, cases[i].in,
                             c.interval_usec);
        }
}

Test(config, parses_long_durations_without_overflow) {
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(load("[main]\ntimeout = 2d 3h\n", &c, NULL), 0);
        cr_expect_eq(c.timeout_usec, (uint64_t) (2 * 24 + 3) * 3600 * 1000000);
}

Test(config, parses_percent_with_or_without_sign) {
        _cleanup_config_ TestConfig a = {}, b = {};

        cr_assert_eq(load("[main]\nimbalance_pct = 1000\n", &a, NULL), 0);
        cr_assert_eq(load("[main]\nimbalance_pct = 100%\n", &b, NULL), 0);
        cr_expect_eq(a.imbalance_pct, 1000);
        cr_expect_eq(b.imbalance_pct, 100);
}

Test(config, empty_value_allowed_only_where_declared) {
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(load("[main]\ncpus =\n[match]\npatterns =\n", &c, NULL), 0);
        cr_expect(cpumask_is_empty(c.cpus));
        cr_assert_not_null(c.patterns);
        cr_expect_null(c.patterns[0]);
}

Test(config, inline_semicolon_comment_is_stripped) {
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(load("[main] ; the main section\nmax_moves = 7 ; seven\n", &c, NULL), 0);
        cr_expect_eq(c.max_moves, 7);
}

Test(config, accepts_bom_crlf_indentation_and_comments) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("\xef\xbb\xbf# comment\r\n[main]\r\n  ; indented comment\r\n"
                          "\tmax_moves=3\r\n\r\n",
                          &c, &e),
                     0, "%s", e.message);
        cr_expect_eq(c.max_moves, 3);
}

Test(config, accepts_a_line_of_exactly_the_maximum_length) {
        size_t max = INI_MAX_LINE - 3, size = 2 * max + 64;
        _cleanup_free_ char *text = malloc(size);
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};
        int n;

        cr_assert_not_null(text);
        /* A comment line of max bytes, then a key line padded with blanks to max bytes. */
        n = snprintf(text, size, "[main]\n#%*s\nname = x", (int) max - 1, "");
        cr_assert_lt((size_t) n + max, size);
        memset(text + n, ' ', max - strlen("name = x"));
        strcpy(text + (size_t) n + max - strlen("name = x"), "\n");
        cr_assert_eq(load(text, &c, &e), 0, "%s", e.message);
        cr_expect_str_eq(c.name, "x");
}

/* ---- errors: each names FILE:LINE and the key */

Test(config, rejects_value_out_of_range) {
        expect_error("[main]\nimbalance_pct = 1500\n", -ERANGE, 2,
                     "t.conf:2: imbalance_pct: value 1500 out of range 100..1000");
        expect_error("[main]\n\noffset = -101\n", -ERANGE, 3,
                     "t.conf:3: offset: value -101 out of range -100..100");
        expect_error("[main]\ninterval = 2min\n", -ERANGE, 2,
                     "t.conf:2: interval: value 2min out of range 1ms..1min");
        expect_error("[main]\nmax_moves = 99999999999999999999\n", -ERANGE, 2,
                     "t.conf:2: max_moves: value 99999999999999999999 too large");
        expect_error("[main]\ncpus = 64\n", -ERANGE, 2,
                     "t.conf:2: cpus: CPU list '64' names a CPU above 63");
}

Test(config, rejects_values_with_trailing_junk) {
        static const struct {
                const char *key, *value, *message;
        } cases[] = {
                { "max_moves", "5x", "t.conf:2: max_moves: invalid number '5x'" },
                { "max_moves", "5 # five", "t.conf:2: max_moves: invalid number '5 # five'" },
                { "offset", "1e3", "t.conf:2: offset: invalid integer '1e3'" },
                { "interval", "1s junk",
                  "t.conf:2: interval: invalid duration '1s junk' (e.g. 500ms, 1.5s, 2min)" },
                { "imbalance_pct", "150%x", "t.conf:2: imbalance_pct: invalid percentage '150%x'" },
                { "enabled", "yes please",
                  "t.conf:2: enabled: invalid boolean 'yes please' (yes/no, true/false, on/off, "
                  "1/0)" },
                { "cpus", "0-3 x", "t.conf:2: cpus: invalid CPU list '0-3 x' at offset 3" },
                { "mode", "observe!",
                  "t.conf:2: mode: invalid value 'observe!' (one of: off, observe, enforce)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m = value_error("main", cases[i].key, cases[i].value);

                cr_expect_str_eq(m, cases[i].message);
        }
}

Test(config, rejects_malformed_numbers) {
        static const struct {
                const char *key, *value, *message;
        } cases[] = {
                { "max_moves", "-1", "t.conf:2: max_moves: invalid number '-1'" },
                { "max_moves", "+5", "t.conf:2: max_moves: invalid number '+5'" },
                { "max_moves", "0x10", "t.conf:2: max_moves: invalid number '0x10'" },
                { "offset", "--1", "t.conf:2: offset: invalid integer '--1'" },
                { "offset", "5.0", "t.conf:2: offset: invalid integer '5.0'" },
                { "interval", "1.5us", "t.conf:2: interval: duration '1.5us' is finer than 1us" },
                { "interval", "1 s",
                  "t.conf:2: interval: invalid duration '1 s' (e.g. 500ms, 1.5s, 2min)" },
                { "interval", "1m",
                  "t.conf:2: interval: invalid duration '1m' (e.g. 500ms, 1.5s, 2min)" },
                { "interval", "5 500ms",
                  "t.conf:2: interval: invalid duration '5 500ms' (e.g. 500ms, 1.5s, 2min)" },
                { "interval", ".5s",
                  "t.conf:2: interval: invalid duration '.5s' (e.g. 500ms, 1.5s, 2min)" },
                { "timeout", "99999999999999999999us",
                  "t.conf:2: timeout: value 99999999999999999999us too large" },
                { "timeout", "300000000000d", "t.conf:2: timeout: value 300000000000d too large" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *m = value_error("main", cases[i].key, cases[i].value);

                cr_expect_str_eq(m, cases[i].message);
        }
}

Test(config, rejects_empty_values_where_not_allowed) {
        static const char *const keys[] = { "enabled",       "offset", "max_moves", "interval",
                                            "imbalance_pct", "name",   "mode" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *m = value_error("main", keys[i], "");
                _cleanup_free_ char *want = NULL;

                cr_assert_gt(asprintf(&want, "t.conf:2: %s: empty value", keys[i]), 0);
                cr_expect_str_eq(m, want);
        }
}

Test(config, rejects_strings_too_long_or_with_control_characters) {
        _cleanup_free_ char *longer = value_error("main", "name", "0123456789abcdefg");
        _cleanup_free_ char *tab = value_error("main", "name", "a\tb");
        _cleanup_free_ char *word =
                value_error("match", "patterns", "a 0123456789012345678901234567890123");
        _cleanup_free_ char *semi = value_error("main", "name", "a;b");

        cr_expect_str_eq(longer, "t.conf:2: name: longer than 16 bytes");
        cr_expect_str_eq(tab, "t.conf:2: name: control character 0x09 in value");
        cr_expect_str_eq(word, "t.conf:2: patterns: word '0123456789012345678901234567890123' "
                               "longer than 32 bytes");
        cr_expect_str_eq(semi, ""); /* no blank before ';': part of the value */
}

Test(config, rejects_unknown_section) {
        expect_error("[main]\nmax_moves = 2\n\n[mian]\n", -EINVAL, 4,
                     "t.conf:4: [mian]: unknown section");
}

Test(config, rejects_text_after_section_header) {
        expect_error("[main] extra\n", -EINVAL, 1, "t.conf:1: [main]: text after ']'");
}

Test(config, rejects_unknown_key) {
        expect_error("[main]\nmax_moves = 2\nmax_move = 3\n", -EINVAL, 3,
                     "t.conf:3: max_move: unknown key in section [main]");
        /* patterns lives in [match], not [main] */
        expect_error("[main]\npatterns = x\n", -EINVAL, 2,
                     "t.conf:2: patterns: unknown key in section [main]");
}

Test(config, rejects_duplicate_key_in_one_file) {
        expect_error("[main]\nmax_moves = 2\n[match]\n[main]\nmax_moves = 3\n", -EINVAL, 5,
                     "t.conf:5: max_moves: duplicate key (first set on line 2)");
}

Test(config, same_name_in_two_sections_is_not_a_duplicate) {
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(load("[main]\nenabled = no\n[match]\nenabled = yes\n", &c, NULL), 0);
        cr_expect_not(c.enabled);
        cr_expect(c.match_enabled);
}

Test(config, rejects_key_outside_any_section) {
        expect_error("# no section yet\nmax_moves = 2\n[main]\n", -EINVAL, 2,
                     "t.conf:2: max_moves: key outside any section");
}

Test(config, rejects_line_longer_than_inih_buffer) {
        size_t max = INI_MAX_LINE - 3, cut = INI_MAX_LINE - 1, size = cut + 64;
        _cleanup_free_ char *text = malloc(size), *want = NULL;
        int n;

        cr_assert_not_null(text);
        /*
         * inih alone would cut line 2 after its first cut bytes ("name = x" and blanks) and parse
         * the rest, "max_moves = 999", as a line of its own.
         */
        n = snprintf(text, size, "[main]\nname = x");
        memset(text + n, ' ', cut - strlen("name = x"));
        strcpy(text + strlen("[main]\n") + cut, "max_moves = 999\n");
        cr_assert_gt(asprintf(&want, "t.conf:2: line longer than %zu bytes", max), 0);
        expect_error(text, -EINVAL, 2, want);
}

Test(config, rejects_long_comment_lines_too) {
        size_t max = INI_MAX_LINE - 3;
        _cleanup_free_ char *text = malloc(max + 16), *want = NULL;

        cr_assert_not_null(text);
        snprintf(text, max + 16, "#%*s\n", (int) max, "");
        cr_assert_gt(asprintf(&want, "t.conf:1: line longer than %zu bytes", max), 0);
        expect_error(text, -EINVAL, 1, want);
}

Test(config, rejects_embedded_nul) {
        static const char text[] = "[main]\nname = ab\0cd\nmax_moves = 2\n";
        TestConfig c = {};
        ConfigError e = {};

        cr_expect_eq(config_load_string(&schema, "t.conf", text, sizeof text - 1, &c, &e), -EINVAL);
        cr_expect_str_eq(e.message, "t.conf:2: NUL byte in line");
        cr_expect_eq(e.line, 2);
}

Test(config, rejects_embedded_nul_in_a_file) {
        static const char text[] = "[main]\n\0max_moves = 2\n";
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *want = NULL;
        TestConfig c = {};
        ConfigError e = {};
        FILE *f;

        cr_assert_gt(asprintf(&path, "%s/main.conf", dir), 0);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
        cr_assert_eq(fclose(f), 0);
        cr_expect_eq(config_load(&schema, path, 0, &c, &e), -EINVAL);
        cr_assert_gt(asprintf(&want, "%s:2: NUL byte in line", path), 0);
        cr_expect_str_eq(e.message, want);
        rm_rf(dir);
}

Test(config, rejects_line_that_is_neither_section_nor_key) {
        expect_error("[main]\nmax_moves = 2\njust words\n", -EINVAL, 3,
                     "t.conf:3: syntax error: expected '[section]' or 'key = value' "
                     "(continuation lines are not supported)");
        expect_error("[main]\n= 5\n", -EINVAL, 2, "t.conf:2: no key name before '='");
        expect_error("[main\n", -EINVAL, 1,
                     "t.conf:1: syntax error: expected '[section]' or 'key = value' "
                     "(continuation lines are not supported)");
}

Test(config, rejects_continuation_line) {
        expect_error("[match]\npatterns = a\n  b\n", -EINVAL, 3,
                     "t.conf:3: syntax error: expected '[section]' or 'key = value' "
                     "(continuation lines are not supported)");
}

Test(config, rejects_colon_separator) {
        expect_error("[main]\nmax_moves: 2\n", -EINVAL, 2,
                     "t.conf:2: max_moves: expected '=' after the key");
}

Test(config, rejects_second_byte_order_mark) {
        expect_error("\xef\xbb\xbf\xef\xbb\xbf[main]\n", -EINVAL, 1,
                     "t.conf:1: second byte-order mark");
}

Test(config, reports_the_first_of_several_errors) {
        expect_error("[main]\nnonsense\nmax_moves = 0\n", -EINVAL, 2,
                     "t.conf:2: syntax error: expected '[section]' or 'key = value' "
                     "(continuation lines are not supported)");
        expect_error("[main]\nmax_moves = 0\nnonsense\n", -ERANGE, 2,
                     "t.conf:2: max_moves: value 0 out of range 1..1000");
}

/* ---- cross-key validation */

Test(config, validate_names_the_file_and_line_of_the_key) {
        expect_error("[main]\ninterval = 10s\n\ntimeout = 2s\n", -EINVAL, 4,
                     "t.conf:4: timeout: must not be below interval");
}

Test(config, validate_on_a_default_names_the_key_only) {
        expect_error("[main]\ninterval = 10s\n", -EINVAL, 0, "timeout: must not be below interval");
}

/* ---- config_set_one */

Test(config, set_one_sets_a_value_through_the_parser) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("", &c, NULL), 0);
        cr_assert_eq(config_set_one(&schema, &c, "interval", "1.5s", &e), 0, "%s", e.message);
        cr_expect_eq(c.interval_usec, 1500000);
        cr_assert_eq(config_set_one(&schema, &c, "main.name", "other", &e), 0, "%s", e.message);
        cr_expect_str_eq(c.name, "other");
        cr_assert_eq(config_set_one(&schema, &c, "cpus", "4-5", &e), 0, "%s", e.message);
        cr_expect_eq(cpumask_count(c.cpus), 2);
        cr_expect(cpumask_isset(c.cpus, 5));
}

Test(config, set_one_needs_section_for_names_in_two_sections) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("", &c, NULL), 0);
        cr_expect_eq(config_set_one(&schema, &c, "enabled", "no", &e), -ENOTUNIQ);
        cr_expect_str_eq(e.message, "enabled: in several sections, use section.key");
        cr_expect(c.enabled);
        cr_assert_eq(config_set_one(&schema, &c, "match.enabled", "yes", NULL), 0);
        cr_expect(c.match_enabled);
        cr_expect(c.enabled);
}

Test(config, set_one_rejects_unknown_keys) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("", &c, NULL), 0);
        cr_expect_eq(config_set_one(&schema, &c, "match.max_moves", "3", &e), -ENOENT);
        cr_expect_str_eq(e.message, "match.max_moves: unknown key");
}

Test(config, set_one_bad_value_leaves_the_struct_unchanged) {
        _cleanup_config_ TestConfig c = {};
        _cleanup_free_ char *before = NULL, *after = NULL;
        ConfigError e = {};

        cr_assert_eq(load("", &c, NULL), 0);
        before = printed(&c);
        cr_expect_eq(config_set_one(&schema, &c, "main.imbalance_pct", "50", &e), -ERANGE);
        cr_expect_str_eq(e.message, "imbalance_pct: value 50 out of range 100..1000");
        cr_expect_eq(config_set_one(&schema, &c, "name", " padded", &e), -EINVAL);
        cr_expect_str_eq(e.message, "name: leading or trailing whitespace in value");
        cr_expect_eq(config_set_one(&schema, &c, "name", "a ;b", &e), -EINVAL);
        cr_expect_str_eq(e.message, "name: ';' at the start or after a blank starts a comment");
        after = printed(&c);
        cr_expect_str_eq(after, before);
}

Test(config, set_one_runs_the_cross_key_check) {
        _cleanup_config_ TestConfig c = {};
        ConfigError e = {};

        cr_assert_eq(load("", &c, NULL), 0);
        cr_expect_eq(config_set_one(&schema, &c, "timeout", "500ms", &e), -EINVAL);
        cr_expect_str_eq(e.message, "timeout: must not be below interval");
        cr_expect_eq(c.timeout_usec, 5000000);
}

Test(config, set_one_replaces_owned_values_without_leaking) {
        _cleanup_config_ TestConfig c = {};

        cr_assert_eq(load("", &c, NULL), 0);
        /* Run under ASan, each replaced string, mask and list must be freed. */
        for (int i = 0; i < 3; i++) {
                cr_assert_eq(config_set_one(&schema, &c, "name", "n", NULL), 0);
                cr_assert_eq(config_set_one(&schema, &c, "cpus", "1", NULL), 0);
                cr_assert_eq(config_set_one(&schema, &c, "patterns", "x y", NULL), 0);
        }
        cr_expect_str_eq(c.patterns[1], "y");
}

/* ---- output */

Test(config, print_lists_effective_values_by_section) {
        _cleanup_config_ TestConfig c = {};
        _cleanup_free_ char *out = NULL;

        cr_assert_eq(
                load("[match]\nenabled = on\n[main]\ninterval = 1500ms\ncpus = 0,2-3\n", &c, NULL),
                0);
        out = printed(&c);
        cr_expect_str_eq(out, "main.enabled=yes\n"
                              "main.offset=-5\n"
                              "main.max_moves=10\n"
                              "main.interval=1500ms\n"
                              "main.timeout=5s\n"
                              "main.imbalance_pct=125\n"
                              "main.name=cgb\n"
                              "main.cpus=0,2-3\n"
                              "main.mode=observe\n"
                              "match.patterns=*.slice\n"
                              "match.enabled=yes\n");
}

static char *defaults_file(unsigned flags) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert_not_null(f);
        cr_assert_eq(config_write_defaults(&schema, f, flags), 0);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(config, default_file_documents_each_key) {
        _cleanup_free_ char *text = defaults_file(0);

        cr_expect_not_null(strstr(text, "[main]\n\n# Balance at all.\n# Boolean: yes or no.\n"
                                        "enabled = yes\n\n"));
        cr_expect_not_null(strstr(text, "# Time between ticks.\n"
                                        "# Duration, 1ms..1min (us, ms, s, min, h, d; a bare "
                                        "number is seconds).\ninterval = 1s\n"));
        cr_expect_not_null(strstr(text, "# Duration, 0 or more (us, ms, s, min, h, d; a bare "
                                        "number is seconds).\ntimeout = 5s\n"));
        cr_expect_not_null(strstr(text, "# One of: off, observe, enforce.\nmode = observe\n"));
        cr_expect_not_null(strstr(text, "[match]\n\n# Cgroup globs to manage.\n"));
        for (size_t i = 0; i < ELEMENTSOF(test_keys); i++) {
                _cleanup_free_ char *line = NULL;

                cr_assert_gt(asprintf(&line, "\n%s = ", test_keys[i].name), 0);
                cr_expect_not_null(strstr(text, line), "%s", test_keys[i].name);
        }
}

Test(config, default_file_parses_back_to_the_defaults) {
        _cleanup_free_ char *text = defaults_file(0),
                            *commented = defaults_file(CONFIG_WRITE_COMMENT_VALUES);
        _cleanup_free_ char *want = NULL, *got = NULL, *got_commented = NULL;
        _cleanup_config_ TestConfig d = {}, c = {}, cc = {};
        ConfigError e = {};

        cr_assert_eq(load("", &d, NULL), 0);
        cr_assert_eq(load(text, &c, &e), 0, "%s", e.message);
        cr_assert_eq(load(commented, &cc, &e), 0, "%s", e.message);
        want = printed(&d);
        got = printed(&c);
        got_commented = printed(&cc);
        cr_expect_str_eq(got, want);
        cr_expect_str_eq(got_commented, want);
        cr_expect_not_null(strstr(commented, "\n#max_moves = 10\n"));
}

Test(config, formatted_durations_parse_back_to_themselves) {
        static const char *const durations[] = { "1ms",   "1001us", "1500ms", "90s",
                                                 "61min", "25h",    "3d" };
        _cleanup_config_ TestConfig c = {};
        const ConfigKey *k;

        cr_assert_eq(load("[main]\ninterval = 1ms\n", &c, NULL), 0);
        cr_assert_eq(config_lookup(&schema, "timeout", &k), 0);
        for (size_t i = 0; i < ELEMENTSOF(durations); i++) {
                _cleanup_free_ char *s = NULL;

                cr_assert_eq(config_set_one(&schema, &c, "timeout", durations[i], NULL), 0);
                cr_assert_eq(config_format_value(k, &c, &s), 0);
                cr_expect_str_eq(s, durations[i]);
        }
}

/* ---- the table */

typedef struct Small {
        uint64_t a, b;
        int64_t i;
} Small;

static int check(const ConfigKey *keys, size_t n, ConfigError *e) {
        ConfigSchema s = { .keys = keys, .n_keys = n, .struct_size = sizeof(Small) };

        return config_check_schema(&s, e);
}

Test(config, schema_check_accepts_the_test_table) {
        ConfigError e = {};

        cr_expect_eq(config_check_schema(&schema, &e), 0, "%s", e.message);
}

Test(config, schema_check_rejects_broken_tables) {
        static const struct {
                ConfigKey keys[2];
                size_t n;
                const char *message;
        } cases[] = {
                { { CONFIG_KEY_UINT("s", "a", Small, a, "0", 1, 9, "h") },
                  1,
                  "schema: s.a: default: value 0 out of range 1..9" },
                { { CONFIG_KEY_UINT("s", "a", Small, a, "1", 1, 9, "h"),
                    CONFIG_KEY_UINT("s", "a", Small, b, "1", 1, 9, "h") },
                  2,
                  "schema: s.a: defined twice" },
                { { CONFIG_KEY_UINT("s", "a", Small, a, "1", 1, 9, "h"),
                    CONFIG_KEY_UINT("s", "b", Small, a, "1", 1, 9, "h") },
                  2,
                  "schema: s.b: member overlaps that of s.a" },
                { { CONFIG_KEY_UINT("s", "a.b", Small, a, "1", 1, 9, "h") },
                  1,
                  "schema: s.a.b: section and name must be 1..40 of [A-Za-z0-9_-]" },
                { { CONFIG_KEY_UINT("s", "a", Small, a, "1", 9, 1, "h") },
                  1,
                  "schema: s.a: umin above umax" },
                { { CONFIG_KEY_UINT("s", "a", Small, a, "1", 1, 9, NULL) },
                  1,
                  "schema: s.a: no default or no help text" },
                { { { .section = "s",
                      .name = "i",
                      .type = CONFIG_INT,
                      .default_value = "1",
                      .umax = 5,
                      .help = "h",
                      .offset = offsetof(Small, i) } },
                  1,
                  "schema: s.i: umin/umax set but not used by this type" },
                { { { .section = "s",
                      .name = "a",
                      .type = CONFIG_UINT,
                      .default_value = "1",
                      .flags = CONFIG_EMPTY_OK,
                      .help = "h",
                      .offset = offsetof(Small, a) } },
                  1,
                  "schema: s.a: flags not valid for this type" },
                { { { .section = "s",
                      .name = "a",
                      .type = CONFIG_UINT,
                      .default_value = "1",
                      .help = "h",
                      .offset = sizeof(Small) - 4 } },
                  1,
                  "schema: s.a: member outside the struct" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ConfigError e = {};

                cr_expect_eq(check(cases[i].keys, cases[i].n, &e), -EINVAL, "case %zu", i);
                cr_expect_str_eq(e.message, cases[i].message, "case %zu", i);
        }
}

Test(config, load_refuses_a_broken_table) {
        static const ConfigKey keys[] = {
                CONFIG_KEY_UINT("s", "a", Small, a, "10", 1, 9, "h"),
        };
        static const ConfigSchema bad = CONFIG_SCHEMA(Small, keys, NULL);
        Small s = { .a = 5 };
        ConfigError e = {};

        cr_expect_eq(config_load_string(&bad, NULL, "", 0, &s, &e), -EINVAL);
        cr_expect_str_eq(e.message, "schema: s.a: default: value 10 out of range 1..9");
        cr_expect_eq(s.a, 5);
}

Test(config, free_accepts_null_and_clears_members) {
        TestConfig c = {};

        config_free(&schema, NULL);
        cr_assert_eq(load("", &c, NULL), 0);
        config_free(&schema, &c);
        cr_expect_null(c.name);
        cr_expect_null(c.cpus);
        cr_expect_null(c.patterns);
        config_free(&schema, &c); /* twice is harmless */
}

/* ---- instance sections and lists: a schema shaped like loadgen's scenarios */

typedef struct TestGroup {
        uint64_t weight;
        bool protect;
} TestGroup;

typedef struct TestTask {
        char *group;
        uint64_t instances;
        ConfigList phases;
} TestTask;

typedef struct TestScenario {
        char *name;
        uint64_t duration_usec;
        ConfigList setup;
        ConfigInstances groups;
        ConfigInstances tasks;
} TestScenario;

static const ConfigKey scenario_keys[] = {
        CONFIG_KEY_STRING("scenario", "name", TestScenario, name, "unnamed", 32, 0, "Its name."),
        CONFIG_KEY_DURATION("scenario", "duration", TestScenario, duration_usec, "10s", 0, 0,
                            "How long it runs."),
        CONFIG_KEY_LIST("scenario", "setup", TestScenario, setup, "", 32, "Commands run first."),
};

static const ConfigKey group_keys[] = {
        CONFIG_KEY_UINT("group", "weight", TestGroup, weight, "100", 1, 10000, "cpu.weight."),
        CONFIG_KEY_BOOL("group", "protect", TestGroup, protect, "no", "Protected class."),
};

static const ConfigKey task_keys[] = {
        CONFIG_KEY_STRING("task", "group", TestTask, group, "", 40, CONFIG_EMPTY_OK,
                          "Its group; none: the sandbox itself."),
        CONFIG_KEY_UINT("task", "instances", TestTask, instances, "1", 1, 64, "Copies of it."),
        CONFIG_KEY_LIST("task", "phase", TestTask, phases, "run 1s", 64, "What it does, in order."),
};

static int group_validate(const void *instance, const char *name, ConfigContext *ctx) {
        const TestGroup *g = instance;

        if (g->protect && g->weight < 200)
                return config_reject_instance(ctx, "group", name, "weight",
                                              "a protected group needs weight 200 or more");
        return 0;
}

static int task_validate(const void *instance, const char *name, ConfigContext *ctx) {
        const TestTask *t = instance;

        if (t->phases.n == 0)
                return config_reject_instance(ctx, "task", name, "phase", "no phase");
        if (t->instances == 13)
                return -EINVAL; /* without a message: the loader must still name the instance */
        return 0;
}

static int scenario_validate(const void *config, ConfigContext *ctx) {
        const TestScenario *s = config;
        const TestGroup *groups = s->groups.items;
        const TestTask *tasks = s->tasks.items;
        size_t protected = 0, i;

        for (size_t j = 0; j < s->groups.n; j++)
                if (groups[j].protect && ++protected > 2)
                        return config_reject_instance(ctx, "group", s->groups.names[j], NULL,
                                                      "more than 2 protected groups");
        if (s->duration_usec == 0 && s->tasks.n > 0)
                return config_reject_instance(ctx, "task", s->tasks.names[0], NULL,
                                              "not run: the duration is 0");
        for (size_t j = 0; j < s->tasks.n; j++)
                if (tasks[j].group[0] && config_instances_find(&s->groups, tasks[j].group, &i) < 0)
                        return config_reject_instance(ctx, "task", s->tasks.names[j], "group",
                                                      "no group '%s'", tasks[j].group);
        return 0;
}

static const ConfigKind test_kinds[] = {
        CONFIG_KIND("group", TestGroup, group_keys, TestScenario, groups, 4, group_validate,
                    "A cgroup of the sandbox."),
        CONFIG_KIND("task", TestTask, task_keys, TestScenario, tasks, 0, task_validate,
                    "Tasks to start."),
};

static const ConfigSchema scenario_schema =
        CONFIG_SCHEMA_WITH_KINDS(TestScenario, scenario_keys, test_kinds, scenario_validate);

static void test_scenario_free(TestScenario *s) {
        config_free(&scenario_schema, s);
}

#define _cleanup_scenario_ _cleanup_(test_scenario_free)

static int sload(const char *text, TestScenario *ret, ConfigError *error) {
        return config_load_string(&scenario_schema, "s.conf", text, strlen(text), ret, error);
}

static void expect_scenario_error(const char *text, int error, unsigned line, const char *message) {
        TestScenario s = { .duration_usec = 4242 };
        ConfigError e = {};

        cr_expect_eq(sload(text, &s, &e), error, "\"%s\"", text);
        cr_expect_eq(e.error, error, "\"%s\"", text);
        cr_expect_eq(e.line, line, "\"%s\": line %u", text, e.line);
        cr_expect_str_eq(e.message, message, "\"%s\"", text);
        cr_expect_eq(s.duration_usec, 4242, "\"%s\" wrote the result on failure", text);
        cr_expect_eq(s.groups.n, 0, "\"%s\" wrote the result on failure", text);
}

static char *sprinted(const TestScenario *s) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert_not_null(f);
        cr_assert_eq(config_print(&scenario_schema, s, f), 0);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(config, schema_check_accepts_a_table_with_kinds) {
        ConfigError e = {};

        cr_expect_eq(config_check_schema(&scenario_schema, &e), 0, "%s", e.message);
}

Test(config, defaults_have_no_instances) {
        _cleanup_scenario_ TestScenario s = {};
        ConfigError e = {};

        cr_assert_eq(sload("", &s, &e), 0, "%s", e.message);
        cr_expect_eq(s.groups.n, 0);
        cr_expect_eq(s.tasks.n, 0);
        cr_expect_eq(s.setup.n, 0);
        cr_expect_str_eq(s.name, "unnamed");
}

Test(config, instances_are_created_in_file_order_with_defaults) {
        _cleanup_scenario_ TestScenario s = {};
        const TestGroup *g;
        const TestTask *t;
        ConfigError e = {};

        cr_assert_eq(sload("[group busy]\n"
                           "weight = 300\n"
                           "[task spinner]\n"
                           "group = busy\n"
                           "instances = 8\n"
                           "[group idle]\n"
                           "[scenario]\n"
                           "name = s\n",
                           &s, &e),
                     0, "%s", e.message);
        cr_assert_eq(s.groups.n, 2);
        g = s.groups.items;
        cr_expect_str_eq(s.groups.names[0], "busy");
        cr_expect_str_eq(s.groups.names[1], "idle");
        cr_expect_eq(g[0].weight, 300);
        cr_expect_eq(g[1].weight, 100);
        cr_expect_not(g[0].protect);
        cr_expect_str_eq(s.groups.files[0], "s.conf");
        cr_expect_str_eq(s.groups.files[1], "s.conf");
        cr_expect_eq(s.groups.lines[0], 1);
        cr_expect_eq(s.groups.lines[1], 6);
        cr_assert_eq(s.tasks.n, 1);
        t = s.tasks.items;
        cr_expect_str_eq(s.tasks.names[0], "spinner");
        cr_expect_eq(s.tasks.lines[0], 3);
        cr_expect_str_eq(t[0].group, "busy");
        cr_expect_eq(t[0].instances, 8);
        /* The list's default: one element, from no file. */
        cr_assert_eq(t[0].phases.n, 1);
        cr_expect_str_eq(t[0].phases.items[0].value, "run 1s");
        cr_expect_null(t[0].phases.items[0].file);
        cr_expect_eq(t[0].phases.items[0].line, 0);
        /* Keys after [scenario] went to the fixed section again. */
        cr_expect_str_eq(s.name, "s");
}

Test(config, same_name_in_two_kinds_is_two_instances) {
        _cleanup_scenario_ TestScenario s = {};
        ConfigError e = {};

        cr_assert_eq(sload("[group a]\n[task a]\ngroup = a\n", &s, &e), 0, "%s", e.message);
        cr_expect_eq(s.groups.n, 1);
        cr_expect_eq(s.tasks.n, 1);
}

Test(config, instance_name_of_the_maximum_length_is_accepted) {
        _cleanup_scenario_ TestScenario s = {};
        ConfigError e = {};
        char name[CONFIG_NAME_MAX + 1], text[128];

        memset(name, 'n', CONFIG_NAME_MAX);
        name[CONFIG_NAME_MAX] = '\0';
        snprintf(text, sizeof text, "[group %s]\nweight = 7\n", name);
        cr_assert_eq(sload(text, &s, &e), 0, "%s", e.message);
        cr_assert_eq(s.groups.n, 1);
        cr_expect_str_eq(s.groups.names[0], name);
        cr_expect_eq(((const TestGroup *) s.groups.items)[0].weight, 7);
}

Test(config, four_groups_are_the_limit) {
        _cleanup_scenario_ TestScenario s = {};

        cr_assert_eq(sload("[group g1]\n[group g2]\n[group g3]\n[group g4]\n", &s, NULL), 0);
        cr_expect_eq(s.groups.n, 4);
}

Test(config, rejects_bad_instance_sections) {
        char long_name[CONFIG_NAME_MAX + 2], text[128], want[256];

        expect_scenario_error("[group]\n", -EINVAL, 1,
                              "s.conf:1: [group]: missing name (expected [group NAME])");
        expect_scenario_error("[scenario]\n[group  ]\n", -EINVAL, 2,
                              "s.conf:2: [group  ]: missing name (expected [group NAME])");
        expect_scenario_error("[group bu.sy]\n", -EINVAL, 1,
                              "s.conf:1: [group bu.sy]: invalid name 'bu.sy' (only [A-Za-z0-9_-])");
        expect_scenario_error("[group a b]\n", -EINVAL, 1,
                              "s.conf:1: [group a b]: invalid name 'a b' (only [A-Za-z0-9_-])");
        expect_scenario_error("[grup busy]\n", -EINVAL, 1,
                              "s.conf:1: [grup busy]: unknown section kind 'grup'");
        expect_scenario_error("[scenario x]\n", -EINVAL, 1,
                              "s.conf:1: [scenario x]: unknown section kind 'scenario'");
        expect_scenario_error("[groups]\n", -EINVAL, 1, "s.conf:1: [groups]: unknown section");
        expect_scenario_error("[group busy] x\n", -EINVAL, 1,
                              "s.conf:1: [group busy]: text after ']'");
        expect_scenario_error("[group g1]\n[group g2]\n[group g3]\n[group g4]\n[group g5]\n",
                              -EINVAL, 5,
                              "s.conf:5: [group g5]: more than 4 [group NAME] sections");
        memset(long_name, 'n', CONFIG_NAME_MAX + 1);
        long_name[CONFIG_NAME_MAX + 1] = '\0';
        snprintf(text, sizeof text, "[group %s]\n", long_name);
        snprintf(want, sizeof want, "s.conf:1: [group %s]: name longer than %u bytes", long_name,
                 CONFIG_NAME_MAX);
        expect_scenario_error(text, -EINVAL, 1, want);
}

Test(config, rejects_the_same_instance_twice_in_one_file) {
        expect_scenario_error("[group busy]\nweight = 2\n[task t]\n[group busy]\nweight = 3\n",
                              -EINVAL, 4,
                              "s.conf:4: [group busy]: duplicate section (first on line 1)");
}

Test(config, instance_keys_go_through_the_value_parsers) {
        expect_scenario_error("[group busy]\nweight = 0\n", -ERANGE, 2,
                              "s.conf:2: group busy: weight: value 0 out of range 1..10000");
        expect_scenario_error("[group busy]\nprotect = maybe\n", -EINVAL, 2,
                              "s.conf:2: group busy: protect: invalid boolean 'maybe' (yes/no, "
                              "true/false, on/off, 1/0)");
        expect_scenario_error("[task t]\ninstances =\n", -EINVAL, 2,
                              "s.conf:2: task t: instances: empty value");
}

Test(config, rejects_unknown_and_duplicate_keys_in_instances) {
        expect_scenario_error("[group busy]\nweihgt = 3\n", -EINVAL, 2,
                              "s.conf:2: group busy: weihgt: unknown key in [group NAME] sections");
        /* A key of the other kind, and one of the fixed section. */
        expect_scenario_error("[group busy]\ninstances = 3\n", -EINVAL, 2,
                              "s.conf:2: group busy: instances: unknown key in [group NAME] "
                              "sections");
        expect_scenario_error("[group busy]\nname = x\n", -EINVAL, 2,
                              "s.conf:2: group busy: name: unknown key in [group NAME] sections");
        expect_scenario_error("[group busy]\nweight = 3\nweight = 4\n", -EINVAL, 3,
                              "s.conf:3: group busy: weight: duplicate key (first set on line 2)");
        expect_scenario_error("[group busy]\nweight: 3\n", -EINVAL, 2,
                              "s.conf:2: group busy: weight: expected '=' after the key");
        /* After a fixed section, keys are the fixed section's again. */
        expect_scenario_error("[group busy]\n[scenario]\nweight = 3\n", -EINVAL, 3,
                              "s.conf:3: weight: unknown key in section [scenario]");
}

Test(config, dropins_reopen_instances_key_by_key) {
        _cleanup_free_ char *path = fixture_path("config/instances/main.conf");
        _cleanup_free_ char *dropin = NULL;
        _cleanup_scenario_ TestScenario s = {};
        const TestGroup *g;
        const TestTask *t;
        ConfigError e = {};

        cr_assert_gt(asprintf(&dropin, "%s.d/10-more.conf", path), 0);
        cr_assert_eq(config_load(&scenario_schema, path, 0, &s, &e), 0, "%s", e.message);
        cr_assert_eq(s.groups.n, 2);
        g = s.groups.items;
        cr_expect_str_eq(s.groups.names[0], "busy");
        cr_expect_eq(g[0].weight, 300); /* main.conf only */
        cr_expect(g[0].protect); /* the drop-in's */
        cr_expect_str_eq(s.groups.files[0], path); /* where it was first named */
        cr_expect_eq(s.groups.lines[0], 7);
        cr_expect_str_eq(s.groups.names[1], "extra");
        cr_expect_eq(g[1].weight, 50);
        cr_expect_str_eq(s.groups.files[1], dropin);
        cr_expect_eq(s.groups.lines[1], 8);
        cr_assert_eq(s.tasks.n, 1);
        t = s.tasks.items;
        cr_expect_str_eq(t[0].group, "busy");
        cr_expect_eq(t[0].instances, 8);
        /* The drop-in's one phase replaced main.conf's two. */
        cr_assert_eq(t[0].phases.n, 1);
        cr_expect_str_eq(t[0].phases.items[0].value, "run 1s");
        cr_expect_str_eq(t[0].phases.items[0].file, dropin);
        cr_expect_eq(t[0].phases.items[0].line, 6);
        cr_assert_eq(s.setup.n, 1);
        cr_expect_str_eq(s.setup.items[0].value, "mkdir c");
        cr_expect_eq(s.setup.items[0].line, 12);
        cr_expect_str_eq(s.name, "main");
        cr_expect_not(leaks_found(), "a replaced list or value was not released");
}

Test(config, lists_keep_their_order_file_and_lines) {
        _cleanup_scenario_ TestScenario s = {};
        const TestTask *t;
        ConfigError e = {};

        cr_assert_eq(sload("[task t]\n"
                           "phase = run 200ms\n"
                           "\n"
                           "phase = sleep 50ms\n"
                           "phase = run 1s ; a comment\n"
                           "[scenario]\n"
                           "setup = a\n"
                           "[group g]\n"
                           "[scenario]\n"
                           "setup = b\n",
                           &s, &e),
                     0, "%s", e.message);
        cr_assert_eq(s.tasks.n, 1);
        t = s.tasks.items;
        cr_assert_eq(t[0].phases.n, 3);
        cr_expect_str_eq(t[0].phases.items[0].value, "run 200ms");
        cr_expect_str_eq(t[0].phases.items[1].value, "sleep 50ms");
        cr_expect_str_eq(t[0].phases.items[2].value, "run 1s");
        cr_expect_eq(t[0].phases.items[0].line, 2);
        cr_expect_eq(t[0].phases.items[1].line, 4);
        cr_expect_eq(t[0].phases.items[2].line, 5);
        cr_expect_str_eq(t[0].phases.items[2].file, "s.conf");
        /* A fixed section given twice in one file goes on with its list. */
        cr_assert_eq(s.setup.n, 2);
        cr_expect_str_eq(s.setup.items[0].value, "a");
        cr_expect_str_eq(s.setup.items[1].value, "b");
        cr_expect_eq(s.setup.items[0].line, 7);
        cr_expect_eq(s.setup.items[1].line, 10);
}

Test(config, many_list_elements_and_instances_grow_in_order) {
        _cleanup_scenario_ TestScenario s = {};
        _cleanup_free_ char *text = NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        const TestTask *t;

        cr_assert_not_null(f);
        fputs("[scenario]\n", f);
        for (int i = 0; i < 300; i++)
                fprintf(f, "setup = s%d\n", i);
        for (int i = 0; i < 100; i++)
                fprintf(f, "[task t%d]\nphase = p%d\n", i, i);
        cr_assert_eq(fclose(f), 0);
        text = buf;
        cr_assert_eq(sload(text, &s, NULL), 0);
        cr_assert_eq(s.setup.n, 300);
        cr_expect_str_eq(s.setup.items[299].value, "s299");
        cr_expect_eq(s.setup.items[299].line, 301);
        cr_assert_eq(s.tasks.n, 100);
        t = s.tasks.items;
        cr_expect_str_eq(s.tasks.names[99], "t99");
        cr_expect_str_eq(t[99].phases.items[0].value, "p99");
        cr_expect_eq(t[99].instances, 1);
}

Test(config, empty_list_value_clears_the_list) {
        _cleanup_scenario_ TestScenario s = {};
        const TestTask *t;
        ConfigError e = {};

        cr_assert_eq(
                sload("[task t]\nphase = a\nphase =\nphase = b\n[scenario]\nsetup = x\nsetup =\n",
                      &s, &e),
                0, "%s", e.message);
        t = s.tasks.items;
        cr_assert_eq(t[0].phases.n, 1);
        cr_expect_str_eq(t[0].phases.items[0].value, "b");
        cr_expect_eq(t[0].phases.items[0].line, 4);
        cr_expect_eq(s.setup.n, 0);
        cr_expect_null(s.setup.items);
        cr_expect_not(leaks_found(), "a cleared list was not released");
}

Test(config, list_elements_are_checked_as_strings) {
        char text[256], want[256];

        snprintf(text, sizeof text, "[task t]\nphase = %065d\n", 0);
        snprintf(want, sizeof want, "s.conf:2: task t: phase: longer than 64 bytes");
        expect_scenario_error(text, -ERANGE, 2, want);
        expect_scenario_error("[scenario]\nsetup = a\nsetup = b\x01\n", -EINVAL, 3,
                              "s.conf:3: setup: control character 0x01 in value");
}

Test(config, reject_instance_names_the_line_of_the_key) {
        expect_scenario_error("[group g]\nprotect = yes\nweight = 150\n", -EINVAL, 3,
                              "s.conf:3: group g: weight: a protected group needs weight 200 or "
                              "more");
        expect_scenario_error("[task t]\ngroup = nope\n", -EINVAL, 2,
                              "s.conf:2: task t: group: no group 'nope'");
        /* Cleared by an empty value on line 3: that line is where it was last set. */
        expect_scenario_error("[task t]\nphase = a\nphase =\n", -EINVAL, 3,
                              "s.conf:3: task t: phase: no phase");
}

Test(config, reject_instance_on_a_default_names_the_section_line) {
        expect_scenario_error("[scenario]\n[group g]\n\nprotect = yes\n", -EINVAL, 2,
                              "s.conf:2: group g: weight: a protected group needs weight 200 or "
                              "more");
        /* No key at all: the section line too. */
        expect_scenario_error("[group a]\nprotect = yes\nweight = 200\n"
                              "[group b]\nprotect = yes\nweight = 200\n"
                              "[group c]\nprotect = yes\nweight = 200\n",
                              -EINVAL, 7, "s.conf:7: group c: more than 2 protected groups");
        /* A kind's validate that gives no reason still names the instance. */
        expect_scenario_error("[task t]\ninstances = 13\n", -EINVAL, 1,
                              "s.conf:1: task t: rejected: Invalid argument");
}

Test(config, reject_instance_names_the_file_a_key_came_from) {
        _cleanup_free_ char *dir = make_tmpdir(), *main_path = NULL, *want = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        TestScenario s = { .duration_usec = 4242 };
        ConfigError e = {};

        cr_assert_eq(mkdirat(fd, "main.conf.d", 0755), 0);
        cr_assert_gt(asprintf(&main_path, "%s/main.conf", dir), 0);
        /* weight from main.conf, protect from the drop-in: main.conf:3 is at fault. */
        write_file_at(fd, "main.conf", "# main\n[group g]\nweight = 150\n");
        write_file_at(fd, "main.conf.d/10.conf", "[group g]\nprotect = yes\n");
        cr_expect_eq(config_load(&scenario_schema, main_path, 0, &s, &e), -EINVAL);
        cr_assert_gt(asprintf(&want,
                              "%s:3: group g: weight: a protected group needs weight 200 "
                              "or more",
                              main_path),
                     0);
        cr_expect_str_eq(e.message, want);
        cr_expect_eq(e.line, 3);
        /* weight at its default: the first [group g] line, in main.conf. */
        free(want);
        write_file_at(fd, "main.conf", "# main\n[group g]\n");
        cr_expect_eq(config_load(&scenario_schema, main_path, 0, &s, &e), -EINVAL);
        cr_assert_gt(asprintf(&want,
                              "%s:2: group g: weight: a protected group needs weight 200 "
                              "or more",
                              main_path),
                     0);
        cr_expect_str_eq(e.message, want);
        cr_expect_eq(s.duration_usec, 4242);
        rm_rf(dir);
}

Test(config, print_lists_instances_and_list_elements) {
        _cleanup_scenario_ TestScenario s = {};
        _cleanup_free_ char *out = NULL;
        ConfigError e = {};

        cr_assert_eq(sload("[group busy]\nweight = 300\n[task t]\ngroup = busy\nphase = a\n"
                           "phase = b\n[group idle]\n",
                           &s, &e),
                     0, "%s", e.message);
        out = sprinted(&s);
        cr_expect_str_eq(out, "scenario.name=unnamed\n"
                              "scenario.duration=10s\n"
                              "scenario.setup=\n"
                              "group.busy.weight=300\n"
                              "group.busy.protect=no\n"
                              "group.idle.weight=100\n"
                              "group.idle.protect=no\n"
                              "task.t.group=busy\n"
                              "task.t.instances=1\n"
                              "task.t.phase=a\n"
                              "task.t.phase=b\n");
}

static char *scenario_defaults_file(unsigned flags) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert_not_null(f);
        cr_assert_eq(config_write_defaults(&scenario_schema, f, flags), 0);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(config, default_file_shows_each_kind_as_a_commented_example) {
        _cleanup_free_ char *text = scenario_defaults_file(0);

        cr_expect_not_null(strstr(text, "\nsetup =\n"));
        cr_expect_not_null(strstr(text, "# A cgroup of the sandbox.\n"
                                        "# Any number of [group NAME] sections, up to 4; NAME is "
                                        "1..40 of\n# [A-Za-z0-9_-]. This example has each key at "
                                        "its default.\n#[group NAME]\n"));
        cr_expect_not_null(strstr(text, "#[group NAME]\n\n# cpu.weight.\n# Integer, 1..10000.\n"
                                        "#weight = 100\n\n"));
        cr_expect_not_null(strstr(text, "up to 1024;"));
        cr_expect_not_null(strstr(text, "#[task NAME]\n"));
        cr_expect_not_null(strstr(text, "\n#phase = run 1s\n"));
        cr_expect_not_null(strstr(text, "# Text of at most 64 bytes; each time the key is given "
                                        "adds one to the list,\n# an empty value clears it.\n"
                                        "#phase = run 1s\n"));
}

Test(config, default_file_with_kinds_parses_back_to_the_defaults) {
        _cleanup_free_ char *text = scenario_defaults_file(0),
                            *commented = scenario_defaults_file(CONFIG_WRITE_COMMENT_VALUES);
        _cleanup_free_ char *want = NULL, *got = NULL, *got_commented = NULL;
        _cleanup_scenario_ TestScenario d = {}, s = {}, sc = {};
        ConfigError e = {};

        cr_assert_eq(sload("", &d, NULL), 0);
        cr_assert_eq(sload(text, &s, &e), 0, "%s", e.message);
        cr_assert_eq(sload(commented, &sc, &e), 0, "%s", e.message);
        want = sprinted(&d);
        got = sprinted(&s);
        got_commented = sprinted(&sc);
        cr_expect_str_eq(got, want);
        cr_expect_str_eq(got_commented, want);
        cr_expect_eq(s.groups.n, 0);
        cr_expect_eq(s.tasks.n, 0);
}

Test(config, set_one_does_not_reach_instances_and_replaces_lists) {
        _cleanup_scenario_ TestScenario s = {};
        const ConfigKey *k;
        char *value = NULL;
        ConfigError e = {};

        cr_assert_eq(sload("[group busy]\n[scenario]\nsetup = a\nsetup = b\n", &s, &e), 0, "%s",
                     e.message);
        cr_expect_eq(config_set_one(&scenario_schema, &s, "group.busy.weight", "5", &e), -ENOENT);
        cr_expect_str_eq(e.message, "group.busy.weight: unknown key");
        cr_expect_eq(config_set_one(&scenario_schema, &s, "weight", "5", &e), -ENOENT);
        cr_expect_eq(((const TestGroup *) s.groups.items)[0].weight, 100);
        cr_assert_eq(config_set_one(&scenario_schema, &s, "setup", "x y", &e), 0, "%s", e.message);
        cr_assert_eq(s.setup.n, 1);
        cr_expect_str_eq(s.setup.items[0].value, "x y");
        cr_expect_null(s.setup.items[0].file);
        cr_expect_eq(s.setup.items[0].line, 0);
        cr_assert_eq(config_set_one(&scenario_schema, &s, "scenario.setup", "", &e), 0, "%s",
                     e.message);
        cr_expect_eq(s.setup.n, 0);
        cr_assert_eq(config_lookup(&scenario_schema, "setup", &k), 0);
        cr_expect_eq(config_format_value(k, &s, &value), -EOPNOTSUPP);
        cr_expect_null(value);
}

Test(config, set_one_validate_rejects_an_instance_without_a_place) {
        _cleanup_scenario_ TestScenario s = {};
        ConfigError e = {};

        cr_assert_eq(sload("[task t]\n", &s, &e), 0, "%s", e.message);
        /* Out of config_load*() there is no file:line to name, only the instance. */
        cr_expect_eq(config_set_one(&scenario_schema, &s, "duration", "0", &e), -EINVAL);
        cr_expect_str_eq(e.message, "task t: not run: the duration is 0");
        cr_expect_eq(e.line, 0);
        cr_expect_eq(s.duration_usec, 10000000);
        /* While loading, the same check names the section line. */
        expect_scenario_error("[task t]\n[scenario]\nduration = 0\n", -EINVAL, 1,
                              "s.conf:1: task t: not run: the duration is 0");
}

Test(config, free_releases_instances_and_lists) {
        TestScenario s = {};
        ConfigError e = {};

        config_free(&scenario_schema, NULL);
        /* Under ASan, anything not released here is a leak report. */
        cr_assert_eq(sload("[scenario]\nsetup = a\nsetup = b\n[group g]\n[task t]\ngroup = g\n"
                           "phase = x\nphase = y\n[task u]\n",
                           &s, &e),
                     0, "%s", e.message);
        config_free(&scenario_schema, &s);
        cr_expect_eq(s.groups.n, 0);
        cr_expect_null(s.groups.items);
        cr_expect_null(s.groups.names);
        cr_expect_null(s.groups.files);
        cr_expect_null(s.groups.lines);
        cr_expect_eq(s.tasks.n, 0);
        cr_expect_null(s.tasks.items);
        cr_expect_eq(s.setup.n, 0);
        cr_expect_null(s.setup.items);
        cr_expect_null(s.name);
        config_free(&scenario_schema, &s); /* twice is harmless */
        cr_expect_not(leaks_found(), "config_free() left memory behind (see the report above)");
}

Test(config, failed_load_releases_the_instances_it_made) {
        TestScenario s = { .duration_usec = 4242 };

        /* Instances, a list and owned strings exist when line 6 fails: ASan checks they go. */
        cr_expect_eq(sload("[group g]\n[task t]\ngroup = g\nphase = x\nphase = y\nbad\n", &s, NULL),
                     -EINVAL);
        cr_expect_eq(s.duration_usec, 4242);
        cr_expect_eq(s.tasks.n, 0);
        cr_expect_not(leaks_found(), "the failed load left memory behind (see the report above)");
}

Test(config, schema_check_rejects_broken_kinds) {
        static const ConfigKey grp_keys[] = {
                CONFIG_KEY_UINT("grp", "weight", TestGroup, weight, "1", 1, 10, "h"),
        };
        static const ConfigKey bad_default_keys[] = {
                CONFIG_KEY_UINT("group", "weight", TestGroup, weight, "0", 1, 10, "h"),
        };
        static const ConfigKey list_empty_ok_keys[] = {
                { .section = "task",
                  .name = "phase",
                  .type = CONFIG_LIST,
                  .flags = CONFIG_EMPTY_OK,
                  .default_value = "",
                  .help = "h",
                  .offset = offsetof(TestTask, phases) },
        };
        static const ConfigKey list_umin_keys[] = {
                { .section = "task",
                  .name = "phase",
                  .type = CONFIG_LIST,
                  .default_value = "",
                  .umin = 1,
                  .umax = 8,
                  .help = "h",
                  .offset = offsetof(TestTask, phases) },
        };
#define KIND_(name_, T, keys_, member_)                                                          \
        {                                                                                        \
                .name = (name_), .keys = (keys_), .n_keys = ELEMENTSOF(keys_),                   \
                .struct_size = sizeof(T), .offset = offsetof(TestScenario, member_), .help = "h" \
        }
        static const struct {
                ConfigKind kinds[2];
                size_t n;
                const char *message;
        } cases[] = {
                { { KIND_("scenario", TestGroup, group_keys, groups) },
                  1,
                  "schema: kind scenario: named like the fixed section [scenario]" },
                { { KIND_("group", TestGroup, group_keys, groups),
                    KIND_("group", TestGroup, group_keys, tasks) },
                  2,
                  "schema: kind group: defined twice" },
                { { KIND_("group", TestGroup, group_keys, groups),
                    KIND_("task", TestTask, task_keys, groups) },
                  2,
                  "schema: kind task: instances member overlaps that of kind group" },
                { { KIND_("group", TestGroup, group_keys, setup) },
                  1,
                  "schema: kind group: instances member overlaps that of scenario.setup" },
                { { { .name = "group",
                      .keys = group_keys,
                      .n_keys = ELEMENTSOF(group_keys),
                      .struct_size = sizeof(TestGroup),
                      .offset = sizeof(TestScenario) - 8,
                      .help = "h" } },
                  1,
                  "schema: kind group: instances member outside the struct" },
                { { KIND_("gr oup", TestGroup, group_keys, groups) },
                  1,
                  "schema: kind gr oup: name must be 1..40 of [A-Za-z0-9_-]" },
                { { { .name = "group",
                      .keys = group_keys,
                      .n_keys = ELEMENTSOF(group_keys),
                      .struct_size = sizeof(TestGroup),
                      .offset = offsetof(TestScenario, groups) } },
                  1,
                  "schema: kind group: no help text, no keys or no struct size" },
                { { KIND_("group", TestGroup, grp_keys, groups) },
                  1,
                  "schema: grp.weight: section is not the kind's name, group" },
                { { KIND_("group", TestGroup, bad_default_keys, groups) },
                  1,
                  "schema: group.weight: default: value 0 out of range 1..10" },
                { { { .name = "group",
                      .keys = group_keys,
                      .n_keys = ELEMENTSOF(group_keys),
                      .struct_size = 4,
                      .offset = offsetof(TestScenario, groups),
                      .help = "h" } },
                  1,
                  "schema: group.weight: member outside the struct" },
                { { KIND_("task", TestTask, list_empty_ok_keys, tasks) },
                  1,
                  "schema: task.phase: flags not valid for this type" },
                { { KIND_("task", TestTask, list_umin_keys, tasks) },
                  1,
                  "schema: task.phase: umin/umax set but not used by this type" },
        };
#undef KIND_

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ConfigSchema s = { .keys = scenario_keys,
                                   .n_keys = ELEMENTSOF(scenario_keys),
                                   .struct_size = sizeof(TestScenario),
                                   .kinds = cases[i].kinds,
                                   .n_kinds = cases[i].n };
                TestScenario c = { .duration_usec = 4242 };
                ConfigError e = {};

                cr_expect_eq(config_check_schema(&s, &e), -EINVAL, "case %zu", i);
                cr_expect_str_eq(e.message, cases[i].message, "case %zu", i);
                /* config_load*() refuses the table too, before anything is written. */
                cr_expect_eq(config_load_string(&s, NULL, "", 0, &c, NULL), -EINVAL, "case %zu", i);
                cr_expect_eq(c.duration_usec, 4242, "case %zu", i);
        }
}

Test(config, schema_check_rejects_kinds_without_a_table) {
        ConfigSchema s = { .keys = scenario_keys,
                           .n_keys = ELEMENTSOF(scenario_keys),
                           .struct_size = sizeof(TestScenario),
                           .n_kinds = 1 };
        ConfigError e = {};

        cr_expect_eq(config_check_schema(&s, &e), -EINVAL);
        cr_expect_str_eq(e.message, "schema: no keys or no struct size");
}
