/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config_load_string() on arbitrary INI text, through defaults, parse and validate: no crash, no
 * leak, and whatever loads prints values that config_set_one() takes back unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct FuzzConfig {
        bool enabled;
        int64_t offset;
        uint64_t count;
        uint64_t interval_usec;
        unsigned pct;
        char *name;
        CpuMask *cpus;
        int mode;
        char **patterns;
        bool other_enabled;
} FuzzConfig;

static const char *const modes[] = { "off", "observe", "enforce", NULL };

static const ConfigKey keys[] = {
        CONFIG_KEY_BOOL("main", "enabled", FuzzConfig, enabled, "yes", "h"),
        CONFIG_KEY_INT("main", "offset", FuzzConfig, offset, "0", -1000, 1000, "h"),
        CONFIG_KEY_UINT("main", "count", FuzzConfig, count, "1", 0, 0, "h"),
        CONFIG_KEY_DURATION("main", "interval", FuzzConfig, interval_usec, "1s", 1,
                            UINT64_C(3600000000), "h"),
        CONFIG_KEY_PERCENT("main", "pct", FuzzConfig, pct, "50", 0, 0, "h"),
        CONFIG_KEY_STRING("main", "name", FuzzConfig, name, "x", 32, CONFIG_EMPTY_OK, "h"),
        CONFIG_KEY_CPULIST("main", "cpus", FuzzConfig, cpus, "0", 128, CONFIG_EMPTY_OK, "h"),
        CONFIG_KEY_ENUM("main", "mode", FuzzConfig, mode, "off", modes, "h"),
        CONFIG_KEY_STRV("other", "patterns", FuzzConfig, patterns, "", 0, CONFIG_EMPTY_OK, "h"),
        CONFIG_KEY_BOOL("other", "enabled", FuzzConfig, other_enabled, "no", "h"),
};

static int validate(const void *config, ConfigContext *ctx) {
        const FuzzConfig *c = config;

        if (c->enabled && c->count == 0)
                return config_reject(ctx, "count", "must be positive when enabled");
        return 0;
}

static const ConfigSchema schema = CONFIG_SCHEMA(FuzzConfig, keys, validate);

/* Every value formats to text that sets the same value again. */
static void check_round_trip(FuzzConfig *c) {
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *text = NULL, *again = NULL, *name = NULL;
                ConfigError e;

                if (config_format_value(&keys[i], c, &text) < 0)
                        abort();
                if (asprintf(&name, "%s.%s", keys[i].section, keys[i].name) < 0)
                        abort();
                if (config_set_one(&schema, c, name, text, &e) < 0)
                        abort();
                if (config_format_value(&keys[i], c, &again) < 0 || !streq(text, again))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FuzzConfig c = {};
        ConfigError e;

        /* A broken table would fail every input the same way and fuzz nothing. */
        if (config_check_schema(&schema, &e) < 0)
                abort();
        if (config_load_string(&schema, "fuzz", (const char *) data, size, &c, &e) < 0) {
                if (e.error >= 0 || e.message[0] == '\0')
                        abort();
                return 0;
        }
        check_round_trip(&c);
        config_free(&schema, &c);
        return 0;
}
