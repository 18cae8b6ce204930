//! One per-CPU data stream (`channel0_<cpu>`) and its LTTng index file
//! (`index/channel0_<cpu>.idx`).
//!
//! Packets are built in memory, one at a time, and written whole. The
//! packet layout is lttng-modules' `struct packet_header` on x86-64: the
//! trace packet header (magic, uuid, stream_id, stream_instance_id) then
//! the stream packet context, 84 bytes in all, all fields little-endian and
//! byte-aligned.

use std::fs::File;
use std::io::{self, BufWriter, Write};

/// CTF packet magic.
pub(crate) const CTF_MAGIC: u32 = 0xC1FC_1FC1;
/// CTF index file magic, stored big-endian.
pub(crate) const INDEX_MAGIC: u32 = 0xC1F1_DCC1;
/// Bytes of packet header + packet context before the first event.
pub(crate) const PACKET_HEADER_LEN: usize = 84;
/// Bytes of one index 1.1 entry: nine big-endian u64.
pub(crate) const INDEX_ENTRY_LEN: usize = 72;
/// LTTng's final (flushed) packets are rounded up to the page size.
pub(crate) const PAGE: usize = 4096;

// Offsets of the packet-context fields within the packet.
const OFF_TS_BEGIN: usize = 32;
const OFF_TS_END: usize = 40;
const OFF_CONTENT_SIZE: usize = 48;
const OFF_PACKET_SIZE: usize = 56;
const OFF_SEQ_NUM: usize = 64;
const OFF_DISCARDED: usize = 72;
const OFF_CPU_ID: usize = 80;

/// The compact header holds a 27-bit timestamp; a larger delta from the
/// previous event forces the extended header (LTTng's
/// `last_timestamp_overflow` on 64-bit kernels).
const COMPACT_TS_BITS: u32 = 27;
const COMPACT_MAX_ID: u32 = 30;
const EXTENDED_ID: u8 = 31;

/// Counters a stream reports when it is finished.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StreamStats {
    pub packets: u64,
    pub bytes: u64,
    pub compact: u64,
    pub extended: u64,
}

pub(crate) struct Stream {
    cpu: u32,
    out: BufWriter<File>,
    index: Option<BufWriter<File>>,
    /// The packet being built: header, context and event bytes so far.
    buf: Vec<u8>,
    packet_size: usize,
    header: [u8; PACKET_HEADER_LEN],
    ts_begin: u64,
    last_ts: u64,
    seq: u64,
    file_offset: u64,
    events_in_packet: u64,
    stats: StreamStats,
}

impl Stream {
    /// Starts a stream whose first packet begins at `start_ts`.
    pub(crate) fn new(
        cpu: u32,
        data: File,
        index: Option<File>,
        uuid: &[u8; 16],
        packet_size: usize,
        start_ts: u64,
    ) -> io::Result<Stream> {
        let mut header = [0u8; PACKET_HEADER_LEN];
        header[0..4].copy_from_slice(&CTF_MAGIC.to_le_bytes());
        header[4..20].copy_from_slice(uuid);
        header[20..24].copy_from_slice(&0u32.to_le_bytes()); // stream_id
        header[24..32].copy_from_slice(&u64::from(cpu).to_le_bytes()); // stream_instance_id
        header[OFF_CPU_ID..OFF_CPU_ID + 4].copy_from_slice(&cpu.to_le_bytes());
        let index = match index {
            Some(f) => {
                let mut w = BufWriter::with_capacity(64 * 1024, f);
                w.write_all(&INDEX_MAGIC.to_be_bytes())?;
                w.write_all(&1u32.to_be_bytes())?; // major
                w.write_all(&1u32.to_be_bytes())?; // minor
                w.write_all(&(INDEX_ENTRY_LEN as u32).to_be_bytes())?;
                Some(w)
            }
            None => None,
        };
        let mut s = Stream {
            cpu,
            // Packets are usually written whole and bypass the buffer; it
            // only batches small packets.
            out: BufWriter::with_capacity(256 * 1024, data),
            index,
            buf: Vec::with_capacity(packet_size),
            packet_size,
            header,
            ts_begin: 0,
            last_ts: start_ts,
            seq: 0,
            file_offset: 0,
            events_in_packet: 0,
            stats: StreamStats::default(),
        };
        s.open_packet(start_ts);
        Ok(s)
    }

    fn open_packet(&mut self, ts_begin: u64) {
        self.buf.clear();
        self.buf.extend_from_slice(&self.header);
        self.ts_begin = ts_begin;
        self.events_in_packet = 0;
    }

