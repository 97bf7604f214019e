# SPDX-License-Identifier: GPL-2.0
# Shared settings of the opa build and test scripts; sourced, not run.

OPA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=versions.sh
. "$OPA_TOP/scripts/opa/versions.sh"

# The unpacked kernel and its O= output live outside the clone so that a
# fresh clone (as CI makes) reuses them; see Documentation/infiniband/opa_vnic_rs.rst.
OPA_CACHE=${OPA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/opa-vnic-rs}
OPA_SRC=$OPA_CACHE/linux-$OPA_KERNEL_DEB_VERSION
OPA_TOOLS=$OPA_CACHE/tools
OPA_BINDGEN=$OPA_TOOLS/bindgen-$OPA_BINDGEN_VERSION/bin/bindgen

# One Rust toolchain for the kernel and the host crates alike: Debian's
# rustc-web and its cargo, rustfmt and clippy, pinned (make deps installs
# them). A rustup toolchain on PATH is not used: cargo runs the cargo-clippy
# and cargo-fmt of its home's bin/ before PATH's, so cargo's home is in the
# cache, and Debian's tools come first on PATH (links, so that no other
# program of /usr/bin changes for the scripts).
OPA_RUST_BIN=$OPA_CACHE/rust-bin
if [ ! -L "$OPA_RUST_BIN/clippy-driver" ]; then
	mkdir -p "$OPA_RUST_BIN"
	for _t in cargo rustc rustdoc rustfmt cargo-fmt cargo-clippy clippy-driver; do
		ln -sfn "/usr/bin/$_t" "$OPA_RUST_BIN/$_t"
	done
	unset _t
fi
case ":$PATH:" in
*":$OPA_RUST_BIN:"*) ;;
*) PATH=$OPA_RUST_BIN:$PATH ;;
esac
export PATH CARGO_HOME=$OPA_CACHE/cargo RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc

# A fresh clone's cargo target directories start from a copy kept in the
# cache, so that it builds its own crates and not every dependency again
# (five profiles and targets of them: test, clippy, doc, release, static).
# Cargo checks each copied artifact as it would its own: a dependency whose
# fingerprint does not match is rebuilt, and the clone's own crates, whose
# identity includes their path, always are. The copy is keyed by the
# workspace's Cargo.lock and the compiler, and taken once a key.
#
# opa_cargo_target_key WS: the key of workspace directory WS's copy.
opa_cargo_target_key() {
	{ sha256sum <"$1/Cargo.lock"; /usr/bin/rustc -vV; } | sha256sum | cut -c1-12
}
# opa_cargo_target_seed WS: WS/target from the cache, if WS has none yet.
opa_cargo_target_seed() {
	local kept
	kept=$OPA_CACHE/cargo-target/$(basename "$1")-$(opa_cargo_target_key "$1")
	[ -e "$1/target" ] || [ ! -d "$kept" ] || cp -a "$kept" "$1/target"
}
# opa_cargo_target_keep WS: keeps WS/target in the cache, once a key, and
# drops the copies of other keys of the same workspace.
opa_cargo_target_keep() {
	local dir=$OPA_CACHE/cargo-target name
	name=$(basename "$1")-$(opa_cargo_target_key "$1")
	[ -d "$1/target" ] && [ ! -d "$dir/$name" ] || return 0
	mkdir -p "$dir"
	rm -rf "$dir/.$name.$$"
	cp -a "$1/target" "$dir/.$name.$$" && mv -T "$dir/.$name.$$" "$dir/$name" ||
		{ rm -rf "$dir/.$name.$$"; return 0; }
	find "$dir" -mindepth 1 -maxdepth 1 -name "$(basename "$1")-*" ! -name "$name" \
		-exec rm -rf {} +
}

# Kernel flavours: "default" for tests, "debug" adds KASAN, lockdep, kmemleak,
# "host" is Debian's amd64 kernel with the driver (make deb).
OPA_FLAVOR=${OPA_FLAVOR:-default}

opa_log() { printf '  %-8s %s\n' "$1" "$2" >&2; }
opa_die() { printf 'opa: error: %s\n' "$*" >&2; exit 1; }

