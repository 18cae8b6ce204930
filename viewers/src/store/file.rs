//! The store's container: a header, columns of plain fixed-size records,
//! and a meta block, in one file written atomically and read through a
//! memory map.
//!
//! ```text
//! offset  size
//! 0       8    magic "TLSTORE\n"
//! 8       4    format version (little-endian)
//! 12      4    0x01020304 in the writer's byte order (native-endian data)
//! 16      8    identity digest of the traces (see `identity`)
//! 24      8    meta block offset
//! 32      8    meta block length
//! 40      4    CRC-32 of the meta block
//! 44      4    CRC-32 of the columns (bytes 64 .. meta offset)
//! 48      8    file length
//! 56      4    CRC-32 of bytes 0 .. 56
//! 60      4    reserved (0)
//! 64      ...  columns, each starting at a multiple of 8
//! ...     ...  meta block (postcard), pointing into the columns
//! ```
//!
//! Columns are written in the machine's own byte order and layout, so that
//! a mapped column *is* the slice the renders read: no decoding, and only
//! the pages a query touches are ever loaded. A store written on a machine
//! of the other byte order is refused (as stale) by its byte-order mark.
//!
//! Writing goes to a temporary file in the same directory, synced, then
//! renamed over the store: a reader sees the old store or the new one,
//! never a part; two writers of the same store each rename a complete file
//! and the last one wins; a reader that mapped the old file keeps it (the
//! rename does not touch its inode).

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use bytemuck::Pod;
use memmap2::Mmap;
use serde::{Deserialize, Serialize};

use super::verified::{self, FileState};
use super::StoreError;
use crate::model::column::{Column, ColumnParts};
use crate::model::pack::Item;
use crate::model::series::{Series, StableBytes};

/// The first bytes of a store file.
pub const MAGIC: &[u8; 8] = b"TLSTORE\n";
/// The format version; a store of another version is stale. 5: a thread
/// entering a system call from an unknown mode is in user mode once it
/// returns (the analysis changed, not the layout). 6: the statistics
/// name each thread and event name once. 7: drawn events' times are
/// offsets from their block's first (`pack::encode_offsets`). 8: CPU
/// rows list only the changes their threads' rows do not imply
/// (`model::cpu_row`). 9: block summaries give their share of drawn
/// time (`BlockSummary::drawn`, a padding byte before).
pub const VERSION: u32 = 9;
/// Bytes before the first column.
pub const HEADER_LEN: usize = 64;
const BYTE_ORDER: u32 = 0x0102_0304;

/// Where a column is: byte offset in the file and number of items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Col {
    /// Byte offset (a multiple of 8).
    pub offset: u64,
    /// Number of items.
    pub len: u64,
}

/// Where the four plain columns of a packed [`Column`] are (its packed
/// blocks, their offsets, their first items and the unpacked tail,
/// `model/column.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packed {
    /// The blocks, back to back.
    pub bytes: Col,
    /// The byte offset of each block.
    pub locs: Col,
    /// Each block's first item.
    pub firsts: Col,
    /// The items after the last block.
    pub tail: Col,
}

/// Writes a store file: columns first, then the meta block and the header;
/// nothing is visible at the store's path until [`finish`](Self::finish).
#[derive(Debug)]
pub struct Writer {
    /// Taken by `finish` (`Drop` forbids moving it out otherwise).
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    target: PathBuf,
    pos: u64,
    crc: crc32fast::Hasher,
    done: bool,
}

/// Makes temporary names unique among the threads of one process too.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is a temporary file of a [`Writer`] (`cache clear`
/// removes the ones a killed process left).
pub fn is_temporary(name: &str) -> bool {
    name.contains(".tmp-")
}

impl Writer {
    /// Starts writing the store at `target` (its directory is created).
    pub fn create(target: &Path) -> io::Result<Writer> {
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir)?;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut name = target.as_os_str().to_owned();
        name.push(format!(
            ".tmp-{}-{}-{nanos}",
            std::process::id(),
            TMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = PathBuf::from(name);
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&[0; HEADER_LEN])?;
        Ok(Writer {
            out: Some(out),
            tmp,
            target: target.to_path_buf(),
            pos: HEADER_LEN as u64,
            crc: crc32fast::Hasher::new(),
            done: false,
        })
    }

