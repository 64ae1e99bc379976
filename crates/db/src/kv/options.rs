//! The `kv` workload's options: db_bench's flag names and defaults (RocksDB 7.8.3's db_bench,
//! Debian's rocksdb-tools, the one bench/vs_db_bench.sh runs beside it), plus `engine`.

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, Count, Size, Text};
use fsarena_workload::options::{boolean, opt, size, whole, OptionDef};

/// One db_bench benchmark fsarena runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Benchmark {
    /// Writes keys 0..num in order, into a fresh database.
    FillSeq,
    /// Writes num random keys (with repeats) into a fresh database.
    FillRandom,
    /// Writes num random keys into the existing database.
    Overwrite,
    /// Iterates the database from its first key, up to num entries.
    ReadSeq,
    /// Gets num random keys, counting those found.
    ReadRandom,
    /// `threads` readers as readrandom while one more thread writes random keys until they end.
    ReadWhileWriting,
    /// Seeks an iterator to num random keys, counting exact hits.
    SeekRandom,
    /// Deletes num random keys.
    DeleteRandom,
}

impl Benchmark {
    /// Every benchmark, by db_bench's name.
    pub const ALL: [(&'static str, Benchmark); 8] = [
        ("fillseq", Benchmark::FillSeq),
        ("fillrandom", Benchmark::FillRandom),
        ("overwrite", Benchmark::Overwrite),
        ("readseq", Benchmark::ReadSeq),
        ("readrandom", Benchmark::ReadRandom),
        ("readwhilewriting", Benchmark::ReadWhileWriting),
        ("seekrandom", Benchmark::SeekRandom),
        ("deleterandom", Benchmark::DeleteRandom),
    ];

    /// db_bench's name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, b)| *b == self).map_or("?", |(n, _)| n)
    }

    /// db_bench starts these on a fresh (destroyed and recreated) database.
    pub fn fresh(self) -> bool {
        matches!(self, Benchmark::FillSeq | Benchmark::FillRandom)
    }

    /// The operation its latency histogram is named by (db_bench's operation types).
    pub fn op(self) -> &'static str {
        match self {
            Benchmark::FillSeq | Benchmark::FillRandom | Benchmark::Overwrite => "write",
            Benchmark::ReadSeq | Benchmark::ReadRandom | Benchmark::ReadWhileWriting => "read",
            Benchmark::SeekRandom => "seek",
            Benchmark::DeleteRandom => "delete",
        }
    }
}

/// The comma-separated `benchmarks` list; an unknown name is refused with the accepted ones.
pub fn benchmarks(v: &str) -> Result<Vec<Benchmark>, String> {
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let b = Benchmark::ALL.iter().find(|(n, _)| *n == name).map(|(_, b)| *b).ok_or_else(|| {
            format!(
                "'{}' is not a benchmark fsarena's kv runs:{} expected {}",
                fsarena_workload::plain::cut(name),
                fsarena_core::did_you_mean(name, Benchmark::ALL.iter().map(|(n, _)| *n)),
                Benchmark::ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )
        })?;
        out.push(b);
    }
    if out.is_empty() {
        return Err("no benchmark named: expected a comma-separated list such as fillseq,readrandom".into());
    }
    Ok(out)
}

/// The key-value store under the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// RocksDB through the `rocksdb` crate, linked to the system's librocksdb (cargo feature).
    Rocksdb,
    /// fjall, a pure-Rust LSM tree: always built.
    Fjall,
}

impl EngineKind {
    /// The engine when none is named: RocksDB where it is built in, as the studies used it.
    pub const fn default_engine() -> Self {
        if cfg!(feature = "rocksdb") {
            EngineKind::Rocksdb
        } else {
            EngineKind::Fjall
        }
    }

    /// Its name in `engine=`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Rocksdb => "rocksdb",
            EngineKind::Fjall => "fjall",
        }
    }
}

/// Block compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// None.
    None,
    /// Snappy (RocksDB only; db_bench's default).
    Snappy,
    /// LZ4.
    Lz4,
    /// Zstandard (RocksDB only).
    Zstd,
}

