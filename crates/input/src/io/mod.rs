//! Readers and writers of other tools' files: ns-3 HPCC topology and flow files, fct.txt
//! (HPCC ns-3 `mix/topology.txt`, `mix/flow.txt`, `fct.txt`), OFED `ibnetdiscover` dumps,
//! htsim connection matrices, Chakra execution traces.

pub mod chakra;
pub mod fct;
pub mod htsim_cm;
pub mod ibnetdiscover;
pub mod imported;
pub mod input;
pub mod ns3;
pub mod tokens;
