// SPDX-License-Identifier: GPL-2.0

//! debugfs directories and text files backed by Rust objects: the control and capture files
//! of RDMA device simulators.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! A [`File`] shows the text its [`FileOps::show`] writes (taken once per `open`, so that a
//! reader sees one consistent snapshot however it splits its reads) and passes what user space
//! writes to [`FileOps::store`]. Files and directories are removed when dropped; a directory
//! stays until its files and subdirectories are gone (they hold a reference to it).
//!
//! Nothing here is RDMA specific; it lives in `rdma` because the simulators are its users.

use crate::ffi::{c_char, c_int, c_void};
use crate::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
    bindings,
    error::{code::*, Result},
    str::CStr,
    sync::Arc,
    uaccess::UserSlice,
    ThisModule,
};

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

/// A debugfs file showing `T`.
///
/// # Invariants
///
/// `dentry` is a debugfs file this object created with the address of `*data` as its private
/// data and `_fops` (the operations of `T`, owned by the module that made the file) as its
/// operations; it is removed (waiting for operations in progress) before `data` and `_fops`
/// are released. An open file holds a reference to the owning module (debugfs takes it at
/// open), so the module, whose code the operations are, cannot go while the file is open.
pub struct File<T: FileOps> {
    dentry: *mut bindings::dentry,
    data: Arc<T>,
    /// The operations, with the module as their owner; debugfs keeps a pointer to them.
    _fops: KBox<bindings::file_operations>,
    _dir: Dir,
}

// SAFETY: The file only holds an `Arc<T>` (`T` is `Send + Sync`) and a dentry used through
// debugfs calls.
unsafe impl<T: FileOps> Send for File<T> {}
// SAFETY: See above.
unsafe impl<T: FileOps> Sync for File<T> {}

impl<T: FileOps> File<T> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(Self::open),
        read: Some(Self::read),
        write: Some(Self::write),
        release: Some(Self::release),
        llseek: Some(bindings::default_llseek),
        // SAFETY: The other operations are absent (null), which is valid.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// Creates the file `name` of `module` in `dir` with permissions `mode` (for example
    /// `0o644`).
    pub fn new(
        module: &'static ThisModule,
        dir: &Dir,
        name: &CStr,
        mode: u16,
        data: Arc<T>,
    ) -> Result<Self> {
        let mut fops = KBox::new(Self::FOPS, GFP_KERNEL)?;
        fops.owner = module.as_ptr();
        // SAFETY: `name` is a valid C string and `dir` a live directory; the private data
        // and the operations outlive the file (type invariant).
        let d = dentry_or_err(unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                mode,
                dir.0.dentry,
                (&*data as *const T).cast_mut().cast::<c_void>(),
                &*fops,
            )
        })?;
        Ok(Self {
            dentry: d,
            data,
            _fops: fops,
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
