//! A message's class label to the engine class its packets queue in: an InfiniBand service
//! level to a virtual lane through the port's SL-to-VL mapping table (IBA Vol. 1 7.6.6, 16 SLs),
//! an Ethernet 802.1Q priority to a traffic class (IEEE 802.1Q 8.6.6, 8 priorities). Without a
//! table the label is the engine class (one to one).

/// Most labels a table maps: InfiniBand's 16 service levels.
pub const MAX_LABELS: usize = 16;

/// A mapping table: `classes[label]` for the first `labels` labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassMap {
    classes: [u8; MAX_LABELS],
    labels: u8,
}

impl ClassMap {
    /// The table `classes` (one engine class per label, at most [`MAX_LABELS`]).
    pub fn new(classes: &[u8]) -> ClassMap {
        assert!(
            !classes.is_empty() && classes.len() <= MAX_LABELS,
            "a class map has 1 to {MAX_LABELS} labels"
        );
        let mut m = ClassMap {
            classes: [0; MAX_LABELS],
            labels: classes.len() as u8,
        };
        m.classes[..classes.len()].copy_from_slice(classes);
        m
    }

    /// Labels the table maps (16 SLs, 8 priorities).
    pub fn labels(self) -> u8 {
        self.labels
    }

    /// The engine class of `label` (`None` past the table).
    pub fn class_of(self, label: u8) -> Option<u8> {
        (label < self.labels).then(|| self.classes[label as usize])
    }

    /// The table's entries.
    pub fn entries(&self) -> &[u8] {
        &self.classes[..self.labels as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_maps_its_labels_and_nothing_past_them() {
        let m = ClassMap::new(&[0, 1, 1, 2, 2, 2, 1, 1]);
        assert_eq!(m.labels(), 8);
        assert_eq!(m.class_of(3), Some(2));
        assert_eq!(m.class_of(7), Some(1));
        assert_eq!(m.class_of(8), None);
        assert_eq!(m.entries(), &[0, 1, 1, 2, 2, 2, 1, 1]);
    }
}
