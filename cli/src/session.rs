//! Opening the traces a command reads, shared by `stats`, `export` and
//! `index` (below all three).

use std::io::Write;
use std::path::PathBuf;

use traceloom_viewers::model::Session;

use crate::CliError;

/// Opens a CTF session (warning on `err` about paths read once).
pub(crate) fn open_session(paths: &[PathBuf], err: &mut dyn Write) -> Result<Session, CliError> {
    let session = Session::open(paths).map_err(|e| CliError::Trace(e.to_string()))?;
    crate::warn_duplicates(session.traceset(), err)?;
    Ok(session)
}
