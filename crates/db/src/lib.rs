//! The database family: `kv` (db_bench's benchmarks on fjall or RocksDB), `sqlite`, and the
//! real servers (`pgbench`, `sysbench`, `http`). The only crate that links rusqlite, fjall
//! and RocksDB; `crash`'s application workloads reach them through [`apps`].

pub mod apps;
pub mod kv;
pub mod server;
pub mod sqlite;
