# collc - compiled MPI collectives.
#
#   make                      build into build/ with mpicc
#   make BUILD=d MPICC=w      build into d/ with MPI compiler wrapper w
#   make check                every test, Open MPI and MPICH (installs missing packages as root)
#   make bench                the main benchmark on this machine (see README)
#   make bench-scale          all-to-all at p = 1152 under SimGrid SMPI (docs/scale.md)
#   make tune                 collc-tune at p = 2, 4, 8 (about 11 min), then the built-in
#                             rule regenerated from the runs (tuning/builtin.json)
#   make tune TUNE_NP=2       collc-tune at one p: a tuning file (bench/out/), nothing else
#   make install PREFIX=/p    install library, header, tools, pkg-config file
#   make asan                 sanitizer build into build-asan/
#   make tsan                 ThreadSanitizer build into build-tsan/ (tests/run.sh runs the
#                             threads test there with tests/tsan.supp)
#   make fuzz [FUZZ_TIME=600] fuzz the wisdom loader (libFuzzer, clang) for FUZZ_TIME s

BUILD   ?= build
MPICC   ?= mpicc
PREFIX  ?= /usr/local
CFLAGS  ?= -O2 -g
WERROR  ?= -Werror
VERSION := 0.1.0

# V=1 shows full commands.
Q := $(if $(V),,@)

CPPFLAGS += -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L
XCFLAGS  := -std=c11 -Wall -Wextra $(WERROR) -fPIC -pthread
LDLIBS   += -lz -lm -lhwloc -ljansson -pthread

