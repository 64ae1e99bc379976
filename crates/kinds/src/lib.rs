//! Every workload kind, each registered once: its name, a one-line summary, its option table
//! and its parser. `parse`, the kinds named in messages, `fsarena help`, docs/workloads.md,
//! completions, the list syntax of sweeps and the typed numbers of swept values all read this
//! list, so a new kind is its module in one family's crate plus one line in [`registry!`]'s
//! invocation below.

use fsarena_apps::{dbench, exec, filebench, postmark};
use fsarena_core::option::ListSyntax;
use fsarena_core::{InputError, Spec};
use fsarena_crash::{crash, verify};
use fsarena_db::{kv, server, sqlite};
use fsarena_io::{dd, io};
use fsarena_meta::{meta, tree};
use fsarena_posix::posix;

pub use fsarena_workload::registry::{Parsed, WorkloadKind};

/// Builds [`WORKLOAD_KINDS`]: one line per kind, `NAME => WORKLOAD_TYPE, OPTION_TABLE, SUMMARY;`,
/// with `, text = PATH` before the `;` for a kind with its own block in a result's text, and
/// `, verdicts = PATH` (a [`fsarena_core::run::VerdictSection`]) for a kind whose results are
/// verdicts.
/// The type needs `from_spec(&Spec) -> Result<Self, InputError>`.
macro_rules! registry {
    ($($name:literal => $ty:ty, $table:expr, $summary:literal $(, text = $text:path)? $(, verdicts = $verdicts:path)?;)*) => {
        /// Every workload kind, in the order help lists them.
        pub static WORKLOAD_KINDS: &[WorkloadKind] = &[$(
            WorkloadKind {
                name: $name,
                summary: $summary,
                options: || fsarena_workload::options::docs($table),
                parse: |spec| Ok(Box::new(<$ty>::from_spec(spec)?)),
                present: fsarena_core::run::Presenter {
                    text: registry!(@some $($text)?),
                    verdicts: registry!(@some $(&$verdicts)?),
                },
            },
        )*];
    };
    (@some) => { None };
    (@some $value:expr) => { Some($value) };
}

registry! {
    "io" => io::IoWorkload, io::options::OPTIONS, "data I/O, fio-class: fio's option names, meanings and defaults; fio job files with --fio", text = io::text::text;
    "meta" => meta::MetaWorkload, meta::options::OPTIONS, "metadata, mdtest-class: mdtest's tree, phases and rates; mdtest='...' takes mdtest's flags", text = meta::text::text;
    "tree" => tree::TreeWorkload, tree::options::OPTIONS, "deep trees of small files, fs_mark-class; fsmark='...' takes fs_mark's flags";
    "dd" => dd::DdWorkload, dd::OPTIONS, "sequential copies as dd makes them: bs, count, oflag (dsync, direct), conv=fsync; files=N in a row";
    "filebench" => filebench::FilebenchWorkload, filebench::OPTIONS, "filebench's workload model language (.f files) and personalities (name=varmail, webserver, fileserver, ...; file=my.f); KEY=VALUE sets $KEY", text = filebench::text::text;
    "personality" => filebench::FilebenchWorkload, filebench::OPTIONS, "the filebench workload by its other name: personality:name=varmail is filebench:name=varmail", text = filebench::text::text;
    "postmark" => postmark::PostmarkWorkload, postmark::OPTIONS, "PostMark 1.5's small-file pool and transactions (set number, transactions, size, bias ...; postmark='...' takes its command lines); the same seed gives PostMark's counts", text = postmark::text::text;
    "dbench" => dbench::DbenchWorkload, dbench::OPTIONS, "N clients replaying a dbench load file (Debian's client.txt by default), dbench's fileio backend: MB/s and its per-operation table", text = dbench::text::text;
    "exec" => exec::ExecWorkload, exec::OPTIONS, "time a command in the target (cmd=, setup=, teardown=, assets=; {mnt} and {assets} substituted shell-quoted) or builtin=compress, unpack or build: seconds, CPU, memory and I/O of the child", text = exec::text::text;
    "kv" => kv::KvWorkload, kv::OPTIONS, "db_bench's benchmarks (fillseq, readrandom, ...), options and figures on RocksDB (--features rocksdb) or fjall: ops/sec, micros/op, MB/s per benchmark", text = kv::text::text;
    "posix" => posix::PosixWorkload, posix::OPTIONS, "POSIX behaviour and security, pjdfstest-class: named cases per syscall family (chmod, rename, open, xattr, acl, ...), each expected vs actual; family= and case= choose", verdicts = posix::VERDICTS;
    "pgbench" => server::pgbench::PgbenchWorkload, server::pgbench::OPTIONS, "PostgreSQL (Debian's, as postgres, unix socket only) with its data in the target, driven by its own pgbench under pgbench's long option names (scale, client, jobs, time, builtin, file) and server settings (fsync, synchronous_commit, wal_sync_method, shared_buffers): tps, latency average and p99";
    "sysbench" => server::sysbench::SysbenchWorkload, server::sysbench::OPTIONS, "MariaDB (Debian's, as mysql, --skip-networking) with its data in the target, driven by Debian's sysbench OLTP scripts (test=oltp_read_write, oltp_read_only, oltp_write_only, oltp_insert, oltp_point_select, bulk_insert; tables, table_size, threads, time; innodb_* server settings): transactions/s, queries/s, latency p95";
    "http" => server::http::HttpWorkload, server::http::OPTIONS, "a static file served from the target by nginx (Debian's, as www-data, 127.0.0.1 and a free port, files and logs in the target) and loaded by ab as Phoronix does (concurrency, requests, keepalive, file_size): requests/s, transfer rate, latency p99";
    "crash" => crash::CrashWorkload, crash::OPTIONS, "crash consistency, recorded below the filesystem (ext2/3/4, xfs, btrfs) by fsarena's FUSE recorder: CrashMonkey's ACE seq-1 set (ops=b3-seq1, the default) or fsarena's seq1, crash images at every flush and inside the last epoch, checked against what each fsync promised and by the filesystem's checker", text = crash::text::text;
    "verify" => verify::VerifyWorkload, verify::OPTIONS, "data integrity, every byte checked: fsx's single-file model (numops, seed, file_length, max_op_len, direct, ops= of fsx's operations); the first mismatch with its offset, bytes, likely writer and a replay file";
    "sqlite" => sqlite::SqliteWorkload, sqlite::OPTIONS, "SQLite on the target: 12,500 autocommit INSERTs (Phoronix's test), or mode=mixed: N writers inserting in batches while M readers run point and range queries; journal_mode, synchronous, page_size sweepable", text = sqlite::text::text;
}

