# SPDX-License-Identifier: GPL-2.0
# Pinned inputs of the kernel build. Changing one of these changes the cache
# key (see kbuild), so a new pin never silently reuses an old build.

# Debian's linux-source-6.12: the base tree the overlay is laid over.
OPA_KERNEL_DEB_VERSION=${OPA_KERNEL_DEB_VERSION:-6.12.117-1~deb12u1}
# Debian's rustc-web/rust-web-src, with cargo-web, rustfmt-web and
# rust-web-clippy of the same version: the one Rust toolchain of the kernel
# (the only rustc here that ships core's source) and of the host crates.
OPA_RUSTC_DEB_VERSION=${OPA_RUSTC_DEB_VERSION:-1.96.0+dfsg1-1~deb12u2}
# Debian 13's own rustc-web of the same Rust release: the out-of-tree build
# on a Debian 13 host uses it against headers made with Debian 12's (Rust
# metadata must come from the same compiler version).
OPA_RUSTC_DEB13_VERSION=${OPA_RUSTC_DEB13_VERSION:-1.96.0+dfsg1-1~deb13u1+b1}
# 6.12 needs bindgen >= 0.65.1; Debian's 0.60 is too old.
OPA_BINDGEN_VERSION=${OPA_BINDGEN_VERSION:-0.70.1}
OPA_LLVM_SUFFIX=-19
# rdma-core's complete source (Debian's archive serves only its packaging):
# the ibverbs-sys crate on crates.io vendors rdma-core 55.0 (vendor/rdma-core);
# scripts/opa/rdma-core builds it with opasim's provider. The sha256 of the
# .crate file.
OPA_RDMA_CORE_CRATE_VERSION=${OPA_RDMA_CORE_CRATE_VERSION:-0.3.2+55.0}
OPA_RDMA_CORE_CRATE_SHA256=${OPA_RDMA_CORE_CRATE_SHA256:-8149ab8d940ea7e7073a24ba6e3ec6b0cc8ceab6ea3d562d60a21ca5cc23413a}
# Debian 12's Omni-Path admin tools (opa-basic-tools, with libibumad3 they link),
# fetched unmodified from the archive for the opa-tools guest scenario
# (scripts/opa/opa-tools); the Debian system tests install them with apt.
OPA_BASIC_TOOLS_DEB_VERSION=${OPA_BASIC_TOOLS_DEB_VERSION:-10.10.3.0.11-1+b1}
OPA_LIBIBUMAD_DEB_VERSION=${OPA_LIBIBUMAD_DEB_VERSION:-44.0-2}
# Debian 12's fabric manager (opa-fm: the SM, SA and PM in opafmd), unmodified,
# for the guest scenarios where the real SM runs the fabric.
OPA_FM_DEB_VERSION=${OPA_FM_DEB_VERSION:-10.10.3.0.11-1+b2}
