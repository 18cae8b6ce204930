//! Where the kernel pass puts the finished chunks of its change lists so
//! that its heap stays bounded whatever the trace size: an unlinked
//! temporary file in the cache directory, mapped shared and read-only, to
//! which full chunks are written once (`pwrite`, so that a full disk is an
//! error, never a fault in the map) and never changed again. The page
//! cache holds them (written back and evicted under pressure), not the
//! heap; the file's space is freed when the last series reading it is
//! dropped.
//!
//! The writes happen on a thread of the arena's own ([`Arena::submit`]):
//! the window's pass spills on the main loop, and a `pwrite` can wait
//! hundreds of ms there (ext4 holding it while its journal commits, or
//! the kernel throttling a process that dirties pages faster than the
//! disk takes them). A range is read in the map only once written
//! ([`Arena::written`]); until then its owner reads its own copy on the
//! heap.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use memmap2::{MmapOptions, MmapRaw};

use super::series::StableBytes;

/// Address space reserved for one pass (a sparse file: only what is
/// written takes disk space). A pass that fills it keeps the rest on the
/// heap.
const RESERVE: u64 = 256 << 30;

/// Bytes queued at which the writer is woken without waiting for
/// [`Arena::flush`].
const WAKE_BYTES: usize = 1 << 20;

/// Bytes handed to the writer and not yet written above which
/// [`Arena::submit`] waits: what the heap holds for a disk slower than the
/// pass (the pass then goes at the disk's pace). A spill round of the 1 GB
/// generated trace is about 2 MB, and the window's pass makes about 20 MB
/// a second on the main loop: a wait of the disk up to about 0.8 s goes
/// unseen there. The join of a parallel pass appends faster than the
/// writer writes: with 64 MB, `traceloom index` peaked 25–47 MB higher.
const BACKLOG_MAX: usize = 16 << 20;

/// A spill file, mapped (see the module documentation).
pub struct Arena {
    map: MmapRaw,
    shared: Arc<Shared>,
}

/// What the arena and its writer thread share.
struct Shared {
    file: File,
    state: Mutex<State>,
    /// Signalled when a job is queued, written or failed, and when the
    /// arena is dropped.
    changed: Condvar,
    /// Bytes from the start of the file written (see [`Arena::written`]).
    written: AtomicUsize,
    /// Tests: writes ending past this offset fail, as on a full disk.
    #[cfg(test)]
    fail_from: AtomicUsize,
}

#[derive(Default)]
struct State {
    /// Bytes handed out so far.
    used: usize,
    /// Writes not yet started, in the order of their offsets.
    queue: VecDeque<Job>,
    /// Bytes queued or being written.
    backlog: usize,
    /// The writer is writing a job it took from the queue.
    in_flight: bool,
    /// A write failed (full disk): nothing is written any more.
    failed: bool,
    /// The writer thread runs.
    writer: bool,
    /// The arena was dropped: what is queued is not written.
    closed: bool,
    /// Tests: the writer waits (what is queued stays on the heap).
    held: bool,
    /// [`Arena::write_through`] was called.
    write_through: bool,
    /// Threads waiting for a write ([`Arena::wait_written`], or for room
    /// in [`Arena::submit`]): the writer wakes them only then (a wake is
    /// a system call, and a pass queues tens of thousands of chunks).
    waiting: usize,
}

/// A write for the writer thread.
struct Job {
    at: usize,
    bytes: Arc<dyn StableBytes>,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Arena({} bytes used)", self.used())
    }
}

