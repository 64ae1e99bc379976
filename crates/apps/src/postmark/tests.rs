//! The `postmark` workload's unit tests: PostMark's commands and keys, its generator, its
//! model's choices, and real runs in a temporary directory.

#![allow(clippy::unwrap_used)]

use super::model::{forecast, Counts, FileName, FileOps, Model, Transaction};
use super::options::{apply_lines, PostmarkOptions, OPTIONS};
use super::rng::PostmarkRng;
use super::*;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

fn spec(s: &str) -> Result<PostmarkWorkload, InputError> {
    PostmarkWorkload::from_spec(&Spec::parse(s).unwrap())
}

fn options(s: &str) -> PostmarkOptions {
    spec(s).unwrap().options().clone()
}

#[test]
fn the_table_and_the_defaults_agree() {
    fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    let o = PostmarkOptions::default();
    assert_eq!((o.number, o.transactions, o.size_low, o.size_high, o.seed), (500, 500, 500, 10_000, 42));
    assert_eq!((o.read_block, o.write_block, o.bias_read, o.bias_create, o.buffering), (512, 512, 5, 5, true));
}

#[test]
fn postmarks_command_lines_equal_the_keys() {
    for (lines, keys) in [
        ("set number 1000; set transactions 5000", "postmark:number=1000,transactions=5000"),
        ("set size 100 2000\nset read 4096\nset write 1024\nrun\n", "postmark:size='100 2000',read=4k,write=1024"),
        ("set size 777", "postmark:size=777"),
        ("set bias read 3;set bias create -1;set seed 7", "postmark:bias_read=3,bias_create=-1,seed=7"),
        ("set subdirectories 10; set buffering false; quit", "postmark:subdirectories=10,buffering=0"),
        ("  set   number   20  ; set report verbose;", "postmark:number=20"),
    ] {
        let given = options(&format!("postmark:postmark='{lines}'"));
        assert_eq!(given, options(keys), "{lines}");
    }
    // Keys after postmark= override it; postmark= starts from PostMark's defaults.
    let o = options("postmark:number=7,postmark='set number 1000; set seed 9',seed=3");
    assert_eq!((o.number, o.seed), (1000, 3));
}

#[test]
fn bad_commands_and_values_are_named() {
    for (s, want) in [
        ("postmark:postmark='set number 10; set numbr 20'", "command 2 'set numbr 20': unknown command"),
        ("postmark:postmark='set location /mnt'", "'set location' is not supported: the target is the location"),
        ("postmark:postmark='run; set number 5'", "comes after 'run'"),
        ("postmark:postmark='set size 10k'", "'10k' is not a whole number"),
        ("postmark:postmark='set size 900 100'", "the smallest size 900 is larger than the largest 100"),
        ("postmark:size='900 100'", "size=900 100: '900 100': the smallest size 900 is larger than the largest 100"),
        ("postmark:postmark='set bias read 11'", "'11' is not a bias: expected 0 to 10"),
        ("postmark:bias_create=-2", "bias_create=-2: '-2' is not a bias"),
        ("postmark:postmark='set buffering yes'", "expected true or false"),
        ("postmark:postmark='set report terse'", "terse report is not supported"),
        ("postmark:postmark='set number'", "needs a value"),
        ("postmark:number=0", "number=0: '0' must be at least 1"),
        ("postmark:size='1 2 3'", "not a size range"),
        ("postmark:transacions=5", "unknown postmark option 'transacions': did you mean 'transactions'?"),
        ("postmark:number=5,transactions=1000", "runs out of files after"),
    ] {
        let e = spec(s).unwrap_err().message;
        assert!(e.contains(want), "{s}: '{e}' lacks '{want}'");
    }
    let mut o = PostmarkOptions::default();
    assert!(apply_lines(&mut o, "help").unwrap_err().contains("not supported"));
}

#[test]
fn the_source_data_is_postmarks() {
    // PostMark's first file with seed 42 starts with these bytes (Debian's postmark 1.53,
    // seen with strace); every write copies from the start of the same data.
    let model = Model::new(&PostmarkOptions::default());
    assert_eq!(model.source().len(), 20_000, "twice the largest size");
    assert!(model.source().iter().all(|b| (32..127).contains(b)));
    assert_eq!(&model.source()[..8], b"LeZebJ6S");
    let mut r = PostmarkRng::new(7);
    assert_eq!(Model::new(&options("postmark:seed=7")).source()[0], 32 + (r.next_u32() % 95) as u8);
}

/// Operations that keep every file's bytes in memory, to check what the model asks for.
#[derive(Default)]
struct Memory {
    files: HashMap<(u32, Option<u32>), Vec<u8>>,
    reads: u64,
}

impl FileOps for Memory {
    fn create(&mut self, f: FileName, data: &[u8]) -> Result<(), String> {
        assert!(self.files.insert((f.number, f.subdir), data.to_vec()).is_none(), "created twice");
        Ok(())
    }
    fn read(&mut self, f: FileName, size: u32) -> Result<(), String> {
        assert_eq!(self.files[&(f.number, f.subdir)].len(), size as usize, "read size");
        self.reads += 1;
        Ok(())
    }
    fn append(&mut self, f: FileName, data: &[u8]) -> Result<(), String> {
        self.files.get_mut(&(f.number, f.subdir)).unwrap().extend_from_slice(data);
        Ok(())
    }
    fn delete(&mut self, f: FileName) -> Result<(), String> {
        self.files.remove(&(f.number, f.subdir)).unwrap();
        Ok(())
    }
}

