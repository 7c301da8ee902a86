# StreamPulse build. Plain GNU make; every .c under src/ is picked up automatically.
#
#   make                 build/streampulse (release-ish: -O2 -g)
#   make SANITIZE=1      ASan+UBSan build into build-san/
#   make run             install missing deps, build, start a single-node broker
#   make test            install missing deps, run unit, sim, integration and fuzz tiers
#   make fuzz            open-ended fuzzing: random seed, FUZZ_TIME seconds (600) per target
#   make sim             Raft simulation seeds (tests/sim): 4 fault profiles, then a sanitizer run
#   make bench           benchmark against a fresh broker, with the loopback TCP ceiling
#   make bench-cluster   single node vs a three-node cluster (acks=all), leader failover times
#   make bench-scale     10,000 and 50,000 partitions and 10,000 idle connections on one node
#   make unit            unit tests only (sanitizer build)
#   make layers          the include rules of docs/ARCHITECTURE.md (part of make test)
#   make integration     integration tests only
#
# Everything except src/main.c and src/cli/ goes into one static library, so the
# tests link exactly what ships.

SANITIZE ?= 0
# Compiles at once in the builds the targets below start (make test's tiers, run, the
# benchmarks): one per CPU.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# V=1 echoes every compile and link command; by default only a line per linked program shows,
# so the test log holds what matters (compiler warnings and errors always show).
V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif
CC       ?= cc
ifeq ($(CC),cc)
CC := gcc
endif

ifeq ($(SANITIZE),1)
BUILD    ?= build-san
OPT      ?= -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
else
BUILD    ?= build
OPT      ?= -O2 -g
SANFLAGS :=
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla \
        -Wimplicit-fallthrough -Wundef -Wno-unused-parameter
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WARN += -Werror
endif

CPPFLAGS += -Isrc -D_GNU_SOURCE -MMD -MP
CFLAGS   += -std=gnu17 $(OPT) $(WARN) $(SANFLAGS) -pthread
LDFLAGS  += $(SANFLAGS) -pthread
LIBS     := -lssl -lcrypto -lzstd -llz4 -lsnappy -lz -lm
CLI_LIBS := -lrdkafka

LIB_SRCS  := $(filter-out src/main.c,$(shell find src -name '*.c' -not -path 'src/cli/*' | sort))
CLI_SRCS  := src/main.c $(shell find src/cli -name '*.c' | sort)
UNIT_SRCS := $(shell find tests/unit -name '*.c' | sort)
ITEST_SRCS := $(shell find tests/integration -maxdepth 1 -name '*.c' | sort)
BENCH_SRCS := $(shell find bench -name '*.c' | sort)
SIM_SRCS  := $(shell find tests/sim -name '*.c' | sort)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_OBJS  := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
SIM_OBJS   := $(SIM_SRCS:%.c=$(BUILD)/%.o)
LIBSP      := $(BUILD)/libstreampulse.a
ITEST_BINS := $(ITEST_SRCS:tests/integration/%.c=$(BUILD)/itest/%) \
              $(patsubst tests/integration/preload/%.c,$(BUILD)/itest/%.so,$(wildcard tests/integration/preload/*.c))

.PHONY: all run test layers unit sim integration fuzz-smoke fuzz bench bench-cluster bench-scale deps clean format docs

all: $(BUILD)/streampulse $(BUILD)/unit_tests $(ITEST_BINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIBSP): $(LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/streampulse: $(CLI_OBJS) $(LIBSP)
	@echo "LD $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBSP) $(CLI_LIBS) $(LIBS)

$(BUILD)/unit_tests: $(UNIT_OBJS) $(LIBSP)
	@echo "LD $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJS) $(LIBSP) $(LIBS)

# The deterministic Raft simulator (tests/sim): build/sim --help.
$(BUILD)/sim: $(SIM_OBJS) $(LIBSP)
	@echo "LD $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SIM_OBJS) $(LIBSP) $(LIBS)

# Integration helper programs (C clients on librdkafka).
$(BUILD)/itest/%: tests/integration/%.c
	@mkdir -p $(dir $@)
	@echo "LD $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(CLI_LIBS) $(LIBS)

# LD_PRELOAD shims of the integration tests (tests/integration/preload).
$(BUILD)/itest/%.so: tests/integration/preload/%.c
	@mkdir -p $(dir $@)
	@echo "LD $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -shared -fPIC -o $@ $< -ldl

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	@echo "LD $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(CLI_LIBS) $(LIBS)

deps:
	@scripts/deps.sh build

run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/streampulse
	$(BUILD)/streampulse serve $(ARGS)

unit:
	@$(MAKE) --no-print-directory -j$(JOBS) SANITIZE=1 build-san/unit_tests
	build-san/unit_tests $(FILTER)

# 200 seeds (60 simulated seconds each) per fault profile (net, crash, membership, grow) on the -O2
# build, 2 at a time, then a short run under ASan+UBSan. A failure prints the command that
# replays it.
SIM_SEEDS ?= 200
SIM_JOBS  ?= 2
sim:
	@$(MAKE) --no-print-directory -j$(JOBS) SANITIZE=0 BUILD=build build/sim
	build/sim --profile all --seeds $(SIM_SEEDS) --jobs $(SIM_JOBS)
	@$(MAKE) --no-print-directory -j$(JOBS) SANITIZE=1 BUILD=build-san build-san/sim
	build-san/sim --profile all --seeds 20 --first 100000 --jobs $(SIM_JOBS)

integration:
	@$(MAKE) --no-print-directory -j$(JOBS) all
	tests/integration/run $(FILTER)

# The deterministic fuzz tier of make test: seeds and committed corpus, then FUZZ_RUNS mutations
# from a fixed seed per target (tests/fuzz/run).
fuzz-smoke:
	tests/fuzz/run

# Open-ended fuzzing, outside make test: FUZZ_TIME seconds per target from a random seed. Commit
# what it finds to tests/fuzz/corpus/<target>/ with the fix.
fuzz:
	tests/fuzz/run --open $(FUZZ_TARGETS)

# Rewrites the generated reference pages docs/CONFIG.md and docs/METRICS.md from the code
# (integration's t_docs.sh fails while they are stale).
docs: all
	tests/integration/gen_docs.sh write

# The include rules of docs/ARCHITECTURE.md's layer table.
layers:
	@scripts/check-layers

test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory layers
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory sim
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory fuzz-smoke

bench:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/streampulse $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
	bench/run

# The cluster benchmark (bench/cluster): single node vs three nodes, and leader failover times.
bench-cluster:
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/streampulse
	bench/cluster

# The scale benchmark (bench/scale/run): partitions by the tens of thousands on one node
# (creation rate, RSS, descriptors, restarts, one record per partition) and idle connections.
bench-scale:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/streampulse $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
	bench/scale/run

format:
	clang-format -i $$(find src tests bench -name '*.[ch]')

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
