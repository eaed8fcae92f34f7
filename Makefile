# kpkeys workbench: the front door. Every target is a short script in tools/.
#
#   make run              build the hardened kernel, boot it under QEMU, report
#   make check            tool tests, checkpatch, boot matrix ("N passed, N failed")
#   make tree             (re)create build/linux = Linux 7.3 (tag base) + patches/
#   make series           export build/linux base..HEAD back to patches/
#   make send-check       prepare the mails in build/send/ and check them
#                         (threading, git am, checkpatch, diffstat); sends nothing
#   make defconfig-build  arm64 defconfig + CONFIG_KPKEYS_HARDENED_PGTABLES=y, W=1
#   make prefixes         build and boot every prefix of the series (bisectability)
#   make kunit            the kpkeys KUnit suite with the kernel's kunit.py, under
#                         the emulator in strict mode
#   make matrix           page sizes, VA sizes, vCPUs, PREEMPT_RT under strict
#                         emulation: a kernel build per row (hours; not in check)
#   make bench            the seed's performance table with exact event counts
#                         from the emulator, four kernels (bench/README.md)
#   make debug-check      the hardened kernel with lockdep, KASAN, KFENCE, DEBUG_VM...
#                         (configs/debug.config) under strict emulation: tests,
#                         kernel reports (tools/splats), window leaks; CI runs it
#   make soak             the debug kernel under load for SOAK_MINUTES (default
#                         30): stress-ng, trinity, CPU and memory hotplug, zram
#                         swap, selftests/mm (tools/soak; not in CI)
#   make deps             install host packages and the Debian 13 QEMU root
#
# Pins: tools/versions. Caches: $(KPKEYS_CACHE) (default ~/.cache/kpkeys).
# Logs: build/logs/ (boots) and the cache's out/NAME/ (kernel builds).

# POE=off boots without the emulator: make run POE=off
export POE
# make soak SOAK_MINUTES=N SOAK_KERNEL=debug|defconfig|baseline|rt SOAK_SEED=N ...
export SOAK_MINUTES SOAK_KERNEL SOAK_SEED SOAK_ROUND SOAK_BBM SOAK_MM

.PHONY: run check debug-check soak tree series send-check defconfig-build prefixes kunit matrix bench deps clean

run:
	@tools/run

check:
	@tools/check

debug-check:
	@tools/debug-check

soak:
	@tools/soak

tree:
	@tools/tree

series:
	@tools/series

send-check:
	@tools/send-check

defconfig-build:
	@tools/defconfig-build

prefixes:
	@tools/build-prefixes

kunit:
	@tools/kunit

matrix:
	@tools/config-matrix

bench:
	@tools/bench

deps:
	@tools/deps

clean:
	rm -rf build
