//! The engines by name, for `ioengine=`.
//!
//! One table lists every engine: the built ones with their type, and the ones fio has that
//! fsarena refuses with a reason until they are built. A workload picks an engine by name
//! ([`EngineKind::parse`]) and runs its hot loop for that engine's type through
//! [`with_engine`], so the loop is compiled once per engine and calls it without indirection.
//!
//! Adding an engine: write its file (a type implementing [`crate::Engine`]), declare the
//! module in `lib.rs`, and move its line from `planned` to `built` below.

use crate::{Engine, EngineCaps, EngineConfig};

/// Why an engine name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Not an engine at all.
    #[error("'{name}' is not an I/O engine: expected one of {}", names())]
    Unknown {
        /// The name given.
        name: String,
    },
    /// An engine fio has, not built here yet.
    #[error("ioengine={name} is fio's but not supported by fsarena ({why}): expected one of {}", names())]
    NotBuilt {
        /// The name given.
        name: String,
        /// When it comes.
        why: &'static str,
    },
}

/// Runs code generic over an engine type, chosen at run time by [`with_engine`].
pub trait EngineVisitor {
    /// What the code returns.
    type Output;
    /// The code, compiled for engine `E`.
    fn visit<E: Engine>(self) -> Self::Output;
}

/// Runs `visitor` for the engine `kind` names, behind fio's offload workers
/// (`io_submit_mode=offload`, [`crate::Offload`]) when `offload`.
pub fn with_engine_mode<V: EngineVisitor>(kind: EngineKind, offload: bool, visitor: V) -> V::Output {
    /// The visitor, handed the engine wrapped.
    struct Offloaded<V>(V);
    impl<V: EngineVisitor> EngineVisitor for Offloaded<V> {
        type Output = V::Output;
        fn visit<E: Engine>(self) -> V::Output {
            self.0.visit::<crate::Offload<E>>()
        }
    }
    if offload {
        with_engine(kind, Offloaded(visitor))
    } else {
        with_engine(kind, visitor)
    }
}

/// One registered engine.
#[derive(Debug)]
pub struct EngineEntry {
    /// Which one.
    pub kind: EngineKind,
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// One line of help.
    pub help: &'static str,
}

macro_rules! registry {
    (
        built { $( $variant:ident => $ty:ty, $name:literal, [$($alias:literal),*], $help:literal; )* }
        planned { $( $pname:literal => $why:literal; )* }
    ) => {
        /// A built engine, by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EngineKind {
            $(
                #[doc = $help]
                $variant,
            )*
        }

        /// Every built engine, in the order help lists them.
        pub static ENGINES: &[EngineEntry] = &[
            $( EngineEntry { kind: EngineKind::$variant, name: $name, aliases: &[$($alias),*], help: $help }, )*
        ];

        /// Engines fio has that are refused here, with when they come.
        const PLANNED: &[(&str, &str)] = &[ $( ($pname, $why), )* ];

        /// Runs `visitor` compiled for the engine `kind` names.
        pub fn with_engine<V: EngineVisitor>(kind: EngineKind, visitor: V) -> V::Output {
            match kind {
                $( EngineKind::$variant => visitor.visit::<$ty>(), )*
            }
        }

        impl EngineKind {
            /// The engine's capabilities for `config`.
            pub fn caps(self, config: &EngineConfig) -> EngineCaps {
                match self {
                    $( EngineKind::$variant => <$ty as Engine>::caps(config), )*
                }
            }

            /// Whether the engine can run with `config` here ([`Engine::probe`]): checked at
            /// plan time, before anything is created.
            pub fn probe(self, config: &EngineConfig) -> Result<(), String> {
                match self {
                    $( EngineKind::$variant => <$ty as Engine>::probe(config), )*
                }
            }

            /// [`EngineKind::caps`] behind fio's offload workers ([`crate::Offload`]) when
            /// `offload`.
            pub fn caps_in(self, config: &EngineConfig, offload: bool) -> EngineCaps {
                if !offload {
                    return self.caps(config);
                }
                match self {
                    $( EngineKind::$variant => <crate::Offload<$ty> as Engine>::caps(config), )*
                }
            }
        }
    };
}

