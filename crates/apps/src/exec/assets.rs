//! `assets=DIR`: a directory of the user's copied into the target before the commands run.
//! It is measured when the workload is parsed (before anything is created, also for
//! `--dry-run`) and copied at the run through descriptors, never by path: every directory is
//! opened beneath the one above it with no symbolic link followed (openat2's
//! `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`), every file opened without blocking and checked to be a
//! regular file, so a directory swapped for a link or a file for a FIFO between the two cannot
//! take fsarena out of the tree or hang it. Both walks hold the same bounds: entries, depth and
//! bytes. FIFOs, sockets and devices are refused; a symbolic link is copied as a link only when
//! it stays inside the tree (relative, never above the top by its `..`s).

use fsarena_target::beneath::{kind_words, HeldDir, OpenHow};
use rustix::fs::{self as rfs, AtFlags, FileType};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Most files, directories and links in `assets=`: a kernel source tree has about 90,000.
/// (The help of `assets=` states the three bounds; a test holds it to them.)
pub const MAX_ENTRIES: u64 = 1_000_000;
/// Deepest nesting of directories in `assets=`.
pub const MAX_DEPTH: usize = 64;
/// Most bytes of files in `assets=` (the target's room is checked besides).
pub const MAX_BYTES: u64 = 64 << 30;

/// What a tree holds: bytes of its files and its entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Bytes of regular files.
    pub bytes: u64,
    /// Files, directories and links.
    pub entries: u64,
}

impl Tally {
    /// Counts an entry of `bytes`, refusing past the bounds.
    fn add(&mut self, bytes: u64) -> Result<(), String> {
        self.entries += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.entries > MAX_ENTRIES {
            return Err(format!("holds more than {MAX_ENTRIES} files, directories and links: expected fewer"));
        }
        if self.bytes > MAX_BYTES {
            return Err(format!(
                "holds more than {} of files: expected at most that",
                fsarena_core::units::limit_text(MAX_BYTES)
            ));
        }
        Ok(())
    }
}

/// One entry of a directory, as it is (a link not followed).
struct Entry {
    name: OsString,
    stat: rfs::Stat,
}

/// The entries of `dir`, `.` and `..` left out.
fn entries(dir: &HeldDir) -> Result<Vec<Entry>, String> {
    let shown = dir.path().display().to_string();
    let mut out = Vec::new();
    // read_from reads a descriptor of its own, opened beneath `dir`'s.
    for entry in rfs::Dir::read_from(dir.fd()).map_err(|e| format!("{shown}: {e}"))? {
        let entry = entry.map_err(|e| format!("{shown}: {e}"))?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let stat = rfs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| format!("{}: {e}", dir.path().join(name).display()))?;
        out.push(Entry { name: name.to_os_string(), stat });
    }
    Ok(out)
}

/// The target of the link `name` in `dir` (at `depth` below the top), if it stays inside the
/// tree: relative, and never more `..` than the directories above it.
fn inside_link(dir: &HeldDir, name: &OsStr, depth: usize) -> Result<PathBuf, String> {
    let shown = dir.path().join(name);
    let target = rfs::readlinkat(dir.fd(), name, Vec::new()).map_err(|e| format!("{}: {e}", shown.display()))?;
    let target = PathBuf::from(OsStr::from_bytes(target.to_bytes()));
    let mut level = depth as i64;
    for c in target.components() {
        match c {
            Component::Normal(_) => level += 1,
            Component::CurDir => {}
            Component::ParentDir => level -= 1,
            Component::RootDir | Component::Prefix(_) => level = -1,
        }
        if level < 0 {
            return Err(format!(
                "{} is a symbolic link out of the directory: expected links that stay inside it (relative, not above it)",
                shown.display()
            ));
        }
    }
    Ok(target)
}

/// Refuses what is neither a directory, a regular file nor a link.
fn special(dir: &HeldDir, e: &Entry) -> String {
    format!(
        "{} is {}: expected regular files, directories and symbolic links only",
        dir.path().join(&e.name).display(),
        kind_words(e.stat.st_mode)
    )
}

