//! Dense slots of the event classes a collector met: the kernel pass's
//! collectors find the class of every event (`CtfCurrent::class_id`), and
//! consecutive events are mostly of different classes (a system call's
//! entry, then its exit), so that a one-entry cache misses and a hash per
//! event cost a few % of the pass.

use traceloom_base::FastMap;

/// Event ids (a class id's low 32 bits) below this are found by indexing
/// a vector of their page (the high 32 bits: trace and stream class);
/// larger ones through a hash map.
const DIRECT_CLASS_IDS: u64 = 1 << 16;

/// No slot yet, in a page's vector.
const NO_SLOT: u32 = u32::MAX;

/// The slot (a dense index of the owner's choosing) of each event class
/// seen.
#[derive(Debug, Default, Clone)]
pub(crate) struct ClassSlots {
    /// Per page, the slot by event id ([`NO_SLOT`]: not seen).
    pages: Vec<(u64, Vec<u32>)>,
    /// The slots of the classes the pages do not hold.
    far: FastMap<u64, u32>,
}

impl ClassSlots {
    /// The slot of `class`, if it has one.
    #[inline]
    pub(crate) fn get(&self, class: u64) -> Option<u32> {
        let (page, id) = (class >> 32, class & 0xFFFF_FFFF);
        if id < DIRECT_CLASS_IDS {
            let (_, v) = self.pages.iter().find(|(p, _)| *p == page)?;
            v.get(id as usize).copied().filter(|&s| s != NO_SLOT)
        } else {
            self.far.get(&class).copied()
        }
    }

    /// Gives `class` the slot `slot`.
    pub(crate) fn insert(&mut self, class: u64, slot: u32) {
        let (page, id) = (class >> 32, class & 0xFFFF_FFFF);
        if id >= DIRECT_CLASS_IDS {
            self.far.insert(class, slot);
            return;
        }
        let at = match self.pages.iter().position(|(p, _)| *p == page) {
            Some(i) => i,
            None => {
                self.pages.push((page, Vec::new()));
                self.pages.len() - 1
            }
        };
        let v = &mut self.pages[at].1;
        if v.len() <= id as usize {
            v.resize(id as usize + 1, NO_SLOT);
        }
        v[id as usize] = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_found_by_page_and_id_near_and_far() {
        let mut s = ClassSlots::default();
        let near = (3u64 << 32) | 7;
        let other_page = (4u64 << 32) | 7;
        let far = (3u64 << 32) | (DIRECT_CLASS_IDS + 5);
        assert_eq!(s.get(near), None);
        s.insert(near, 0);
        s.insert(far, 1);
        assert_eq!(s.get(near), Some(0));
        assert_eq!(s.get(far), Some(1));
        assert_eq!(s.get(other_page), None);
        assert_eq!(s.get((3u64 << 32) | 6), None);
        s.insert(other_page, 2);
        assert_eq!(s.get(other_page), Some(2));
        assert_eq!(s.get(near), Some(0));
    }
}