/// The kind called `name`.
pub fn kind(name: &str) -> Option<&'static WorkloadKind> {
    WORKLOAD_KINDS.iter().find(|k| k.name == name)
}

/// The names of [`WORKLOAD_KINDS`], for messages: `io, meta, tree`.
pub fn kind_names() -> String {
    WORKLOAD_KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// Parses and checks a `--workload` spec (or a TOML `[[workload]]` table turned into one),
/// without side effects.
pub fn parse(spec: &Spec) -> Result<Parsed, InputError> {
    match kind(&spec.kind) {
        Some(k) => (k.parse)(spec),
        None => Err(InputError::new(format!(
            "unknown workload kind '{}':{} accepted kinds are {}",
            fsarena_workload::plain::cut(&spec.kind),
            fsarena_core::did_you_mean(&spec.kind, WORKLOAD_KINDS.iter().map(|k| k.name)),
            kind_names()
        ))),
    }
}

/// The separators a list of values of `key` may use in a `--workload` spec, from the key's
/// table row: `,` and `|` for most keys; only `|` where the value's own syntax holds commas
/// (fio's per-direction `bs=4k,64k` is a read size and a write size, not a sweep); none where
/// the value is a whole command line or a name. An unknown kind or key gets `,` and `|`: the
/// parse that follows refuses it by name. A TOML array is a list whatever the key.
pub fn list_separators(kind_name: &str, key: &str) -> &'static [char] {
    kind(kind_name).and_then(|k| k.option(key)).map_or(ListSyntax::CommaOrBar, |d| d.list).separators()
}

