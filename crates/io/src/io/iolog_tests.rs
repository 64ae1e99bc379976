//! Tests of fio's log files: names, lines, and the streamed logs against the whole run's.
use super::*;

/// Writes every log `o` asks for from one clone's `samples` at once; the paths written, or
/// the first error naming its file.
pub fn write_logs(o: &LogOptions, job: &LogJob<'_>, samples: &[Sample], end_ns: u64) -> Result<Vec<PathBuf>, String> {
    let Some(mut log) = SampleLog::new(o, job, true) else { return Ok(Vec::new()) };
    samples.iter().for_each(|s| log.push(*s));
    log.finish(end_ns)
}

/// The text of one stream fed `samples`, for tests.
fn text_of(mut stream: Stream, end_ms: u64, samples: &[Sample]) -> String {
    samples.iter().for_each(|s| stream.add(s));
    stream.end(end_ms * 1_000_000);
    stream.take_text()
}

fn value_log(avg_msec: u64, end_ms: u64, samples: &[Sample], value: fn(&Sample) -> u64) -> String {
    let samples: Vec<Sample> = samples.iter().map(|s| Sample { lat_ns: value(s), ..*s }).collect();
    text_of(Stream::value(avg_msec, |s| Some(s.lat_ns)), end_ms, &samples)
}

fn rate_log(avg_msec: u64, end_ms: u64, samples: &[Sample], of: fn(&Sample) -> u64, unit: u64) -> String {
    let samples: Vec<Sample> = samples.iter().map(|s| Sample { lat_ns: of(s), ..*s }).collect();
    text_of(Stream::rate(avg_msec, unit, |s| Some(s.lat_ns)), end_ms, &samples)
}

fn hist_log(hist_msec: u64, coarseness: u32, samples: &[Sample]) -> String {
    text_of(Stream::hist(hist_msec, coarseness), 0, samples)
}

fn job() -> LogJob<'static> {
    LogJob { name: "j", thread_number: 3, first_clone: true }
}

fn sample(ms: u64, lat_ns: u64) -> Sample {
    Sample { time_ns: ms * 1_000_000 + 123, lat_ns, slat_ns: None, total_ns: lat_ns, bytes: 65536, dir: 1 }
}

#[test]
fn bins_follow_fios_layout() {
    assert_eq!(bin_index(0), 0);
    assert_eq!(bin_index(127), 127);
    assert_eq!(bin_index(128), 128);
    // 7,054 ns is in the bin fio prints as 7072 (group of 4096, bin 46): 64*7 + 46.
    assert_eq!(bin_index(7054), 7 * 64 + 46);
    assert_eq!(bin_index(u64::MAX), PLAT_NR - 1);
}

#[test]
fn per_io_lines_are_fios() {
    let samples = [sample(0, 106_589), sample(5, 65_643)];
    let text = value_log(0, 10, &samples, |s| s.lat_ns);
    assert_eq!(text, "0, 106589, 1, 65536, 0\n5, 65643, 1, 65536, 0\n");
    // fio's per-I/O bandwidth: 65536 * 10^6 / 106589 ns.
    let bw = value_log(0, 10, &samples[..1], |s| u64::from(s.bytes) * 1_000_000 / s.lat_ns);
    assert_eq!(bw, "0, 614847, 1, 65536, 0\n");
}

#[test]
fn averaged_lines_close_each_window_and_the_end() {
    let samples = [sample(10, 100), sample(200, 201), sample(260, 50), sample(400, 70)];
    let text = value_log(250, 450, &samples, |s| s.lat_ns);
    // The window closes at the first sample past 250 ms: the mean of 100, 201, 50 rounds
    // to 117; the rest is logged at the end.
    assert_eq!(text, "260, 117, 1, 0, 0\n450, 70, 1, 0, 0\n");
    let rates = rate_log(250, 450, &samples, |s| u64::from(s.bytes), 1024);
    // 2 × 64 KiB in 250 ms = 512 KiB/s; the last 200 ms are not a whole window.
    assert_eq!(rates, "250, 512, 1, 0, 0\n");
    assert_eq!(rate_log(250, 500, &samples, |_| 1, 1), "250, 8, 1, 0, 0\n500, 8, 1, 0, 0\n");
}

#[test]
fn histogram_lines_hold_each_windows_bins() {
    let samples = [sample(0, 100), sample(300, 100), sample(600, 7054), sample(700, 100)];
    let text = hist_log(500, 0, &samples);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let fields: Vec<u64> = lines[0].split(", ").map(|f| f.parse().unwrap()).collect();
    assert_eq!(fields.len(), 3 + PLAT_NR);
    assert_eq!(&fields[..3], &[600, 1, 65536]);
    assert_eq!(fields[3 + 100], 2);
    assert_eq!(fields[3 + 7 * 64 + 46], 1);
    assert_eq!(fields[3..].iter().sum::<u64>(), 3);
    // Coarseness 2 sums 4 neighbours: 464 bins.
    let coarse = hist_log(500, 2, &samples);
    assert_eq!(coarse.lines().next().unwrap().split(", ").count(), 3 + PLAT_NR / 4);
    assert!(hist_log(0, 0, &samples).is_empty());
}