    /// Finishes the current packet: fills its context, pads it and writes
    /// it and its index entry. `page_aligned` selects LTTng's flush size
    /// (content rounded up to a page) instead of the full sub-buffer size.
    fn close_packet(&mut self, ts_end: u64, page_aligned: bool) -> io::Result<()> {
        let content = self.buf.len();
        let size = if page_aligned {
            content.div_ceil(PAGE) * PAGE
        } else {
            self.packet_size
        };
        let content_bits = (content as u64) * 8;
        let size_bits = (size as u64) * 8;
        let put = |buf: &mut Vec<u8>, off: usize, v: u64| {
            buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
        };
        put(&mut self.buf, OFF_TS_BEGIN, self.ts_begin);
        put(&mut self.buf, OFF_TS_END, ts_end);
        put(&mut self.buf, OFF_CONTENT_SIZE, content_bits);
        put(&mut self.buf, OFF_PACKET_SIZE, size_bits);
        put(&mut self.buf, OFF_SEQ_NUM, self.seq);
        put(&mut self.buf, OFF_DISCARDED, 0);
        self.buf.resize(size, 0);
        self.out.write_all(&self.buf)?;
        if let Some(index) = &mut self.index {
            let entry = [
                self.file_offset,
                size_bits,
                content_bits,
                self.ts_begin,
                ts_end,
                0, // events_discarded
                0, // stream_id
                u64::from(self.cpu),
                self.seq,
            ];
            let mut bytes = [0u8; INDEX_ENTRY_LEN];
            for (chunk, v) in bytes.chunks_exact_mut(8).zip(entry) {
                chunk.copy_from_slice(&v.to_be_bytes());
            }
            index.write_all(&bytes)?;
        }
        self.file_offset += size as u64;
        self.seq += 1;
        self.stats.packets += 1;
        self.stats.bytes += size as u64;
        Ok(())
    }

    /// Appends one event. Returns how many bytes the stream files grew by
    /// (header + payload, plus padding and a new packet header when the
    /// event opened a new packet).
    pub(crate) fn emit(&mut self, ts: u64, id: u32, payload: &[u8]) -> io::Result<usize> {
        debug_assert!(ts >= self.last_ts);
        // Decided against the previous event, before any packet switch, as
        // LTTng's reserve path does.
        let extended = id > COMPACT_MAX_ID || (ts - self.last_ts) >> COMPACT_TS_BITS != 0;
        let header_len = if extended { 13 } else { 4 };
        let mut grown = header_len + payload.len();
        if self.buf.len() + grown > self.packet_size {
            let before = self.buf.len();
            // The switch happens at this event's timestamp: it ends the old
            // packet and begins the new one.
            self.close_packet(ts, false)?;
            self.open_packet(ts);
            grown += (self.packet_size - before) + PACKET_HEADER_LEN;
        }
        if extended {
            self.buf.push(EXTENDED_ID);
            self.buf.extend_from_slice(&id.to_le_bytes());
            self.buf.extend_from_slice(&ts.to_le_bytes());
            self.stats.extended += 1;
        } else {
            let low = (ts & ((1 << COMPACT_TS_BITS) - 1)) as u32;
            let word = id | (low << 5);
            self.buf.extend_from_slice(&word.to_le_bytes());
            self.stats.compact += 1;
        }
        self.buf.extend_from_slice(payload);
        self.last_ts = ts;
        self.events_in_packet += 1;
        Ok(grown)
    }

    /// Flushes the last packet at `stop_ts` and the files. A stream that
    /// never had an event still gets one empty packet, so every CPU's
    /// stream spans the traced interval (LTTng's flush-empty at stop).
    pub(crate) fn finish(mut self) -> io::Result<StreamStats> {
        if self.events_in_packet > 0 || self.stats.packets == 0 {
            let stop = self.last_ts.max(self.ts_begin);
            self.close_packet(stop, true)?;
        }
        self.out.flush()?;
        if let Some(index) = &mut self.index {
            index.flush()?;
        }
        Ok(self.stats)
    }

    /// Sets the end timestamp used by [`finish`](Self::finish): the
    /// trace's stop time, which is at or after this stream's last event.
    pub(crate) fn set_stop(&mut self, stop_ts: u64) {
        debug_assert!(stop_ts >= self.last_ts);
        self.last_ts = stop_ts;
    }

