//! This process as a PE of a team: NVSHMEM initialised on a CUDA context, the symmetric heap,
//! collectives, and modules whose kernels call NVSHMEM.

use std::collections::HashSet;
use std::ffi::{c_int, c_void, CString, OsString};
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUfunction, CUmodule, CUresult};
use cudarc::driver::{result as driver, CudaContext, CudaFunction, CudaStream, DriverError};

use crate::core::disk::{read_entry, write_atomically};
use crate::core::error::{Error, Result};
use crate::cuda::driver_error;
use crate::cuda::nvshmem::library::{
    InitAttr, Nvshmem, UniqueId, INIT_WITH_UNIQUEID, STATUS_IS_INITIALIZED, TEAM_WORLD,
};
use crate::cuda::nvshmem::{Launcher, TeamEnv, TeamOrigin, NO_MULTICAST};

/// Words of each of [`NvshmemPe::agree_max`]'s two symmetric scratch buffers.
const AGREE_WORDS: usize = 256;

/// What a rendezvous file starts with, before the unique id's bytes.
const RENDEZVOUS_MAGIC: &[u8] = b"gsync nvshmem unique id v1\n";

/// How often a PE looks for the rendezvous file.
const RENDEZVOUS_POLL: Duration = Duration::from_millis(10);

/// How often a PE waiting for a collective looks for departure notices, from the first look
/// on: a collective that completes sooner costs no look.
const DEPARTURE_POLL: Duration = Duration::from_millis(1);

/// The identity of the farewell, the team's last collective (no launch's identity, which
/// hashes a kernel's name, is expected to equal it).
const FAREWELL: u64 = 0x6761_6f6f_6462_7965;

/// The symbols NVSHMEM initialises in a module; a module without them has no NVSHMEM.
const DEVICE_STATE: &str = "nvshmemi_device_state_d";
const DEVICE_LIB_VERSION: &str = "nvshmemi_device_lib_version_d";

/// Whether this process is a PE: NVSHMEM allows one initialisation per process.
static INITIALISED: AtomicBool = AtomicBool::new(false);

/// Modules registered with NVSHMEM, which must be unregistered before they are unloaded (NVSHMEM
/// writes its state into every registered module when the heap changes) or NVSHMEM finalised.
static REGISTERED: Mutex<Vec<RegisteredHandle>> = Mutex::new(Vec::new());

/// A registered module's handle.
struct RegisteredHandle {
    module: CUmodule,
    nvshmem: &'static Nvshmem,
}

// SAFETY: a module handle may be used from any thread that has its context current; the
// handles are only compared and passed to `nvshmemx_cumodule_finalize` with it current.
unsafe impl Send for RegisteredHandle {}

fn registered() -> MutexGuard<'static, Vec<RegisteredHandle>> {
    // The list is valid after any panic: entries are pushed and removed whole.
    REGISTERED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Unregisters `module` from NVSHMEM if it is registered and NVSHMEM still runs.
fn unregister(module: CUmodule) {
    let mut handles = registered();
    if let Some(at) = handles.iter().position(|handle| handle.module == module) {
        let handle = handles.swap_remove(at);
        if INITIALISED.load(Ordering::Acquire) {
            // SAFETY: the module is loaded (its owner calls this before unloading it) and was
            // registered; the owner made its context current. A failure only leaves NVSHMEM
            // with a stale entry it no longer writes once the module is gone from its list.
            let _ = unsafe { (handle.nvshmem.host.cumodule_finalize)(handle.module) };
        }
    }
}

/// This process as PE `pe` of a team of `n_pes`, through NVSHMEM on one CUDA context.
///
/// Dropping it synchronises the context, frees its scratch, unregisters the modules still
/// registered and finalises NVSHMEM, which is collective: every PE must drop its `NvshmemPe`.
/// NVSHMEM ends the process when its finalisation fails.
pub struct NvshmemPe {
    nvshmem: &'static Nvshmem,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pe: u32,
    n_pes: u32,
    /// [`AGREE_WORDS`] source words, then as many destination words; 0 until allocated.
    scratch: u64,
    allocations: Mutex<HashSet<u64>>,
    /// NVSHMEM is initialised `NVSHMEM_THREAD_SERIALIZED`: one call at a time.
    calls: Mutex<()>,
    /// Set when a collective was given up: it stays queued, so that neither waiting for the
    /// stream nor NVSHMEM's (collective) finalisation could end.
    abandoned: AtomicBool,
    /// Set once the team's last collective, the farewell, has been made.
    farewell_made: AtomicBool,
    /// The departure notices this PE sends and receives.
    departures: Departures,
}

/// How PEs tell each other that they left a team outside its collective end: a word per PE
/// after the agreement's scratch on the symmetric heap, which a departing PE sets on every peer
/// that its GPU reaches (a memset through NVSHMEM's peer mapping, on a stream of its own, since
/// the team's stream may hold a collective that never ends). A PE that waits for a collective
/// looks at its words, so that a peer that left is an error instead of a wait without end.
#[derive(Default)]
struct Departures {
    /// This PE's words, one per PE, on the symmetric heap.
    words: u64,
    /// For each PE, this PE's word in that PE's words, as mapped here; 0 for this PE and for a
    /// PE whose memory is not mapped.
    slots_on_peers: Vec<u64>,
    /// The stream for notices and looks.
    stream: Option<Arc<CudaStream>>,
    /// Set once this PE's departure is announced.
    announced: AtomicBool,
}

impl std::fmt::Debug for NvshmemPe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvshmemPe").field("pe", &self.pe).field("n_pes", &self.n_pes).finish_non_exhaustive()
    }
}