impl Arena {
    /// A new arena in `dir` (created if needed; the file is unlinked at
    /// once, so nothing is left behind, even by a killed process).
    pub fn create(dir: &Path) -> io::Result<Arena> {
        std::fs::create_dir_all(dir)?;
        let file = tempfile::tempfile_in(dir)?;
        file.set_len(RESERVE)?;
        let map = MmapOptions::new().map_raw_read_only(&file)?;
        Ok(Arena {
            map,
            shared: Arc::new(Shared {
                file,
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
                written: AtomicUsize::new(0),
                #[cfg(test)]
                fail_from: AtomicUsize::new(usize::MAX),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// Bytes handed out so far.
    pub fn used(&self) -> usize {
        self.lock().used
    }

    /// Bytes from the start of the arena written: a range handed out by
    /// [`submit`](Self::submit) may be read in the map once its end is at
    /// most this (ranges are written in the order they were handed out;
    /// after a failed write this stays below the failed range for good).
    #[inline]
    pub fn written(&self) -> usize {
        self.shared.written.load(Ordering::Acquire)
    }

    /// Hands out a range for `bytes` (at an 8-byte boundary) and queues
    /// its write to the writer thread; its offset, or `None` when the
    /// arena is full or a write failed (the caller keeps the bytes). The
    /// caller reads its own `bytes` until [`written`](Self::written)
    /// passes the range's end. Waits while more than [`BACKLOG_MAX`] bytes
    /// are queued.
    pub fn submit(&self, bytes: Arc<dyn StableBytes>) -> Option<usize> {
        self.hand_out(bytes, false)
    }

    /// [`submit`](Self::submit), or with `here`, written on the calling
    /// thread once what is queued is written.
    fn hand_out(&self, bytes: Arc<dyn StableBytes>, here: bool) -> Option<usize> {
        let len = bytes.bytes().len();
        let mut st = self.lock();
        let here = here || st.write_through;
        let busy = |st: &State| st.backlog > BACKLOG_MAX || here && st.backlog > 0;
        while busy(&st) && !st.failed {
            st = self.shared.wait_for_writer(st);
        }
        if st.failed {
            return None;
        }
        let start = st.used.next_multiple_of(8);
        let end = start.checked_add(len)?;
        if end > self.map.len() {
            return None;
        }
        st.used = end;
        st.backlog += len;
        let job = Job { at: start, bytes };
        if !here && !st.writer {
            st.writer = Shared::start_writer(&self.shared);
        }
        if here || !st.writer {
            // Written here, at once, under the lock (so that no later
            // range is published before it).
            let ok = self.shared.write(&job);
            self.shared.publish(&mut st, &job, ok);
            return (!st.failed).then_some(start);
        }
        st.queue.push_back(job);
        // Woken once per spill round ([`flush`](Self::flush)) or
        // [`WAKE_BYTES`], the writer takes the jobs queued in one go:
        // woken for each chunk, it preempted the pass 25,000 times on the
        // 1 GB trace, and `traceloom index` took 3–10 % longer.
        let wake = st.backlog >= WAKE_BYTES && st.backlog - len < WAKE_BYTES;
        drop(st);
        if wake {
            self.shared.changed.notify_all();
        }
        Some(start)
    }

    /// Wakes the writer for what is queued (the end of a spill round).
    pub fn flush(&self) {
        let queued = !self.lock().queue.is_empty();
        if queued {
            self.shared.changed.notify_all();
        }
    }

    /// From now on, [`submit`](Self::submit) writes on the calling
    /// thread, once what is queued is written: for the parts of a
    /// parallel pass, which keep every core busy (a writer thread beside
    /// them only preempts them: `traceloom index` of the 1 GB trace took
    /// 5–10 % longer), and its join, which appends faster than a writer
    /// writes and whose rows, appended once, would otherwise keep their
    /// last chunks on the heap until the end (peak 25–40 MB higher).
    pub fn write_through(&self) {
        self.lock().write_through = true;
    }

    /// Waits until the arena is written up to `end` (what
    /// [`submit`](Self::submit) handed out); whether it is (not after a
    /// failed write).
    pub fn wait_written(&self, end: usize) -> bool {
        let mut st = self.lock();
        while self.written() < end && !st.failed {
            st = self.shared.wait_for_writer(st);
        }
        self.written() >= end
    }

    /// A copy of `items` in the arena (at an 8-byte boundary), written
    /// when this returns; `None` when the arena is full or the write
    /// failed (full disk): the caller keeps the items. The copy is never
    /// written again while the arena lives. Waits for the writes queued
    /// before it.
    pub fn copy<T: bytemuck::Pod>(&self, items: &[T]) -> Option<*const T> {
        // The map is page-aligned and a copy starts at a multiple of 8:
        // aligned for T when its alignment is at most 8.
        if std::mem::align_of::<T>() > 8 {
            return None;
        }
        let bytes: &[u8] = bytemuck::cast_slice(items);
        let start = self.hand_out(Arc::new(bytes.to_vec()), true)?;
        Some(self.ptr_at::<T>(start))
    }

    /// Tests: writes ending past `offset` fail from now on, as on a full
    /// disk.
    #[cfg(test)]
    pub(crate) fn fail_writes_from(&self, offset: usize) {
        self.shared.fail_from.store(offset, Ordering::Relaxed);
    }

    /// Tests: whether a write failed.
    #[cfg(test)]
    pub(crate) fn failed(&self) -> bool {
        self.lock().failed
    }

    /// Tests: holds the writer thread (`true`) or lets it go on, to read
    /// what is queued before it is written.
    #[cfg(test)]
    pub(crate) fn hold_writes(&self, held: bool) {
        self.lock().held = held;
        self.shared.changed.notify_all();
    }

    /// Asks the kernel to read `len` bytes at `ptr` (inside a copy) into
    /// the page cache in the background. A series' chunks lie far apart
    /// in the file (every series spills its full chunks at each round):
    /// once memory is short and they were evicted, a reader going through
    /// one in order would otherwise fault on each chunk, and each fault
    /// reads the device's readahead around it (128 kB by default, 8 MB on
    /// a virtio disk), mostly other series' chunks evicted again before
    /// use. Costs a system call; does nothing for pages already there.
    ///
    /// The map keeps the kernel's read-around: readers in the file's own
    /// order (sealed records, a Pajé pass's containers) gain from it, and
    /// advising random access made a Pajé index in 512 MiB 10 % slower.
    pub fn prefetch<T>(&self, ptr: *const T, len: usize) {
        let offset = self.offset_of(ptr);
        if offset.saturating_add(len) <= self.map.len() {
            let _ = self
                .map
                .advise_range(memmap2::Advice::WillNeed, offset, len);
        }
    }

    /// The offset in the arena of `ptr`, a pointer [`copy`](Self::copy)
    /// returned: what a record keeps instead of the pointer (it is `Send`,
    /// and 8 bytes whatever the arena's address).
    pub fn offset_of<T>(&self, ptr: *const T) -> usize {
        ptr as usize - self.map.as_ptr() as usize
    }

    /// The address of `offset` (from [`offset_of`](Self::offset_of) or
    /// [`submit`](Self::submit)); it may be read only once written.
    pub fn ptr_at<T>(&self, offset: usize) -> *const T {
        debug_assert!(offset <= self.used());
        // SAFETY: `offset` lies in the map (it came from `offset_of` of a
        // copy inside it, or from `submit`).
        unsafe { self.map.as_ptr().add(offset) as *const T }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // Nothing reads the file any more: the writer drops what is
        // queued and ends.
        self.lock().closed = true;
        self.shared.changed.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the writer to write a job or fail.
    fn wait_for_writer<'a>(&self, mut g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        if !g.queue.is_empty() && !g.in_flight {
            // It may sleep with less than `WAKE_BYTES` queued.
            self.changed.notify_all();
        }
        g.waiting += 1;
        let mut g = self.wait(g);
        g.waiting -= 1;
        g
    }

    /// Starts the writer thread; whether it runs.
    fn start_writer(shared: &Arc<Shared>) -> bool {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("spill writer".into())
            .spawn(move || shared.writer_loop())
            .is_ok()
    }

    fn writer_loop(&self) {
        loop {
            let job = {
                let mut st = self.lock();
                loop {
                    if st.closed || st.failed {
                        return;
                    }
                    if st.held {
                        st = self.wait(st);
                        continue;
                    }
                    if let Some(job) = st.queue.pop_front() {
                        st.in_flight = true;
                        break job;
                    }
                    st = self.wait(st);
                }
            };
            let ok = self.write(&job);
            let mut st = self.lock();
            self.publish(&mut st, &job, ok);
            if st.waiting > 0 {
                drop(st);
                self.changed.notify_all();
            }
        }
    }

    /// Writes `job`; whether it was.
    fn write(&self, job: &Job) -> bool {
        use std::os::unix::fs::FileExt;
        #[cfg(test)]
        if job.at + job.bytes.bytes().len() > self.fail_from.load(Ordering::Relaxed) {
            return false;
        }
        self.file
            .write_all_at(job.bytes.bytes(), job.at as u64)
            .is_ok()
    }

    /// Records that `job`, the next in offset order, was written (`ok`)
    /// or failed.
    fn publish(&self, st: &mut State, job: &Job, ok: bool) {
        let len = job.bytes.bytes().len();
        st.backlog -= len;
        st.in_flight = false;
        if ok {
            self.written.store(job.at + len, Ordering::Release);
        } else {
            st.failed = true;
            st.backlog = 0;
            st.queue.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = Arena::create(dir.path()).unwrap();
        let v: Vec<u64> = (0..1000).collect();
        let p = a.copy(&v[..]).unwrap();
        let q = a.copy(&[7u8, 8, 9][..]).unwrap();
        let r = a.copy(&v[..10]).unwrap();
        // SAFETY: what `copy` returned, alive with `a`.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 1000), &v[..]);
            assert_eq!(std::slice::from_raw_parts(q, 3), &[7, 8, 9]);
            assert_eq!(std::slice::from_raw_parts(r, 10), &v[..10]);
        }
        assert_eq!(r as usize % 8, 0);
        assert_eq!(a.ptr_at::<u8>(a.offset_of(q)), q);
        assert!(a.used() >= 8 * 1010 + 3);
        // Nothing left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn submitted_ranges_are_written_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = Arena::create(dir.path()).unwrap();
        let mut ranges = Vec::new();
        for i in 0..200u8 {
            let bytes: Vec<u8> = vec![i; 1000 + usize::from(i)];
            let at = a.submit(Arc::new(bytes)).unwrap();
            assert_eq!(at % 8, 0);
            // Every range handed out lies after the ones before it.
            if let Some(&(prev, len)) = ranges.last() {
                assert!(at >= prev + len);
            }
            ranges.push((at, 1000 + usize::from(i)));
        }
        // A copy waits for everything queued before it.
        a.copy(&[1u8][..]).unwrap();
        let (last, len) = *ranges.last().unwrap();
        assert!(a.written() >= last + len);
        for (i, &(at, len)) in ranges.iter().enumerate() {
            // SAFETY: written (checked above), alive with `a`.
            let s = unsafe { std::slice::from_raw_parts(a.ptr_at::<u8>(at), len) };
            assert!(s.iter().all(|&b| b == i as u8), "range {i}");
        }
    }
}