registry! {
    built {
        Psync => crate::Psync, "psync", ["pvsync"], "pread/pwrite, one syscall per I/O (default)";
        Sync => crate::Sync, "sync", [], "lseek + read/write, as fio's sync";
        Null => crate::Null, "null", [], "no I/O at all: measures fsarena's own overhead, needs no disk";
        IoUring => crate::IoUring, "io_uring", [], "Linux io_uring: queued I/O, iodepth deep, with fio's io_uring options";
        Libaio => crate::Libaio, "libaio", [], "Linux native AIO (io_submit/io_getevents); asynchronous only with direct=1";
        Mmap => crate::Mmap, "mmap", [], "the file mapped, each I/O a memcpy; syncs are msync";
        PosixAio => crate::PosixAio, "posixaio", [], "POSIX AIO (aio_read/aio_write/aio_fsync), iodepth deep";
        FileCreate => crate::FileCreate, "filecreate", [], "times open(O_CREAT) of each file; moves no data (fio's filecreate)";
        FileStat => crate::FileStat, "filestat", [], "times a stat of each file (stat_type=stat|lstat|statx); moves no data";
        FileDelete => crate::FileDelete, "filedelete", [], "times the unlink of each file; moves no data";
        Ftruncate => crate::Ftruncate, "ftruncate", [], "each write is ftruncate(2) to its offset; reads fail, as in fio";
        Falloc => crate::Falloc, "falloc", [], "each write is fallocate(2) of its range, each read fallocate with KEEP_SIZE";
        CpuIo => crate::CpuIo, "cpuio", [], "burns CPU at cpuload percent (cpumode=noop|qsort); moves no data";
        Exec => crate::Exec, "exec", [], "runs the job file's program with its arguments for the runtime, then SIGTERM; moves no data";
        Net => crate::Net, "net", [], "TCP or unix-socket I/O on this host: a listening job receives, a job with hostname= sends";
    }
    // fio 3.33's other engines (`fio --enghelp` and its engines/ directory), so that a job
    // file naming one is told the truth: fio has it, fsarena does not run it.
    planned {
        "e4defrag" => "ext4's EXT4_IOC_MOVE_EXT with donorname/inplace is not built";
        "netsplice" => "network I/O is not filesystem I/O";
        "vsync" => "readv/writev per I/O is not built; psync or sync do the same I/O";
        "pvsync2" => "preadv2/pwritev2 flags are not built; psync does the same I/O";
        "splice" => "splice(2) through a pipe is not built";
        "sg" => "SCSI generic needs a SCSI device";
        "io_uring_cmd" => "NVMe passthrough needs an NVMe character device";
        "mtd" => "it needs an MTD flash device";
        "nbd" => "it needs an NBD server";
        "rdma" => "it needs RDMA hardware";
        "rados" => "it needs a Ceph cluster";
        "rbd" => "it needs a Ceph cluster";
        "gfapi" => "it needs a GlusterFS volume through libgfapi";
        "gfapi_async" => "it needs a GlusterFS volume through libgfapi";
        "pmemblk" => "it needs persistent memory (libpmemblk)";
        "dev-dax" => "it needs a DAX device";
        "libpmem" => "it needs persistent memory (libpmem)";
        "http" => "it talks to an HTTP/S3/Swift server, not a filesystem";
        "nfs" => "it needs libnfs and an NFS server";
        "libiscsi" => "it needs an iSCSI target";
        "libhdfs" => "it needs HDFS";
        "ime" => "it needs DDN's IME";
        "dfs" => "it needs DAOS";
        "xnvme" => "it needs xNVMe and an NVMe device";
        "libcufile" => "it needs NVIDIA GPUDirect Storage";
        "librpma_apm_client" => "it needs RDMA persistent memory";
        "librpma_apm_server" => "it needs RDMA persistent memory";
        "librpma_gpspm_client" => "it needs RDMA persistent memory";
        "librpma_gpspm_server" => "it needs RDMA persistent memory";
        "libzbc" => "it needs a zoned block device";
        "dircreate" => "fio added it in 3.37; not built";
        "dirstat" => "fio added it in 3.37; not built";
        "dirdelete" => "fio added it in 3.37; not built";
    }
}