impl NvshmemPe {
    /// Initialises NVSHMEM as this process's PE of the team `env` describes, on `context`,
    /// collectively with the other PEs.
    ///
    /// How the PEs find each other depends on who started them. Under
    /// [`run_local`](super::run_local), PE 0 creates NVSHMEM's unique id and writes it
    /// (atomically) to the rendezvous file; the others wait up to `timeout` for it. The file must
    /// be fresh for each team (an old one would hand out a stale id); run_local makes one. This
    /// sets `NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo` (a team on one host) unless it is set. Under a
    /// launcher, NVSHMEM bootstraps through the launcher as `NVSHMEM_BOOTSTRAP` and
    /// `NVSHMEM_BOOTSTRAP_PMI` choose (PMI-1 unless set), and `timeout` is not used;
    /// `NVSHMEM_BOOTSTRAP=UID` is refused there. Either way this sets [`NO_MULTICAST`] whatever
    /// the environment says, and each bootstrap plugin's path variable
    /// (`NVSHMEM_BOOTSTRAP_PMI_PLUGIN` and the others) to the plugin beside the host library
    /// unless it is set, in this process's environment, before NVSHMEM reads it. `context` is
    /// made current on this thread, and NVSHMEM binds to it. NVSHMEM's PE number and team size
    /// must then be `env`'s, else [`Error::PeNumberMismatch`] says what to set.
    pub fn init(
        nvshmem: &'static Nvshmem,
        context: &Arc<CudaContext>,
        env: &TeamEnv,
        timeout: Duration,
    ) -> Result<NvshmemPe> {
        let (pe, n_pes) = (env.pe, env.n_pes);
        check_rank(pe, n_pes)?;
        if INITIALISED.swap(true, Ordering::AcqRel) {
            return Err(Error::TeamSettings {
                variable: "NvshmemPe::init".into(),
                value: format!("pe {pe}"),
                reason:
                    "this process is a PE already; NVSHMEM allows one PE per process: drop the other NvshmemPe first"
                        .into(),
            });
        }
        let initialised = initialise(nvshmem, context, env, timeout);
        if let Err(error) = initialised {
            INITIALISED.store(false, Ordering::Release);
            return Err(error);
        }
        // From here on, Drop finalises NVSHMEM, also when a step below fails.
        let stream = context.new_stream().map_err(driver_error("creating the team's stream"))?;
        let mut this = NvshmemPe {
            nvshmem,
            context: context.clone(),
            stream,
            pe,
            n_pes,
            scratch: 0,
            allocations: Mutex::new(HashSet::new()),
            calls: Mutex::new(()),
            abandoned: AtomicBool::new(false),
            farewell_made: AtomicBool::new(false),
            departures: Departures::default(),
        };
        this.check_identity(env)?;
        let agreement_bytes = 2 * AGREE_WORDS * 8;
        this.scratch = this.calloc(agreement_bytes + n_pes as usize * 4, "allocating the team's scratch")?;
        this.departures = this.departures_at(this.scratch + agreement_bytes as u64)?;
        Ok(this)
    }

    /// This PE's number, from 0.
    pub fn pe(&self) -> u32 {
        self.pe
    }

    /// How many PEs the team has.
    pub fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// The CUDA context NVSHMEM runs on.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// Allocates `bytes` of zeroed memory on the symmetric heap (`nvshmem_calloc`), returning
    /// its device address on this PE; collective: every PE allocates the same size, in the same
    /// order. The heap's size is `NVSHMEM_SYMMETRIC_SIZE` (1 GiB unless set).
    pub fn malloc(&self, bytes: usize) -> Result<u64> {
        let _calls = self.enter()?;
        let context = format!("allocating {bytes} bytes on the symmetric heap (NVSHMEM_SYMMETRIC_SIZE sets its size)");
        let address = self.calloc(bytes, &context)?;
        if address != 0 {
            self.allocations().insert(address);
        }
        Ok(address)
    }

    /// Frees an allocation of [`malloc`](Self::malloc) (`nvshmem_free`), after this PE's queued
    /// GPU work; collective, like `malloc`.
    pub fn free(&self, address: u64) -> Result<()> {
        let _calls = self.enter()?;
        if !self.allocations().remove(&address) {
            return Err(Error::TeamSettings {
                variable: "NvshmemPe::free".into(),
                value: format!("{address:#x}"),
                reason: "the address is not an allocation of this PE's malloc that is still live".into(),
            });
        }
        self.context.synchronize().map_err(driver_error("waiting for the GPU before freeing symmetric memory"))?;
        // SAFETY: `address` came from `nvshmem_calloc` and is freed once; no queued work of
        // this PE uses it any more, and `nvshmem_free` waits for the other PEs.
        unsafe { (self.nvshmem.host.free)(address as *mut c_void) };
        Ok(())
    }

    /// The address at which this PE's loads and stores reach PE `pe`'s copy of the symmetric
    /// `address` (`nvshmem_ptr`), or `None` where PE `pe` is not reachable so (or `address` is
    /// not symmetric).
    pub fn peer_ptr(&self, address: u64, pe: u32) -> Option<u64> {
        if pe >= self.n_pes {
            return None;
        }
        let _calls = self.enter().ok()?;
        // SAFETY: `nvshmem_ptr` only computes an address, checking it against the heap.
        let peer = unsafe { (self.nvshmem.host.ptr)(address as *const c_void, pe as c_int) };
        (!peer.is_null()).then_some(peer as u64)
    }

    /// Waits until every PE has called it, after this PE's queued GPU work finished
    /// (`nvshmem_barrier_all` after synchronising the context): then every PE's earlier GPU
    /// writes are done and visible.
    pub fn barrier_all(&self) -> Result<()> {
        let _calls = self.enter()?;
        self.context.synchronize().map_err(driver_error("waiting for the GPU before a team barrier"))?;
        // SAFETY: NVSHMEM is initialised and its context is current.
        unsafe { (self.nvshmem.host.barrier_all)() };
        Ok(())
    }

    /// Queues a barrier of all PEs on `stream` (`nvshmemx_barrier_all_on_stream`): work queued
    /// after it starts once every PE's work queued before it finished.
    pub fn barrier_all_on_stream(&self, stream: &CudaStream) -> Result<()> {
        let _calls = self.enter()?;
        // SAFETY: the stream is live (borrowed) and of this context, which is current.
        unsafe { (self.nvshmem.host.barrier_all_on_stream)(stream.cu_stream()) };
        Ok(())
    }

