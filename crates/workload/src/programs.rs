//! Finding a program a workload runs (a server, its client, a command's first word) before
//! anything is created.

use std::path::PathBuf;

/// Where `program` is on PATH (or the usual system directories, which a sudo PATH may lack).
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
