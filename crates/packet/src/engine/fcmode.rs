//! The run's link-level flow-control mode as a type: the event loop (`Engine::run`) is compiled
//! once per mode, so the packet path does not test on every transmission, arrival and release
//! which of `LinkFc`'s `credits` and `pfc` is present (measured: 17 instructions per event on
//! ft8_perm128, cachegrind on `fabricsim bench`, the tests and the code they let the compiler
//! drop). The mode is read once, from `LinkFc`, which never changes it.
//! Events outside the hop and the port wake-up (posts, timers, flow-control frames, link
//! changes) reach the packet path through `kick_any` and `fc_release_any`.

use super::Engine;
use super::llfc::LinkFc;
use crate::credits::Credits;
use crate::pfc::Pfc;

/// What the engine runs: no link-level flow control, PFC, or credits (`LinkFc::new` sets at
/// most one).
pub(super) trait FcMode {
    const CREDITS: bool;
    const PFC: bool;
}

pub(super) enum Lossy {}
pub(super) enum PfcOn {}
pub(super) enum CreditsOn {}

impl FcMode for Lossy {
    const CREDITS: bool = false;
    const PFC: bool = false;
}
impl FcMode for PfcOn {
    const CREDITS: bool = false;
    const PFC: bool = true;
}
impl FcMode for CreditsOn {
    const CREDITS: bool = true;
    const PFC: bool = false;
}

/// The mode as a value, to pick the loop's instance.
pub(super) enum Mode {
    Lossy,
    Pfc,
    Credits,
}

impl LinkFc {
    pub(super) fn mode(&self) -> Mode {
        match (&self.credits, &self.pfc) {
            (Some(_), _) => Mode::Credits,
            (None, Some(_)) => Mode::Pfc,
            (None, None) => Mode::Lossy,
        }
    }

    /// The credit state under mode `M` (none unless `M` is `CreditsOn`), without a test.
    #[inline(always)]
    pub(super) fn credits_of<M: FcMode>(&mut self) -> Option<&mut Credits> {
        on_unchecked(M::CREDITS, &mut self.credits)
    }

    /// The PFC state under mode `M` (none unless `M` is `PfcOn`), without a test.
    #[inline(always)]
    pub(super) fn pfc_of<M: FcMode>(&mut self) -> Option<&mut Pfc> {
        on_unchecked(M::PFC, &mut self.pfc)
    }
}

/// `state` when the loop's mode has it `on`, without testing the option.
#[inline(always)]
fn on_unchecked<T>(on: bool, state: &mut Option<T>) -> Option<&mut T> {
    if !on {
        return None;
    }
    debug_assert!(state.is_some());
    // SAFETY: the loop runs in a mode with `on` only when that state is set (`LinkFc::mode`),
    // and nothing unsets it.
    Some(unsafe { state.as_mut().unwrap_unchecked() })
}

impl Engine<'_> {
    /// `kick` from outside the loop's hop and wake-up, in the run's mode.
    pub(super) fn kick_any(&mut self, pi: usize) {
        match self.fc.mode() {
            Mode::Lossy => self.kick::<Lossy>(pi),
            Mode::Pfc => self.kick::<PfcOn>(pi),
            Mode::Credits => self.kick::<CreditsOn>(pi),
        }
    }

    /// `fc_release` from outside the loop's hop and wake-up (link failure, watchdog), in the
    /// run's mode.
    pub(super) fn fc_release_any(&mut self, in_port: usize, tc: u8, frame: u32, node: usize) {
        match self.fc.mode() {
            Mode::Lossy => self.fc_release::<Lossy>(in_port, tc, frame, node),
            Mode::Pfc => self.fc_release::<PfcOn>(in_port, tc, frame, node),
            Mode::Credits => self.fc_release::<CreditsOn>(in_port, tc, frame, node),
        }
    }
}