    /// The element-wise maximum of `values` over all PEs; collective: every PE passes as many
    /// values (else every PE gets [`Error::CollectiveMismatch`]). The minimum is `!agree_max(!x)`.
    ///
    /// Runs as NVSHMEM reductions (`nvshmemx_uint64_max_reduce_on_stream`) over a small
    /// symmetric scratch, in rounds of 256 words; the first round carries the length and its
    /// complement as well, so every PE learns whether the lengths differ before it relies on
    /// the rounds to match.
    pub fn agree_max(&self, values: &[u64]) -> Result<Vec<u64>> {
        self.agree_max_within(values, None)
    }

    /// [`agree_max`](Self::agree_max), giving up with [`Error::TeamTimedOut`] when the team
    /// has not met within `limit` (`None`: no limit): a PE that never makes the call. The
    /// reduction then stays queued on this PE's stream, so the team is of no further use.
    pub fn agree_max_within(&self, values: &[u64], limit: Option<Duration>) -> Result<Vec<u64>> {
        self.agree_among(values, limit, "agrees with the team")
    }

    /// [`agree_max_within`](Self::agree_max_within), for a PE that `doing` (for its errors).
    pub(crate) fn agree_among(&self, values: &[u64], limit: Option<Duration>, doing: &str) -> Result<Vec<u64>> {
        let _calls = self.enter()?;
        let started = Instant::now();
        let len = values.len() as u64;
        let mut agreed = Vec::with_capacity(values.len());
        let mut rest = values;
        let mut round = 0;
        loop {
            let header = if round == 0 { 2 } else { 0 };
            let (chunk, tail) = rest.split_at(rest.len().min(AGREE_WORDS - header));
            let mut words = [0u64; AGREE_WORDS];
            if round == 0 {
                words[..2].copy_from_slice(&[len, !len]);
            }
            words[header..header + chunk.len()].copy_from_slice(chunk);
            let left = limit.map(|limit| limit.saturating_sub(started.elapsed()));
            let reduced = self.reduce_max(&words, left, doing)?;
            if round == 0 && (reduced[0], !reduced[1]) != (len, len) {
                return Err(Error::CollectiveMismatch {
                    call: "NvshmemPe::agree_max",
                    detail: format!("the PEs passed between {} and {} values", !reduced[1], reduced[0]),
                });
            }
            agreed.extend_from_slice(&reduced[header..header + chunk.len()]);
            rest = tail;
            round += 1;
            if rest.is_empty() {
                return Ok(agreed);
            }
        }
    }

    /// One reduction of the scratch: `words` in, the maxima out.
    fn reduce_max(
        &self,
        words: &[u64; AGREE_WORDS],
        limit: Option<Duration>,
        doing: &str,
    ) -> Result<[u64; AGREE_WORDS]> {
        let (source, destination) = (self.scratch, self.scratch + (AGREE_WORDS * 8) as u64);
        let stream = self.stream.cu_stream();
        let failed = driver_error("agreeing across the team");
        // SAFETY: the scratch holds 2 × AGREE_WORDS words of this context; `words` outlives the
        // copy, which the synchronisation below waits for.
        unsafe { driver::memcpy_htod_async(source, &words[..], stream) }.map_err(failed)?;
        // SAFETY: source and destination are symmetric, AGREE_WORDS long and disjoint; the
        // stream is this context's, which is current.
        let status = unsafe {
            (self.nvshmem.host.uint64_max_reduce_on_stream)(
                TEAM_WORLD,
                destination as *mut u64,
                source as *const u64,
                AGREE_WORDS,
                stream,
            )
        };
        if status != 0 {
            return Err(Error::Nvshmem {
                context: "agreeing across the team".into(),
                call: "nvshmemx_uint64_max_reduce_on_stream",
                status,
            });
        }
        // The reduction first, within the limit; only then the copy back. A copy into pageable
        // host memory returns only once it is done, so queued before the wait it would wait for
        // a PE that never comes, and the limit would never be checked.
        self.wait_for_team(limit, doing).inspect_err(|_| self.abandon())?;
        let mut reduced = [0u64; AGREE_WORDS];
        // SAFETY: as above; `reduced` outlives the copy, which the synchronisation waits for.
        unsafe { driver::memcpy_dtoh_async(&mut reduced[..], destination, stream) }
            .map_err(driver_error("agreeing across the team"))?;
        self.stream.synchronize().map_err(driver_error("agreeing across the team"))?;
        Ok(reduced)
    }