#[test]
fn files_are_named_as_fio_names_them() {
    let dir = std::env::temp_dir().join(format!("fsarena-iolog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("x").display().to_string();
    let o = LogOptions {
        bw: Some(prefix.clone()),
        lat: Some(prefix.clone()),
        iops: Some(prefix.clone()),
        hist: Some(prefix.clone()),
        ..Default::default()
    };
    let written = write_logs(&o, &job(), &[sample(1, 1000)], 10_000_000).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(
        names,
        ["x_lat.3.log", "x_slat.3.log", "x_clat.3.log", "x_bw.3.log", "x_iops.3.log", "x_clat_hist.3.log"]
    );
    assert_eq!(std::fs::read_to_string(dir.join("x_iops.3.log")).unwrap(), "1, 1, 1, 65536, 0\n");
    // per_job_logs=0: one file per job, the later clones appending.
    let shared = LogOptions { iops: Some(prefix), shared: true, ..Default::default() };
    write_logs(&shared, &job(), &[sample(1, 1000)], 10_000_000).unwrap();
    write_logs(&shared, &LogJob { first_clone: false, ..job() }, &[sample(2, 1000)], 10_000_000).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("x_iops.log")).unwrap(), "1, 1, 1, 65536, 0\n2, 1, 1, 65536, 0\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lat_logs_split_slat_clat_and_total_as_fio() {
    let dir = std::env::temp_dir().join(format!("fsarena-iolog-lat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prefix = dir.join("q").display().to_string();
    let o = LogOptions { lat: Some(prefix), ..Default::default() };
    let read = |k: &str| std::fs::read_to_string(dir.join(format!("q_{k}.3.log"))).unwrap();
    // A queued engine's I/O: slat 300, clat 1000, lat 1300.
    let queued = Sample { slat_ns: Some(300), total_ns: 1300, ..sample(1, 1000) };
    write_logs(&o, &job(), &[queued], 10_000_000).unwrap();
    assert_eq!(read("slat"), "1, 300, 1, 65536, 0\n");
    assert_eq!(read("clat"), "1, 1000, 1, 65536, 0\n");
    assert_eq!(read("lat"), "1, 1300, 1, 65536, 0\n");
    // A synchronous engine's: no slat line, lat = clat.
    write_logs(&o, &job(), &[sample(1, 1000)], 10_000_000).unwrap();
    assert_eq!(read("slat"), "");
    assert_eq!(read("lat"), read("clat"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_log_path_that_is_a_symlink_or_not_a_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("fsarena-iolog-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let link = dir.join("x_bw.1.log");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    assert!(open_log(&link, false).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(open_log(&dir, false).is_err(), "a directory");
    let plain = dir.join("y_bw.1.log");
    std::fs::write(&plain, "old").unwrap();
    open_log(&plain, false).unwrap().write_all(b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "new");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The logs as fsarena wrote them before they were streamed: the whole run's samples at
/// once. The streamed files must be these, byte for byte.
mod before {
    use super::super::{bin_index, Sample, PLAT_BITS, PLAT_NR};
    use std::fmt::Write as _;
    pub(super) fn value_log(avg_msec: u64, end_ns: u64, samples: &[Sample], value: impl Fn(&Sample) -> u64) -> String {
        let mut text = String::new();
        if avg_msec == 0 {
            for s in samples {
                let _ = writeln!(text, "{}, {}, {}, {}, 0", s.time_ns / 1_000_000, value(s), s.dir, s.bytes);
            }
            return text;
        }
        // Per direction: (sum, count) of the open window and where it began.
        let mut window = [(0u128, 0u64); 2];
        let mut last = [0u64; 2];
        let line = |text: &mut String, t: u64, d: usize, w: &mut (u128, u64)| {
            if w.1 > 0 {
                let mean = (w.0 as f64 / w.1 as f64 + 0.5) as u64;
                let _ = writeln!(text, "{t}, {mean}, {d}, 0, 0");
            }
            *w = (0, 0);
        };
        for s in samples {
            let d = s.dir as usize & 1;
            let t = s.time_ns / 1_000_000;
            window[d].0 += u128::from(value(s));
            window[d].1 += 1;
            if t >= last[d] + avg_msec {
                line(&mut text, t, d, &mut window[d]);
                last[d] = t - t % avg_msec;
            }
        }
        // fio's finalize_logs: what is left is logged at the end.
        let end = end_ns / 1_000_000;
        for (d, w) in window.iter_mut().enumerate() {
            line(&mut text, end, d, w);
        }
        text
    }

    pub(super) fn rate_log(
        avg_msec: u64,
        end_ns: u64,
        samples: &[Sample],
        of: impl Fn(&Sample) -> u64,
        unit: u64,
    ) -> String {
        let windows = (end_ns / 1_000_000 / avg_msec) as usize;
        let mut sums = vec![[0u64; 2]; windows];
        for s in samples {
            let w = ((s.time_ns / 1_000_000) / avg_msec) as usize;
            if let Some(sum) = sums.get_mut(w) {
                sum[s.dir as usize & 1] += of(s);
            }
        }
        let mut text = String::new();
        for (w, sum) in sums.iter().enumerate() {
            let stop = (w as u64 + 1) * avg_msec;
            for (d, &amount) in sum.iter().enumerate() {
                if amount > 0 {
                    let _ = writeln!(text, "{stop}, {}, {d}, 0, 0", amount * 1000 / avg_msec / unit);
                }
            }
        }
        text
    }

    pub(super) fn hist_log(hist_msec: u64, coarseness: u32, samples: &[Sample]) -> String {
        let mut text = String::new();
        if hist_msec == 0 {
            return text;
        }
        let stride = 1usize << coarseness.min(PLAT_BITS);
        let mut bins = [vec![0u64; PLAT_NR], vec![0u64; PLAT_NR]];
        let mut last: [Option<u64>; 2] = [None; 2];
        for s in samples {
            let d = s.dir as usize & 1;
            let t = s.time_ns / 1_000_000;
            bins[d][bin_index(s.lat_ns)] += 1;
            let since = *last[d].get_or_insert(t);
            let window = t - since;
            if window >= hist_msec {
                let _ = write!(text, "{t}, {d}, {}", s.bytes);
                for chunk in bins[d].chunks(stride) {
                    let _ = write!(text, ", {}", chunk.iter().sum::<u64>());
                }
                text.push('\n');
                bins[d].iter_mut().for_each(|b| *b = 0);
                // fio keeps the drift: the next window starts where this one should have ended.
                last[d] = Some(t - (window - hist_msec));
            }
        }
        text
    }
}

#[test]
fn streamed_logs_are_the_whole_runs_logs_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("fsarena-iolog-stream-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Three buffers and a bit: the logs are handed on three times before the end.
    let n = 3 * LOG_BUFFER_SAMPLES + 1234;
    let mut seed = 7u64;
    let mut next = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed >> 33
    };
    let mut t = 0u64;
    let samples: Vec<Sample> = (0..n)
        .map(|_| {
            t += next() % 40_000;
            let lat = 1000 + next() % 2_000_000;
            let slat = (next() % 3 == 0).then_some(next() % 5000);
            let total = lat + slat.unwrap_or(0);
            Sample { time_ns: t, lat_ns: lat, slat_ns: slat, total_ns: total, bytes: 4096, dir: (next() % 2) as u32 }
        })
        .collect();
    let end_ns = t + 3_000_000;
    for (avg, hist) in [(0, 0), (7, 50), (1000, 3)] {
        let prefix = dir.join(format!("s{avg}")).display().to_string();
        let o = LogOptions {
            bw: Some(prefix.clone()),
            lat: Some(prefix.clone()),
            iops: Some(prefix.clone()),
            hist: Some(prefix.clone()),
            avg_msec: avg,
            hist_msec: hist,
            ..Default::default()
        };
        let mut log = SampleLog::new(&o, &job(), true).unwrap();
        for s in &samples {
            log.push(*s);
            assert!(log.buffered.len() <= LOG_BUFFER_SAMPLES);
            assert!(log.files.iter().all(|f| f.stream.pending() < LOG_TEXT_FLUSH + (64 << 10)));
        }
        log.finish(end_ns).unwrap();
        let read = |k: &str| std::fs::read_to_string(format!("{prefix}_{k}.3.log")).unwrap();
        let queued: Vec<Sample> =
            samples.iter().filter_map(|s| s.slat_ns.map(|slat| Sample { lat_ns: slat, ..*s })).collect();
        assert_eq!(read("lat"), before::value_log(avg, end_ns, &samples, |s| s.total_ns), "lat, avg {avg}");
        assert_eq!(read("slat"), before::value_log(avg, end_ns, &queued, |s| s.lat_ns), "slat, avg {avg}");
        assert_eq!(read("clat"), before::value_log(avg, end_ns, &samples, |s| s.lat_ns), "clat, avg {avg}");
        let (bw, iops) = if avg == 0 {
            (
                before::value_log(0, end_ns, &samples, |s| u64::from(s.bytes) * 1_000_000 / s.lat_ns),
                before::value_log(0, end_ns, &samples, |_| 1),
            )
        } else {
            (
                before::rate_log(avg, end_ns, &samples, |s| u64::from(s.bytes), 1024),
                before::rate_log(avg, end_ns, &samples, |_| 1, 1),
            )
        };
        assert_eq!(read("bw"), bw, "bw, avg {avg}");
        assert_eq!(read("iops"), iops, "iops, avg {avg}");
        assert_eq!(read("clat_hist"), before::hist_log(hist, 0, &samples), "hist {hist}");
        assert!(!read("clat").is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
