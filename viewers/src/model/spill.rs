//! Where the kernel pass puts the finished chunks of its change lists so
//! that its heap stays bounded whatever the trace size: an unlinked
//! temporary file in the cache directory, mapped shared and read-only, to
//! which full chunks are written once (`pwrite`, so that a full disk is an
//! error, never a fault in the map) and never changed again. The page
//! cache holds them (written back and evicted under pressure), not the
//! heap; the file's space is freed when the last series reading it is
//! dropped.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Mutex;

use memmap2::{MmapOptions, MmapRaw};

/// Address space reserved for one pass (a sparse file: only what is
/// written takes disk space). A pass that fills it keeps the rest on the
/// heap.
const RESERVE: u64 = 256 << 30;

/// A spill file, mapped (see the module documentation).
pub struct Arena {
    map: MmapRaw,
    /// Bytes handed out so far.
    used: Mutex<usize>,
    file: File,
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
            used: Mutex::new(0),
            file,
        })
    }

    /// Bytes written so far.
    pub fn used(&self) -> usize {
        *self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of `items` in the arena (at an 8-byte boundary), `None` when
    /// it is full or the file cannot be written (full disk): the caller
    /// keeps the items. The copy is never written again while the arena
    /// lives.
    pub fn copy<T: bytemuck::Pod>(&self, items: &[T]) -> Option<*const T> {
        use std::os::unix::fs::FileExt;
        let bytes: &[u8] = bytemuck::cast_slice(items);
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let start = used.next_multiple_of(8.max(std::mem::align_of::<T>()));
        let end = start.checked_add(bytes.len())?;
        if end > self.map.len() {
            return None;
        }
        // Written before anyone gets a pointer to it; under the lock, so
        // that a failed write hands the range out to no one.
        self.file.write_all_at(bytes, start as u64).ok()?;
        *used = end;
        // SAFETY: `start .. end` lies in the map (checked above); the map
        // is page-aligned and `start` a multiple of T's alignment.
        Some(unsafe { self.map.as_ptr().add(start) } as *const T)
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

    /// The address of `offset` (from [`offset_of`](Self::offset_of)).
    pub fn ptr_at<T>(&self, offset: usize) -> *const T {
        debug_assert!(offset <= self.used());
        // SAFETY: `offset` lies in the map (it came from `offset_of` of a
        // copy inside it).
        unsafe { self.map.as_ptr().add(offset) as *const T }
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
}
