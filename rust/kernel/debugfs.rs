// SPDX-License-Identifier: GPL-2.0

//! debugfs directories and text files backed by Rust objects.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! A [`File`] shows the text its [`FileOps::show`] writes (taken once per `open`, so that a
//! reader sees one consistent snapshot however it splits its reads) and passes what user space
//! writes to [`FileOps::store`]. Files and directories are removed when dropped; a directory
//! stays until its files and subdirectories are gone (they hold a reference to it).
//!
//! debugfs keeps a pointer to a file's operations for as long as the file is open, which may
//! be long after the file was removed (its `release` still runs, and the operations' module
//! is put then). So the operations of each file type are a `static` of the module that
//! implements them, made by [`debugfs_file_operations!`], with the module as their owner.
//!
//! # Examples
//!
//! ```
//! use kernel::debugfs::{Dir, File, FileOps};
//! use kernel::{c_str, prelude::*, sync::Arc};
//!
//! struct Answer;
//!
//! impl FileOps for Answer {
//!     fn show(&self, out: &mut KVec<u8>) -> Result {
//!         Ok(out.extend_from_slice(b"42\n", GFP_KERNEL)?)
//!     }
//! }
//!
//! kernel::debugfs_file_operations!(static ANSWER_OPS: Answer);
//!
//! let dir = Dir::new(c_str!("rust_doctest_debugfs"), None)?;
//! let file = File::new(&ANSWER_OPS, &dir, c_str!("answer"), 0o444, Arc::new(Answer, GFP_KERNEL)?)?;
//! drop(file);
//! // Permission bits only: a file type in `mode` is refused (debugfs would `BUG()` on it).
//! let dir_mode = File::new(&ANSWER_OPS, &dir, c_str!("d"), 0o040444, Arc::new(Answer, GFP_KERNEL)?);
//! assert_eq!(dir_mode.err(), Some(EINVAL));
//! # Ok::<(), Error>(())
//! ```
//!
//! [`debugfs_file_operations!`]: crate::debugfs_file_operations

use crate::ffi::{c_char, c_int, c_void};
use crate::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
    bindings,
    error::{code::*, Result},
    str::CStr,
    sync::Arc,
    uaccess::UserSlice,
};
use core::marker::PhantomData;

/// `FMODE_READ` (a `__force` cast in C, which bindgen does not translate).
const FMODE_READ: u32 = 1;

/// The largest write a file accepts.
pub const MAX_WRITE: usize = 4096;

/// Converts what `debugfs_create_*` returns.
fn dentry_or_err(d: *mut bindings::dentry) -> Result<*mut bindings::dentry> {
    if d.is_null() {
        return Err(ENOMEM);
    }
    let v = d as isize;
    if (-4095..0).contains(&v) {
        return Err(crate::error::Error::from_errno(v as c_int));
    }
    Ok(d)
}

/// # Invariants
///
/// `dentry` is a debugfs directory this object created, removed when it is dropped; the
/// parent is kept alive by `_parent`.
struct DirInner {
    dentry: *mut bindings::dentry,
    _parent: Option<Dir>,
}

// SAFETY: The dentry is only used through debugfs calls, which do their own locking.
unsafe impl Send for DirInner {}
// SAFETY: See above.
unsafe impl Sync for DirInner {}

impl Drop for DirInner {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the dentry is ours; its files and subdirectories hold
        // references to `self`, so they are gone already.
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

/// A debugfs directory; cheap to clone (a reference).
#[derive(Clone)]
pub struct Dir(Arc<DirInner>);

impl Dir {
    /// Creates the directory `name` in `parent` (or at the top of debugfs).
    pub fn new(name: &CStr, parent: Option<&Dir>) -> Result<Self> {
        let p = parent.map_or(core::ptr::null_mut(), |p| p.0.dentry);
        // SAFETY: `name` is a valid C string; `p` is null or a live directory of ours (kept
        // alive by the reference stored below).
        let d = dentry_or_err(unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), p) })?;
        // INVARIANT: `d` is the directory just created, removed by `DirInner`'s drop; the
        // parent's reference is kept in `_parent`.
        let inner = DirInner {
            dentry: d,
            _parent: parent.cloned(),
        };
        Ok(Self(Arc::new(inner, GFP_KERNEL)?))
    }
}

/// What a debugfs [`File`] shows and accepts.
pub trait FileOps: Send + Sync + 'static {
    /// Appends the file's text to `out`.
    fn show(&self, out: &mut KVec<u8>) -> Result;

    /// Handles a write of `input` (at most [`MAX_WRITE`] bytes, in one piece). The default
    /// refuses writes.
    fn store(&self, _input: &[u8]) -> Result {
        Err(EPERM)
    }
}

