//! Every way the harness itself can fail, each with a message that says what
//! went wrong and where. Failures of single runs are not errors: they are
//! recorded as rows (see [`crate::model::Status`]).

use std::fmt;
use std::path::{Path, PathBuf};

/// The result type of the harness's fallible functions.
pub type Result<T> = std::result::Result<T, BenchError>;

/// An error that stops the harness.
#[derive(Debug)]
pub enum BenchError {
    /// The GPU (or the runtime) failed outside a measured run, e.g. opening it.
    Gpu(gsync::Error),
    /// A file could not be read or written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A CSV file could not be read or written.
    Csv {
        /// The file.
        path: PathBuf,
        /// What the CSV library said.
        source: csv::Error,
    },
    /// A CSV file was readable but a value in it is not what the harness wrote.
    BadRecord {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the record.
        line: u64,
        /// What is wrong with it.
        problem: String,
    },
    /// A plot could not be drawn or encoded.
    Plot {
        /// The plot's file name.
        name: String,
        /// What the plotting or encoding library said.
        problem: String,
    },
    /// The command line asks for something the harness cannot do.
    Usage(String),
}

impl BenchError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
        move |source| BenchError::Io { path: path.to_owned(), source }
    }

    /// Wraps a CSV error with the path it concerns.
    pub fn csv(path: &Path) -> impl FnOnce(csv::Error) -> BenchError + '_ {
        move |source| BenchError::Csv { path: path.to_owned(), source }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Gpu(e) => write!(f, "{e}"),
            BenchError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::Csv { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::BadRecord { path, line, problem } => {
                write!(f, "{} line {line}: {problem}; was the file written by gsync-bench?", path.display())
            }
            BenchError::Plot { name, problem } => write!(f, "drawing {name}: {problem}"),
            BenchError::Usage(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BenchError::Gpu(e) => Some(e),
            BenchError::Io { source, .. } => Some(source),
            BenchError::Csv { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<gsync::Error> for BenchError {
    fn from(e: gsync::Error) -> Self {
        BenchError::Gpu(e)
    }
}
