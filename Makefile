# SPDX-License-Identifier: GPL-2.0
#
# opa_vnic_rs: the Omni-Path VNIC driver in Rust, with its test fabric.
# Entry points for people and CI; the work is done by scripts/opa/ and
# tools/testing/opa/. 'make help' lists the targets.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
OPA_FLAVOR ?= default
export OPA_FLAVOR

KBUILD := scripts/opa/kbuild
OUT = $(shell bash -c '. scripts/opa/lib.sh && opa_out_dir')

.PHONY: help deps kernel tools initramfs run shell check check-full faults fuzz soak bench profile deb vnic-em-deb verbs-deb clean distclean

help:
	@echo 'opa_vnic_rs: Omni-Path VNIC (Ethernet over OPA) in Rust for Linux 6.12'
	@echo
	@echo '  make run        build what is missing, boot the demo guest, show the driver'
	@echo '  make shell      the demo fabric up in the test guest, and a root shell on'
	@echo '                  this terminal to try ip, ethtool, vnic-em; exit powers it off'
	@echo '  make check      every test: host tests, kernel build, KUnit, QEMU scenarios;'
	@echo '                  ends with "N passed, N failed" and fails on any failure;'
	@echo '                  the long searches (faults, soak, fuzz) run a sample drawn'
	@echo '                  from the commit (OPA_CHECK_SEED=S replays one), and it'
	@echo '                  ends with its ten slowest steps'
	@echo '  make check-full the long searches whole: make faults, make soak, make fuzz'
	@echo '                  (about an hour and a half; each target'"'"'s settings apply)'
	@echo '  make faults     every allocation of the VNIC drivers'"'"' work failed in turn'
	@echo '                  in a guest, C opa_vnic and opa_vnic_rs (over 20 minutes);'
	@echo '                  FAULTS_SEED=S: the sample make check ran with seed S'
	@echo '  make deps       install the Debian packages and the pinned bindgen-cli'
	@echo '  make kernel     unpack, overlay, configure and build the kernel (cached)'
	@echo '  make tools      build the user-space tools and host crates (tools/opa)'
	@echo '  make initramfs  build the guest initramfs (build/initramfs.cpio.gz)'
	@echo '  make fuzz       run every wire-format fuzz target (FUZZ_SECONDS, FUZZ_RUNS),'
	@echo '                  then a long differential VEMA campaign, C opa_vnic against'
	@echo '                  opa_vnic_rs (VEMA_FUZZ_SEEDS, VEMA_FUZZ_COUNT; FUZZ_VEMA=0: none)'
	@echo '  make soak       a bounded soak of opa_vnic_rs in a guest: random EM changes,'
	@echo '                  traffic, link flaps and reloads, each checked (SOAK_MINUTES,'
	@echo '                  default 20; SOAK_SEED, printed, replays a run)'
	@echo '  make bench      benchmarks: wire-format encode and decode (host); VNIC'
	@echo '                  packets per second from pktgen in a guest, and the EM'"'"'s'
	@echo '                  Sets per second and vnic-em apply of 64 vports, opa_vnic_rs'
	@echo '                  against the C opa_vnic, interleaved (BENCH_ROUNDS, BENCH_SECS,'
	@echo '                  BENCH_TESTS)'
	@echo '  make profile    guest instructions per VNIC packet, by module and function,'
	@echo '                  and the driver'"'"'s own, opa_vnic_rs against the C opa_vnic'
	@echo '                  (QEMU TCG plugin; pktgen and a packet socket: PROFILE_TESTS,'
	@echo '                  PROFILE_SIZES, BENCH_SECS)'
	@echo '  make deb        Debian kernel packages for OPA hosts (build/deb/kernel-host/):'
	@echo '                  linux-image, linux-headers (with the Rust metadata for'
	@echo '                  out-of-tree modules), linux-libc-dev; Debian'"'"'s amd64 config'
	@echo '                  plus the driver (a long build); OPA_DEB_CONFIG=test: the'
	@echo '                  test kernel, as make check installs it in a Debian system'
	@echo '  make vnic-em-deb  the Debian package of vnic-em for an EM host (build/deb/):'
	@echo '                  binary, man pages, completions, systemd unit, sample config'
	@echo '  make verbs-deb  rdma-core 55.0 with opasim'"'"'s user verbs provider, as the Debian'
	@echo '                  package ibverbs-opasim (build/deb/; replaces libibverbs1)'
	@echo '  make clean      remove build/ and tools/opa/target'
	@echo '  make distclean  clean, and remove the kernel cache too'
	@echo
	@echo '  OPA_FLAVOR=debug  a KASAN + lockdep + kmemleak + atomic-sleep kernel instead'
	@echo '  SCENARIO=name     make run: the guest scenario to run (default: demo)'

deps:
	@scripts/opa/deps

kernel: deps
	@$(KBUILD)

tools: deps
	@. scripts/opa/lib.sh && cd tools/opa && cargo build -q --release --workspace

initramfs: kernel
	@mkdir -p $(BUILD)
	@OPA_VERBS_ROOT=$$(scripts/opa/rdma-core | sed -n 2p) \
		tools/testing/opa/mkinitramfs $(BUILD)/initramfs.cpio.gz $(OUT)/mods \
		$$(scripts/opa/build-guest-tools) samples/opa/vnic-em/fabric.toml

SCENARIO ?= demo
run: initramfs
	@tools/testing/opa/qemu-run -v -t 600 -l $(BUILD)/run.log \
		$(OUT)/arch/x86/boot/bzImage $(BUILD)/initramfs.cpio.gz $(SCENARIO)

shell: initramfs
	@tools/testing/opa/qemu-run -i -l $(BUILD)/shell.log \
		$(OUT)/arch/x86/boot/bzImage $(BUILD)/initramfs.cpio.gz shell

check:
	@scripts/opa/check

check-full:
	@scripts/opa/check-full

faults: deps
	@scripts/opa/faults

fuzz: deps
	@scripts/opa/fuzz

soak: deps
	@scripts/opa/soak

bench: deps
	@scripts/opa/bench-wire
	@echo "VNIC packets per second from pktgen through opasim (QEMU guest):"
	@scripts/opa/bench-vnic

profile: deps
	@scripts/opa/bench-vnic --profile

deb: deps
	@scripts/opa/deb-kernel

vnic-em-deb:
	@scripts/opa/deb-vnic-em $(BUILD)/deb

verbs-deb: deps
	@mkdir -p $(BUILD)/deb && cp "$$(scripts/opa/rdma-core | sed -n 1p)" $(BUILD)/deb/ && ls $(BUILD)/deb/ibverbs-opasim_*.deb

clean:
	rm -rf $(BUILD) tools/opa/target tools/opa/opa-wire/fuzz/target

distclean: clean
	@bash -c '. scripts/opa/lib.sh && echo "rm -rf $$OPA_CACHE" && rm -rf "$$OPA_CACHE"'
