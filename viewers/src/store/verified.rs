//! The record, beside a store file, that its columns' checksum held: so
//! that opening the store again need not read every page of it (3.3 GB
//! for the 8 GB generated trace, most of a warm open's time).
//!
//! The record (`<store>.verified`) names the file state it was made for:
//! length, inode, device, modification and status-change times, and the
//! columns' checksum from the header. Any write to the store, by any
//! program, changes its status-change time (which no program can set), so
//! a record that still matches means the bytes checked are the bytes on
//! disk; anything else (another file renamed over it, a write, a
//! truncation) makes the next open check the whole store again. What a
//! record cannot see is the medium changing bits under the file system,
//! which a trace's own files are not checked against either.
//!
//! File times tick coarsely: every few ms where they have nanoseconds
//! (the kernel stamps them from a clock read once a tick), every second
//! or two elsewhere (ext3, FAT). A write in the same tick as the state
//! recorded would leave the times unchanged. So a record is made only by
//! a check that began at least [`settle_time`] after the store's last
//! change: any later write gets a later time. The writer's own check
//! (`traceloom index`, the window's thread) waits that long; a store
//! opened sooner is checked whole.
//!
//! Records are written to a temporary file and renamed, without a sync:
//! a lost or torn record (it carries its own checksum) only costs a check.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long after a store's last change a check must begin for its
/// result to be recorded, at most ([`settle_time`]): file systems whose
/// times have whole seconds tick every two at the coarsest (FAT).
pub const SETTLED: Duration = Duration::from_secs(2);

/// [`settle_time`] where file times have nanoseconds: ticks of the
/// kernel's coarse clock are 1 to 10 ms (`HZ` 1000 to 100).
pub const SETTLED_FINE: Duration = Duration::from_millis(50);

/// Suffix of a record's file name, after the store's.
pub const SUFFIX: &str = ".verified";

const MAGIC: &[u8; 8] = b"TLVERIF1";
const FIELDS: usize = 8;
const LEN: usize = 8 + 8 * FIELDS + 4;