    /// Bytes of the packet under construction.
    #[cfg(test)]
    pub(crate) fn pending_bytes(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_u64(b: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
    }

    #[test]
    fn packets_headers_and_index() {
        let dir = tempfile::tempdir().unwrap();
        let data_path = dir.path().join("channel0_3");
        let idx_path = dir.path().join("channel0_3.idx");
        let uuid = [7u8; 16];
        let mut s = Stream::new(
            3,
            File::create(&data_path).unwrap(),
            Some(File::create(&idx_path).unwrap()),
            &uuid,
            PAGE,
            1_000,
        )
        .unwrap();
        let payload = [0xABu8; 96];
        let mut ts = 1_000;
        // 100-byte events: 40 per 4 KiB packet.
        for _ in 0..100 {
            ts += 10;
            s.emit(ts, 2, &payload).unwrap();
        }
        // A gap beyond 2^27 ns forces the extended header even for id 2.
        ts += 1 << 27;
        s.emit(ts, 2, &payload).unwrap();
        s.emit(ts + 1, 40, &payload).unwrap();
        assert!(s.pending_bytes() > PACKET_HEADER_LEN);
        s.set_stop(ts + 500);
        let stats = s.finish().unwrap();
        assert_eq!(stats.compact, 100);
        assert_eq!(stats.extended, 2);

        let data = std::fs::read(&data_path).unwrap();
        assert_eq!(stats.bytes as usize, data.len());
        let idx = std::fs::read(&idx_path).unwrap();
        assert_eq!(&idx[0..4], &INDEX_MAGIC.to_be_bytes());
        assert_eq!(&idx[4..16], &[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 72]);
        let entries: Vec<[u64; 9]> = idx[16..]
            .chunks_exact(INDEX_ENTRY_LEN)
            .map(|e| {
                std::array::from_fn(|i| u64::from_be_bytes(e[i * 8..i * 8 + 8].try_into().unwrap()))
            })
            .collect();
        assert_eq!(entries.len() as u64, stats.packets);
        let mut offset = 0u64;
        let mut prev_end = None;
        for (seq, e) in entries.iter().enumerate() {
            let p = &data[e[0] as usize..];
            assert_eq!(e[0], offset);
            assert_eq!(u32::from_le_bytes(p[0..4].try_into().unwrap()), CTF_MAGIC);
            assert_eq!(&p[4..20], &uuid);
            assert_eq!(read_u64(p, 24), 3); // stream_instance_id
            assert_eq!(read_u64(p, OFF_TS_BEGIN), e[3]);
            assert_eq!(read_u64(p, OFF_TS_END), e[4]);
            assert_eq!(read_u64(p, OFF_CONTENT_SIZE), e[2]);
            assert_eq!(read_u64(p, OFF_PACKET_SIZE), e[1]);
            assert_eq!(read_u64(p, OFF_SEQ_NUM), seq as u64);
            assert_eq!(e[8], seq as u64);
            assert_eq!(e[7], 3);
            assert_eq!(
                u32::from_le_bytes(p[OFF_CPU_ID..OFF_CPU_ID + 4].try_into().unwrap()),
                3
            );
            assert!(e[2] <= e[1] && e[1] % (8 * PAGE as u64) == 0);
            // Packets abut in time: each switch ends one and begins the next.
            if let Some(end) = prev_end {
                assert_eq!(e[3], end);
            }
            prev_end = Some(e[4]);
            offset += e[1] / 8;
        }
        assert_eq!(offset as usize, data.len());
        assert_eq!(entries.last().unwrap()[4], ts + 500);

        // First event of the first packet: compact header, id 2, low 27 bits of ts.
        let word = u32::from_le_bytes(data[84..88].try_into().unwrap());
        assert_eq!(word & 31, 2);
        assert_eq!(u64::from(word >> 5), 1_010 & ((1 << 27) - 1));
        assert_eq!(&data[88..184], &payload[..]);
    }

    #[test]
    fn empty_stream_gets_one_empty_packet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("channel0_0");
        let mut s = Stream::new(
            0,
            File::create(&path).unwrap(),
            None,
            &[1; 16],
            1 << 20,
            500,
        )
        .unwrap();
        s.set_stop(900);
        let stats = s.finish().unwrap();
        assert_eq!(stats.packets, 1);
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), PAGE);
        assert_eq!(read_u64(&data, OFF_CONTENT_SIZE), 84 * 8);
        assert_eq!(read_u64(&data, OFF_TS_BEGIN), 500);
        assert_eq!(read_u64(&data, OFF_TS_END), 900);
    }
}