# The built-in rule is data (tuning/builtin.json), compiled in as a generated C array.
LIB_SRC  := $(sort $(wildcard src/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/builtin_rule.o
TOOLS    := collc-explain collc-verify collc-bench collc-scale collc-tune
TOOL_BIN := $(TOOLS:%=$(BUILD)/bin/%)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
MPIT_SRC := $(sort $(wildcard tests/mpi/*.c))
TEST_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit_%) \
            $(MPIT_SRC:tests/mpi/%.c=$(BUILD)/tests/mpi_%)

# Fortran test programs (tests/fortran: unmodified programs, run preloaded),
# built with the Fortran wrapper of MPICC's library when there is one:
# mpicc.openmpi -> mpifort.openmpi. Open MPI 4.1's persistent collectives
# are its MPIX_ extension (-DCOLLC_MPIX); gfortran >= 10 needs
# -fallow-argument-mismatch for mpif.h's choice buffers (-w: their warnings).
MPIFC    ?= $(subst mpicc,mpifort,$(MPICC))
FFLAGS   ?= -O1 -g
FORT_DEF := $(if $(findstring openmpi,$(MPICC)),-DCOLLC_MPIX)
FORT_SRC := $(sort $(wildcard tests/fortran/*.F90 tests/fortran/*.f90))
ifneq ($(shell command -v $(MPIFC) 2>/dev/null),)
TEST_BIN += $(addprefix $(BUILD)/tests/fortran_,$(basename $(notdir $(FORT_SRC))))
endif

# make CUDA=1: also the CUDA batch executor, $(BUILD)/libcollc_cuda.so (nvcc, sm_90 and
# compute_90 PTX; the only object linking the CUDA runtime: libcollc itself never does).
NVCC     ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) nvcc)
MPI_INC  := $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -show 2>/dev/null | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
CUDA_LIB := $(if $(CUDA),$(BUILD)/libcollc_cuda.so)
# (tests/fakecuda: the fake CUDA of the tests, rules below)
FAKECUDA_DIR := $(BUILD)/tests/fakecuda
FAKECUDA := $(addprefix $(FAKECUDA_DIR)/,libcudart.so libcuda.so.1 libcollc.so libcollc_cuda.so)
$(BUILD)/libcollc_cuda.so: src/cuda/batch.cu src/exec/kernel_table.h src/exec/xbatch.h
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  NVCC    $@")
	$(Q)$(NVCC) -O2 -fmad=false -Xcompiler -fPIC -Isrc $(filter -I%,$(MPI_INC)) \
	  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 -shared -o $@ $<

.DEFAULT_GOAL := all
.PHONY: all lib tools tests check bench install uninstall asan tsan clean deps fuzz smpi bench-scale tune
all: lib tools $(BUILD)/collc.pc $(CUDA_LIB)

lib: $(BUILD)/libcollc.so $(BUILD)/libcollc.a
tools: $(TOOL_BIN)
tests: all $(TEST_BIN) $(FAKECUDA)

$(BUILD)/obj/%.o: %.c $(wildcard include/*.h src/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(MPICC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -c $< -o $@

# tuning/builtin.json as bytes (od: no tool beyond coreutils; no string escaping).
$(BUILD)/gen/builtin_rule.c: tuning/builtin.json
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  GEN     $@")
	$(Q){ echo '/* generated from $< by make: do not edit */'; echo '#include <stddef.h>'; \
	  echo 'const char tune_builtin_json[] = {'; od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; echo 'const size_t tune_builtin_len = sizeof tune_builtin_json - 1;'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/builtin_rule.o: $(BUILD)/gen/builtin_rule.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(MPICC) $(XCFLAGS) $(CFLAGS) -c $< -o $@

# -Bsymbolic-functions: the library's calls to its own functions bind
# directly, not through the PLT (nanoseconds on every call's path); the
# program's MPI_* calls still resolve to the library's definitions.
$(BUILD)/libcollc.so: $(LIB_OBJ)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(MPICC) -shared -Wl,-soname,libcollc.so -Wl,-Bsymbolic-functions $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libcollc.a: $(LIB_OBJ)
	@rm -f $@
	@$(if $(V),,echo "  AR      $@")
	$(Q)ar rcs $@ $^

# Tools and tests link the static library, so they run without LD_LIBRARY_PATH.
$(BUILD)/bin/%: tools/%.c $(wildcard tools/*.h) $(BUILD)/libcollc.a
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(MPICC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) $< -o $@ $(BUILD)/libcollc.a $(LDLIBS)

$(BUILD)/tests/unit_%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libcollc.a
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(MPICC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) $< -o $@ $(BUILD)/libcollc.a $(LDLIBS)

# The fake CUDA of tests without a GPU (tests/fakecuda): a runtime on host memory
# (libcudart.so; libcuda.so.1 the same file, for the driver's range query) and a host
# build of libcollc_cuda.so next to a copy of libcollc.so, the directory the CUDA
# backend is loaded from. A test preloads that libcollc.so with the directory on
# LD_LIBRARY_PATH.
$(FAKECUDA_DIR)/libcudart.so: tests/fakecuda/cudart.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(MPICC) $(XCFLAGS) $(CFLAGS) -shared -Wl,-soname,libcudart.so -o $@ $<
$(FAKECUDA_DIR)/libcuda.so.1: $(FAKECUDA_DIR)/libcudart.so
	$(Q)ln -sf libcudart.so $@
$(FAKECUDA_DIR)/libcollc.so: $(BUILD)/libcollc.so
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
$(FAKECUDA_DIR)/libcollc_cuda.so: tests/fakecuda/backend.c src/exec/kernels.c src/exec/batch_host.c \
    $(wildcard src/exec/*.h src/ir/*.h) $(FAKECUDA_DIR)/libcudart.so
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(MPICC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) -shared -Wl,-Bsymbolic -o $@ $< \
	  -L$(FAKECUDA_DIR) -lcudart -Wl,-rpath,'$$ORIGIN' $(LDLIBS)

# MPI tests: *_preload.c are "unmodified programs" (no collc at link time).
$(BUILD)/tests/mpi_%_preload: tests/mpi/%_preload.c $(wildcard tests/mpi/*.h)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(MPICC) $(XCFLAGS) $(CFLAGS) $< -o $@ $(LDLIBS)

$(BUILD)/tests/mpi_%: tests/mpi/%.c $(wildcard tests/mpi/*.h) $(BUILD)/libcollc.a
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(MPICC) $(CPPFLAGS) $(XCFLAGS) $(CFLAGS) $< -o $@ $(BUILD)/libcollc.a $(LDLIBS)

$(BUILD)/tests/fortran_%: tests/fortran/%.F90 $(wildcard tests/fortran/*.inc)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  FC      $@")
	$(Q)$(MPIFC) $(FORT_DEF) -Itests/fortran -fallow-argument-mismatch -w $(FFLAGS) $< \
	  $(filter %.o,$^) -o $@

$(BUILD)/tests/fortran_%: tests/fortran/%.f90 tests/fortran/finish.inc
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  FC      $@")
	$(Q)$(MPIFC) -Itests/fortran $(FFLAGS) $< -o $@

# mixed.F90's C half (plain mpicc, the Fortran flags: an unmodified program's own C
# code, linked by mpifort without the sanitizer runtimes of make asan).
$(BUILD)/tests/fortran_mixed: $(BUILD)/tests/fortran_mixed_c.o
$(BUILD)/tests/fortran_mixed_c.o: tests/fortran/mixed_c.c
	@mkdir -p $(dir $@)
	$(Q)$(MPICC) $(XCFLAGS) $(FFLAGS) -c $< -o $@

# pkg-config file for prefix $(1), written to $(2).
write_pc = printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: collc\nDescription: compiled MPI collectives\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lcollc\nLibs.private: -lz -lm -lhwloc -ljansson -pthread\n' '$(1)' '$(VERSION)' > $(2)

$(BUILD)/collc.pc: Makefile
	@mkdir -p $(BUILD)
	@$(call write_pc,$(PREFIX),$@)

deps:
	@scripts/deps.sh

# The library, tools and the all-to-all test built with SimGrid's smpicc
# (simulated ranks in one process; link the library, LD_PRELOAD is ignored).
# collc-bench is there for --calibrate: the simulator's parameters of an SMPI platform.
smpi:
	$(MAKE) -j2 $(BUILD_SMPI)/libcollc.so $(BUILD_SMPI)/tests/mpi_alltoall $(BUILD_SMPI)/bin/collc-scale \
	  $(BUILD_SMPI)/bin/collc-bench BUILD=$(BUILD_SMPI) MPICC=smpicc

# make check builds its six trees CHECK_JOBS compilers at a time (default: the cores; the
# unit tests run as many at a time too, tests/run.sh), of the ThreadSanitizer tree only
# what it runs there (make tsan alone builds all of it).
CHECK_JOBS ?= $(shell nproc)
export CHECK_JOBS
check: deps
	$(MAKE) -j$(CHECK_JOBS) tests BUILD=build-openmpi MPICC=mpicc.openmpi
	$(MAKE) -j$(CHECK_JOBS) tests BUILD=build-mpich MPICC=mpicc.mpich
	$(MAKE) smpi
	$(MAKE) -j$(CHECK_JOBS) asan
	$(MAKE) -j$(CHECK_JOBS) tsan TSAN_GOALS="lib build-tsan/bin/collc-explain build-tsan/tests/mpi_threads"
	$(MAKE) build-fuzz/wisdom_fuzz
	tests/run.sh

# The wisdom loader under libFuzzer (pure C: no MPI), seeded with real files.
BUILD_SMPI ?= build-smpi
FUZZ_TIME ?= 600
FUZZ_SRC  := $(sort $(wildcard src/ir/*.c)) tests/fuzz/wisdom.c
build-fuzz/wisdom_fuzz: $(FUZZ_SRC) $(wildcard include/*.h src/*.h src/*/*.h)
	@mkdir -p build-fuzz
	@$(if $(V),,echo "  CLANG   $@")
	$(Q)clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(CPPFLAGS) $(FUZZ_SRC) -lz -o $@

fuzz: deps build-fuzz/wisdom_fuzz
	$(MAKE) build-openmpi/tests/unit_wisdom BUILD=build-openmpi MPICC=mpicc.openmpi
	tests/fuzz/run.sh $(FUZZ_TIME)

bench: deps
	$(MAKE) all BUILD=build-openmpi MPICC=mpicc.openmpi
	bench/run.sh

# make tune: collc-tune (Open MPI, oversubscribed beyond the cores) at each p of TUNE_PS,
# TUNE_BUDGET seconds each, its collectives and their nonblocking forms up to TUNE_MAX bytes
# (TUNE_MAX_OVER where p exceeds the cores: there one 4 MiB-per-block all-to-all takes
# ~0.2 s, and the tuner's 10 repetitions of 4 variants x 5 calls per size outrun any
# budget), into bench/out/tuning-p<P>.json; then bench/tune-builtin.sh merges the runs' rows with the
# hand-written ones into TUNE_BUILTIN (default the built-in rule itself, compiled in by the
# next build; a scratch file to try the pipeline, e.g. TUNE_ARGS=--quick TUNE_BUDGET=20
# TUNE_BUILTIN=/tmp/builtin.json). TUNE_ARGS go last (they override). With TUNE_NP: one run
# at that p with TUNE_ARGS only (a tuning file for COLLC_TUNING), the built-in rule untouched.
TUNE_NP      ?=
TUNE_PS      ?= 2 4 8
TUNE_BUDGET  ?= 270
TUNE_MAX     ?= 4194304
TUNE_MAX_OVER ?= 1048576
TUNE_COLLS   ?= alltoall,allreduce,reduce_scatter_block,allgather,reduce,bcast,allgatherv,reduce_scatter,gather,scatter
TUNE_ARGS    ?=
TUNE_BUILTIN ?= tuning/builtin.json
# Where p fits the cores the runs are bound one rank per core without yielding, as OSU
# is run there and as applications run (README); beyond them oversubscribed, yielding.
TUNE_RUN      = OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --mca op ^avx
TUNE_BIND     = --bind-to core
TUNE_OVER     = --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
tune: deps
	$(MAKE) tools BUILD=build-openmpi MPICC=mpicc.openmpi
	@mkdir -p bench/out
ifneq ($(TUNE_NP),)
	b="$(TUNE_BIND)"; [ $(TUNE_NP) -le $$(nproc) ] || b="$(TUNE_OVER)"; \
	$(TUNE_RUN) $$b -np $(TUNE_NP) build-openmpi/bin/collc-tune -o bench/out/tuning-p$(TUNE_NP).json $(TUNE_ARGS)
else
	set -e; for p in $(TUNE_PS); do m=$(TUNE_MAX) b="$(TUNE_BIND)"; \
	  [ $$p -le $$(nproc) ] || m=$(TUNE_MAX_OVER) b="$(TUNE_OVER)"; \
	  $(TUNE_RUN) $$b -np $$p build-openmpi/bin/collc-tune -o bench/out/tuning-p$$p.json -C $(TUNE_COLLS) \
	    --nb -m $$m --budget $(TUNE_BUDGET) $(TUNE_ARGS); done
	bench/tune-builtin.sh tuning/builtin.json $(TUNE_BUILTIN) $(foreach p,$(TUNE_PS),bench/out/tuning-p$(p).json)
endif

# The torus paper's all-to-all (and allreduce) at p = 1152 simulated ranks
# under SMPI (bench/scale.sh; results in bench/out/scale/, docs/scale.md).
bench-scale: deps
	$(MAKE) smpi
	$(MAKE) tools BUILD=build-openmpi MPICC=mpicc.openmpi
	bench/scale.sh

asan:
	$(MAKE) tests BUILD=build-asan MPICC=mpicc.openmpi \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
	  LDLIBS="-lz -lm -lhwloc -ljansson -pthread -fsanitize=address,undefined"

# ThreadSanitizer (MPI_THREAD_MULTIPLE: tests/mpi/threads.c). Open MPI itself
# is not instrumented; its own reports are suppressed by tests/tsan.supp. TSAN_GOALS:
# what to build (default: everything).
TSAN_GOALS ?= tests
tsan:
	$(MAKE) $(TSAN_GOALS) BUILD=build-tsan MPICC=mpicc.openmpi \
	  CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	  LDLIBS="-lz -lm -lhwloc -ljansson -pthread -fsanitize=thread"

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libcollc.a $(DESTDIR)$(PREFIX)/lib
	install -m 644 include/collc.h include/collc_version.h $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BUILD)/libcollc.so $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(TOOL_BIN) $(DESTDIR)$(PREFIX)/bin
	$(call write_pc,$(PREFIX),$(DESTDIR)$(PREFIX)/lib/pkgconfig/collc.pc)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libcollc.a $(DESTDIR)$(PREFIX)/lib/libcollc.so \
	  $(DESTDIR)$(PREFIX)/include/collc.h $(DESTDIR)$(PREFIX)/include/collc_version.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/collc.pc \
	  $(TOOLS:%=$(DESTDIR)$(PREFIX)/bin/%)

clean:
	rm -rf build build-* 
