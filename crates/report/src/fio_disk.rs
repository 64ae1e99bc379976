//! fio's `disk_util`: the JSON array and the normal output's "Disk stats (read/write):"
//! block, as fio 3.33 prints them (`json_array_add_disk_util`, `print_disk_util` and
//! `show_agg_stats` in its `stat.c`). A device with slaves (a loop device and the disk holding
//! its image) carries its slaves' averages as `aggr_*` and their highest utilization; each
//! slave is also listed on its own.

use crate::RunReport;
use fsarena_core::DiskUtil;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The devices of a report, summed per device over its results: the parts of one run of a
/// workload share one reading, so it is counted once; separate runs (targets, workloads)
/// add up, as fio's one disk_util covers all of its jobs.
pub(crate) fn report_disks(report: &RunReport) -> Vec<DiskUtil> {
    let mut total: Vec<DiskUtil> = Vec::new();
    let mut previous: Option<(&str, String)> = None;
    for entry in &report.results {
        let key = (entry.target_label.as_str(), entry.workload_title());
        let same_run = entry.part.is_some() && previous.as_ref() == Some(&key);
        previous = Some(key);
        if same_run {
            continue;
        }
        let Some(m) = entry.measurements.last() else { continue };
        for d in &m.disk_util {
            match total.iter_mut().find(|t| t.name == d.name) {
                Some(t) => add(t, d),
                None => total.push(d.clone()),
            }
        }
    }
    total
}

/// Adds `d`'s counters and time into `t`.
fn add(t: &mut DiskUtil, d: &DiskUtil) {
    t.read_ios += d.read_ios;
    t.write_ios += d.write_ios;
    t.read_merges += d.read_merges;
    t.write_merges += d.write_merges;
    t.read_ticks += d.read_ticks;
    t.write_ticks += d.write_ticks;
    t.io_ticks += d.io_ticks;
    t.in_queue += d.in_queue;
    t.msec += d.msec;
    for s in &d.slaves {
        if !t.slaves.contains(s) {
            t.slaves.push(s.clone());
        }
    }
}

/// A device's slaves' counters averaged over the slaves, and their highest utilization
/// (fio's `disk_util_agg`, divided as `show_agg_stats` divides it).
struct Aggregate {
    ios: [u64; 2],
    merges: [u64; 2],
    ticks: [u64; 2],
    in_queue: u64,
    util: f64,
}

/// The aggregate of `d`'s slaves found in `all`; `None` without slaves.
fn aggregate(d: &DiskUtil, all: &[DiskUtil]) -> Option<Aggregate> {
    let slaves: Vec<&DiskUtil> = d.slaves.iter().filter_map(|s| all.iter().find(|x| x.name == *s)).collect();
    let n = slaves.len() as u64;
    if n == 0 {
        return None;
    }
    let sum = |f: fn(&DiskUtil) -> u64| slaves.iter().map(|s| f(s)).sum::<u64>() / n;
    Some(Aggregate {
        ios: [sum(|s| s.read_ios), sum(|s| s.write_ios)],
        merges: [sum(|s| s.read_merges), sum(|s| s.write_merges)],
        ticks: [sum(|s| s.read_ticks), sum(|s| s.write_ticks)],
        in_queue: sum(|s| s.in_queue),
        util: slaves.iter().map(|s| s.util()).fold(0.0, f64::max),
    })
}

