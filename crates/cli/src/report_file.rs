//! `-o FILE`: the report files fsarena writes, their format decided by the file's extension in
//! one place ([`ReportFile::of`]), and the path checked at parse time with the same rule, so
//! that a report that could not be written is refused (exit 2) before anything runs, rather
//! than found out after the whole run.

use crate::failure::Failure;
use fsarena_core::{printable, InputError};
use std::path::Path;

/// A report file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFile {
    /// One self-contained HTML file.
    Html,
    /// Markdown, with its SVG charts beside it.
    Markdown,
}

impl ReportFile {
    /// Every report format, in the order messages list them.
    pub const ALL: [ReportFile; 2] = [Self::Html, Self::Markdown];

    /// The extension that selects it.
    fn extension(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Markdown => "md",
        }
    }

    /// The format a file named `path` is written in, by its extension; None when no report
    /// format handles it.
    pub fn of(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?;
        Self::ALL.into_iter().find(|f| f.extension() == ext)
    }
}

/// `-o FILE` for a report in one of the `accepted` formats: its format, or bad input naming the
/// value and what is accepted. Refused: an extension no accepted format handles, a directory
/// or anything but a regular file at the name (what [`write`] would refuse), a parent directory
/// that does not exist, and one this process cannot write in. Nothing is created.
pub fn check(out: &Path, accepted: &[ReportFile]) -> Result<ReportFile, Failure> {
    let shown = printable(&out.to_string_lossy()).into_owned();
    let names: Vec<String> = accepted.iter().map(|f| format!(".{}", f.extension())).collect();
    let expected = format!("expected a file ending in {}", names.join(" or "));
    let bad = |why: String| -> Failure { InputError::new(format!("-o {shown}: {why}")).into() };
    if let Ok(meta) = std::fs::symlink_metadata(out) {
        if meta.is_dir() {
            return Err(bad(format!("is a directory; {expected}")));
        }
        if !meta.is_file() {
            return Err(bad(format!("is not a regular file; {expected}, new or a regular file to replace")));
        }
    }
    let format = ReportFile::of(out).filter(|f| accepted.contains(f)).ok_or_else(|| bad(expected.clone()))?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let parent_shown = printable(&parent.to_string_lossy()).into_owned();
    if !parent.is_dir() {
        return Err(bad(format!("the directory {parent_shown} does not exist; {expected} in an existing directory")));
    }
    // access(2) answers for this process's credentials, and says EROFS for a read-only mount
    // even to root, who passes every permission check.
    use rustix::fs::{access, Access};
    if let Err(e) = access(parent, Access::WRITE_OK | Access::EXEC_OK) {
        let why = std::io::Error::from(e);
        return Err(bad(format!(
            "cannot write in the directory {parent_shown} ({why}); {expected} in a writable directory"
        )));
    }
    Ok(format)
}

/// Writes an HTML report, or a Markdown one with its SVG charts beside it, as [`ReportFile::of`]
/// decides by `out`'s name; each file 0600 ([`crate::output::write_private`]): a report holds
/// commands, environments and logs.
pub fn write(runs: &[fsarena_core::run::RunReport], out: &Path) -> anyhow::Result<()> {
    use crate::output::write_private;
    use fsarena_report::Exporter;
    match ReportFile::of(out) {
        Some(ReportFile::Markdown) => {
            let (text, charts) = fsarena_report::markdown_report(runs);
            let dir = out.parent().unwrap_or(Path::new("."));
            for (name, svg) in charts {
                write_private(&dir.join(&name), svg.as_bytes())?;
            }
            write_private(out, text.as_bytes())
        }
        // HTML also for a name no format claims: `check` refuses those before a run, and
        // what was measured is never lost for a name.
        Some(ReportFile::Html) | None => write_private(out, &fsarena_report::Html.export(runs)?),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn message(out: &str, accepted: &[ReportFile]) -> String {
        match check(Path::new(out), accepted) {
            Err(Failure::BadInput(e)) => e.to_string(),
            other => panic!("{out}: expected bad input, got {other:?}"),
        }
    }

    #[test]
    fn the_extension_decides_the_format() {
        assert_eq!(ReportFile::of(Path::new("a/r.html")), Some(ReportFile::Html));
        assert_eq!(ReportFile::of(Path::new("r.md")), Some(ReportFile::Markdown));
        assert_eq!(ReportFile::of(Path::new("r.pdf")), None);
        assert_eq!(ReportFile::of(Path::new("html")), None);
    }

    #[test]
    fn bad_report_paths_name_the_value_and_what_is_accepted() {
        let dir = std::env::temp_dir().join(format!("fsarena-report-file-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub.html")).unwrap();
        let d = dir.display();
        let all = &ReportFile::ALL;
        assert_eq!(
            message(&format!("{d}/r.pdf"), all),
            format!("-o {d}/r.pdf: expected a file ending in .html or .md")
        );
        assert!(message(&format!("{d}/r.md"), &[ReportFile::Html]).ends_with("expected a file ending in .html"));
        assert!(message(&format!("{d}/sub.html"), all).contains("sub.html: is a directory; expected"));
        assert!(
            message(&format!("{d}/missing/r.html"), all).contains(&format!("the directory {d}/missing does not exist"))
        );
        assert_eq!(check(&dir.join("r.md"), all).unwrap(), ReportFile::Markdown);
        assert!(!dir.join("r.md").exists(), "a check creates nothing");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