/// Measures `dir` (a directory, not a link to one), holding the bounds; the error says what
/// is wrong and the limit.
pub fn measure(dir: &Path) -> Result<Tally, String> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(m) if m.is_symlink() => return Err("a symbolic link: expected a directory (a link is not followed)".into()),
        Ok(_) => return Err("not a directory: expected a directory of inputs".into()),
        Err(e) => return Err(e.to_string()),
    }
    let top = HeldDir::open(dir).map_err(|e| e.to_string())?;
    let mut tally = Tally::default();
    measure_in(&top, 0, &mut tally)?;
    Ok(tally)
}

fn measure_in(dir: &HeldDir, depth: usize, tally: &mut Tally) -> Result<(), String> {
    for e in entries(dir)? {
        match FileType::from_raw_mode(e.stat.st_mode) {
            FileType::Directory => {
                tally.add(0)?;
                let sub = descend(dir, &e.name, depth)?;
                measure_in(&sub, depth + 1, tally)?;
            }
            FileType::RegularFile => tally.add(e.stat.st_size as u64)?,
            FileType::Symlink => {
                inside_link(dir, &e.name, depth)?;
                tally.add(0)?;
            }
            _ => return Err(special(dir, &e)),
        }
    }
    Ok(())
}

/// The subdirectory `name` of `dir`, opened beneath it, within the depth bound.
fn descend(dir: &HeldDir, name: &OsStr, depth: usize) -> Result<HeldDir, String> {
    if depth + 1 > MAX_DEPTH {
        return Err(format!(
            "{}: directories nested deeper than {MAX_DEPTH}: expected fewer levels",
            dir.path().display()
        ));
    }
    dir.dir(Path::new(name)).map_err(|e| e.to_string())
}

/// Copies the tree `from` into the new directory `to` (created 0755 in the target), holding
/// the bounds again: what changed since it was measured is copied only if it still fits.
pub fn copy(from: &Path, to: &Path) -> Result<Tally, String> {
    let src = HeldDir::open(from).map_err(|e| e.to_string())?;
    std::fs::create_dir(to).map_err(|e| format!("mkdir {}: {e}", to.display()))?;
    let dst = HeldDir::open(to).map_err(|e| e.to_string())?;
    let mut tally = Tally::default();
    copy_in(&src, &dst, 0, &mut tally)?;
    Ok(tally)
}

fn copy_in(src: &HeldDir, dst: &HeldDir, depth: usize, tally: &mut Tally) -> Result<(), String> {
    for e in entries(src)? {
        let rel = Path::new(&e.name);
        let mode = e.stat.st_mode & 0o777;
        match FileType::from_raw_mode(e.stat.st_mode) {
            FileType::Directory => {
                tally.add(0)?;
                let from = descend(src, &e.name, depth)?;
                let name = e.name.to_str().ok_or_else(|| format!("{}: not a UTF-8 name", from.path().display()))?;
                // Writable by fsarena while it fills it.
                let to = dst.create_dir(name, mode | 0o700, None).map_err(|e| e.to_string())?;
                copy_in(&from, &to, depth + 1, tally)?;
            }
            FileType::RegularFile => {
                // Opened beneath the held directory, without blocking, and checked again: a
                // FIFO or a link put there since the listing is refused, not followed.
                let mut input = src.open_file(rel, OpenHow::READ).map_err(|e| e.to_string())?;
                let mut output = dst.open_file(rel, OpenHow::NEW.with_mode(mode)).map_err(|e| e.to_string())?;
                let room = MAX_BYTES.saturating_sub(tally.bytes);
                let copied = std::io::copy(&mut (&mut input).take(room.saturating_add(1)), &mut output)
                    .map_err(|e| format!("copy {}: {e}", src.path().join(rel).display()))?;
                tally.add(copied)?;
            }
            FileType::Symlink => {
                let target = inside_link(src, &e.name, depth)?;
                tally.add(0)?;
                rfs::symlinkat(&target, dst.fd(), rel)
                    .map_err(|err| format!("{}: {err}", dst.path().join(rel).display()))?;
            }
            _ => return Err(special(src, &e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_help_states_the_bounds() {
        let doc = super::super::options::OPTIONS.iter().find(|d| d.name == "assets").map(|d| d.doc.doc).unwrap_or("");
        let words = [
            super::MAX_ENTRIES.to_string(),
            format!("{} levels", super::MAX_DEPTH),
            fsarena_core::units::limit_text(super::MAX_BYTES),
        ];
        for w in words {
            assert!(doc.contains(&w), "{w}: {doc}");
        }
    }
}