    fn out(&mut self) -> &mut BufWriter<File> {
        self.out.as_mut().expect("the writer is not finished")
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out().write_all(bytes)?;
        self.crc.update(bytes);
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Appends a column made of `chunks`, in order.
    pub fn column<'a, T: Pod>(
        &mut self,
        chunks: impl IntoIterator<Item = &'a [T]>,
    ) -> io::Result<Col> {
        let offset = self.pos;
        let mut len = 0u64;
        for c in chunks {
            self.write(bytemuck::cast_slice(c))?;
            len += c.len() as u64;
        }
        let pad = (8 - self.pos % 8) % 8;
        self.write(&[0u8; 8][..pad as usize])?;
        Ok(Col { offset, len })
    }

    /// Appends the items of series `s` as a column.
    pub fn series<T: Pod>(&mut self, s: &Series<T>) -> io::Result<Col> {
        self.column(s.chunks())
    }

    /// Appends the parts of packed column `c` as they are (no decoding).
    pub fn packed<T: Item>(&mut self, c: &Column<T>) -> io::Result<Packed> {
        let p = c.parts();
        Ok(Packed {
            bytes: self.series(&p.bytes)?,
            locs: self.series(&p.locs)?,
            firsts: self.series(&p.firsts)?,
            tail: self.series(&p.tail)?,
        })
    }

    /// A meta block to write as it is made, for
    /// [`finish_with`](Self::finish_with).
    pub fn meta_block(&self) -> io::Result<MetaBlock> {
        let dir = self.target.parent().unwrap_or(Path::new("."));
        let file = tempfile::tempfile_in(dir)?;
        Ok(MetaBlock(BufWriter::with_capacity(
            1 << 16,
            Hashed {
                file,
                len: 0,
                crc: crc32fast::Hasher::new(),
            },
        )))
    }

    /// Writes the meta block and the header, syncs and renames the file
    /// over the store; returns the store's size.
    pub fn finish(self, digest: u64, meta: &[u8]) -> io::Result<u64> {
        let crc = crc32fast::hash(meta);
        self.finish_parts(digest, meta.len() as u64, crc, |out| out.write_all(meta))
    }

    /// [`finish`](Self::finish) with a meta block written as it was made.
    pub fn finish_with(self, digest: u64, meta: MetaBlock) -> io::Result<u64> {
        let Hashed { file, len, crc } = meta.0.into_inner().map_err(|e| e.into_error())?;
        let mut file = file;
        file.seek(SeekFrom::Start(0))?;
        self.finish_parts(digest, len, crc.finalize(), |out| {
            let copied = io::copy(&mut (&mut file).take(len), out)?;
            if copied != len {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the meta block's temporary file is shorter than written",
                ));
            }
            Ok(())
        })
    }

    /// Writes the meta block (`meta_len` bytes of CRC `meta_crc`, by
    /// `write_meta`) and the header, syncs and renames the file.
    fn finish_parts(
        mut self,
        digest: u64,
        meta_len: u64,
        meta_crc: u32,
        write_meta: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    ) -> io::Result<u64> {
        let data_crc = std::mem::take(&mut self.crc).finalize();
        let meta_offset = self.pos;
        write_meta(self.out())?;
        let file_len = meta_offset + meta_len;
        let mut h = [0u8; HEADER_LEN];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&BYTE_ORDER.to_ne_bytes());
        h[16..24].copy_from_slice(&digest.to_le_bytes());
        h[24..32].copy_from_slice(&meta_offset.to_le_bytes());
        h[32..40].copy_from_slice(&meta_len.to_le_bytes());
        h[40..44].copy_from_slice(&meta_crc.to_le_bytes());
        h[44..48].copy_from_slice(&data_crc.to_le_bytes());
        h[48..56].copy_from_slice(&file_len.to_le_bytes());
        let hcrc = crc32fast::hash(&h[..56]);
        h[56..60].copy_from_slice(&hcrc.to_le_bytes());
        let mut out = self.out.take().expect("the writer is not finished");
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&h)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.tmp, &self.target)?;
        self.done = true;
        // The rename is durable once the directory is synced (best effort:
        // a cache survives losing it).
        if let Some(dir) = self.target.parent() {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(file_len)
    }
}

/// A store's meta block as it is made, in an unlinked temporary file
/// next to the store rather than on the heap: on a trace of 80,000 thread
/// records the records' headers alone take about 6 MB, made at the peak
/// of `traceloom index` (the records and the statistics are all there).
/// Its length and checksum are kept as it is written.
pub struct MetaBlock(BufWriter<Hashed>);

