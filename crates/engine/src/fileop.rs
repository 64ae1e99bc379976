//! fio's engines that act on whole files (`engines/fileoperations.c` in fio 3.33):
//! `filecreate`, `filestat` and `filedelete`.
//!
//! They move no data. What they time is one call per file opening — open(2) with `O_CREAT`,
//! stat(2)/lstat(2)/statx(2), or unlink(2) — recorded as a completion latency (fio's clat)
//! of the job's direction (read unless the job only writes); their I/Os complete at once
//! without touching the file (`FIO_FAKEIO`), yet count in the job's bytes and I/Os as fio
//! counts them. So the engine types below are null engines that declare [`FileOp`] in
//! their caps, and the workload makes the timed call ([`FileOp::apply`]) where it would open
//! the file.

use crate::{Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use rustix::fd::BorrowedFd;
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use std::io;
use std::path::Path;

/// Which call an engine of this family makes on each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// `filecreate`: open(2) with `O_CREAT|O_RDWR`, mode 0600. No layout happens first
    /// (`FIO_DISKLESSIO`): the files are the ones it creates.
    Create,
    /// `filestat`: the stat call of `stat_type` on the laid-out file.
    Stat,
    /// `filedelete`: unlink(2) of the laid-out file.
    Delete,
}

/// fio's `stat_type=` of `filestat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatType {
    /// stat(2) (the default).
    #[default]
    Stat,
    /// lstat(2).
    Lstat,
    /// statx(2) with `STATX_ALL`.
    Statx,
}

impl StatType {
    /// From fio's word.
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            "stat" => Ok(Self::Stat),
            "lstat" => Ok(Self::Lstat),
            "statx" => Ok(Self::Statx),
            _ => Err(format!("'{v}' is not a stat_type: expected stat, lstat or statx")),
        }
    }
}

impl FileOp {
    /// Makes the call on `name` in `dir` (the one timed). The file `filecreate` opens is
    /// closed when the returned descriptor drops, after the caller's clock stopped.
    pub fn apply(
        self,
        dir: BorrowedFd<'_>,
        name: &Path,
        stat_type: StatType,
    ) -> io::Result<Option<rustix::fd::OwnedFd>> {
        match self {
            // No link is followed at the last component: a link planted in the file's place
            // fails (ELOOP) instead of creating or truncating its target.
            FileOp::Create => rustix::fs::openat(
                dir,
                name,
                OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .map(Some)
            .map_err(io::Error::from),
            FileOp::Stat => {
                match stat_type {
                    StatType::Stat => rustix::fs::statat(dir, name, AtFlags::empty()).map(drop),
                    StatType::Lstat => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(drop),
                    StatType::Statx => rustix::fs::statx(dir, name, AtFlags::empty(), StatxFlags::ALL).map(drop),
                }?;
                Ok(None)
            }
            FileOp::Delete => {
                rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
                Ok(None)
            }
        }
    }
}

/// The shared body of the three engines: every I/O completes at once with all its bytes.
#[derive(Debug)]
struct Fake {
    buffers: SlotBuffers,
}

impl Fake {
    fn new(config: &EngineConfig) -> Self {
        Self { buffers: SlotBuffers::new(1, config.slot_len, config.align) }
    }

    #[inline(always)]
    fn submit(op: IoOp<'_>) -> Submit {
        Submit::Completed(Ok(if matches!(op.dir, IoDir::Read | IoDir::Write) { op.len } else { 0 }))
    }
}

macro_rules! file_engine {
    ($ty:ident, $name:literal, $op:expr, $diskless:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug)]
        pub struct $ty(Fake);

        impl Engine for $ty {
            const NAME: &'static str = $name;

            fn caps(_config: &EngineConfig) -> EngineCaps {
                EngineCaps { sync: true, diskless: $diskless, aligned_buffers: false, direct: true, file_op: Some($op) }
            }

            fn new(config: &EngineConfig) -> io::Result<Self> {
                Ok(Self(Fake::new(config)))
            }

            fn buffers(&mut self) -> &mut SlotBuffers {
                &mut self.0.buffers
            }

            #[inline(always)]
            fn submit(&mut self, op: IoOp<'_>) -> Submit {
                Fake::submit(op)
            }
        }
    };
}

file_engine!(FileCreate, "filecreate", FileOp::Create, true, "`ioengine=filecreate`: times the creation of each file.");
file_engine!(FileStat, "filestat", FileOp::Stat, false, "`ioengine=filestat`: times a stat of each laid-out file.");
file_engine!(
    FileDelete,
    "filedelete",
    FileOp::Delete,
    false,
    "`ioengine=filedelete`: times the unlink of each laid-out file."
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn each_call_does_what_fio_names_it_for() {
        let dir = std::env::temp_dir().join(format!("fsarena-fileop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = std::fs::File::open(&dir).unwrap();
        let name = Path::new("f");
        assert!(FileOp::Stat.apply(root.as_fd(), name, StatType::Stat).is_err(), "no file yet");
        assert!(FileOp::Create.apply(root.as_fd(), name, StatType::Stat).unwrap().is_some());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(dir.join("f")).unwrap().permissions().mode() & 0o777, 0o600);
        for t in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            FileOp::Stat.apply(root.as_fd(), name, t).unwrap();
        }
        std::os::unix::fs::symlink("/nonexistent", dir.join("l")).unwrap();
        // stat follows the link (and fails on its missing target); lstat does not.
        assert!(FileOp::Stat.apply(root.as_fd(), Path::new("l"), StatType::Stat).is_err());
        FileOp::Stat.apply(root.as_fd(), Path::new("l"), StatType::Lstat).unwrap();
        assert!(FileOp::Create.apply(root.as_fd(), Path::new("l"), StatType::Stat).is_err(), "never through a link");
        FileOp::Delete.apply(root.as_fd(), name, StatType::Stat).unwrap();
        assert!(!dir.join("f").exists());
        assert_eq!(StatType::parse("statx"), Ok(StatType::Statx));
        assert!(StatType::parse("fstat").unwrap_err().contains("expected stat, lstat or statx"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
