//! `[layout]`: the physical rack-and-row model that turns links into cable lengths
//! (see `plan::layout` for the geometry).

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LayoutSection {
    /// GPU servers per rack (default 4, as in the DGX H100 SuperPOD rack layout).
    pub servers_per_rack: i64,
    /// Compute racks per row (default 16).
    pub racks_per_row: i64,
    /// Rack pitch along a row (default 0.6 m, a standard 600 mm rack).
    pub rack_width_m: f64,
    /// Distance between the centre lines of neighbouring rows (default 2.4 m: 1.2 m deep racks
    /// plus a 1.2 m aisle).
    pub row_pitch_m: f64,
    /// Rack height (default 2.0 m, a 42U rack).
    pub rack_height_m: f64,
    /// Height of the overhead cable tray above the rack top (default 0.5 m).
    pub tray_above_rack_m: f64,
    /// Switches per network rack (default 16).
    pub switches_per_rack: i64,
    /// Where leaves sit: `top-of-rack`, `end-of-row` (default) or `network-row`.
    pub leaf: String,
    /// Where spines sit: `end-of-row` or `network-row` (default). Cores always sit in network
    /// rows.
    pub spine: String,
    /// Extra length per cable for routing and service loops (default 1.0 m).
    pub slack_m: f64,
    /// Which pluggable modules the plan prefers where optics are needed: `dsp` (default),
    /// `lpo` or `lro` (catalog `drive`); a link no module of that drive reaches takes a `dsp` one.
    pub optics: String,
}

impl Default for LayoutSection {
    fn default() -> Self {
        LayoutSection {
            servers_per_rack: 4,
            racks_per_row: 16,
            rack_width_m: 0.6,
            row_pitch_m: 2.4,
            rack_height_m: 2.0,
            tray_above_rack_m: 0.5,
            switches_per_rack: 16,
            leaf: "end-of-row".into(),
            spine: "network-row".into(),
            slack_m: 1.0,
            optics: "dsp".into(),
        }
    }
}