/// A swept value as a number in the key's base unit, typed by its table row, for the axes of
/// sweep charts: bytes for sizes, nanoseconds for times, the number for counts and
/// percentages; `None` for words (`randread`), text, booleans and unknown keys.
pub fn param_number(kind_name: &str, key: &str, value: &str) -> Option<f64> {
    kind(kind_name).and_then(|k| k.option(key)).and_then(|d| d.value.number(value))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_are_typed_and_separated_by_the_table() {
        assert_eq!(list_separators("io", "numjobs"), &[',', '|']);
        for key in ["bs", "blocksize", "bssplit", "rate", "rate_iops"] {
            assert_eq!(list_separators("io", key), &['|'], "{key}");
        }
        assert!(list_separators("io", "name").is_empty());
        assert!(list_separators("meta", "mdtest").is_empty());
        assert!(list_separators("tree", "fsmark").is_empty());
        assert_eq!(list_separators("nope", "x"), &[',', '|']);
        assert_eq!(param_number("io", "bs", "64k"), Some(65536.0));
        assert_eq!(param_number("io", "runtime", "2s"), Some(2e9));
        assert_eq!(param_number("io", "numjobs", "16"), Some(16.0));
        assert_eq!(param_number("io", "rw", "randread"), None);
        assert_eq!(param_number("meta", "items", "2k"), Some(2048.0));
        assert_eq!(param_number("tree", "file_size", "100k"), Some(102_400.0));
        assert_eq!(param_number("io", "colour", "1"), None);
    }

    #[test]
    fn kinds_parse_by_name_and_unknown_ones_are_named() {
        for k in WORKLOAD_KINDS {
            assert!(!k.summary.is_empty() && !(k.options)().is_empty(), "{}", k.name);
        }
        assert!(kind_names().starts_with("io, meta, tree"), "{}", kind_names());
        let names: Vec<&str> = WORKLOAD_KINDS.iter().map(|k| k.name).collect();
        assert_eq!(kind_names(), names.join(", "));
        let spec = |t: &str| Spec::parse(t).unwrap();
        assert_eq!(parse(&spec("meta:items=10")).unwrap().kind(), "meta");
        let e = parse(&spec("mta")).err().unwrap().to_string();
        assert!(
            e.contains("unknown workload kind 'mta': did you mean 'meta'? accepted kinds are io, meta, tree"),
            "{e}"
        );
    }

    /// Every key whose value is a path fsarena reads is a [`ValueKind::File`] (or
    /// `Directory`), so that the options machinery bounds and checks it before anything is
    /// created: a free-text key that looks like a path must be one of these, each a name or a
    /// path fsarena writes or makes inside the target, or a file another helper reads itself.
    #[test]
    fn every_path_a_workload_reads_is_a_file_key() {
        use fsarena_core::option::{OptionDoc, ValueKind};
        const NOT_READ: &[(&str, &str)] = &[
            ("io", "filename"),
            ("io", "directory"),
            ("io", "filename_format"),
            ("io", "write_bw_log"),
            ("io", "write_lat_log"),
            ("io", "write_iops_log"),
            ("io", "write_hist_log"),
            ("io", "name"),
            // A unix socket's path the net engine binds or connects to, never reads; net.rs
            // refuses one that exists for a listener, and removes only the socket it bound.
            ("io", "hostname"),
            ("verify", "opsfile"),
            ("crash", "keep_failed"),
            // pgbench -f: read by pgbench, run as postgres (helper "servers" owns it).
            ("pgbench", "file"),
            // No path at all: a command run by the shell, sizes, operation names.
            ("exec", "cmd"),
            // fio's exec engine: the program it runs, as fio runs it (read by exec(2)).
            ("io", "program"),
            ("postmark", "size"),
            ("verify", "ops"),
        ];
        let looks_like_a_path = |d: &OptionDoc| {
            let doc = d.doc.to_ascii_lowercase();
            ["file", "path", "directory", "dir"].iter().any(|w| d.name.contains(w))
                || [" file", "directory", "path", ".f)", "log"].iter().any(|w| doc.contains(w))
        };
        let mut unchecked = Vec::new();
        for k in WORKLOAD_KINDS {
            for d in (k.options)() {
                let free = matches!(d.value, ValueKind::Text | ValueKind::CommandLine);
                if free && looks_like_a_path(d) && !NOT_READ.contains(&(k.name, d.name)) {
                    unchecked.push(format!("{}:{}", k.name, d.name));
                }
            }
        }
        assert!(unchecked.is_empty(), "keys that may name a file fsarena reads, not of kind File: {unchecked:?}");
        let file_keys: Vec<String> = WORKLOAD_KINDS
            .iter()
            .flat_map(|k| (k.options)().into_iter().map(move |d| (k.name, d)))
            .filter(|(_, d)| matches!(d.value, ValueKind::File(_) | ValueKind::Directory))
            .map(|(k, d)| format!("{k}:{}", d.name))
            .collect();
        let want = ["filebench:file", "personality:file", "dbench:loadfile", "exec:assets", "verify:replay"];
        assert_eq!(file_keys, want.map(String::from));
    }
}
