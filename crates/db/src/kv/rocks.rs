//! RocksDB through the `rocksdb` crate, linked to the system's librocksdb: the engine of the
//! studies and of db_bench, with db_bench's option names mapped onto RocksDB's.

use super::engine::Engine;
use super::options::{Compression, KvOptions};
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, ReadOptions, WriteOptions, DB};
use std::path::Path;

/// An open database and the write options every write uses.
pub(super) struct Rocks {
    db: DB,
    write: WriteOptions,
    /// Made once: the crate's `get_pinned` makes (allocates) one per call, which db_bench's
    /// C++ does not.
    read: ReadOptions,
}

impl Rocks {
    /// Opens (creating) the database in `dir`.
    pub(super) fn open(dir: &Path, o: &KvOptions) -> Result<Self, String> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        // db_bench's own default (RocksDB's is off): WAL and memtable writes pipelined.
        opts.set_enable_pipelined_write(true);
        opts.set_use_direct_reads(o.use_direct_reads);
        opts.set_use_direct_io_for_flush_and_compaction(o.use_direct_io_for_flush_and_compaction);
        opts.set_write_buffer_size(usize::try_from(o.write_buffer_size).unwrap_or(usize::MAX));
        opts.set_compression_type(match o.compression.unwrap_or(Compression::Snappy) {
            Compression::None => DBCompressionType::None,
            Compression::Snappy => DBCompressionType::Snappy,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Zstd => DBCompressionType::Zstd,
        });
        let mut table = BlockBasedOptions::default();
        if o.cache_size > 0 {
            let cache = Cache::new_lru_cache(usize::try_from(o.cache_size).unwrap_or(usize::MAX))
                .map_err(|e| format!("rocksdb: block cache: {e}"))?;
            table.set_block_cache(&cache);
        } else {
            table.disable_cache();
        }
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, dir).map_err(|e| format!("rocksdb: opening {}: {e}", dir.display()))?;
        let mut write = WriteOptions::default();
        write.set_sync(o.sync);
        write.disable_wal(o.disable_wal);
        Ok(Self { db, write, read: ReadOptions::default() })
    }
}

impl Engine for Rocks {
    /// db_bench's `perf_level` default, kDisable, set in every benchmark thread (RocksDB's own
    /// default, kEnableCount, bumps thread-local perf counters at every step of a lookup).
    fn begin_thread(&self) {
        rocksdb::perf::set_perf_stats(rocksdb::perf::PerfStatsLevel::Disable);
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db.put_opt(key, value, &self.write).map_err(|e| format!("rocksdb: put: {e}"))
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>, String> {
        self.db.get_pinned_opt(key, &self.read).map(|v| v.map(|v| v.len())).map_err(|e| format!("rocksdb: get: {e}"))
    }

    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.db.delete_opt(key, &self.write).map_err(|e| format!("rocksdb: delete: {e}"))
    }

    fn scan(&self, each: &mut dyn FnMut(usize) -> bool) -> Result<(), String> {
        let mut it = self.db.raw_iterator_opt(ReadOptions::default());
        it.seek_to_first();
        while it.valid() {
            let n = it.key().map_or(0, <[u8]>::len) + it.value().map_or(0, <[u8]>::len);
            if !each(n) {
                break;
            }
            it.next();
        }
        it.status().map_err(|e| format!("rocksdb: iterating: {e}"))
    }

    fn seek(&self, key: &[u8]) -> Result<Option<(bool, usize)>, String> {
        let mut it = self.db.raw_iterator_opt(ReadOptions::default());
        it.seek(key);
        if !it.valid() {
            return it.status().map(|()| None).map_err(|e| format!("rocksdb: seek: {e}"));
        }
        let k = it.key().unwrap_or_default();
        Ok(Some((k == key, k.len() + it.value().map_or(0, <[u8]>::len))))
    }
}