    /// Leaves NVSHMEM as it is when this PE is dropped (no wait for its stream, no collective
    /// finalisation), and tells every peer that this PE has left: for a PE that failed, or gave
    /// up a collective, whose peers may never finalise with it. A peer waiting for a collective
    /// then fails it with [`Error::PeLeft`].
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
        self.departures.announce(&self.context);
    }

    /// The team's last collective: every PE says goodbye, after which NVSHMEM can be finalised
    /// with every PE. Fails with [`Error::PeLeft`] when a peer left the team instead and said
    /// so (it failed or gave up a collective; a peer killed without a word is its launcher's
    /// to stop, as `run_local` stops the others once one fails), or
    /// [`Error::CollectiveMismatch`] when a peer
    /// made another collective call meanwhile (it launches a kernel this PE never launches); the
    /// PE is then abandoned, which its drop would otherwise do with the same wait. Waits as long
    /// as the peers still work, without limit.
    pub fn farewell(&self) -> Result<()> {
        // A PE whose initialisation stopped before its scratch and notices were ready finalises
        // as it did before farewells existed.
        let unready = self.scratch == 0 || self.departures.stream.is_none();
        if unready || self.abandoned.load(Ordering::Acquire) || self.farewell_made.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let words = [FAREWELL, !FAREWELL];
        let agreed = self.agree_among(&words, None, "ends its part in the team").inspect_err(|_| self.abandon())?;
        if (agreed[0], !agreed[1]) != (FAREWELL, FAREWELL) {
            self.abandon();
            return Err(Error::CollectiveMismatch {
                call: "the team's end",
                detail: "this PE ended its part in the team, another PE made another collective call (a launch or \
                         a symmetric allocation) instead"
                    .into(),
            });
        }
        Ok(())
    }

    /// The departure notices at `words`, this PE's word per PE on the symmetric heap: where
    /// this PE's word lies in each peer's, and a stream for them.
    fn departures_at(&self, words: u64) -> Result<Departures> {
        let _calls = self.enter()?;
        let slot = words + u64::from(self.pe) * 4;
        let slots_on_peers = (0..self.n_pes)
            .map(|peer| {
                if peer == self.pe {
                    return 0;
                }
                // SAFETY: `slot` is on the symmetric heap; NVSHMEM is initialised and its
                // context current. A peer whose memory is not mapped gives null.
                (unsafe { (self.nvshmem.host.ptr)(slot as *const c_void, peer as c_int) }) as u64
            })
            .collect();
        let stream = self.context.new_stream().map_err(driver_error("creating the team's notice stream"))?;
        Ok(Departures { words, slots_on_peers, stream: Some(stream), announced: AtomicBool::new(false) })
    }

    /// Waits for the work queued on the team's stream so far: at most `limit`, after which a PE
    /// has not made the call ([`Error::TeamTimedOut`]), and only while no peer has announced its
    /// departure ([`Error::PeLeft`]).
    fn wait_for_team(&self, limit: Option<Duration>, doing: &str) -> Result<()> {
        let context = "waiting for the team";
        let done = self.stream.record_event(None).map_err(driver_error(context))?;
        let started = Instant::now();
        let mut next_look = started + DEPARTURE_POLL;
        while !done.try_is_complete().map_err(driver_error(context))? {
            let now = Instant::now();
            if let Some(limit) = limit.filter(|&limit| now - started >= limit) {
                return Err(Error::TeamTimedOut { doing: doing.into(), waited: limit });
            }
            if now >= next_look {
                if let Some(pe) = self.departures.first_departed(self.pe, self.n_pes)? {
                    return Err(Error::PeLeft { pe, doing: doing.into() });
                }
                next_look = now + DEPARTURE_POLL;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        Ok(())
    }

    /// Registers `module` with NVSHMEM (`nvshmemx_cumodule_init`), so that its kernels' NVSHMEM
    /// calls find the team; refuses a module without NVSHMEM's device state. The module is
    /// unregistered when it is dropped, or when this PE is.
    pub fn register_module(&self, module: &RawModule) -> Result<()> {
        self.register(module.handle, "a RawModule")
    }

    /// Registers the module of `function`, loaded through cudarc's safe layer, as
    /// [`register_module`](Self::register_module) does; the returned guard keeps the module
    /// loaded and unregisters it when dropped. With it, a team kernel launches through cudarc's
    /// `launch_builder` like any other.
    pub fn register_function(&self, function: &CudaFunction) -> Result<RegisteredFunction> {
        let calls = self.enter()?;
        let mut module: CUmodule = std::ptr::null_mut();
        // SAFETY: the function is live (borrowed); `module` is valid for writes.
        unsafe { cudarc::driver::sys::cuFuncGetModule(&mut module, function.cu_function()) }
            .result()
            .map_err(driver_error("finding a kernel's module"))?;
        drop(calls);
        self.register(module, "the module of a CudaFunction")?;
        Ok(RegisteredFunction { function: function.clone(), module, context: self.context.clone() })
    }

    fn register(&self, module: CUmodule, name: &str) -> Result<()> {
        let _calls = self.enter()?;
        for symbol in [DEVICE_STATE, DEVICE_LIB_VERSION] {
            // SAFETY: the module is loaded in this context, which is current.
            if unsafe { global(module, symbol) }.map_err(driver_error("looking up NVSHMEM's state"))?.is_none() {
                return Err(Error::NotAnNvshmemModule { module: name.to_owned(), symbol });
            }
        }
        let mut handles = registered();
        if handles.iter().any(|handle| handle.module == module) {
            return Ok(());
        }
        // SAFETY: the module is loaded, has NVSHMEM's device state and its context is current.
        let status = unsafe { (self.nvshmem.host.cumodule_init)(module) };
        if status != 0 {
            return Err(Error::Nvshmem {
                context: format!("registering {name}"),
                call: "nvshmemx_cumodule_init",
                status,
            });
        }
        handles.push(RegisteredHandle { module, nvshmem: self.nvshmem });
        Ok(())
    }

    /// Serialises NVSHMEM calls and makes the context current on this thread.
    fn enter(&self) -> Result<MutexGuard<'_, ()>> {
        // The lock guards no data.
        let guard = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        self.context.bind_to_thread().map_err(driver_error("making the team's context current"))?;
        Ok(guard)
    }

    fn allocations(&self) -> MutexGuard<'_, HashSet<u64>> {
        // The set is valid after any panic: addresses are inserted and removed whole.
        self.allocations.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `nvshmem_calloc(1, bytes)`, 0 for 0 bytes.
    fn calloc(&self, bytes: usize, context: &str) -> Result<u64> {
        // SAFETY: NVSHMEM is initialised and its context is current.
        let address = unsafe { (self.nvshmem.host.calloc)(1, bytes) };
        if address.is_null() && bytes > 0 {
            return Err(Error::Nvshmem { context: context.to_owned(), call: "nvshmem_calloc", status: -1 });
        }
        Ok(address as u64)
    }

    /// NVSHMEM agrees with the PE number and team size `env` gives this process.
    fn check_identity(&self, env: &TeamEnv) -> Result<()> {
        let host = &self.nvshmem.host;
        // SAFETY: NVSHMEM is initialised; these only read its state.
        let (status, me, n) = unsafe { ((host.init_status)(), (host.my_pe)(), (host.n_pes)()) };
        if status < STATUS_IS_INITIALIZED {
            return Err(Error::Nvshmem { context: "initialising".into(), call: "nvshmemx_init_status", status });
        }
        if (i64::from(me), i64::from(n)) != (i64::from(self.pe), i64::from(self.n_pes)) {
            return Err(identity_mismatch(env, me, n, &bootstrap_in_use(|name| std::env::var_os(name))));
        }
        Ok(())
    }
}