/// What an open file keeps: the object and the snapshot of its text.
struct OpenFile<T: FileOps> {
    data: *const T,
    text: KVec<u8>,
}

/// The file operations of the [`File`]s showing `T`: a `static` of the module that implements
/// `T`, made by [`debugfs_file_operations!`].
///
/// # Invariants
///
/// `fops` are the trampolines of `T`, and their `owner` is the module whose code they are (null
/// for code built into the kernel); the value lives in a `static` of that module, so it stays
/// valid as long as any file that uses it is open (an open file holds a reference to the
/// owner).
///
/// [`debugfs_file_operations!`]: crate::debugfs_file_operations
pub struct FileOperations<T: FileOps> {
    fops: bindings::file_operations,
    _t: PhantomData<T>,
}

// SAFETY: The operations are never written after construction; the C side only reads them.
unsafe impl<T: FileOps> Sync for FileOperations<T> {}

impl<T: FileOps> FileOperations<T> {
    /// The operations of `T` owned by `owner`.
    ///
    /// # Safety
    ///
    /// `owner` is the module (`__this_module`) whose code `T`'s methods are, or null if that code
    /// is built into the kernel, and the result is stored in a `static` of that module. Use
    /// [`debugfs_file_operations!`], which does both.
    ///
    /// [`debugfs_file_operations!`]: crate::debugfs_file_operations
    #[doc(hidden)]
    pub const unsafe fn new(owner: *mut bindings::module) -> Self {
        // INVARIANT: The caller guarantees the owner and the storage.
        Self {
            fops: bindings::file_operations {
                owner,
                open: Some(File::<T>::open),
                read: Some(File::<T>::read),
                write: Some(File::<T>::write),
                release: Some(File::<T>::release),
                llseek: Some(bindings::default_llseek),
                // SAFETY: The other operations are absent (null), which is valid.
                ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
            },
            _t: PhantomData,
        }
    }
}

/// Declares the `static` [`FileOperations`] of a [`FileOps`] type, owned by the module this is
/// expanded in: `debugfs_file_operations!(static NAME: Type);`.
#[macro_export]
macro_rules! debugfs_file_operations {
    ($vis:vis static $name:ident: $t:ty) => {
        $vis static $name: $crate::debugfs::FileOperations<$t> = {
            #[cfg(MODULE)]
            let owner = {
                extern "C" {
                    static __this_module: $crate::types::Opaque<$crate::bindings::module>;
                }
                // SAFETY: Only the address of the module's `struct module` is taken; the
                // kernel builds it at load time and frees it after the module's exit.
                unsafe { __this_module.get() }
            };
            #[cfg(not(MODULE))]
            let owner = ::core::ptr::null_mut();
            // SAFETY: `owner` is the module this macro is expanded in (or null when built in),
            // whose code the operations of `$t` are, and the value is a `static` of it.
            unsafe { $crate::debugfs::FileOperations::<$t>::new(owner) }
        };
    };
}

/// A debugfs file showing `T`.
///
/// Dropping it removes the file, waiting for the [`FileOps::show`] and [`FileOps::store`]
/// calls in progress with its directory's inode locked (`debugfs_remove()`). So those calls
/// must not drop a `File` of that directory (their own: it waits for itself), nor create
/// one there, nor take a lock that a dropper of such a file holds: each deadlocks.
///
/// A `File` must be dropped before its module is unloaded: debugfs does not remove a
/// module's files when it goes, so one that is leaked (`mem::forget`, a reference cycle)
/// stays, with operations in the unloaded module's memory.
///
/// # Invariants
///
/// `dentry` is a debugfs file this object created with the address of `*data` as its private
/// data and `T`'s static [`FileOperations`] as its operations; it is removed (waiting for
/// operations in progress) before `data` is released. Once removed, debugfs calls only the
/// file's `release` (which does not use `data`) for files still open.
pub struct File<T: FileOps> {
    dentry: *mut bindings::dentry,
    data: Arc<T>,
    _dir: Dir,
}

// SAFETY: The file only holds an `Arc<T>` (`T` is `Send + Sync`) and a dentry used through
// debugfs calls.
unsafe impl<T: FileOps> Send for File<T> {}
// SAFETY: See above.
unsafe impl<T: FileOps> Sync for File<T> {}

