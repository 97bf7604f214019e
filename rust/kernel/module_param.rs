// SPDX-License-Identifier: GPL-2.0

//! Read-only module parameters for Rust modules (6.12's `module!` has none).
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)
//!
//! [`module_param_uint!`](crate::module_param_uint!) and
//! [`module_param_charp!`](crate::module_param_charp!) declare a parameter the way C's
//! `module_param()` does: a `struct kernel_param` in the module's `__param` section, which the
//! module loader fills from the command line (`modprobe opasim devices=3`) before the module's
//! `init` runs. (No `parm=` description in `.modinfo`: the separate `.modinfo` sections rustc
//! emits for it would hide the module's license from modpost.) The parameters are shown
//! read-only in `/sys/module/<module>/parameters/`; since nothing writes them after loading,
//! reading them needs no lock.
//!
//! As C's `MODULE_PARAM_PREFIX`, a parameter of a module built into the kernel is named
//! `<module>.<name>` (`opasim.devices=3` on the kernel command line); the macros take the module
//! name from the crate's root module path, so they are invoked at the crate root (elsewhere
//! they do not compile).

use crate::{bindings, str::CStr};
use core::cell::UnsafeCell;

/// The value of an unsigned integer parameter (`param_ops_uint`).
///
/// # Invariants
///
/// Only the module loader writes the value, while the module is being loaded, before any
/// Rust code of the module runs.
#[repr(transparent)]
pub struct UintParam(UnsafeCell<u32>);

// SAFETY: The value is written only before the module's code runs (type invariant).
unsafe impl Sync for UintParam {}

impl UintParam {
    /// A parameter whose default is `v`.
    pub const fn new(v: u32) -> Self {
        // INVARIANT: The value is private; only `as_arg` gives its address out, for the
        // `kernel_param` through which the loader writes it while loading the module.
        Self(UnsafeCell::new(v))
    }

    /// The value.
    pub fn get(&self) -> u32 {
        // SAFETY: Nothing writes the value once the module's code runs (type invariant).
        unsafe { *self.0.get() }
    }

    /// The address the loader writes, for the `struct kernel_param`.
    pub const fn as_arg(&'static self) -> *mut core::ffi::c_void {
        self.0.get().cast()
    }
}

/// The value of a string parameter (`param_ops_charp`).
///
/// # Invariants
///
/// The pointer is a static default string or a NUL-terminated string the loader set (and
/// frees when the module goes); only the loader writes it, before the module's code runs.
#[repr(transparent)]
pub struct CharpParam(UnsafeCell<*mut crate::ffi::c_char>);

// SAFETY: The value is written only before the module's code runs (type invariant).
unsafe impl Sync for CharpParam {}

impl CharpParam {
    /// A parameter whose default is `s`.
    pub const fn new(s: &'static CStr) -> Self {
        // INVARIANT: A static string; the value is private, and only `as_arg` gives its address
        // out, for the `kernel_param` through which the loader writes it while loading the
        // module.
        Self(UnsafeCell::new(s.as_char_ptr().cast_mut()))
    }

    /// The value.
    pub fn get(&self) -> &CStr {
        // SAFETY: Nothing writes the pointer once the module's code runs, and it points to a
        // NUL-terminated string that lives as long as the module (type invariant).
        unsafe { CStr::from_char_ptr(*self.0.get()) }
    }

    /// The address the loader writes, for the `struct kernel_param`.
    pub const fn as_arg(&'static self) -> *mut core::ffi::c_void {
        self.0.get().cast()
    }
}

/// A `struct kernel_param`, for the `__param` section; made by the macros only.
#[repr(transparent)]
pub struct ParamEntry(bindings::kernel_param);

// SAFETY: The entry is read by the module loader and the parameters' sysfs code, which do
// their own locking; Rust code never touches it.
unsafe impl Sync for ParamEntry {}