# The key of an O= build directory: everything that makes its objects
# different. The config fragments are not part of it: Kbuild rebuilds what a
# config change touches, which is much cheaper than a cold build.
opa_build_key() {
	{
		echo "$OPA_KERNEL_DEB_VERSION"
		/usr/bin/rustc --version
		"clang$OPA_LLVM_SUFFIX" --version | head -n 1
		echo "bindgen $OPA_BINDGEN_VERSION"
		echo "$OPA_FLAVOR"
	} | sha256sum | cut -c1-12
}

opa_out_dir() { echo "$OPA_CACHE/out-$OPA_FLAVOR-$(opa_build_key)"; }

# opa_debian_config: the path of Debian's amd64 kernel config of the pinned
# version (the host flavour's base), fetched once into the cache. It comes
# from the versioned linux-headers-<abi>-amd64 package (its .config): the
# archive keeps those as long as the pinned linux-source-6.12, while it
# offers linux-config-6.12 at its newest version only.
opa_debian_config() {
	local ver=$OPA_KERNEL_DEB_VERSION abi pkg dir cfg tmp
	abi=${ver%%-*}+deb12
	pkg=linux-headers-$abi-amd64
	dir=$OPA_CACHE/debian-config
	cfg=$dir/config-$ver
	if [ ! -s "$cfg" ]; then
		mkdir -p "$dir"
		tmp=$(mktemp -d)
		(cd "$tmp" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
			{ rm -rf "$tmp"; opa_die "cannot download $pkg $ver, whose .config is Debian's amd64 config" \
				"of the pinned kernel (apt-cache madison $pkg)"; }
		dpkg-deb --fsys-tarfile "$tmp"/*.deb |
			tar -xO "./usr/src/$pkg/.config" >"$cfg.tmp" && [ -s "$cfg.tmp" ] ||
			{ rm -rf "$tmp" "$cfg.tmp"; opa_die "$pkg $ver holds no .config"; }
		mv "$cfg.tmp" "$cfg"
		rm -rf "$tmp"
	fi
	echo "$cfg"
}

# Arguments every kernel make invocation gets. Rust warnings are errors: the
# Rust code must build warning-free (W=1 adds nothing for Rust in 6.12), and
# it is built by clippy (CLIPPY=1, Debian's clippy-driver of the same rustc),
# so clippy's warnings are errors too.
opa_kmake_args() {
	echo "-C $OPA_SRC O=$(opa_out_dir) LLVM=$OPA_LLVM_SUFFIX" \
	     "RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc HOSTRUSTC=/usr/bin/rustc" \
	     "CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver" \
	     "BINDGEN=$OPA_BINDGEN KRUSTFLAGS=-Dwarnings"
}

# opa_guest_image DIR: the kernel built (cached), the guest tools and an
# initramfs, for one scenario run outside make check (make soak, make fuzz,
# make faults): DIR/bzImage and DIR/initramfs.cpio.gz, the kernel and its
# modules copied together under the build lock, as make check does; the
# logs of the builds in DIR. Exits with a message on a failed build.
opa_guest_image() {
	local dir=$1 out bins
	out=$(opa_out_dir)
	mkdir -p "$dir"
	"$OPA_TOP/scripts/opa/kbuild" >"$dir/kbuild.log" 2>&1 ||
		opa_die "kernel build failed (log: $dir/kbuild.log)"
	mapfile -t bins < <("$OPA_TOP/scripts/opa/build-guest-tools" 2>"$dir/guest-tools.log")
	[ ${#bins[@]} -gt 0 ] || opa_die "the guest tools did not build (log: $dir/guest-tools.log)"
	flock "$OPA_CACHE/.kbuild.lock" bash -c '"$1" "$2" "$3" "${@:6}" && cp "$4" "$5"' _ \
		"$OPA_TOP/tools/testing/opa/mkinitramfs" "$dir/initramfs.cpio.gz" "$out/mods" \
		"$out/arch/x86/boot/bzImage" "$dir/bzImage" "${bins[@]}" >"$dir/initramfs.log" 2>&1 ||
		opa_die "the initramfs did not build (log: $dir/initramfs.log)"
}