impl Departures {
    /// Sets this PE's word on every peer it reaches, once, and waits for the stores.
    fn announce(&self, context: &Arc<CudaContext>) {
        let Some(stream) = &self.stream else { return };
        if self.announced.swap(true, Ordering::AcqRel) || context.bind_to_thread().is_err() {
            return;
        }
        for &slot in self.slots_on_peers.iter().filter(|&&slot| slot != 0) {
            // SAFETY: `slot` is a word of a peer's symmetric heap mapped into this context,
            // which stays mapped while NVSHMEM is not finalised. A failed notice leaves that
            // peer to its watchdog, its deadline or its launcher.
            let _ = unsafe { driver::memset_d8_async(slot, 1, 4, stream.cu_stream()) };
        }
        let _ = stream.synchronize();
    }

    /// The first PE other than `me` that announced its departure.
    fn first_departed(&self, me: u32, n_pes: u32) -> Result<Option<u32>> {
        let Some(stream) = &self.stream else { return Ok(None) };
        let mut words = vec![0u32; n_pes as usize];
        let failed = driver_error("reading the team's departure notices");
        // SAFETY: `self.words` holds `n_pes` words of this context; `words` outlives the copy,
        // which the synchronisation waits for.
        unsafe { driver::memcpy_dtoh_async(&mut words[..], self.words, stream.cu_stream()) }.map_err(failed)?;
        stream.synchronize().map_err(driver_error("reading the team's departure notices"))?;
        Ok((0..n_pes).find(|&pe| pe != me && words[pe as usize] != 0))
    }
}

impl Drop for NvshmemPe {
    fn drop(&mut self) {
        if self.farewell().is_err() {
            // The farewell abandoned this PE: a peer left, so the collective finalisation
            // could never end.
            return;
        }
        let _calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if self.abandoned.load(Ordering::Acquire) {
            // The process ends soon after: leaving NVSHMEM as it is beats waiting forever.
            return;
        }
        let _ = self.context.bind_to_thread();
        let _ = self.context.synchronize();
        if self.scratch != 0 {
            // SAFETY: the scratch came from `nvshmem_calloc`; no work uses it any more.
            unsafe { (self.nvshmem.host.free)(self.scratch as *mut c_void) };
        }
        for handle in registered().drain(..) {
            // SAFETY: the module is still loaded (its owner unregisters it before unloading);
            // the context is current.
            let _ = unsafe { (handle.nvshmem.host.cumodule_finalize)(handle.module) };
        }
        // SAFETY: NVSHMEM was initialised by this PE and is finalised once.
        unsafe { (self.nvshmem.host.hostlib_finalize)() };
        INITIALISED.store(false, Ordering::Release);
    }
}

/// The registration of a cudarc module's with NVSHMEM ([`NvshmemPe::register_function`]),
/// which keeps the module loaded; dropping it unregisters the module.
pub struct RegisteredFunction {
    function: CudaFunction,
    module: CUmodule,
    context: Arc<CudaContext>,
}

impl RegisteredFunction {
    /// The registered function.
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }
}

impl std::fmt::Debug for RegisteredFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredFunction").finish_non_exhaustive()
    }
}

impl Drop for RegisteredFunction {
    fn drop(&mut self) {
        let _ = self.context.bind_to_thread();
        unregister(self.module);
    }
}

fn check_rank(pe: u32, n_pes: u32) -> Result<()> {
    if n_pes == 0 || pe >= n_pes || n_pes > i32::MAX as u32 {
        return Err(Error::TeamSettings {
            variable: "pe".into(),
            value: format!("{pe} of {n_pes}"),
            reason: "a team has at least 1 PE, numbered from 0 to n_pes - 1".into(),
        });
    }
    Ok(())
}

/// Sets NVSHMEM's environment and initialises NVSHMEM as `env`'s origin asks.
fn initialise(nvshmem: &'static Nvshmem, context: &Arc<CudaContext>, env: &TeamEnv, timeout: Duration) -> Result<()> {
    if let Some(launcher) = env.launcher() {
        refuse_unique_id_under(launcher, |name| std::env::var_os(name))?;
    }
    for (name, value) in NO_MULTICAST {
        std::env::set_var(name, value);
    }
    for (variable, plugin) in nvshmem.bootstrap_plugins() {
        set_default(variable, plugin.as_os_str());
    }
    context.bind_to_thread().map_err(driver_error("making the team's context current"))?;
    match &env.origin {
        TeamOrigin::Local { rendezvous } => initialise_by_unique_id(nvshmem, env.pe, env.n_pes, rendezvous, timeout),
        TeamOrigin::Launcher(launcher) => initialise_by_launcher(nvshmem, env, *launcher),
    }
}

/// Exchanges the unique id through `rendezvous` and initialises NVSHMEM with it.
fn initialise_by_unique_id(
    nvshmem: &'static Nvshmem,
    pe: u32,
    n_pes: u32,
    rendezvous: &Path,
    timeout: Duration,
) -> Result<()> {
    set_default("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo".as_ref());
    let host = &nvshmem.host;
    let id = if pe == 0 {
        let mut id = UniqueId::new();
        // SAFETY: `id` is a valid, initialised unique id to write.
        let status = unsafe { (host.get_uniqueid)(&mut id) };
        if status != 0 {
            return Err(Error::Nvshmem {
                context: "creating the team's unique id".into(),
                call: "nvshmemx_get_uniqueid",
                status,
            });
        }
        publish_unique_id(rendezvous, &id).map_err(|error| Error::TeamRendezvous {
            pe,
            path: rendezvous.to_owned(),
            waited: Duration::ZERO,
            problem: format!("PE 0 could not write it ({error})"),
        })?;
        id
    } else {
        wait_for_unique_id(rendezvous, pe, timeout)?
    };
    let mut attr = InitAttr::new();
    // SAFETY: `id` and `attr` are valid and outlive the initialisation, which reads the id.
    let status = unsafe { (host.set_attr_uniqueid_args)(pe as c_int, n_pes as c_int, &id, &mut attr) };
    if status != 0 {
        return Err(Error::Nvshmem { context: "initialising".into(), call: "nvshmemx_set_attr_uniqueid_args", status });
    }
    // SAFETY: `attr` points at `id`, both live; the context is current on this thread.
    let status = unsafe { (host.hostlib_init_attr)(INIT_WITH_UNIQUEID, &mut attr) };
    if status != 0 {
        return Err(Error::Nvshmem {
            context: format!("initialising PE {pe} of {n_pes}"),
            call: "nvshmemx_hostlib_init_attr",
            status,
        });
    }
    Ok(())
}