impl EngineKind {
    /// The engine called `name` (or an alias of it); the error lists the registered names.
    pub fn parse(name: &str) -> Result<Self, EngineError> {
        if let Some(e) = ENGINES.iter().find(|e| e.name == name || e.aliases.contains(&name)) {
            return Ok(e.kind);
        }
        match PLANNED.iter().find(|p| p.0 == name) {
            Some(&(_, why)) => Err(EngineError::NotBuilt { name: name.to_string(), why }),
            None => Err(EngineError::Unknown { name: name.to_string() }),
        }
    }

    /// fio's name for it.
    pub fn name(self) -> &'static str {
        ENGINES.iter().find(|e| e.kind == self).map_or("?", |e| e.name)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The registered names, comma-separated, for messages and help.
pub fn names() -> String {
    ENGINES.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(EngineKind::parse("psync"), Ok(EngineKind::Psync));
        assert_eq!(EngineKind::parse("pvsync"), Ok(EngineKind::Psync));
        assert_eq!(EngineKind::parse("sync"), Ok(EngineKind::Sync));
        assert_eq!(EngineKind::parse("null"), Ok(EngineKind::Null));
        for e in ENGINES {
            assert_eq!(EngineKind::parse(e.name), Ok(e.kind));
            assert_eq!(e.kind.to_string(), e.name);
        }
    }

    #[test]
    fn refusals_list_the_registered_engines() {
        assert_eq!(EngineKind::parse("io_uring"), Ok(EngineKind::IoUring));
        assert_eq!(EngineKind::parse("libaio"), Ok(EngineKind::Libaio));
        assert_eq!(EngineKind::parse("mmap"), Ok(EngineKind::Mmap));
        assert_eq!(EngineKind::parse("posixaio"), Ok(EngineKind::PosixAio));
        let err = EngineKind::parse("splice").unwrap_err().to_string();
        assert!(EngineKind::parse("ext4")
            .unwrap_err()
            .to_string()
            .starts_with("'ext4' is not an I/O engine: expected"));
        assert_eq!(
            err,
            "ioengine=splice is fio's but not supported by fsarena (splice(2) through a pipe is not built): expected one of \
             psync, sync, null, io_uring, libaio, mmap, posixaio, filecreate, filestat, filedelete, ftruncate, falloc, cpuio, exec, net"
        );
    }

    #[test]
    fn caps_come_from_the_engine_type() {
        let config = |iodepth| EngineConfig {
            depth: iodepth,
            slot_len: 4096,
            align: 4096,
            iodepth,
            flags: crate::EngineFlags::default(),
        };
        assert!(EngineKind::Psync.caps(&config(32)).sync);
        assert!(!EngineKind::Null.caps(&config(32)).sync && EngineKind::Null.caps(&config(1)).sync);
        assert!(EngineKind::Null.caps(&config(1)).diskless && !EngineKind::Sync.caps(&config(1)).diskless);
        for async_engine in [EngineKind::IoUring, EngineKind::Libaio] {
            let caps = async_engine.caps(&config(1));
            assert!(!caps.sync && !caps.diskless && caps.direct, "{async_engine}");
        }
    }

    #[test]
    fn probes_accept_what_runs_here_and_refuse_what_cannot() {
        let mut c = EngineConfig { depth: 32, slot_len: 4096, align: 4096, iodepth: 32, flags: Default::default() };
        for e in ENGINES {
            assert_eq!(e.kind.probe(&c), Ok(()), "{}", e.name);
        }
        c.flags.hipri = true;
        let err = EngineKind::IoUring.probe(&c).unwrap_err();
        assert!(err.contains("hipri=1 needs direct=1"), "{err}");
        c.flags = crate::EngineFlags { sqthread_poll_cpu: Some(0), ..Default::default() };
        assert!(EngineKind::IoUring.probe(&c).unwrap_err().contains("needs sqthread_poll=1"));
    }

    struct Name;
    impl EngineVisitor for Name {
        type Output = &'static str;
        fn visit<E: Engine>(self) -> &'static str {
            E::NAME
        }
    }

    #[test]
    fn with_engine_runs_the_named_type() {
        for e in ENGINES {
            assert_eq!(with_engine(e.kind, Name), e.name);
        }
    }
}