/// The state of an open store file that a record names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    len: u64,
    ino: u64,
    dev: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileState {
    /// The state of `file` (an open file: the inode mapped, whatever its
    /// path names now).
    pub fn of(file: &File) -> std::io::Result<FileState> {
        let m = file.metadata()?;
        Ok(FileState {
            len: m.len(),
            ino: m.ino(),
            dev: m.dev(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// When the file last changed (status-change time).
    pub fn changed(&self) -> SystemTime {
        let (s, ns) = self.ctime;
        let at = Duration::new(s.unsigned_abs(), ns.clamp(0, 999_999_999) as u32);
        if s >= 0 {
            SystemTime::UNIX_EPOCH + at
        } else {
            SystemTime::UNIX_EPOCH - at
        }
    }

    fn encode(&self, data_crc: u32) -> [u8; LEN] {
        let fields: [u64; FIELDS] = [
            self.len,
            self.ino,
            self.dev,
            self.mtime.0 as u64,
            self.mtime.1 as u64,
            self.ctime.0 as u64,
            self.ctime.1 as u64,
            u64::from(data_crc),
        ];
        let mut out = [0u8; LEN];
        out[..8].copy_from_slice(MAGIC);
        for (k, f) in fields.iter().enumerate() {
            out[8 + 8 * k..16 + 8 * k].copy_from_slice(&f.to_le_bytes());
        }
        let crc = crc32fast::hash(&out[..LEN - 4]);
        out[LEN - 4..].copy_from_slice(&crc.to_le_bytes());
        out
    }
}

/// How long after the last change of a file in `state` its times tick:
/// [`SETTLED_FINE`] when they have nanoseconds, [`SETTLED`] otherwise (a
/// time on a whole second by chance, one in a billion, waits longer).
pub fn settle_time(state: &FileState) -> Duration {
    if state.mtime.1 != 0 || state.ctime.1 != 0 {
        SETTLED_FINE
    } else {
        SETTLED
    }
}

/// How long from `now` until a check of a file in `state` may be
/// recorded (`None`: it may be now).
pub fn unsettled_for(state: &FileState, now: SystemTime) -> Option<Duration> {
    let settled_at = state.changed() + settle_time(state);
    settled_at.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// The record's path for the store at `store`.
pub fn path_for(store: &Path) -> PathBuf {
    let mut p = store.as_os_str().to_owned();
    p.push(SUFFIX);
    PathBuf::from(p)
}

/// Whether a record says that the store at `store`, in state `state`, had
/// columns of checksum `data_crc` that held.
pub fn holds(store: &Path, state: &FileState, data_crc: u32) -> bool {
    use std::io::Read;
    // A byte more than a record: a larger file is none, and is not read.
    let mut bytes = Vec::with_capacity(LEN + 1);
    let read =
        File::open(path_for(store)).and_then(|f| f.take(LEN as u64 + 1).read_to_end(&mut bytes));
    read.is_ok() && bytes[..] == state.encode(data_crc)[..]
}

/// Records that the columns of the store at `store`, in state `state`,
/// held checksum `data_crc` in a check begun at `began`; nothing is
/// recorded when the check began less than [`settle_time`] after the
/// store's last change. Failing to write (a read-only cache) records
/// nothing.
pub fn record(store: &Path, state: &FileState, data_crc: u32, began: SystemTime) {
    let settled = began
        .duration_since(state.changed())
        .is_ok_and(|d| d >= settle_time(state));
    if !settled {
        return;
    }
    let target = path_for(store);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut tmp = target.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}-{nanos}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = File::create(&tmp)
        .and_then(|mut f| f.write_all(&state.encode(data_crc)))
        .and_then(|()| fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(path: &Path) -> FileState {
        FileState::of(&File::open(path).unwrap()).unwrap()
    }

    #[test]
    fn a_record_holds_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("a.store");
        fs::write(&store, b"columns").unwrap();
        let s = state(&store);
        let later = s.changed() + settle_time(&s);
        assert!(!holds(&store, &s, 7));
        record(&store, &s, 7, later);
        assert!(holds(&store, &s, 7));
        // Another checksum in the header, another file: not this record.
        assert!(!holds(&store, &s, 8));
        // Written again, even with the same bytes: its times move on.
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&store, b"columns").unwrap();
        assert!(!holds(&store, &state(&store), 7));
        // A torn record is no record.
        let s = state(&store);
        record(&store, &s, 7, s.changed() + settle_time(&s));
        let bytes = fs::read(path_for(&store)).unwrap();
        fs::write(path_for(&store), &bytes[..LEN - 1]).unwrap();
        assert!(!holds(&store, &s, 7));
        // Nor is a longer one.
        fs::write(path_for(&store), [&bytes[..], &[0]].concat()).unwrap();
        assert!(!holds(&store, &s, 7));
        fs::write(path_for(&store), &bytes).unwrap();
        assert!(holds(&store, &s, 7));
    }

    #[test]
    fn a_check_begun_too_soon_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("a.store");
        fs::write(&store, b"columns").unwrap();
        let s = state(&store);
        let settle = settle_time(&s);
        record(&store, &s, 7, s.changed() + settle / 2);
        assert!(!path_for(&store).exists());
        assert_eq!(
            unsettled_for(&s, s.changed() + settle / 2),
            Some(settle / 2)
        );
        assert_eq!(unsettled_for(&s, s.changed() + settle), None);
        assert!(!holds(&store, &s, 7));
    }

    #[test]
    fn times_with_nanoseconds_settle_sooner() {
        let fine = FileState {
            len: 1,
            ino: 2,
            dev: 3,
            mtime: (1_700_000_000, 123_456_789),
            ctime: (1_700_000_000, 123_456_789),
        };
        assert_eq!(settle_time(&fine), SETTLED_FINE);
        let coarse = FileState {
            mtime: (1_700_000_000, 0),
            ctime: (1_700_000_000, 0),
            ..fine
        };
        assert_eq!(settle_time(&coarse), SETTLED);
        assert!(SETTLED_FINE < SETTLED);
        assert_eq!(
            unsettled_for(&coarse, coarse.changed() + SETTLED_FINE),
            Some(SETTLED - SETTLED_FINE)
        );
        assert_eq!(unsettled_for(&fine, fine.changed() + SETTLED_FINE), None);
    }
}