/// Initialises NVSHMEM through its own bootstrap, which reaches the launcher's processes.
fn initialise_by_launcher(nvshmem: &'static Nvshmem, env: &TeamEnv, launcher: Launcher) -> Result<()> {
    let mut attr = InitAttr::new();
    // SAFETY: `attr` is valid (no unique id, no MPI communicator, the current device) and
    // outlives the call; the context is current on this thread.
    let status = unsafe { (nvshmem.host.hostlib_init_attr)(0, &mut attr) };
    if status != 0 {
        return Err(Error::LauncherBootstrap {
            launcher: launcher.name(),
            pe: env.pe,
            n_pes: env.n_pes,
            bootstrap: bootstrap_in_use(|name| std::env::var_os(name)),
            status,
            fix: launcher.bootstrap_advice(),
        });
    }
    Ok(())
}

/// NVSHMEM's bootstrap as its variables choose it: `NVSHMEM_BOOTSTRAP` (PMI unless set) and,
/// for PMI, `NVSHMEM_BOOTSTRAP_PMI` (PMI-1 unless set).
fn bootstrap_in_use(var: impl Fn(&str) -> Option<OsString>) -> String {
    let setting = |name: &str| {
        var(name).filter(|value| !value.is_empty()).map_or_else(
            || format!("{name}=PMI (NVSHMEM's default)"),
            |value| format!("{name}={}", value.to_string_lossy()),
        )
    };
    let bootstrap = var("NVSHMEM_BOOTSTRAP").filter(|value| !value.is_empty());
    match bootstrap {
        Some(value) if !value.to_string_lossy().eq_ignore_ascii_case("PMI") => setting("NVSHMEM_BOOTSTRAP"),
        _ => format!("{}, {}", setting("NVSHMEM_BOOTSTRAP"), setting("NVSHMEM_BOOTSTRAP_PMI")),
    }
}

/// Refuses `NVSHMEM_BOOTSTRAP=UID` under a launcher: that bootstrap needs the unique id that
/// only run_local's PEs hand each other.
fn refuse_unique_id_under(launcher: Launcher, var: impl Fn(&str) -> Option<OsString>) -> Result<()> {
    match var("NVSHMEM_BOOTSTRAP") {
        Some(value) if value.to_string_lossy().trim().eq_ignore_ascii_case("UID") => Err(Error::TeamSettings {
            variable: "NVSHMEM_BOOTSTRAP".into(),
            value: value.to_string_lossy().into_owned(),
            reason: format!(
                "under {} NVSHMEM starts through the launcher's bootstrap, and the UID bootstrap needs the unique \
                 id that only the PEs of gsync's run_local hand each other; unset it: {}",
                launcher.name(),
                launcher.bootstrap_advice()
            ),
        }),
        _ => Ok(()),
    }
}

/// [`Error::PeNumberMismatch`]: NVSHMEM, through `bootstrap`, numbered this process PE `me` of
/// `n`, not as `env` says.
fn identity_mismatch(env: &TeamEnv, me: c_int, n: c_int, bootstrap: &str) -> Error {
    let fix = match env.launcher() {
        Some(launcher) => format!(
            "NVSHMEM's bootstrap ({bootstrap}) did not reach the other processes of the launch (a PMI client \
             that finds no PMI server starts alone, as PE 0 of 1); {}",
            launcher.bootstrap_advice()
        ),
        None => "give each process its own PE number: start the team with run_local (Team::cuda does), which \
                 sets GSYNC_TEAM_PE, GSYNC_TEAM_N_PES and one rendezvous file for all"
            .into(),
    };
    Error::PeNumberMismatch {
        started_by: env.started_by(),
        pe: env.pe,
        n_pes: env.n_pes,
        nvshmem_pe: me,
        nvshmem_n_pes: n,
        fix,
    }
}

/// Sets `name` to `value` unless it is set.
fn set_default(name: &str, value: &std::ffi::OsStr) {
    if std::env::var_os(name).is_none() {
        std::env::set_var(name, value);
    }
}

/// Writes `id` to `path` so that no reader sees half of it.
fn publish_unique_id(path: &Path, id: &UniqueId) -> std::io::Result<()> {
    write_atomically(path, &[RENDEZVOUS_MAGIC, &unique_id_bytes(id)])
}

fn unique_id_bytes(id: &UniqueId) -> [u8; 128] {
    let mut bytes = [0u8; 128];
    bytes[..4].copy_from_slice(&id.version.to_ne_bytes());
    bytes[4..].copy_from_slice(&id.internal);
    bytes
}

/// The unique id in `path`, or what is wrong with the file.
fn read_unique_id(path: &Path) -> std::result::Result<UniqueId, String> {
    if !path.exists() {
        return Err("the file does not exist".into());
    }
    let limit = (RENDEZVOUS_MAGIC.len() + 128) as u64;
    let bytes = read_entry(path, limit).ok_or("the file is not a regular file of a unique id's size")?;
    let Some(id) = bytes.strip_prefix(RENDEZVOUS_MAGIC).filter(|id| id.len() == 128) else {
        return Err("the file does not hold a unique id written by gsync".into());
    };
    let mut version = [0u8; 4];
    version.copy_from_slice(&id[..4]);
    let mut internal = [0u8; 124];
    internal.copy_from_slice(&id[4..]);
    Ok(UniqueId { version: c_int::from_ne_bytes(version), internal })
}

