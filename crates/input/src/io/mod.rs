//! Readers and writers of other tools' files: ns-3 HPCC topology and flow files, fct.txt
//! (formats.md 4.1, 4.2, 4.4).

pub mod fct;
pub mod input;
pub mod ns3;
pub mod tokens;