impl ParamEntry {
    /// The entry of the parameter `name` of `module`, with the operations `ops` and the value
    /// at `arg`, shown read-only (0444) in sysfs.
    ///
    /// # Safety
    ///
    /// `module` must be the module's `THIS_MODULE`; `ops` must be the operations of the type
    /// of the value at `arg`, which must be a static.
    #[doc(hidden)]
    pub const unsafe fn new(
        name: &'static CStr,
        module: *mut bindings::module,
        ops: *const bindings::kernel_param_ops,
        arg: *mut core::ffi::c_void,
    ) -> Self {
        Self(bindings::kernel_param {
            name: name.as_char_ptr(),
            mod_: module,
            ops,
            perm: 0o444,
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 { arg },
        })
    }
}

/// Declares a read-only `u32` module parameter: `module_param_uint!(name, default, "help")`
/// makes a static `name` ([`UintParam`]) and the parameter `name` (the help text documents
/// the parameter in the source only).
#[macro_export]
macro_rules! module_param_uint {
    ($name:ident, $default:expr, $desc:literal) => {
        #[allow(non_upper_case_globals)]
        static $name: $crate::module_param::UintParam =
            $crate::module_param::UintParam::new($default);
        $crate::__module_param_entry!($name: $crate::module_param::UintParam, param_ops_uint);
    };
}

/// Declares a read-only string module parameter: `module_param_charp!(name, c_str!("default"),
/// "help")` makes a static `name` ([`CharpParam`]) and the parameter `name`.
#[macro_export]
macro_rules! module_param_charp {
    ($name:ident, $default:expr, $desc:literal) => {
        #[allow(non_upper_case_globals)]
        static $name: $crate::module_param::CharpParam =
            $crate::module_param::CharpParam::new($default);
        $crate::__module_param_entry!($name: $crate::module_param::CharpParam, param_ops_charp);
    };
}

/// Whether `path` (a `module_path!()`) can prefix a parameter's name: a crate root (the module
/// name, as C's `KBUILD_MODNAME`), short enough for `MAX_PARAM_PREFIX_LEN` with its `.`
/// (`param_sysfs_builtin()` copies the prefix into a buffer of that size).
#[doc(hidden)]
pub const fn is_param_prefix(path: &str) -> bool {
    let b = path.as_bytes();
    // `MAX_PARAM_PREFIX_LEN`, a C expression bindgen does not translate.
    const MAX_PARAM_PREFIX_LEN: usize = 64 - core::mem::size_of::<crate::ffi::c_ulong>();
    if b.len() + 1 > MAX_PARAM_PREFIX_LEN {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] == b':' {
            return false;
        }
        i += 1;
    }
    true
}

/// The entry of a parameter of one of the types above, with that type's operations: the types
/// are named where the macros above expand this, and checked against the static's, so that an
/// entry never gives the loader operations that write another type than the static's.
#[doc(hidden)]
#[macro_export]
// `crate` on purpose: the `THIS_MODULE` of the crate the macro is called in, which `module!`
// defines at its root.
#[allow(clippy::crate_in_macro_def)]
macro_rules! __module_param_entry {
    ($name:ident: $t:ty, $ops:ident) => {
        const _: () = {
            // The module name (the crate root's path) prefixes a built-in parameter's name.
            const _: () = ::core::assert!(
                $crate::module_param::is_param_prefix(::core::module_path!()),
                "module parameters are declared at the crate root, whose name fits \
                 MAX_PARAM_PREFIX_LEN"
            );
            #[link_section = "__param"]
            #[used]
            static ENTRY: $crate::module_param::ParamEntry = {
                #[cfg(MODULE)]
                let name = $crate::c_str!(::core::stringify!($name));
                #[cfg(not(MODULE))]
                let name = $crate::c_str!(::core::concat!(
                    ::core::module_path!(),
                    ".",
                    ::core::stringify!($name)
                ));
                // The static's type, checked.
                let value: &'static $t = &$name;
                // The crate root's: the module's own (`module!` defines it there).
                let module: &'static $crate::ThisModule = &crate::THIS_MODULE;
                // SAFETY: `module` is the module's `THIS_MODULE`; the operations are those
                // of `$t`, the type of the static value.
                unsafe {
                    $crate::module_param::ParamEntry::new(
                        name,
                        module.as_ptr(),
                        &raw const $crate::bindings::$ops,
                        value.as_arg(),
                    )
                }
            };
        };
    };
}