/// Polls `path` for PE 0's unique id for up to `timeout`.
fn wait_for_unique_id(path: &Path, pe: u32, timeout: Duration) -> Result<UniqueId> {
    let start = Instant::now();
    loop {
        match read_unique_id(path) {
            Ok(id) => return Ok(id),
            Err(problem) if start.elapsed() >= timeout => {
                return Err(Error::TeamRendezvous { pe, path: path.to_owned(), waited: start.elapsed(), problem });
            }
            Err(_) => std::thread::sleep(RENDEZVOUS_POLL),
        }
    }
}

/// The device address and size of global `name` of `module`, `None` when it has none.
///
/// # Safety
/// `module` must be loaded, in the current context.
unsafe fn global(module: CUmodule, name: &str) -> std::result::Result<Option<(u64, usize)>, DriverError> {
    let Ok(name) = CString::new(name) else {
        return Ok(None);
    };
    // SAFETY: the caller vouches for the module.
    match unsafe { driver::module::get_global(module, name) } {
        Ok((address, bytes)) => Ok(Some((address, bytes))),
        Err(DriverError(CUresult::CUDA_ERROR_NOT_FOUND)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// A module loaded from a CUBIN through the driver API, whose raw handle NVSHMEM needs;
/// unregistered from NVSHMEM and unloaded on drop.
pub struct RawModule {
    handle: CUmodule,
    context: Arc<CudaContext>,
}

// SAFETY: the driver allows a module to be used from any thread; every use makes its context
// current first.
unsafe impl Send for RawModule {}
// SAFETY: as above; the handle is only read.
unsafe impl Sync for RawModule {}

impl std::fmt::Debug for RawModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawModule").field("handle", &self.handle).finish_non_exhaustive()
    }
}

/// Loads `cubin` (an ELF image, e.g. from [`link_kernel`](super::link_kernel)) into `context`.
pub fn load_module(context: &Arc<CudaContext>, cubin: &[u8]) -> Result<RawModule> {
    check_image(cubin)?;
    context.bind_to_thread().map_err(driver_error("loading a team module"))?;
    // SAFETY: `cubin` is a whole ELF image (checked above: its section headers lie within it),
    // which the driver reads during the call only.
    let handle =
        unsafe { driver::module::load_data(cubin.as_ptr().cast()) }.map_err(driver_error("loading a team module"))?;
    Ok(RawModule { handle, context: context.clone() })
}

/// Refuses an image the driver would read past the end of: it parses the ELF header and
/// section headers it finds at the offsets the image declares.
fn check_image(cubin: &[u8]) -> Result<()> {
    let problem = |problem: &str| {
        driver_error(format!("loading a team module: {problem}"))(DriverError(CUresult::CUDA_ERROR_INVALID_IMAGE))
    };
    if cubin.len() < 64 || &cubin[..4] != b"\x7fELF" || cubin[4] != 2 {
        return Err(problem("the image is not a 64-bit ELF CUBIN"));
    }
    let u64_at = |at: usize| u64::from_le_bytes(cubin[at..at + 8].try_into().unwrap_or([0; 8]));
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([cubin[at], cubin[at + 1]]));
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    let within = |offset: u64, bytes: u64| offset.checked_add(bytes).is_some_and(|end| end <= cubin.len() as u64);
    if !within(shoff, shentsize * shnum) || !within(phoff, phentsize * phnum) {
        return Err(problem("the image is truncated"));
    }
    Ok(())
}

impl RawModule {
    /// The raw module handle.
    pub fn handle(&self) -> CUmodule {
        self.handle
    }

    /// The kernel `name` of the module.
    pub fn function(&self, name: &str) -> Result<RawFunction<'_>> {
        let context = format!("loading kernel `{name}`");
        let name_c = CString::new(name)
            .map_err(|_| driver_error(context.as_str())(DriverError(CUresult::CUDA_ERROR_NOT_FOUND)))?;
        self.context.bind_to_thread().map_err(driver_error(context.as_str()))?;
        // SAFETY: the module is loaded until `self` drops, and its context is current.
        let handle = unsafe { driver::module::get_function(self.handle, name_c) }.map_err(driver_error(context))?;
        Ok(RawFunction { handle, _module: PhantomData })
    }

    /// The device address and size of the module's global `name`, `None` when it has none.
    pub fn global(&self, name: &str) -> Result<Option<(u64, usize)>> {
        self.context.bind_to_thread().map_err(driver_error("looking up a module's global"))?;
        // SAFETY: the module is loaded until `self` drops, and its context is current.
        unsafe { global(self.handle, name) }.map_err(driver_error(format!("looking up global `{name}`")))
    }
}

impl Drop for RawModule {
    fn drop(&mut self) {
        let _ = self.context.bind_to_thread();
        unregister(self.handle);
        // SAFETY: loaded by `load_module` and unloaded only here; a failure only leaks it.
        let _ = unsafe { driver::module::unload(self.handle) };
    }
}

/// A kernel of a [`RawModule`], valid while the module is.
#[derive(Clone, Copy, Debug)]
pub struct RawFunction<'m> {
    handle: CUfunction,
    _module: PhantomData<&'m RawModule>,
}

impl RawFunction<'_> {
    /// The raw function handle.
    pub fn handle(&self) -> CUfunction {
        self.handle
    }
}