/// fio's `"disk_util"` array.
pub(crate) fn disk_util_json(disks: &[DiskUtil]) -> Value {
    let objects = disks
        .iter()
        .map(|d| {
            let mut o = Map::new();
            o.insert("name".into(), json!(d.name));
            o.insert("read_ios".into(), json!(d.read_ios));
            o.insert("write_ios".into(), json!(d.write_ios));
            o.insert("read_merges".into(), json!(d.read_merges));
            o.insert("write_merges".into(), json!(d.write_merges));
            o.insert("read_ticks".into(), json!(d.read_ticks));
            o.insert("write_ticks".into(), json!(d.write_ticks));
            o.insert("in_queue".into(), json!(d.in_queue));
            o.insert("util".into(), json!(d.util()));
            if let Some(a) = aggregate(d, disks) {
                o.insert("aggr_read_ios".into(), json!(a.ios[0]));
                o.insert("aggr_write_ios".into(), json!(a.ios[1]));
                o.insert("aggr_read_merges".into(), json!(a.merges[0]));
                // sic: fio's key lacks the "s" its siblings have.
                o.insert("aggr_write_merge".into(), json!(a.merges[1]));
                o.insert("aggr_read_ticks".into(), json!(a.ticks[0]));
                o.insert("aggr_write_ticks".into(), json!(a.ticks[1]));
                o.insert("aggr_in_queue".into(), json!(a.in_queue));
                o.insert("aggr_util".into(), json!(a.util));
            }
            Value::Object(o)
        })
        .collect();
    Value::Array(objects)
}

/// fio's normal output block: a blank line, `Disk stats (read/write):`, one line per
/// device; nothing when no block device was under the target.
pub(crate) fn disk_stats_text(disks: &[DiskUtil]) -> String {
    let mut out = String::new();
    if disks.is_empty() {
        return out;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let a = aggregate(d, disks);
        let indent = if a.is_some() { "    " } else { "  " };
        let _ = write!(
            out,
            "{indent}{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            d.name,
            d.read_ios,
            d.write_ios,
            d.read_merges,
            d.write_merges,
            d.read_ticks,
            d.write_ticks,
            d.in_queue,
            d.util()
        );
        if let Some(a) = a {
            let _ = write!(
                out,
                ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
                a.ios[0], a.ios[1], a.merges[0], a.merges[1], a.ticks[0], a.ticks[1], a.in_queue, a.util
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn disk(name: &str, ios: u64, io_ticks: u64, slaves: &[&str]) -> DiskUtil {
        DiskUtil {
            name: name.into(),
            read_ios: 0,
            write_ios: ios,
            write_merges: 21,
            write_ticks: 1353,
            io_ticks,
            in_queue: 1433,
            msec: 2000,
            slaves: slaves.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_lone_device_prints_as_fio_does() {
        // fio 3.33 on a loop-backed ext4, 2 s of random writes:
        // "  loop0: ios=0/40215, merge=0/21, ticks=0/1353, in_queue=1433, util=65.16%"
        let d = DiskUtil { msec: 1995, ..disk("loop0", 40_215, 1300, &[]) };
        assert_eq!(
            disk_stats_text(std::slice::from_ref(&d)),
            "\nDisk stats (read/write):\n  loop0: ios=0/40215, merge=0/21, ticks=0/1353, in_queue=1433, util=65.16%\n"
        );
        let v = disk_util_json(&[d]);
        let keys: Vec<&str> = v[0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "read_ios",
                "write_ios",
                "read_merges",
                "write_merges",
                "read_ticks",
                "write_ticks",
                "in_queue",
                "util"
            ]
        );
        assert!((v[0]["util"].as_f64().unwrap() - 65.162_907).abs() < 1e-5);
        assert!(disk_stats_text(&[]).is_empty());
    }

    #[test]
    fn slaves_are_aggregated_beside_their_master_and_listed() {
        let disks = [disk("loop0", 100, 500, &["vda"]), disk("vda", 80, 2500, &[])];
        let v = disk_util_json(&disks);
        assert_eq!(v[0]["aggr_write_ios"], 80);
        assert_eq!(v[0]["aggr_write_merge"], 21);
        // The slave's utilization, capped at 100% as fio caps it.
        assert_eq!(v[0]["aggr_util"].as_f64(), Some(100.0));
        assert!(v[1].get("aggr_read_ios").is_none());
        let text = disk_stats_text(&disks);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].starts_with("    loop0: ios=0/100,"), "{text}");
        assert!(
            lines[2].ends_with(", aggrios=0/80, aggrmerge=0/21, aggrticks=0/1353, aggrin_queue=1433, aggrutil=100.00%")
        );
        assert!(lines[3].starts_with("  vda: ios=0/80,"), "{text}");
    }
}
