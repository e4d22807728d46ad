//! [`Comm`]: one owned HCCL communicator, bound to one device; its initialisers, queries and
//! destruction.

use crate::backend;
use crate::config::CommConfig;
use crate::error::{Error, Result, ResultCode, check};
use crate::gate;
use crate::root_info::RootInfo;
use ascendcl::Device;
use hccl_sys as sys;
use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::path::Path;

/// One rank of a communicator (`HcclComm`) and the device it is bound to.
///
/// `Send` (a rank may be handed to its thread) but not `Sync`: HCCL serialises the operations of
/// one communicator, so one thread at a time issues them. Collectives borrow it for the whole
/// [`Stream::scope`](ascendcl::Stream::scope) they are enqueued in, so it cannot be destroyed
/// while they may run. Dropping it destroys it (`HcclCommDestroy`) with its device current;
/// [`Comm::destroy`] reports a failure.
///
/// So `Arc<Comm>` does not cross threads (the compiler names the raw handle and a `Cell`).
/// Instead, move the `Comm` into the thread that issues its collectives (one rank per thread,
/// as [`Comm::init_all`] hands them out), or share it as `Arc<Mutex<Comm>>` and hold the lock
/// for each scope, which keeps every rank's collectives in one order:
///
/// ```
/// # use hccl::{Comm, Collectives, ReduceOp, RootInfo};
/// use std::sync::{Arc, Mutex};
/// let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let info = RootInfo::new(&dev)?;
/// let comm = Arc::new(Mutex::new(Comm::init_root_info(&dev, 1, &info, 0, None)?));
/// let worker = {
///     let (comm, dev) = (Arc::clone(&comm), dev.clone());
///     std::thread::spawn(move || -> hccl::Result<Vec<f32>> {
///         let stream = dev.create_stream()?;
///         let send = dev.clone_htod(&[1.0f32, 2.0])?;
///         let mut recv = dev.alloc_zeros::<f32>(2)?;
///         let comm = comm.lock().unwrap();
///         hccl::scope(&stream, |s| s.all_reduce(&comm, &send, &mut recv, ReduceOp::Sum))?;
///         Ok(recv.copy_to_vec()?)
///     })
/// };
/// assert_eq!(worker.join().unwrap()?, [1.0, 2.0]);
/// # Ok::<(), hccl::Error>(())
/// ```
///
/// | operation | C function |
/// |---|---|
/// | [`Comm::init_all`] | `HcclCommInitAll` |
/// | [`Comm::init_root_info`] | `HcclCommInitRootInfo[Config]` |
/// | [`Comm::init_cluster_info`] | `HcclCommInitClusterInfo[Config]` |
/// | [`Comm::rank`], [`Comm::size`], [`Comm::name`] | `HcclGetRankId`, `HcclGetRankSize`, `HcclGetCommName` |
/// | [`Comm::async_error`] | `HcclGetCommAsyncError` |
/// | [`Comm::set_determinism`], [`Comm::determinism`] | `HcclSetCommConfig`, `HcclGetCommConfig` |
/// | [`Comm::destroy`], drop | `HcclCommDestroy` |
#[derive(Debug)]
pub struct Comm {
    raw: sys::HcclComm,
    device: Device,
    rank: u32,
    size: u32,
    /// Not `Sync`: see the type's documentation.
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the handle is an opaque pointer HCCL lets any thread use (with the device current,
// which every method arranges); `Comm` is not `Sync`, so one thread at a time uses it.
unsafe impl Send for Comm {}

impl Comm {
    /// Wraps a fresh handle: reads rank and size once (they never change).
    fn adopt(raw: sys::HcclComm, device: Device) -> Result<Comm> {
        let mut comm = Comm {
            raw,
            device,
            rank: 0,
            size: 0,
            _not_sync: PhantomData,
        };
        comm.rank = comm.query_rank()?;
        comm.size = comm.query_size()?;
        Ok(comm)
    }

    /// One communicator per device of this process (`HcclCommInitAll`, single server); the
    /// `i`-th is rank `i` on `devices[i]`. An empty list or a device listed twice is an error
    /// before the call.
    pub fn init_all(devices: &[Device]) -> Result<Vec<Comm>> {
        const API: &str = "HcclCommInitAll";
        let Some(first) = devices.first() else {
            return Err(Error::argument(API, "at least one device is needed"));
        };
        let ids: Vec<i32> = devices.iter().map(Device::id).collect();
        for (i, id) in ids.iter().enumerate() {
            if ids[..i].contains(id) {
                return Err(Error::argument(API, format!("device {id} is listed twice")));
            }
        }
        let n = u32::try_from(ids.len()).map_err(|_| Error::argument(API, "too many devices"))?;
        let api = backend::api()?;
        let _gate = gate::call(API)?;
        first.make_current()?;
        let mut ids = ids;
        let mut raws: Vec<sys::HcclComm> = vec![std::ptr::null_mut(); ids.len()];
        // SAFETY: both arrays hold `n` elements.
        check(API, unsafe {
            (api.HcclCommInitAll)(n, ids.as_mut_ptr(), raws.as_mut_ptr())
        })?;
        // Adopt every handle first, so that a failure below still destroys each of them.
        let mut comms = Vec::with_capacity(raws.len());
        let mut failure = None;
        for (raw, dev) in raws.into_iter().zip(devices) {
            let comm = Comm {
                raw,
                device: dev.clone(),
                rank: 0,
                size: 0,
                _not_sync: PhantomData,
            };
            comms.push(comm);
        }
        for c in &mut comms {
            let (rank, size) = (c.query_rank(), c.query_size());
            match (rank, size) {
                (Ok(r), Ok(s)) => (c.rank, c.size) = (r, s),
                (Err(e), _) | (_, Err(e)) => failure = failure.or(Some(e)),
            }
        }
        match failure {
            None => Ok(comms),
            Some(e) => Err(e),
        }
    }

    /// Joins the rendezvous `root_info` as rank `rank` of `n`, bound to `device`
    /// (`HcclCommInitRootInfo`, or `…Config` with a configuration). Blocks until all `n` ranks
    /// have joined (or the connection timeout). `n == 0` and `rank >= n` are errors before the
    /// call.
    pub fn init_root_info(
        device: &Device,
        n: u32,
        root_info: &RootInfo,
        rank: u32,
        config: Option<&CommConfig>,
    ) -> Result<Comm> {
        let api_name = if config.is_some() {
            "HcclCommInitRootInfoConfig"
        } else {
            "HcclCommInitRootInfo"
        };
        if n == 0 {
            return Err(Error::argument(
                api_name,
                "a communicator has at least one rank",
            ));
        }
        if rank >= n {
            return Err(Error::argument(
                api_name,
                format!("rank {rank} is not below the size {n}"),
            ));
        }
        let api = backend::api()?;
        let _gate = gate::call(api_name)?;
        device.make_current()?;
        let mut raw: sys::HcclComm = std::ptr::null_mut();
        // SAFETY: the root info and configuration are valid for reads, `raw` for the write.
        let r = unsafe {
            match config {
                None => (api.HcclCommInitRootInfo)(n, root_info.as_raw(), rank, &mut raw),
                Some(c) => (api.HcclCommInitRootInfoConfig)(
                    n,
                    root_info.as_raw(),
                    rank,
                    c.as_raw(),
                    &mut raw,
                ),
            }
        };
        check(api_name, r)?;
        Comm::adopt(raw, device.clone())
    }

    /// Rank `rank` of the job described by the rank table file at `path`, bound to `device`
    /// (`HcclCommInitClusterInfo`, or `…Config` with a configuration). Ranks link up at the first
    /// collective.
    pub fn init_cluster_info(
        device: &Device,
        path: &Path,
        rank: u32,
        config: Option<&CommConfig>,
    ) -> Result<Comm> {
        let api_name = if config.is_some() {
            "HcclCommInitClusterInfoConfig"
        } else {
            "HcclCommInitClusterInfo"
        };
        let path = path
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| {
                Error::argument(api_name, "the rank table path must be UTF-8 without NUL")
            })?;
        let api = backend::api()?;
        let _gate = gate::call(api_name)?;
        device.make_current()?;
        let mut raw: sys::HcclComm = std::ptr::null_mut();
        // SAFETY: the path is a C string; the library reads the configuration but the header
        // declares the pointer mutable; `raw` is valid for the write.
        let r = unsafe {
            match config {
                None => (api.HcclCommInitClusterInfo)(path.as_ptr(), rank, &mut raw),
                Some(c) => (api.HcclCommInitClusterInfoConfig)(
                    path.as_ptr(),
                    rank,
                    c.as_raw().cast_mut(),
                    &mut raw,
                ),
            }
        };
        check(api_name, r)?;
        Comm::adopt(raw, device.clone())
    }

    fn query_rank(&self) -> Result<u32> {
        let api = backend::api()?;
        let mut v = 0;
        // SAFETY: live communicator, valid out-parameter.
        check("HcclGetRankId", unsafe {
            (api.HcclGetRankId)(self.raw, &mut v)
        })?;
        Ok(v)
    }

    fn query_size(&self) -> Result<u32> {
        let api = backend::api()?;
        let mut v = 0;
        // SAFETY: live communicator, valid out-parameter.
        check("HcclGetRankSize", unsafe {
            (api.HcclGetRankSize)(self.raw, &mut v)
        })?;
        Ok(v)
    }

    /// This rank's id, `0..size()`.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The device the communicator is bound to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw handle, for FFI. It stays owned by `self`.
    pub fn as_raw(&self) -> sys::HcclComm {
        self.raw
    }

    /// The communicator's name (`HcclGetCommName`): the configured one, or by default the
    /// identifier the root info carried.
    pub fn name(&self) -> Result<String> {
        let api = backend::api()?;
        let mut buf = [0 as std::ffi::c_char; sys::COMM_NAME_MAX_LENGTH as usize];
        // SAFETY: the buffer holds COMM_NAME_MAX_LENGTH bytes, the documented size.
        check("HcclGetCommName", unsafe {
            (api.HcclGetCommName)(self.raw, buf.as_mut_ptr())
        })?;
        // Never read past the buffer, even if the library did not terminate the string.
        let last = buf.len() - 1;
        buf[last] = 0;
        // SAFETY: NUL-terminated within the buffer (set above).
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// The communicator's asynchronous error (`HcclGetCommAsyncError`): a link failure or
    /// timeout found while collectives ran, which no call returned. `None` when there is none.
    pub fn async_error(&self) -> Result<Option<ResultCode>> {
        let api = backend::api()?;
        self.device.make_current()?;
        let mut code = sys::HCCL_SUCCESS;
        // SAFETY: live communicator, valid out-parameter.
        check("HcclGetCommAsyncError", unsafe {
            (api.HcclGetCommAsyncError)(self.raw, &mut code)
        })?;
        Ok(ResultCode::from_raw(code))
    }

    /// `HcclCommDestroy`. Outside a group it passes the gate; on the thread of an open group
    /// (only `drop` gets there) HCCL captures it and destroys the communicator when the group
    /// ends, after the group's operations.
    fn destroy_raw(&self) -> Result<()> {
        const API: &str = "HcclCommDestroy";
        let api = backend::api()?;
        let _gate = if gate::in_group() {
            None
        } else {
            Some(gate::call(API)?)
        };
        self.device.make_current()?;
        // SAFETY: live communicator; collectives borrowed it for their whole scope, so none is
        // enqueued through this handle and still unwaited.
        check(API, unsafe { (api.HcclCommDestroy)(self.raw) })
    }

    /// Destroys the communicator (`HcclCommDestroy`) with its device current. When the library
    /// refuses (for example `HCCL_E_AGAIN` while operations of the communicator are in flight on
    /// streams outside the scopes of this crate), the communicator comes back inside the error.
    /// Refused on the thread of an open [`group`](crate::group), which would only capture it.
    pub fn destroy(self) -> std::result::Result<(), DestroyError> {
        if gate::in_group() {
            let error = Error::argument(
                "HcclCommDestroy",
                "this thread has an hccl::group open: destroy the communicator after it ends",
            );
            return Err(DestroyError { error, comm: self });
        }
        match self.destroy_raw() {
            Ok(()) => {
                std::mem::forget(self);
                Ok(())
            }
            Err(error) => Err(DestroyError { error, comm: self }),
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // A failure cannot be returned from `drop`; `Comm::destroy` reports it.
        let _ = self.destroy_raw();
    }
}

/// A refused [`Comm::destroy`]: the error, and the communicator, still alive.
#[derive(Debug)]
pub struct DestroyError {
    error: Error,
    comm: Comm,
}

impl DestroyError {
    /// Why the library refused.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The communicator, to retry or keep using.
    pub fn into_comm(self) -> Comm {
        self.comm
    }
}

impl std::fmt::Display for DestroyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for DestroyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<DestroyError> for Error {
    fn from(e: DestroyError) -> Error {
        e.error.clone()
    }
}