impl Compression {
    /// Its name in `compression_type=`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// The options of one `kv` run, with db_bench's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct KvOptions {
    /// The benchmarks, in order, on one database.
    pub benchmarks: Vec<Benchmark>,
    /// Keys per benchmark and thread (db_bench's `num`; reads and deletes too).
    pub num: u64,
    /// Reads per benchmark and thread (readseq, readrandom, readwhilewriting, seekrandom);
    /// `None`: num, as db_bench's reads=-1.
    pub reads: Option<u64>,
    /// Writes per fill benchmark and thread; `None`: num (db_bench's writes=-1, and 0 too).
    pub writes: Option<u64>,
    /// Deletes per deleterandom and thread; `None`: num.
    pub deletes: Option<u64>,
    /// Seconds the random-operation benchmarks run (fillrandom, overwrite, readrandom,
    /// readwhilewriting, seekrandom, deleterandom), their counts then ignored; 0: counts rule.
    pub duration: u64,
    /// Bytes per value.
    pub value_size: u64,
    /// Bytes per key.
    pub key_size: u64,
    /// Threads per benchmark, each doing `num` operations.
    pub threads: u32,
    /// O_DIRECT for reads of table files (RocksDB only).
    pub use_direct_reads: bool,
    /// O_DIRECT for flushes and compactions (RocksDB only).
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Every write waits for the log to reach the device.
    pub sync: bool,
    /// Writes skip the write-ahead log (RocksDB only).
    pub disable_wal: bool,
    /// Block cache bytes.
    pub cache_size: u64,
    /// Memtable bytes before a flush.
    pub write_buffer_size: u64,
    /// Block compression; `None` is the engine's default.
    pub compression: Option<Compression>,
    /// Base of the random generators' seeds; 0 takes one from the clock, as db_bench.
    pub seed: u64,
    /// Fraction a value compresses to (db_bench's compression_ratio).
    pub compression_ratio: f64,
    /// The engine; `None` is [`EngineKind::default_engine`].
    pub engine: Option<EngineKind>,
    /// Time every operation into a latency histogram (db_bench's `histogram`).
    pub histogram: bool,
    /// Keep the database after the run (fsarena's own).
    pub keep: bool,
}

impl Default for KvOptions {
    fn default() -> Self {
        Self {
            benchmarks: vec![Benchmark::FillSeq, Benchmark::ReadRandom],
            num: 1_000_000,
            reads: None,
            writes: None,
            deletes: None,
            duration: 0,
            value_size: 100,
            key_size: 16,
            threads: 1,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            sync: false,
            disable_wal: false,
            cache_size: 8 << 20,
            write_buffer_size: 64 << 20,
            compression: None,
            seed: 0,
            compression_ratio: 0.5,
            engine: None,
            histogram: true,
            keep: false,
        }
    }
}

/// A row of the kv table.
macro_rules! kv {
    ($($rest:tt)*) => { opt!(KvOptions, $($rest)*) };
}

/// Every option of the `kv` workload.
pub static OPTIONS: &[OptionDef<KvOptions>] = &[
    kv!("benchmarks", Text, Is("fillseq,readrandom"), "db_bench's benchmarks, comma-separated, run in order on one database: fillseq, fillrandom, overwrite, readseq, readrandom, readwhilewriting, seekrandom, deleterandom", |o, v| o.benchmarks = benchmarks(v)?)
        .list(ListSyntax::None),
    kv!("num", Count, Is("1000000"), "keys written (and read, deleted) per benchmark and thread, as db_bench's num", |o, v| o.num = match size(v)? {
        0 => return Err(format!("'{v}' must be at least 1")),
        n => n,
    }),
    kv!("reads", Text, Is("-1"), "reads per benchmark and thread by readseq, readrandom, readwhilewriting and seekrandom; -1: num, as db_bench", |o, v| o.reads = count_or_num(v)?),
    kv!("writes", Text, Is("-1"), "writes per benchmark and thread by fillseq, fillrandom and overwrite; -1 (or 0): num, as db_bench", |o, v| o.writes = count_or_num(v)?.filter(|&n| n > 0)),
    kv!("deletes", Text, Is("-1"), "deletes per thread by deleterandom; -1: num, as db_bench", |o, v| o.deletes = count_or_num(v)?),
    kv!("duration", Count, Is("0"), "seconds each random-operation benchmark runs (fillrandom, overwrite, readrandom, readwhilewriting, seekrandom, deleterandom; not fillseq or readseq), checked every 1000 operations, counts then ignored; 0: the counts rule, as db_bench", |o, v| o.duration = whole(v)?),
    kv!("value_size", Size, Is("100"), "bytes per value, as db_bench's value_size", |o, v| o.value_size = match size(v)? {
        0 => return Err(format!("'{v}' must be larger than 0")),
        n if n > 64 << 20 => return Err(format!("'{v}' is larger than 64 MiB")),
        n => n,
    }),
    kv!("key_size", Size, Is("16"), "bytes per key: the key number big-endian in 8 bytes, padded with '0', as db_bench", |o, v| o.key_size = match size(v)? {
        0 => return Err(format!("'{v}' must be larger than 0")),
        n if n > 4096 => return Err(format!("'{v}' is larger than 4096 bytes")),
        n => n,
    }),
    kv!("threads", Count, Is("1"), "threads per benchmark, each doing num operations, as db_bench's threads", |o, v| o.threads =
        fsarena_workload::options::positive(v)?),
    kv!("use_direct_reads", Bool, Is("0"), "O_DIRECT reads of table files (rocksdb)", |o, v| o.use_direct_reads = boolean(v)?),
    kv!("use_direct_io_for_flush_and_compaction", Bool, Is("0"), "O_DIRECT writes by flushes and compactions (rocksdb)", |o, v| o
        .use_direct_io_for_flush_and_compaction = boolean(v)?),
    kv!("sync", Bool, Is("0"), "every write waits for its log record to reach the device", |o, v| o.sync = boolean(v)?),
    kv!("disable_wal", Bool, Is("0"), "writes skip the write-ahead log (rocksdb)", |o, v| o.disable_wal = boolean(v)?),
    kv!("cache_size", Size, Is("8388608"), "block cache bytes (db_bench 7.8.3's default 8 MiB)", |o, v| o.cache_size = size(v)?),
    kv!("write_buffer_size", Size, Is("67108864"), "memtable bytes before a flush", |o, v| o.write_buffer_size = match size(v)? {
        n if n < 64 << 10 => return Err(format!("'{v}' is below 64 KiB")),
        n => n,
    }),
    kv!("compression_type", Choice(&["none", "snappy", "lz4", "zstd"]), Unset, "block compression: none, snappy, lz4 or zstd; unset: snappy (db_bench's) on rocksdb, lz4 on fjall", |o, v| o.compression = Some(match v.trim() {
        "none" | "no" => Compression::None,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => return Err(format!("'{v}' is not a compression: expected none, snappy, lz4 or zstd")),
    })),
    kv!("compression_ratio", Text, Is("0.5"), "fraction of its size a value compresses to, as db_bench's compression_ratio", |o, v| o.compression_ratio = match v.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => r,
        _ => return Err(format!("'{v}' is not a ratio: expected a number above 0 and up to 1")),
    }),
    kv!("seed", Count, Is("0"), "base of the random generators' seeds; 0 takes one from the clock, as db_bench", |o, v| o.seed = whole(v)?),
    kv!("engine", Choice(&["rocksdb", "fjall"]), Unset, "the store: rocksdb (a build with --features rocksdb; then the default) or fjall (pure Rust, always built)", |o, v| o.engine = Some(match v.trim() {
        "rocksdb" => EngineKind::Rocksdb,
        "fjall" => EngineKind::Fjall,
        _ => return Err(format!("'{v}' is not an engine: expected rocksdb or fjall")),
    })),
    kv!("histogram", Bool, Is("1"), "time every operation for the latency percentiles, as db_bench's --histogram=1 (db_bench's default is 0: no per-operation clock)", |o, v| o.histogram = boolean(v)?),
    kv!("keep", Bool, Is("0"), "keep the database after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
];