/// Launches `function` cooperatively (`cuLaunchCooperativeKernel`) on `stream`, with
/// `params` as the driver takes them: one pointer per kernel parameter, to its value.
///
/// # Safety
/// `params` must match the kernel's parameter list, each pointer valid until this returns, and
/// every buffer the kernel reaches must outlive the kernel's run.
pub unsafe fn launch_cooperative(
    function: &RawFunction<'_>,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_bytes: u32,
    stream: &CudaStream,
    params: &mut [*mut c_void],
) -> Result<()> {
    let launching = "launching a team kernel";
    stream.context().bind_to_thread().map_err(driver_error(launching))?;
    // SAFETY: the function's module is live (borrowed); the caller vouches for `params`.
    unsafe { driver::launch_cooperative_kernel(function.handle, grid, block, shared_bytes, stream.cu_stream(), params) }
        .map_err(driver_error(launching))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TempDir;

    fn some_id() -> UniqueId {
        let mut id = UniqueId::new();
        id.internal.iter_mut().enumerate().for_each(|(index, byte)| *byte = index as u8);
        id
    }

    #[test]
    fn a_published_unique_id_reads_back_whole() {
        let tmp = TempDir::new("nvshmem-uid");
        let path = tmp.path().join("team/uid");
        publish_unique_id(&path, &some_id()).expect("write");
        let id = read_unique_id(&path).expect("read");
        assert_eq!(unique_id_bytes(&id), unique_id_bytes(&some_id()));
        let entries: Vec<_> = std::fs::read_dir(path.parent().expect("parent")).expect("list").collect();
        assert_eq!(entries.len(), 1, "no temporary file is left");
    }

    #[test]
    fn a_missing_or_foreign_file_is_refused_with_the_reason() {
        let tmp = TempDir::new("nvshmem-uid-bad");
        let path = tmp.path().join("uid");
        assert_eq!(read_unique_id(&path).err().as_deref(), Some("the file does not exist"));
        std::fs::write(&path, [0u8; 155]).expect("write");
        assert!(read_unique_id(&path).expect_err("foreign").contains("not hold a unique id"));
    }

    #[test]
    fn a_pe_waiting_in_vain_names_pe_0_and_the_file() {
        let tmp = TempDir::new("nvshmem-uid-wait");
        let path = tmp.path().join("uid");
        let error = wait_for_unique_id(&path, 1, Duration::from_millis(30)).expect_err("nobody writes it");
        let message = error.to_string();
        assert!(matches!(error, Error::TeamRendezvous { pe: 1, .. }), "{message}");
        assert!(message.contains("PE 0") && message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("the file does not exist"), "{message}");
    }

    #[test]
    fn ranks_outside_the_team_are_refused() {
        assert!(check_rank(0, 1).is_ok() && check_rank(1, 2).is_ok());
        assert!(matches!(check_rank(2, 2), Err(Error::TeamSettings { .. })));
        assert!(matches!(check_rank(0, 0), Err(Error::TeamSettings { .. })));
    }

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| pairs.iter().find(|(var, _)| *var == name).map(|(_, value)| OsString::from(value))
    }

    #[test]
    fn the_bootstrap_in_use_is_named_with_nvshmem_s_defaults() {
        let defaults = bootstrap_in_use(vars(&[]));
        assert_eq!(
            defaults,
            "NVSHMEM_BOOTSTRAP=PMI (NVSHMEM's default), NVSHMEM_BOOTSTRAP_PMI=PMI (NVSHMEM's default)"
        );
        let pmix = bootstrap_in_use(vars(&[("NVSHMEM_BOOTSTRAP", "pmi"), ("NVSHMEM_BOOTSTRAP_PMI", "PMIX")]));
        assert_eq!(pmix, "NVSHMEM_BOOTSTRAP=pmi, NVSHMEM_BOOTSTRAP_PMI=PMIX");
        let mpi = bootstrap_in_use(vars(&[("NVSHMEM_BOOTSTRAP", "MPI"), ("NVSHMEM_BOOTSTRAP_PMI", "PMIX")]));
        assert_eq!(mpi, "NVSHMEM_BOOTSTRAP=MPI");
    }

    #[test]
    fn the_unique_id_bootstrap_is_refused_under_a_launcher_with_what_to_set() {
        assert!(refuse_unique_id_under(Launcher::Slurm, vars(&[])).is_ok());
        assert!(refuse_unique_id_under(Launcher::Slurm, vars(&[("NVSHMEM_BOOTSTRAP", "MPI")])).is_ok());
        let error = refuse_unique_id_under(Launcher::OpenMpi, vars(&[("NVSHMEM_BOOTSTRAP", "uid")]))
            .expect_err("UID under mpirun");
        let message = error.to_string();
        assert!(matches!(error, Error::TeamSettings { .. }), "{message}");
        assert!(message.contains("Open MPI's mpirun") && message.contains("NVSHMEM_BOOTSTRAP=MPI"), "{message}");
    }

    #[test]
    fn nvshmem_numbering_a_launched_pe_otherwise_says_which_bootstrap_to_set() {
        let env = TeamEnv { pe: 3, n_pes: 4, gpu: 3, multi_node: None, origin: TeamOrigin::Launcher(Launcher::Slurm) };
        let error = identity_mismatch(&env, 0, 1, "NVSHMEM_BOOTSTRAP=PMI (NVSHMEM's default)");
        let message = error.to_string();
        assert!(matches!(error, Error::PeNumberMismatch { pe: 3, n_pes: 4, nvshmem_pe: 0, nvshmem_n_pes: 1, .. }));
        for part in ["NVSHMEM made this process PE 0 of 1", "Slurm's srun started it as PE 3 of 4", "PMIX"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        let local = TeamEnv { origin: TeamOrigin::Local { rendezvous: "/x".into() }, ..env };
        let message = identity_mismatch(&local, 0, 1, "").to_string();
        assert!(message.contains("gsync's run_local started it") && message.contains("GSYNC_TEAM_PE"), "{message}");
    }

    #[test]
    fn a_truncated_image_is_refused_before_the_driver_reads_it() {
        assert!(check_image(b"not an elf").is_err());
        let mut header = vec![0u8; 64];
        header[..5].copy_from_slice(b"\x7fELF\x02");
        header[0x28..0x30].copy_from_slice(&1000u64.to_le_bytes());
        header[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        header[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        assert!(check_image(&header).is_err());
        header[0x28..0x30].copy_from_slice(&0u64.to_le_bytes());
        header[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        assert!(check_image(&header).is_ok());
    }
}
