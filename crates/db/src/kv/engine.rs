//! The stores under `kv`: one small trait, so the benchmarks (bench.rs) are written once, and
//! fjall's implementation; RocksDB's is in rocks.rs, behind the `rocksdb` feature.

use super::options::{Compression, EngineKind, KvOptions};
use std::path::Path;

/// An open key-value store, shared by the benchmark's threads.
pub trait Engine: Send + Sync {
    /// Writes `key` = `value`, as the options say (sync, WAL).
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// The size of `key`'s value, `None` when absent.
    fn get(&self, key: &[u8]) -> Result<Option<usize>, String>;
    /// Deletes `key`.
    fn delete(&self, key: &[u8]) -> Result<(), String>;
    /// Walks the store in key order from its first key, calling `each(key_len + value_len)`
    /// per entry until it returns false or the store ends.
    fn scan(&self, each: &mut dyn FnMut(usize) -> bool) -> Result<(), String>;
    /// Positions an iterator at the first key >= `key`: `Some((exact, key_len + value_len))`,
    /// `None` past the end.
    fn seek(&self, key: &[u8]) -> Result<Option<(bool, usize)>, String>;
    /// Called once by each benchmark thread before its first operation: per-thread engine
    /// settings (RocksDB's perf level).
    fn begin_thread(&self) {}
}

/// Opens (creating) the store of `kind` in `dir`.
pub fn open(kind: EngineKind, dir: &Path, o: &KvOptions) -> Result<Box<dyn Engine>, String> {
    match kind {
        EngineKind::Fjall => Ok(Box::new(Fjall::open(dir, o)?)),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => Ok(Box::new(super::rocks::Rocks::open(dir, o)?)),
        #[cfg(not(feature = "rocksdb"))]
        EngineKind::Rocksdb => Err("this fsarena is built without RocksDB (--features rocksdb)".into()),
    }
}

/// fjall: one keyspace with one partition.
struct Fjall {
    keyspace: fjall::Keyspace,
    data: fjall::PartitionHandle,
    sync: bool,
}

impl Fjall {
    fn open(dir: &Path, o: &KvOptions) -> Result<Self, String> {
        let keyspace = fjall::Config::new(dir)
            .cache_size(o.cache_size)
            .max_write_buffer_size(o.write_buffer_size)
            .open()
            .map_err(|e| format!("fjall: opening {}: {e}", dir.display()))?;
        let compression = match o.compression.unwrap_or(Compression::Lz4) {
            Compression::None => fjall::CompressionType::None,
            // Refused before the run for fjall (options::check); lz4 is the only other.
            _ => fjall::CompressionType::Lz4,
        };
        let memtable = u32::try_from(o.write_buffer_size).unwrap_or(u32::MAX);
        let create = fjall::PartitionCreateOptions::default().compression(compression).max_memtable_size(memtable);
        let data = keyspace.open_partition("kv", create).map_err(|e| format!("fjall: opening the partition: {e}"))?;
        Ok(Self { keyspace, data, sync: o.sync })
    }
}

impl Engine for Fjall {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.data.insert(key, value).map_err(|e| format!("fjall: insert: {e}"))?;
        if self.sync {
            // RocksDB's sync=true: the write's journal record is on the device when it returns.
            self.keyspace.persist(fjall::PersistMode::SyncData).map_err(|e| format!("fjall: persist: {e}"))?;
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.data.get(key).map(|v| v.map(|v| v.len())).map_err(|e| format!("fjall: get: {e}"))
    }

    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.data.remove(key).map_err(|e| format!("fjall: remove: {e}"))?;
        if self.sync {
            self.keyspace.persist(fjall::PersistMode::SyncData).map_err(|e| format!("fjall: persist: {e}"))?;
        }
        Ok(())
    }

    fn scan(&self, each: &mut dyn FnMut(usize) -> bool) -> Result<(), String> {
        for kv in self.data.iter() {
            let (k, v) = kv.map_err(|e| format!("fjall: iterating: {e}"))?;
            if !each(k.len() + v.len()) {
                break;
            }
        }
        Ok(())
    }

    fn seek(&self, key: &[u8]) -> Result<Option<(bool, usize)>, String> {
        match self.data.range(key..).next() {
            None => Ok(None),
            Some(Err(e)) => Err(format!("fjall: seek: {e}")),
            Some(Ok((k, v))) => Ok(Some((&*k == key, k.len() + v.len()))),
        }
    }
}