/// db_bench's reads, writes and deletes: a count, or a negative number for "num".
fn count_or_num(v: &str) -> Result<Option<u64>, String> {
    match v.trim().parse::<i64>() {
        Ok(n) if n < 0 => Ok(None),
        Ok(n) => Ok(Some(n.unsigned_abs())),
        Err(_) => Err(format!("'{v}' is not a whole number (-1 for num)")),
    }
}

impl KvOptions {
    /// The operations one thread of `bench` does when `duration` does not rule: db_bench's
    /// writes_, reads_ or deletes_.
    pub fn ops(&self, bench: Benchmark) -> u64 {
        match bench {
            Benchmark::FillSeq | Benchmark::FillRandom | Benchmark::Overwrite => self.writes,
            Benchmark::ReadSeq | Benchmark::ReadRandom | Benchmark::ReadWhileWriting | Benchmark::SeekRandom => {
                self.reads
            }
            Benchmark::DeleteRandom => self.deletes,
        }
        .unwrap_or(self.num)
    }

    /// The seconds `bench` runs for, 0 when its count rules: db_bench applies `duration` to
    /// the random-operation benchmarks only.
    pub fn seconds(&self, bench: Benchmark) -> u64 {
        match bench {
            Benchmark::FillSeq | Benchmark::ReadSeq => 0,
            _ => self.duration,
        }
    }
}

/// Checks what the options say together, and what the engine can do; `engine` is the one
/// that runs. Errors name the option and the way out.
pub fn check(o: &KvOptions, engine: EngineKind) -> Result<(), String> {
    if engine == EngineKind::Rocksdb && !cfg!(feature = "rocksdb") {
        return Err("engine=rocksdb: this fsarena is built without RocksDB; build it with `cargo build --release -p fsarena-cli --features rocksdb` (needs apt packages librocksdb-dev and libclang-dev, and ROCKSDB_LIB_DIR=/usr/lib/x86_64-linux-gnu), or use engine=fjall".into());
    }
    if engine == EngineKind::Fjall {
        let refuse = |what: &str, why: &str| Err(format!("{what} needs engine=rocksdb: {why}"));
        if o.use_direct_reads || o.use_direct_io_for_flush_and_compaction {
            return refuse(
                "O_DIRECT (use_direct_reads, use_direct_io_for_flush_and_compaction)",
                "fjall has no direct I/O",
            );
        }
        if o.disable_wal {
            return refuse("disable_wal=1", "fjall always writes its journal");
        }
        if let Some(c @ (Compression::Snappy | Compression::Zstd)) = o.compression {
            return refuse(&format!("compression_type={}", c.name()), "fjall compresses with lz4 or not at all");
        }
    }
    Ok(())
}