#[test]
fn the_model_keeps_sizes_in_range_and_its_forecast_is_the_run() {
    let o = options("postmark:number=50,transactions=2000,size='100 900',subdirectories=4,bias_create=6,seed=9");
    let mut m = Model::new(&o);
    let mut mem = Memory::default();
    for _ in 0..o.number {
        m.create(&mut mem).unwrap();
    }
    assert!(mem.files.values().all(|d| (100..900).contains(&d.len())), "new files are LOW..HIGH-1 bytes");
    for _ in 0..o.transactions {
        assert_eq!(m.transaction(&mut mem).unwrap(), Transaction::Done);
        assert!(mem.files.values().all(|d| d.len() <= 900), "appends stop at HIGH");
        assert!(mem.files.keys().all(|(_, s)| s.is_some_and(|s| s < 4)));
        assert_eq!(m.live_files, mem.files.len() as u64);
    }
    m.delete_rest(&mut mem, || false).unwrap();
    assert!(mem.files.is_empty());
    let c = m.counts;
    assert_eq!(c.created, c.deleted);
    assert_eq!(c.read, mem.reads);
    assert!(c.read > 0 && c.appended > 0 && c.created > 50);
    let f = forecast(&o);
    assert_eq!(f.counts, c);
    assert_eq!(f.transactions, 2000);
    assert!(f.peak_files >= 50 && f.peak_files <= 100);
}

#[test]
fn biases_of_ten_zero_and_minus_one_choose_as_postmark() {
    let counts = |s: &str| forecast(&options(s)).counts;
    let c = counts("postmark:bias_read=10,bias_create=-1,number=20,transactions=100");
    assert_eq!((c.read, c.appended, c.created, c.deleted), (100, 0, 20, 20));
    let c = counts("postmark:bias_read=-1,bias_create=10,number=20,transactions=100");
    assert_eq!((c.read, c.appended, c.created, c.deleted), (0, 0, 40, 40), "the table holds twice the pool");
    let c: Counts = counts("postmark:bias_read=0,bias_create=-1,size=100,number=10,transactions=50");
    assert_eq!((c.read, c.appended), (0, 0), "a fixed size leaves nothing to append");
}

fn run_in_temp(s: &str) -> Result<Measurement, WorkloadError> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fsarena-postmark-test-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    let stop = AtomicBool::new(false);
    let out = spec(s).unwrap().run(&RunEnv::quiet(&dir, &stop)).map(fsarena_workload::one);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files left");
    std::fs::remove_dir(&dir).unwrap();
    out
}

#[test]
fn real_runs_count_what_the_forecast_says_buffered_or_not() {
    for s in [
        "postmark:number=40,transactions=300,size='10 5000'",
        "postmark:number=40,transactions=300,size='10 5000',buffering=0,read=100,write=9000,subdirectories=3",
    ] {
        let f = spec(s).unwrap().forecast.unwrap();
        let m = run_in_temp(s).unwrap();
        assert!(m.complete);
        let count = |n: &str| m.counters[n];
        assert_eq!(count("transactions"), 300);
        assert_eq!(count("files_created"), f.counts.created, "{s}");
        assert_eq!(count("files_read"), f.counts.read);
        assert_eq!(count("files_appended"), f.counts.appended);
        assert_eq!(count("files_deleted"), f.counts.deleted);
        assert_eq!(count("bytes_written"), f.counts.bytes_written);
        assert_eq!(count("bytes_read"), f.counts.bytes_read);
        assert_eq!(count("files_created_alone"), 40);
        assert!(m.metric("transactions").unwrap().value > 0.0);
        assert_eq!(m.latency("read").unwrap().len(), f.counts.read);
        assert_eq!(m.latency("transaction").unwrap().len(), 300);
    }
}

#[test]
fn the_files_hold_the_source_data_through_the_stream_buffer() {
    let dir = std::env::temp_dir().join(format!("fsarena-postmark-io-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let root = rustix::fs::open(&dir, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    let data: Vec<u8> = (0..30_000u32).map(|i| (i % 251) as u8).collect();
    for (buffered, write) in [(true, 512), (true, 10_000), (false, 700)] {
        let mut ops = io::RealOps::new(root.as_fd(), &[], buffered, 333, write);
        let f = FileName { number: 1, subdir: None };
        ops.create(f, &data[..5000]).unwrap();
        ops.append(f, &data[..12_345]).unwrap();
        ops.read(f, 17_345).unwrap();
        let mut want = data[..5000].to_vec();
        want.extend_from_slice(&data[..12_345]);
        assert_eq!(std::fs::read(dir.join("1")).unwrap(), want, "buffered={buffered} write={write}");
        ops.delete(f).unwrap();
        assert!(ops.create(f, &data[..1]).is_ok());
        assert!(ops.create(f, &data[..1]).unwrap_err().contains("open 1"), "a file already there is an error");
        ops.delete(f).unwrap();
    }
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn an_interrupted_run_is_incomplete_and_leaves_nothing() {
    let dir = std::env::temp_dir().join(format!("fsarena-postmark-stop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let stop = AtomicBool::new(false);
    let w = spec("postmark:number=200,transactions=100000,subdirectories=3").unwrap();
    let m = std::thread::scope(|s| {
        s.spawn(|| {
            // Stops it during the transactions (or before, on a slow machine: either way).
            std::thread::sleep(std::time::Duration::from_millis(30));
            stop.store(true, Ordering::Relaxed);
        });
        w.run(&RunEnv::quiet(&dir, &stop)).map(fsarena_workload::one).unwrap()
    });
    assert!(!m.complete);
    assert!(m.counters["transactions"] < 100_000);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files left");
    std::fs::remove_dir(&dir).unwrap();
}
