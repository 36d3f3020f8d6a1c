//! `fabricsim profiles`: the shipped fabric profiles, listed or printed as TOML to copy and edit
//! (a copy is a user profile file: `[fabric] profile_file`, and may keep its `extends`).

use clap::{Args, Subcommand};

use fabricsim::InputError;
use fabricsim::profile::Profile;

use crate::outcome::Outcome;

#[derive(Args)]
pub struct ProfilesArgs {
    #[command(subcommand)]
    pub cmd: Option<ProfilesCmd>,
}

#[derive(Subcommand)]
pub enum ProfilesCmd {
    /// Print a shipped profile as TOML, with its source comments.
    Show {
        /// Profile id (`fabricsim profiles` lists them).
        id: String,
        /// Print it with the tables of the profile it extends composed in.
        #[arg(long)]
        resolved: bool,
    },
}

/// The table of shipped profiles.
fn list() -> String {
    let mut rows = vec![[
        "id".to_string(),
        "family".into(),
        "port Gb/s".into(),
        "switch".into(),
        "NIC".into(),
        "extends".into(),
        "name".into(),
    ]];
    for id in Profile::ids() {
        let p = Profile::builtin(id).expect("a shipped profile parses");
        rows.push([
            p.id.clone(),
            p.family.name().into(),
            p.ports.rate_gbps.to_string(),
            p.ports.switch.clone(),
            p.ports.nic.clone(),
            p.extends.clone().unwrap_or_else(|| "-".into()),
            p.name.clone(),
        ]);
    }
    let mut out = crate::table::aligned(&rows);
    out.push_str("\n`fabricsim profiles show ID` prints one as TOML to copy and edit.\n");
    out
}

pub fn run(a: ProfilesArgs) -> Outcome {
    let text = match a.cmd {
        None => list(),
        Some(ProfilesCmd::Show { id, resolved }) => {
            let Some((_, shipped)) = Profile::shipped(&id) else {
                return Err(InputError::flag(
                    "profiles show",
                    &id,
                    "is not a shipped profile",
                    Profile::ids().join(", "),
                )
                .into());
            };
            if resolved {
                Profile::builtin_text(&id).expect("a shipped profile composes")
            } else {
                shipped.to_string()
            }
        }
    };
    print!("{text}");
    Ok(())
}