impl<T: FileOps> File<T> {
    /// Creates the file `name` in `dir` with permissions `mode` (for example `0o644`), showing
    /// `data` through `ops`. `EINVAL` if `mode` has bits other than permissions (a file type:
    /// `__debugfs_create_file()` `BUG()`s on one that is not a regular file's).
    pub fn new(
        ops: &'static FileOperations<T>,
        dir: &Dir,
        name: &CStr,
        mode: u16,
        data: Arc<T>,
    ) -> Result<Self> {
        if mode & !0o7777 != 0 {
            return Err(EINVAL);
        }
        // SAFETY: `name` is a valid C string and `dir` a live directory; the private data
        // outlives the file (type invariant) and the operations are static.
        let d = dentry_or_err(unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                mode,
                dir.0.dentry,
                (&*data as *const T).cast_mut().cast::<c_void>(),
                &ops.fops,
            )
        })?;
        // INVARIANT: The file was created with `data` and `ops`; `Drop` removes it first.
        Ok(Self {
            dentry: d,
            data,
            _dir: dir.clone(),
        })
    }

    /// The object the file shows.
    pub fn data(&self) -> &Arc<T> {
        &self.data
    }

    /// # Safety
    ///
    /// Called by the VFS (through debugfs's proxy, which keeps the file from being removed
    /// during the call) for a file created by [`File::new`].
    unsafe extern "C" fn open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        // SAFETY: `i_private` is the `T` of the file, alive while the file exists (type
        // invariant), and the proxy keeps the file during the call.
        let data = unsafe { (*inode).i_private.cast::<T>().cast_const() };
        let mut text = KVec::new();
        // SAFETY: `file` is valid during the call.
        let readable = unsafe { (*file).f_mode } & FMODE_READ != 0;
        if readable {
            // SAFETY: See above: `data` is valid during the call.
            if let Err(e) = unsafe { (*data).show(&mut text) } {
                return e.to_errno();
            }
        }
        let open = match KBox::new(OpenFile { data, text }, GFP_KERNEL) {
            Ok(b) => b,
            Err(_) => return ENOMEM.to_errno(),
        };
        // SAFETY: `file` is valid; `private_data` is ours until `release`.
        unsafe { (*file).private_data = KBox::into_raw(open).cast() };
        0
    }

    /// # Safety
    ///
    /// Called by the VFS for a file `open` succeeded on, with a user buffer of `count` bytes.
    unsafe extern "C" fn read(
        file: *mut bindings::file,
        buf: *mut c_char,
        count: usize,
        ppos: *mut bindings::loff_t,
    ) -> isize {
        // SAFETY: `private_data` is the `OpenFile` that `open` stored.
        let open = unsafe { &*(*file).private_data.cast::<OpenFile<T>>() };
        // SAFETY: `ppos` is valid during the call.
        let pos = unsafe { *ppos };
        let Ok(pos) = usize::try_from(pos) else {
            return EINVAL.to_errno() as isize;
        };
        if pos >= open.text.len() {
            return 0;
        }
        let n = count.min(open.text.len() - pos);
        let mut w = UserSlice::new(buf as usize, n).writer();
        if let Err(e) = w.write_slice(&open.text[pos..pos + n]) {
            return e.to_errno() as isize;
        }
        // SAFETY: `ppos` is valid during the call.
        unsafe { *ppos = (pos + n) as bindings::loff_t };
        n as isize
    }

    /// # Safety
    ///
    /// Called by the VFS (through debugfs's proxy, which keeps the file from being removed
    /// during the call) for a file `open` succeeded on, with a user buffer of `count` bytes.
    unsafe extern "C" fn write(
        file: *mut bindings::file,
        buf: *const c_char,
        count: usize,
        _ppos: *mut bindings::loff_t,
    ) -> isize {
        if count > MAX_WRITE {
            return EINVAL.to_errno() as isize;
        }
        // SAFETY: `private_data` is the `OpenFile` that `open` stored.
        let open = unsafe { &*(*file).private_data.cast::<OpenFile<T>>() };
        let mut input = KVec::new();
        if let Err(e) = UserSlice::new(buf as usize, count).read_all(&mut input, GFP_KERNEL) {
            return e.to_errno() as isize;
        }
        // SAFETY: The proxy keeps the file, hence its `T`, during the call.
        match unsafe { (*open.data).store(&input) } {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the VFS once for each successful `open`.
    unsafe extern "C" fn release(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
        // SAFETY: `private_data` is the `OpenFile` that `open` stored with `into_raw`, and
        // this is its last use. It does not touch the `T`, which may be gone.
        drop(unsafe { KBox::from_raw((*file).private_data.cast::<OpenFile<T>>()) });
        0
    }
}

impl<T: FileOps> Drop for File<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the dentry is ours; removing it waits for the
        // operations in progress, after which `data` may go.
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

/// Appends formatted text to a [`KVec<u8>`] (for [`FileOps::show`]).
pub struct Text<'a>(pub &'a mut KVec<u8>);

impl core::fmt::Write for Text<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| core::fmt::Error)
    }
}
