use super::*;
use std::collections::HashSet;

/// The options of a deduping write job of `size` bytes in 4 KiB blocks.
fn options(size: u64, set: &[(&str, &str)]) -> IoOptions {
    let mut o = IoOptions::default();
    for (k, v) in [("rw", "write"), ("bs", "4k")].iter().chain(set) {
        o.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    o.size = Some(size);
    o
}

/// Distinct blocks among `blocks` buffers of 4 KiB that `fill` makes.
fn distinct(fill: &mut BufferFill, blocks: u64) -> usize {
    let mut buf = vec![0u8; 4096];
    let mut seen = HashSet::new();
    for _ in 0..blocks {
        fill.fill(&mut buf);
        seen.insert(buf.clone());
    }
    seen.len()
}

/// The `n`-th value of `r` (so two states compare by what they draw).
fn draws(mut r: FioRand, n: usize) -> Vec<u64> {
    (0..n).map(|_| r.next()).collect()
}

#[test]
fn the_working_set_is_where_each_of_the_first_buffers_starts() {
    let o = options(1 << 20, &[("dedupe_percentage", "50")]);
    let all = [BufferSeeds::of(&o, 1)];
    let set = working_set(&all, 0, 6, 8, false);
    assert_eq!(set.len(), 6);
    // Entry i is the stream after i buffers of eight 512-byte chunks, two draws a chunk.
    let mut at = all[0].buffer_stream();
    for entry in &set {
        assert_eq!(draws(entry.clone(), 4), draws(at.clone(), 4));
        for _ in 0..8 {
            next_seed(&mut at);
        }
    }
    // So a unique buffer and a working-set duplicate of the same turn hold the same bytes.
    let mut fill = BufferFill::new(&o, 1, &all).unwrap_or_else(|| panic!("dedupe_percentage=0?"));
    fill.percentage = 0;
    let mut unique = vec![0u8; 4096];
    fill.fill(&mut unique);
    let mut replay = vec![0u8; 4096];
    let mut seed = set[0].clone();
    for chunk in replay.chunks_mut(512) {
        fill_chunk(chunk, next_seed(&mut seed), 0, None);
    }
    assert_eq!(unique, replay);
}

#[test]
fn a_global_working_set_takes_a_run_from_each_job_in_turn() {
    let o = options(1 << 20, &[]);
    let all: Vec<BufferSeeds> = (1..=3).map(|t| BufferSeeds::of(&o, t)).collect();
    // Nine entries over three jobs, the set of the second job (index 1): its own three
    // first, then the third job's three, then the first job's.
    let set = working_set(&all, 1, 9, 8, true);
    for (i, job) in [(0, 1), (3, 2), (6, 0)] {
        assert_eq!(draws(set[i].clone(), 4), draws(all[job].buffer_stream(), 4), "entry {i}");
    }
    let mut second = set[6].clone();
    for _ in 0..8 {
        next_seed(&mut second);
    }
    assert_eq!(draws(set[7].clone(), 4), draws(second, 4));
    // Every job's set is a rotation of the same entries: the jobs share their duplicates.
    let key = |s: &[FioRand]| s.iter().map(|r| draws(r.clone(), 2)).collect::<HashSet<_>>();
    assert_eq!(key(&set), key(&working_set(&all, 0, 9, 8, true)));
    assert_ne!(key(&set), key(&working_set(&all, 1, 9, 8, false)));
    // Fewer entries than jobs: one of each job's in turn.
    let short = working_set(&all, 2, 2, 8, true);
    assert_eq!(draws(short[1].clone(), 2), draws(all[0].buffer_stream(), 2));
}

/// A binomial count's tolerance: `k` standard deviations of `n` trials at `p`.
fn within(got: usize, n: u64, p: f64, k: f64) -> bool {
    let mean = n as f64 * p;
    (got as f64 - mean).abs() <= k * (n as f64 * p * (1.0 - p)).sqrt() + 1.0
}

#[test]
fn repeat_mode_makes_the_percentage_of_blocks_duplicates() {
    let n = 4000;
    for pct in [10u32, 50, 90] {
        let o = options(n * 4096, &[("dedupe_percentage", &pct.to_string())]);
        let mut fill = BufferFill::new(&o, 1, &[]).unwrap_or_else(|| panic!("no fill at {pct}"));
        let got = distinct(&mut fill, n);
        // Each block is unique with probability 1 − pct/100 (plus one block at most: the
        // duplicates after the last unique write repeat the write that never comes).
        assert!(within(got, n, 1.0 - f64::from(pct) / 100.0, 5.0), "{pct}%: {got} distinct of {n}");
    }
    let o = options(n * 4096, &[("dedupe_percentage", "100")]);
    let mut fill = BufferFill::new(&o, 1, &[]).unwrap_or_else(|| panic!("no fill at 100"));
    assert_eq!(distinct(&mut fill, 100), 1, "dedupe_percentage=100 writes one block over and over");
    assert!(BufferFill::new(&options(n * 4096, &[]), 1, &[]).is_none());
}

#[test]
fn working_set_duplicates_come_from_the_working_set() {
    let n = 4000u64;
    let o = options(
        n * 4096,
        &[("dedupe_percentage", "50"), ("dedupe_mode", "working_set"), ("dedupe_working_set_percentage", "10")],
    );
    assert_eq!(o.dedupe_working_set_pages(), 400);
    let all = [BufferSeeds::of(&o, 1)];
    let mut fill = BufferFill::new(&o, 1, &all).unwrap_or_else(|| panic!("no fill"));
    // The working set is the job's first 400 buffers: those the first unique writes hold.
    let mut first = BufferFill::new(&o, 1, &all).unwrap_or_else(|| panic!("no fill"));
    first.percentage = 0;
    let mut buf = vec![0u8; 4096];
    let set: HashSet<Vec<u8>> = (0..400)
        .map(|_| {
            first.fill(&mut buf);
            buf.clone()
        })
        .collect();
    let mut unique = 0;
    let mut seen = HashSet::new();
    for _ in 0..n {
        let before = fill.dedupe.clone();
        fill.fill(&mut buf);
        let duplicate = before.clone().between(1, 100) <= 50;
        if duplicate {
            assert!(set.contains(&buf), "a duplicate outside the working set");
        } else {
            unique += 1;
        }
        seen.insert(buf.clone());
    }
    assert!(within(unique, n, 0.5, 5.0), "{unique} unique of {n}");
    // Every unique write is distinct, and the duplicates add no block beyond the set.
    assert!(seen.len() >= unique && seen.len() <= unique + 400, "{} distinct, {unique} unique", seen.len());
}

#[test]
fn fio_refuses_what_fsarena_refuses() {
    let ws = [("dedupe_percentage", "50"), ("dedupe_mode", "working_set")];
    assert_eq!(options(1 << 20, &ws).dedupe_problem(), None);
    let over = options(1 << 20, &[ws[0], ws[1], ("dedupe_working_set_percentage", "60")]);
    assert!(over.dedupe_problem().is_some_and(|m| m.contains("at most 100")));
    let mut files = options(1 << 20, &ws);
    files.nrfiles = 2;
    assert!(files.dedupe_problem().is_some_and(|m| m.contains("nrfiles=2")));
    let mut no_size = options(1 << 20, &ws);
    no_size.size = None;
    assert!(no_size.dedupe_problem().is_some_and(|m| m.contains("size=")));
    let empty = options(1 << 20, &[ws[0], ws[1], ("dedupe_working_set_percentage", "0")]);
    assert!(empty.dedupe_problem().is_some_and(|m| m.contains("no block")));
    let all = options(1 << 20, &[("dedupe_percentage", "100"), ws[1], ("dedupe_working_set_percentage", "0")]);
    assert_eq!(all.dedupe_problem(), None, "at 100 the working set is never drawn from");
    // repeat mode has none of these limits.
    let mut repeat = options(1 << 20, &[("dedupe_percentage", "50")]);
    repeat.nrfiles = 3;
    assert_eq!(repeat.dedupe_problem(), None);
}

#[test]
fn a_chunk_compresses_as_fio_zeroes_it() {
    let mut chunk = [0xffu8; 512];
    fill_chunk(&mut chunk, 7, 50, None);
    assert!(chunk[256..].iter().all(|&b| b == 0));
    assert_eq!(&chunk[..8], &7u64.to_ne_bytes());
    assert_eq!(&chunk[8..16], &14u64.to_ne_bytes());
    assert_eq!(&chunk[32..40], &7u64.wrapping_mul(GOLDEN_RATIO_64).to_ne_bytes());
    let mut odd = [0u8; 13];
    fill_random(&mut odd, 3);
    assert_eq!(&odd[..8], &3u64.to_ne_bytes());
    assert_eq!(&odd[8..], &3u64.wrapping_mul(GOLDEN_RATIO_64).to_ne_bytes()[..5]);
}
