# gosbx Makefile, in the git style.
#
#   make                      build gosbx and gosbx-runtime into $(O)/
#                             (in parallel, one job a core, unless -j
#                             is given)
#   make test                 build the test helpers and unit tests, then
#                             run the unit tests and shell tests (t/)
#   make helpers              only build them (to run one t/tNNNN-*.sh)
#   make install              the programs into $(DESTDIR)$(bindir), the
#                             man pages (Documentation/, asciidoc and
#                             xmlto) into $(DESTDIR)$(mandir)/man1, the
#                             shell completions of contrib/completion/
#                             into $(DESTDIR)$(datadir) (prefix=/usr/local;
#                             prefix=$$HOME/.local for one user)
#   make uninstall            remove what make install installed
#   make check                clang-format (every C file) and cppcheck
#                             (lib/, builtin/, runtime/, gosbx.c)
#   make perf                 the benchmarks in t/perf/
#   make fuzz                 build the libFuzzer harnesses of t/fuzz/ with
#                             clang (into build-fuzz/) and run each for
#                             FUZZ_SECONDS (default 10) on its seed corpus
#   make image                the runtime image from Debian packages
#                             and a Go release (IMAGE=<tag>,
#                             IMAGE_GO=<x.y.z>|1.23|1.19; podman)
#   DEVELOPER=1               warnings are errors
#   SANITIZE=address,undefined  build with sanitizers (into build-<name>/)
#   V=1                       show the commands

GOSBX_VERSION = 0.1.0

# Parallel by default: one job a core when neither the command line nor
# MAKEFLAGS in the environment has -j (a -j on the command line wins
# over this). Only at the top: a sub-make shares its parent's jobs.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j% j%,$(MAKEFLAGS) $(shell printenv MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
endif
# clean and a build in the same command must not overlap
ifneq ($(filter clean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

CC ?= cc
prefix ?= /usr/local
bindir = $(prefix)/bin
datadir = $(prefix)/share
mandir = $(datadir)/man
bashcompdir = $(datadir)/bash-completion/completions
zshcompdir = $(datadir)/zsh/site-functions
INSTALL ?= install
PKG_CONFIG ?= pkg-config

ifdef SANITIZE
O ?= build-$(subst $(comma),-,$(SANITIZE))
else
O ?= build
endif
comma := ,

CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) -std=gnu11 -Wall -Ilib -I. -MMD -MP \
	-DGOSBX_VERSION='"$(GOSBX_VERSION)"' -D_FILE_OFFSET_BITS=64 \
	-pthread
ALL_LDFLAGS = $(LDFLAGS) -pthread -Wl,--as-needed -Wl,-z,relro,-z,now

# `gosbx version`: `git describe` of a git checkout (empty otherwise),
# kept in $(O)/GOSBX-DESCRIBE so that builtin/version.o is rebuilt when
# it changes
GOSBX_GIT_DESCRIBE := $(if $(wildcard .git),$(shell git describe --tags \
	--always --dirty 2>/dev/null))

ifdef DEVELOPER
ALL_CFLAGS += -Werror -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wformat=2 -Wshadow \
	-Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes \
	-Wold-style-definition -Wvla -Wdeclaration-after-statement \
	-Wno-declaration-after-statement
endif
ifdef SANITIZE
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif
# set by `make fuzz`: coverage for libFuzzer in every object
ifdef FUZZ
ALL_CFLAGS += -fsanitize=fuzzer-no-link
endif

# Linked libraries. libarchive, libmicrohttpd and readline are loaded on
# first use with dlopen() by the shims lib/dl/dl-*.c (lib/dl/dl.h): only their
# cflags are used, except that gosbx-runtime and the test programs link
# the real libmicrohttpd (MHD_LIBS).
PKGS = jansson libcurl yaml-0.1 libseccomp libcrypto
DL_PKGS = libarchive libmicrohttpd readline
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
# everything but libcurl, for gosbx-runtime (RUNTIME_LIBS)
BASE_PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(filter-out libcurl,$(PKGS)) \
	2>/dev/null)