impl std::fmt::Debug for MetaBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MetaBlock({} bytes written)", self.0.get_ref().len)
    }
}

impl Write for MetaBlock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl MetaBlock {
    /// The bytes written so far (a test reads the block back).
    #[cfg(test)]
    pub(crate) fn bytes(&mut self) -> io::Result<Vec<u8>> {
        self.0.flush()?;
        let file = &mut self.0.get_mut().file;
        file.seek(SeekFrom::Start(0))?;
        let mut v = Vec::new();
        file.read_to_end(&mut v)?;
        Ok(v)
    }
}

/// A file that counts and checksums what is written to it.
struct Hashed {
    file: File,
    len: u64,
    crc: crc32fast::Hasher,
}

impl Write for Hashed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// CRC-32 of `data`, its parts hashed on separate threads and combined
/// (large stores only: a thread costs more than hashing a few MB).
fn parallel_crc(data: &[u8]) -> u32 {
    const MIN_PART: usize = 32 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = (data.len() / MIN_PART).clamp(1, threads);
    if parts == 1 {
        return crc32fast::hash(data);
    }
    let size = data.len().div_ceil(parts);
    let hashers: Vec<crc32fast::Hasher> = std::thread::scope(|s| {
        let handles: Vec<_> = data
            .chunks(size)
            .map(|part| {
                s.spawn(move || {
                    let mut h = crc32fast::Hasher::new();
                    h.update(part);
                    h
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("hashing does not panic"))
            .collect()
    });
    let mut total = crc32fast::Hasher::new();
    for h in &hashers {
        total.combine(h);
    }
    total.finalize()
}

/// The fixed header of a store file.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    /// Identity digest of the traces the store was computed from.
    pub digest: u64,
    meta_offset: u64,
    meta_len: u64,
    meta_crc: u32,
    data_crc: u32,
}

/// A store file, mapped; its header checked.
#[derive(Debug)]
pub struct Mapped {
    map: Arc<Mmap>,
    path: PathBuf,
    /// The state of the file mapped, when known: what a record of a past
    /// check is compared with (see [`super::verified`]).
    state: Option<FileState>,
    /// The checked header.
    pub header: Header,
}

impl Mapped {
    /// Maps the store at `path` and checks its header: magic, version, byte
    /// order (else [`StoreError::Stale`]), header checksum and file length
    /// (else [`StoreError::Damaged`]).
    pub fn open(path: &Path) -> Result<Mapped, StoreError> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::Missing(path.to_path_buf()))
            }
            Err(e) => return Err(StoreError::io(path, e)),
        };
        // SAFETY: store files are only ever replaced by rename, never
        // written in place or truncated, so the mapped inode does not
        // change under the map (a user truncating a cache file by hand is
        // outside what a cache can defend against).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| StoreError::io(path, e))?;
        let state = FileState::of(&file).ok();
        let damaged = |reason: String| StoreError::Damaged {
            path: path.to_path_buf(),
            reason,
        };
        if map.len() < HEADER_LEN || &map[..8] != MAGIC {
            return Err(damaged(
                "not a traceloom analysis store (bad header)".into(),
            ));
        }
        let u32_at = |o: usize| u32::from_le_bytes(map[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(map[o..o + 8].try_into().expect("8 bytes"));
        if u32_at(56) != crc32fast::hash(&map[..56]) {
            return Err(damaged("header checksum mismatch".into()));
        }
        let version = u32_at(8);
        let order = u32::from_ne_bytes(map[12..16].try_into().expect("4 bytes"));
        if version != VERSION || order != BYTE_ORDER {
            return Err(StoreError::Stale {
                path: path.to_path_buf(),
                reason: format!("format version {version}, this build reads {VERSION}"),
            });
        }
        let file_len = u64_at(48);
        if map.len() as u64 != file_len {
            return Err(damaged(format!(
                "{} bytes, the header says {file_len} (truncated?)",
                map.len()
            )));
        }
        let header = Header {
            digest: u64_at(16),
            meta_offset: u64_at(24),
            meta_len: u64_at(32),
            meta_crc: u32_at(40),
            data_crc: u32_at(44),
        };
        if header.meta_offset < HEADER_LEN as u64
            || header.meta_offset.checked_add(header.meta_len) != Some(file_len)
        {
            return Err(damaged("meta block out of the file".into()));
        }
        Ok(Mapped {
            map: Arc::new(map),
            path: path.to_path_buf(),
            state,
            header,
        })
    }

    fn damaged(&self, reason: impl Into<String>) -> StoreError {
        StoreError::Damaged {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// The meta block, its checksum verified.
    pub fn meta(&self) -> Result<&[u8], StoreError> {
        let m = &self.map[self.header.meta_offset as usize..];
        if crc32fast::hash(m) != self.header.meta_crc {
            return Err(self.damaged("meta block checksum mismatch"));
        }
        Ok(m)
    }

    /// Verifies the columns' checksum: reads every page of the file once,
    /// in parts on every core, unless a record says a check of this very
    /// file state held ([`super::verified`]); a check of a store of
    /// [`super::RECORDED_CHECK_BYTES`] or more that holds is recorded (a
    /// smaller one takes a few ms).
    pub fn verify_columns(&self) -> Result<(), StoreError> {
        self.verify(self.map.len() as u64 >= super::RECORDED_CHECK_BYTES)
    }

    /// [`verify_columns`](Self::verify_columns), recording a check that
    /// holds whatever the store's size.
    pub fn verify_and_record(&self) -> Result<(), StoreError> {
        self.verify(true)
    }

    fn verify(&self, record: bool) -> Result<(), StoreError> {
        let crc = self.header.data_crc;
        if let Some(state) = &self.state {
            if verified::holds(&self.path, state, crc) {
                return Ok(());
            }
        }
        let began = SystemTime::now();
        let data = &self.map[HEADER_LEN..self.header.meta_offset as usize];
        if parallel_crc(data) != crc {
            return Err(self.damaged("column checksum mismatch"));
        }
        if let Some(state) = self.state.as_ref().filter(|_| record) {
            verified::record(&self.path, state, crc, began);
        }
        Ok(())
    }

    /// How long until a check of this file may be recorded (`None`: now,
    /// or its state is unknown); see [`super::verified`].
    pub fn unsettled_for(&self) -> Option<std::time::Duration> {
        let state = self.state.as_ref()?;
        verified::unsettled_for(state, SystemTime::now())
    }

    /// The items of column `col`, in place in the map.
    pub fn column<T: Pod>(&self, col: Col) -> Result<&[T], StoreError> {
        let size = std::mem::size_of::<T>() as u64;
        let end = col
            .len
            .checked_mul(size)
            .and_then(|b| b.checked_add(col.offset));
        match end {
            Some(end) if col.offset >= HEADER_LEN as u64 && end <= self.header.meta_offset => {
                bytemuck::try_cast_slice(&self.map[col.offset as usize..end as usize])
                    .map_err(|e| self.damaged(format!("column at {}: {e}", col.offset)))
            }
            _ => Err(self.damaged(format!(
                "column at {} of {} items out of the file",
                col.offset, col.len
            ))),
        }
    }

    /// Column `col` as a series reading the map in place (the series
    /// keeps the map alive).
    pub fn series<T: Pod>(&self, col: Col) -> Result<Series<T>, StoreError> {
        // Bounds within the columns, alignment: checked by `column`.
        self.column::<T>(col)?;
        let map: Arc<dyn StableBytes> = self.map.clone();
        Series::mapped(map, col.offset as usize, col.len as usize)
            .ok_or_else(|| self.damaged(format!("column at {}", col.offset)))
    }

    /// Packed column `c` as a column reading the map in place.
    pub fn packed<T: Item>(&self, c: Packed) -> Result<Column<T>, StoreError> {
        let parts = ColumnParts {
            bytes: self.series(c.bytes)?,
            locs: self.series(c.locs)?,
            firsts: self.series(c.firsts)?,
            tail: self.series(c.tail)?,
        };
        Column::from_parts(parts).ok_or_else(|| {
            self.damaged(format!(
                "column at {}: one first item per block",
                c.locs.offset
            ))
        })
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file.
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Whether the file is empty (never, once opened).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_crc_equals_the_plain_one() {
        let data: Vec<u8> = (0..(70u32 << 20) + 12345)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(parallel_crc(&data), crc32fast::hash(&data));
        assert_eq!(parallel_crc(&data[..1000]), crc32fast::hash(&data[..1000]));
    }
}
