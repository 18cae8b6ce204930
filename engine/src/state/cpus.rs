//! Per-CPU values keyed by CPU number, sparse beyond a small dense range.
//!
//! CPU numbers come from the trace (a packet context's `cpu_id`): a real
//! machine numbers its CPUs densely from 0, a damaged or hostile trace can
//! say `0xFFFFFFFF`. A vector indexed by CPU number would then take
//! gigabytes; this map indexes the first [`DENSE_CPUS`] numbers directly
//! (the common case costs one bounds check) and keeps larger ones in a
//! sorted map, so memory and time follow the number of CPUs seen, never the
//! value of their numbers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// CPU numbers below this are stored in a vector indexed by number; at
/// most this many slots (a few tens of kilobytes) whatever the trace says.
pub const DENSE_CPUS: u32 = 1024;

/// Values per CPU number, iterated in CPU order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuMap<T> {
    /// CPUs below [`DENSE_CPUS`] by number; `None`: never seen. The last
    /// slot, if any, is `Some` (the vector grows only to insert).
    dense: Vec<Option<T>>,
    /// CPUs from [`DENSE_CPUS`] on.
    sparse: BTreeMap<u32, T>,
}

impl<T> Default for CpuMap<T> {
    fn default() -> Self {
        CpuMap {
            dense: Vec::new(),
            sparse: BTreeMap::new(),
        }
    }
}

impl<T> CpuMap<T> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `cpu`, if it was inserted.
    #[inline]
    pub fn get(&self, cpu: u32) -> Option<&T> {
        if cpu < DENSE_CPUS {
            self.dense.get(cpu as usize)?.as_ref()
        } else {
            self.sparse.get(&cpu)
        }
    }

    /// The value of `cpu`, mutable, if it was inserted.
    #[inline]
    pub fn get_mut(&mut self, cpu: u32) -> Option<&mut T> {
        if cpu < DENSE_CPUS {
            self.dense.get_mut(cpu as usize)?.as_mut()
        } else {
            self.sparse.get_mut(&cpu)
        }
    }

    /// The value of `cpu`, inserted with `make` when missing.
    #[inline]
    pub fn get_or_insert_with(&mut self, cpu: u32, make: impl FnOnce() -> T) -> &mut T {
        if cpu < DENSE_CPUS {
            let i = cpu as usize;
            if self.dense.len() <= i {
                self.dense.resize_with(i + 1, || None);
            }
            self.dense[i].get_or_insert_with(make)
        } else {
            self.sparse.entry(cpu).or_insert_with(make)
        }
    }

    /// Sets the value of `cpu`.
    pub fn insert(&mut self, cpu: u32, value: T) {
        if cpu < DENSE_CPUS {
            let i = cpu as usize;
            if self.dense.len() <= i {
                self.dense.resize_with(i + 1, || None);
            }
            self.dense[i] = Some(value);
        } else {
            self.sparse.insert(cpu, value);
        }
    }

    /// The CPUs and their values, in CPU order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)));
        dense.chain(self.sparse.iter().map(|(&k, v)| (k, v)))
    }

    /// The values, in CPU order.
    pub fn values(&self) -> impl Iterator<Item = &T> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The CPUs and their values, mutable, in CPU order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> + '_ {
        let dense = self
            .dense
            .iter_mut()
            .enumerate()
            .filter_map(|(i, v)| v.as_mut().map(|v| (i as u32, v)));
        dense.chain(self.sparse.iter_mut().map(|(&k, v)| (k, v)))
    }

    /// The number of CPUs inserted.
    pub fn len(&self) -> usize {
        self.dense.iter().filter(|v| v.is_some()).count() + self.sparse.len()
    }

    /// Whether no CPU was inserted.
    pub fn is_empty(&self) -> bool {
        self.dense.is_empty() && self.sparse.is_empty()
    }
}

impl<T> FromIterator<(u32, T)> for CpuMap<T> {
    fn from_iter<I: IntoIterator<Item = (u32, T)>>(iter: I) -> Self {
        let mut m = CpuMap::new();
        for (cpu, v) in iter {
            m.insert(cpu, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_numbers_iterate_in_order() {
        let mut m = CpuMap::new();
        m.insert(u32::MAX, 'z');
        m.insert(3, 'c');
        *m.get_or_insert_with(DENSE_CPUS, || 'x') = 'y';
        m.insert(0, 'a');
        assert_eq!(m.get(3), Some(&'c'));
        assert_eq!(m.get(2), None);
        assert_eq!(m.get(7), None);
        assert_eq!(m.get(u32::MAX), Some(&'z'));
        assert_eq!(m.len(), 4);
        let all: Vec<(u32, char)> = m.iter().map(|(k, v)| (k, *v)).collect();
        assert_eq!(
            all,
            [(0, 'a'), (3, 'c'), (DENSE_CPUS, 'y'), (u32::MAX, 'z')]
        );
    }

    #[test]
    fn a_huge_cpu_number_takes_no_room() {
        let mut m: CpuMap<[u8; 64]> = CpuMap::new();
        m.insert(u32::MAX, [0; 64]);
        m.insert(u32::MAX - 1, [0; 64]);
        assert!(m.dense.is_empty());
        assert_eq!(m.len(), 2);
    }
}
