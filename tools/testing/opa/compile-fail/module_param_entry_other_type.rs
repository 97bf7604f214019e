// SPDX-License-Identifier: GPL-2.0
// expect: E0308
//! A parameter's entry gives the loader the operations of its static's own type: an entry
//! that would have `param_ops_charp` write a pointer (8 bytes) into a `u32` parameter does
//! not compile.
// What `module!` defines at the crate root.
// SAFETY: Never followed (the object is not loaded); null is what built-in code has.
static THIS_MODULE: kernel::ThisModule =
    unsafe { kernel::ThisModule::from_ptr(core::ptr::null_mut()) };
kernel::module_param_uint!(count, 1, "a number");
kernel::__module_param_entry!(count: kernel::module_param::CharpParam, param_ops_charp);