MHD_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null)
ALL_CFLAGS += $(PKG_CFLAGS)
# sandboxd's gRPC ProcessService, served by gosbx-runtime
# (runtime/runtime-grpc.c) and driven by the url backend
# (lib/proto/grpc-client.c): HTTP/2 from nghttp2, messages from protobuf-c
GRPC_PKGS = libnghttp2 libprotobuf-c
GRPC_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(GRPC_PKGS) 2>/dev/null)
GRPC_LIBS := $(shell $(PKG_CONFIG) --libs $(GRPC_PKGS) 2>/dev/null)
LIBS = $(PKG_LIBS) $(GRPC_LIBS) -lwslay -lm -ldl
# gosbx-runtime's link line: no libcurl, so no client code either
RUNTIME_LIBS = $(MHD_LIBS) $(GRPC_LIBS) $(BASE_PKG_LIBS) -lwslay -lm -ldl

ifndef V
QUIET_CC = @echo '   ' CC $@;
QUIET_LINK = @echo '   ' LINK $@;
QUIET_AR = @echo '   ' AR $@;
endif

# lib/dl/dl-mhd.c stands in for libmicrohttpd in gosbx only (lib/dl/dl.h)
DL_MHD_OBJ = $(O)/lib/dl/dl-mhd.o
LIB_SRC = $(filter-out lib/dl/dl-mhd.c,$(sort $(wildcard lib/*.c lib/*/*.c)))
# Two libraries (issue 22): libgosbx-client.a, the client side that only
# gosbx links (the HTTP client over libcurl, sessions and their backends,
# the MCP server), and libgosbx-base.a, what gosbx-runtime shares with it
# (utilities, lib/proto/, lib/dl/). gosbx-runtime links the base alone.
CLIENT_SRC = lib/http.c $(sort $(wildcard lib/session/*.c lib/local/*.c \
	lib/kube/*.c lib/mcp/*.c))
BASE_SRC = $(filter-out $(CLIENT_SRC),$(LIB_SRC))
BUILTIN_SRC = $(sort $(wildcard builtin/*.c))
RUNTIME_SRC = $(sort $(wildcard runtime/*.c))
# protoc-c's output, checked in: lib/proto/pb/generate.sh
PB_SRC = lib/proto/pb/process/v1/process.pb-c.c \
	lib/proto/pb/google/protobuf/empty.pb-c.c
# code shared by the test programs only (helpers, unit tests, fuzzing)
TESTLIB_SRC = t/helper/bench-lib.c t/helper/crd-schema.c \
	t/helper/yaml-json.c
HELPER_SRC = $(filter-out $(TESTLIB_SRC),$(sort $(wildcard t/helper/*.c)))
UNIT_SRC = $(sort $(wildcard t/unit/u-*.c))
FUZZ_SRC = $(sort $(wildcard t/fuzz/fuzz-*.c))

# the generated messages: both ends of sandboxd's gRPC use them
BASE_OBJ = $(BASE_SRC:%.c=$(O)/%.o) $(PB_SRC:%.c=$(O)/%.o)
CLIENT_OBJ = $(CLIENT_SRC:%.c=$(O)/%.o)
TESTLIB_OBJ = $(TESTLIB_SRC:%.c=$(O)/%.o)
BUILTIN_OBJ = $(BUILTIN_SRC:%.c=$(O)/%.o)
RUNTIME_OBJ = $(RUNTIME_SRC:%.c=$(O)/%.o)
HELPER_BIN = $(HELPER_SRC:t/helper/%.c=$(O)/t/helper/%)
UNIT_BIN = $(UNIT_SRC:t/unit/%.c=$(O)/t/unit/%)
FUZZ_BIN = $(FUZZ_SRC:t/fuzz/%.c=$(O)/t/fuzz/%)

LIBBASE = $(O)/libgosbx-base.a
LIBCLIENT = $(O)/libgosbx-client.a
# gosbx's and the test programs' libraries, in link order
LIBGOSBX = $(LIBCLIENT) $(LIBBASE)
LIBTEST = $(O)/libgosbx-test.a
PROGRAMS = $(O)/gosbx $(O)/gosbx-runtime

# the shell completions, once contrib/completion/ has them
BASH_COMPLETION = $(wildcard contrib/completion/gosbx.bash)
ZSH_COMPLETION = $(wildcard contrib/completion/_gosbx)

all: $(PROGRAMS)

# the programs the shell tests run (t/helper/) and the unit tests
helpers: $(HELPER_BIN) $(UNIT_BIN)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/builtin/version.o: ALL_CFLAGS += \
	-DGOSBX_GIT_DESCRIBE='"$(GOSBX_GIT_DESCRIBE)"'
$(O)/builtin/version.o: $(O)/GOSBX-DESCRIBE
$(O)/GOSBX-DESCRIBE: FORCE
	@mkdir -p $(O) && echo '$(GOSBX_GIT_DESCRIBE)' | cmp -s - $@ || \
		echo '$(GOSBX_GIT_DESCRIBE)' >$@

# the runtime, lib/proto, the sandboxd client and the generated code find
# the generated headers
$(O)/runtime/%.o $(O)/lib/proto/%.o $(O)/lib/session/sandboxd.o: \
	ALL_CFLAGS += -Ilib/proto/pb \
	$(GRPC_CFLAGS)
# generated code: its functions are declared in its own headers only,
# and its *__INIT macros leave out the braces of nested members
$(O)/lib/proto/pb/%.o: ALL_CFLAGS += -Wno-missing-prototypes \
	-Wno-missing-braces

$(LIBBASE): $(BASE_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $^

$(LIBCLIENT): $(CLIENT_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $^

# the test programs find the headers of t/helper/ too
$(O)/t/%.o: ALL_CFLAGS += -It/helper

$(LIBTEST): $(TESTLIB_OBJ)
	$(QUIET_AR)rm -f $@ && $(AR) rcs $@ $^

$(O)/gosbx: $(O)/gosbx.o $(BUILTIN_OBJ) $(DL_MHD_OBJ) $(LIBGOSBX)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $(O)/gosbx.o $(BUILTIN_OBJ) \
		$(DL_MHD_OBJ) $(LIBGOSBX) $(LIBS)

$(O)/gosbx-runtime: $(RUNTIME_OBJ) $(LIBBASE)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $(RUNTIME_OBJ) $(LIBBASE) \
		$(RUNTIME_LIBS)

$(O)/t/helper/%: $(O)/t/helper/%.o $(LIBTEST) $(LIBGOSBX)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBTEST) $(LIBGOSBX) \
		$(MHD_LIBS) $(LIBS)

$(O)/t/unit/%: $(O)/t/unit/%.o $(LIBTEST) $(LIBGOSBX)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBTEST) $(LIBGOSBX) \
		$(MHD_LIBS) $(LIBS) -lcmocka

# Tests: T selects scripts, e.g. make test T='t3*.sh'
T ?=
test: all helpers
	@GOSBX_BUILD_DIR=$(abspath $(O)) SANITIZE='$(SANITIZE)' \
		./t/run-tests.sh $(T)

# The kube suites against a real control plane (t66*, contrib/cluster):
# build.sh builds etcd, kube-apiserver and kube-controller-manager from
# Go modules once (cached by version), then the scripts (T, default
# t66*.sh) run with GOSBX_TEST_CLUSTER=1 (without it they skip)
GOSBX_CLUSTER_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gosbx/cluster
test-cluster: all helpers
	@GOSBX_CLUSTER_CACHE='$(GOSBX_CLUSTER_CACHE)' ./contrib/cluster/build.sh
	@GOSBX_TEST_CLUSTER=1 GOSBX_CLUSTER_CACHE='$(GOSBX_CLUSTER_CACHE)' \
		GOSBX_BUILD_DIR=$(abspath $(O)) SANITIZE='$(SANITIZE)' \
		./t/run-tests.sh $(or $(T),'t66*.sh')

unit: $(UNIT_BIN)

# Fuzzing: clang's libFuzzer with ASan and UBSan, in build-fuzz/.
# FUZZ_SECONDS per harness; a crash fails and leaves its input in
# build-fuzz/t/fuzz/ (t/fuzz/run.sh). Needs clang and libclang-rt-dev.
FUZZ_SECONDS ?= 10
FUZZ_CC ?= clang
fuzz:
	@$(MAKE) --no-print-directory O=build-fuzz CC=$(FUZZ_CC) \
		SANITIZE=address,undefined FUZZ=1 fuzz-run

$(O)/t/fuzz/%: $(O)/t/fuzz/%.o $(LIBTEST) $(LIBGOSBX)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(LIBTEST) $(LIBGOSBX) $(MHD_LIBS) $(LIBS)

fuzz-run: $(FUZZ_BIN)
	@./t/fuzz/run.sh $(O) $(FUZZ_SECONDS) $(FUZZ_BIN)

perf: all helpers
	@GOSBX_BUILD_DIR=$(abspath $(O)) ./t/perf/run.sh

# The runtime image without Docker: mmdebstrap + podman import
# (runtime-image/build-debian.sh; runtime-image/Dockerfile is the
# Docker way). Test it: GOSBX_TEST_IMAGE=$(IMAGE) make test T=t65*.sh
# IMAGE_GO empty: the Go release build-debian.sh chooses (that of the go
# on PATH if 1.26 or later, else the one runtime-image/go-toolchain.sh
# pins).
IMAGE ?= localhost/gosbx-runtime:debian
IMAGE_GO ?=
image: $(O)/gosbx-runtime
	./runtime-image/build-debian.sh --runtime=$(O)/gosbx-runtime \
		--tag=$(IMAGE) $(if $(IMAGE_GO),--go=$(IMAGE_GO))

install: all doc
	$(INSTALL) -d -m 755 $(DESTDIR)$(bindir)
	$(INSTALL) -m 755 $(PROGRAMS) $(DESTDIR)$(bindir)
	$(MAKE) -C Documentation install mandir='$(mandir)'
ifneq ($(BASH_COMPLETION),)
	$(INSTALL) -d -m 755 $(DESTDIR)$(bashcompdir)
	$(INSTALL) -m 644 $(BASH_COMPLETION) $(DESTDIR)$(bashcompdir)/gosbx
endif
ifneq ($(ZSH_COMPLETION),)
	$(INSTALL) -d -m 755 $(DESTDIR)$(zshcompdir)
	$(INSTALL) -m 644 $(ZSH_COMPLETION) $(DESTDIR)$(zshcompdir)/_gosbx
endif

# the files only: the directories may hold other programs' files
uninstall:
	rm -f $(PROGRAMS:$(O)/%=$(DESTDIR)$(bindir)/%)
	$(MAKE) -C Documentation uninstall mandir='$(mandir)'
	rm -f $(DESTDIR)$(bashcompdir)/gosbx $(DESTDIR)$(zshcompdir)/_gosbx

doc:
	$(MAKE) -C Documentation

# the shell scripts gosbx ships and CI runs (the test scripts are
# test-lib.sh's dialect: eval'd strings that shellcheck cannot follow)
SHELL_SCRIPTS = contrib/install-deps.sh $(wildcard contrib/cluster/*.sh) \
	contrib/kind/run-test-kind.sh contrib/completion/gosbx.bash \
	$(wildcard runtime-image/*.sh) .ci/run t/run-tests.sh t/crds.sh

check:
	@clang-format --dry-run --Werror $(LIB_SRC) lib/dl/dl-mhd.c $(BUILTIN_SRC) \
		$(RUNTIME_SRC) gosbx.c $(wildcard lib/*.h lib/*/*.h) builtin.h \
		$(wildcard t/helper/*.[ch] t/unit/*.c t/fuzz/*.c)
	@cppcheck --quiet --error-exitcode=1 --inline-suppr \
		--enable=warning,portability --std=c11 -Ilib -I. \
		--library=contrib/cppcheck-jansson.cfg \
		--suppress=missingIncludeSystem -ilib/proto/pb \
		lib builtin runtime gosbx.c
	@shellcheck -x -P SCRIPTDIR $(SHELL_SCRIPTS)

clean:
	rm -rf build build-*

.PHONY: all helpers test test-cluster unit perf image install uninstall doc check clean \
	fuzz fuzz-run FORCE
.DELETE_ON_ERROR:
# keep object files of helpers and unit tests (no "rm ..." after the tests)
.SECONDARY:

-include $(shell find $(O) -name '*.d' 2>/dev/null)
