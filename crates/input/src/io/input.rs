//! Reading an input file (scenario, profile, catalog, ns-3 topology or flow file): only a
//! regular file is read, so a FIFO or a device never blocks a command and a directory is
//! refused by name.

use crate::error::ReadError;
use std::path::Path;

/// The text of the regular file at `path`, or why it is not read.
pub fn read_input(path: &Path) -> Result<String, ReadError> {
    regular(path)?;
    std::fs::read_to_string(path).map_err(|error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// The bytes of the regular file at `path` (a binary input: a Chakra trace), or why not.
pub fn read_input_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    regular(path)?;
    std::fs::read(path).map_err(|error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// `Ok` when `path` is a regular file.
fn regular(path: &Path) -> Result<(), ReadError> {
    use std::os::unix::fs::FileTypeExt;
    let io = |error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    };
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    let not = if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else {
        Some("not a regular file")
    };
    if let Some(what) = not {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_fifos_and_devices_without_blocking() {
        let dir = std::env::temp_dir().join(format!("fabricsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe.toml");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let e = read_input(&fifo).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotAFile {
                    what: "a FIFO (named pipe)",
                    ..
                }
            ),
            "{e}"
        );
        let e = read_input(&dir).unwrap_err();
        assert!(
            e.to_string().contains("is a directory, not a regular file"),
            "{e}"
        );
        let e = read_input(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let file = dir.join("ok.toml");
        std::fs::write(&file, "x = 1\n").unwrap();
        assert_eq!(read_input(&file).unwrap(), "x = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
