use super::*;

const S: u64 = 1_000_000_000;

fn criterion(v: &str) -> Criterion {
    Criterion::parse(v).unwrap()
}

#[test]
fn parses_fio_criteria() {
    let c = criterion("iops:10%");
    assert_eq!((c.metric, c.slope, c.percent, c.limit), (Metric::Iops, false, true, 10.0));
    let c = criterion("bw_slope:1m");
    assert_eq!((c.metric, c.slope, c.percent, c.limit), (Metric::Bw, true, false, 1_048_576.0));
    // fio reads an IOPS limit with sscanf: its leading number.
    assert_eq!(criterion("iops_slope: 5k").limit, 5.0);
    assert_eq!(criterion("bw:0.5 %").limit, 0.5);
    assert_eq!(Criterion::default(), criterion("iops_slope:0.01%"));
    assert_eq!(criterion("iops:10%").fio_text(), "iops:10.000000%");
    assert_eq!(criterion("bw_slope:1m").fio_text(), "bw_slope:1048576.000000");
    assert_eq!(criterion("iops_slope:0.01%").fio_text(), "iops_slope:0.010000%");
    for (bad, says) in [
        ("iops", "has no limit"),
        ("lat:1ms", "fio 3.42's"),
        ("clat:1", "is not a steady-state criterion"),
        ("iops:abc", "is not a number"),
        ("bw:fast", "bw:fast"),
    ] {
        let e = Criterion::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// iops:10% over 3 s: mean 305/3, the largest deviation |110 - 101.67| = 8.33, which is
/// 8.196721% of the mean: under 10 once the window is full, not before.
#[test]
fn deviation_is_fios() {
    let mut w = Window::new(criterion("iops:10%"), 3);
    assert!(!w.push(100, 1));
    assert!(!w.push(110, 2));
    assert!(w.push(95, 3));
    let r = w.result(true);
    assert_eq!(r.criterion, "8.196721%");
    assert!((r.max_deviation - 25.0 / 3.0).abs() < 1e-9, "{}", r.max_deviation);
    assert_eq!(r.slope, 0.0);
    assert_eq!((r.iops_mean, r.bw_mean), (101, 2));
    assert_eq!((r.iops, r.bw), (vec![100, 110, 95], vec![1, 2, 3]));
    // The same samples under a 5% limit do not hold.
    let mut w = Window::new(criterion("iops:5%"), 3);
    assert!(![100, 110, 95].iter().any(|&v| w.push(v, 0)));
}

/// iops_slope:1% over 4 s (sum_x = 6, sum_x_sq = 14): 100..106 has slope 2, 200/103 =
/// 1.94% of its mean (fio's integer mean, 412/4); then 102,104,106,106: slope
/// (634 - 6·418/4)/(14 - 36/4) = 1.4, 1.35% of 104; then 104,106,106,106: slope 0.6, 0.57% of
/// 105 (422/4): held.
#[test]
fn slope_is_fios() {
    let mut w = Window::new(criterion("iops_slope:1%"), 4);
    for v in [100, 102, 104] {
        assert!(!w.push(v, 0));
    }
    assert!(!w.push(106, 0));
    assert_eq!(w.result(false).criterion, "1.941748%");
    assert!((w.slope - 2.0).abs() < 1e-12);
    assert!(!w.push(106, 0));
    assert_eq!(w.result(false).criterion, "1.346154%");
    assert!((w.slope - 1.4).abs() < 1e-12);
    // Not held and full: fio's JSON starts one slot before head.
    assert_eq!(w.result(false).iops, vec![102, 104, 106, 106]);
    assert!(w.push(106, 0));
    let r = w.result(true);
    assert_eq!(r.criterion, "0.571429%");
    assert!((r.slope - 0.6).abs() < 1e-12);
    assert_eq!(r.iops, vec![104, 106, 106, 106]);
    assert_eq!(r.iops_mean, 105);
    assert_eq!(r.max_deviation, 0.0);
}

/// An absolute bandwidth slope: 1000, 3000 over 2 s rises 2000 bytes/s a second.
#[test]
fn absolute_limits() {
    let mut w = Window::new(criterion("bw_slope:2001"), 2);
    assert!(!w.push(0, 1000));
    assert!(w.push(0, 3000));
    assert_eq!(w.result(true).criterion, "2000.000000");
    let mut w = Window::new(criterion("bw_slope:2000"), 2);
    assert!(!w.push(0, 1000) && !w.push(0, 3000));
}

fn reading(epoch: u64, ios: u64, bytes: u64) -> Reading {
    Reading { epoch_ns: Some(epoch), ios, bytes }
}

/// Under group_reporting the clones' samples add up, the last clone holds them, and every
/// clone ends: 1000 + 1000 I/Os in the first second, 1100 + 1100 in the next (4.76% from
/// the mean 2100).
#[test]
fn group_sums_and_ends_every_clone() {
    let config = Config { criterion: criterion("iops:50%"), dur: 2, ramp_us: 0 };
    let mut c = Checker::new(config, 2, true);
    assert!(c.check(S, &[reading(0, 1000, 4_096_000), reading(0, 1000, 4_096_000)]).is_empty());
    assert_eq!(c.check(2 * S, &[reading(0, 2100, 8_601_600), reading(0, 2100, 8_601_600)]), vec![0, 1]);
    let r = c.result(0).unwrap();
    assert!(r.attained);
    assert_eq!(r.iops, vec![2000, 2200]);
    assert_eq!(r.bw, vec![8_192_000, 9_011_200]);
    assert_eq!((r.iops_mean, r.bw_mean), (2100, 8_601_600));
    assert_eq!(r.ss, "iops:50.000000%");
    assert_eq!(r.duration, 2);
    // Attained clones are checked no more.
    assert!(c.check(3 * S, &[reading(0, 0, 0), reading(0, 0, 0)]).is_empty());
}

/// Without group_reporting each clone is judged on its own; a rate over a check that came
/// late is per second (fio's 1000 · count / milliseconds).
#[test]
fn clones_alone() {
    let config = Config { criterion: criterion("iops:10%"), dur: 2, ramp_us: 0 };
    let mut c = Checker::new(config, 2, false);
    assert!(c.check(S, &[reading(0, 100, 0), reading(0, 100, 0)]).is_empty());
    assert_eq!(c.check(3 * S, &[reading(0, 300, 0), reading(0, 900, 0)]), vec![0]);
    assert_eq!(c.result(0).unwrap().iops, vec![100, 100]);
    let other = c.result(1).unwrap();
    assert!(!other.attained);
    assert_eq!(other.iops, vec![100, 400]);
    assert_eq!(other.criterion, "60.000000%");
}

/// ss_ramp: samples begin once the clone has run the ramp plus one second; a clone that
/// has not begun (or has ended) is skipped.
#[test]
fn ramp_and_idle_clones() {
    let config = Config { criterion: criterion("iops:1%"), dur: 1, ramp_us: 1_000_000 };
    let mut c = Checker::new(config, 1, false);
    let idle = Reading { epoch_ns: None, ios: 0, bytes: 0 };
    assert!(c.check(S, &[idle]).is_empty());
    // Started at 1 s: at 2 s one second has run, under the ramp plus a second.
    assert!(c.check(2 * S, &[reading(S, 50, 0)]).is_empty());
    assert_eq!(c.result(0).unwrap().iops, vec![0]);
    // At 3 s: the last second's 70 I/Os are the first sample, and a window of one holds.
    assert_eq!(c.check(3 * S, &[reading(S, 120, 0)]), vec![0]);
    assert_eq!(c.result(0).unwrap().iops, vec![70]);
}

#[test]
fn groups_must_agree() {
    let mut a = super::super::options::IoOptions { name: "a".into(), ..Default::default() };
    a.ss_dur = fsarena_core::Nanos(2 * S);
    let mut b = super::super::options::IoOptions { name: "b".into(), ..a.clone() };
    assert_eq!(group_problem(&[&a, &b]), None);
    b.ss = criterion("bw:1m");
    let e = group_problem(&[&a, &b]).unwrap();
    assert!(e.starts_with("job 'b' keeps another steady state than job 'a'"), "{e}");
    b = super::super::options::IoOptions { name: "b".into(), ..Default::default() };
    assert!(group_problem(&[&a, &b]).is_some());
    // A window under a second is none, as in fio.
    a.ss_dur = fsarena_core::Nanos(S / 2);
    assert_eq!(group_problem(&[&a, &b]), None);
}

#[test]
fn a_stage_watches_each_reporting_group_apart() {
    // Two reporting groups run in one stage (new_group): the first keeps a steady state
    // under group_reporting, the second keeps none. Each clone's result is its own group's.
    let mut ss = crate::io::options::IoOptions::default();
    ss.set("ss", "iops:10%").unwrap();
    ss.set("ss_dur", "2s").unwrap();
    let plain = crate::io::options::IoOptions::default();
    let clones = [(&ss, 0, true), (&ss, 0, true), (&plain, 1, false)];
    let watch = Watch::of(&clones).unwrap().unwrap();
    assert_eq!(watch.groups.len(), 1);
    assert_eq!(watch.groups[0].clones, vec![0, 1]);
    assert!(watch.result(0).is_some(), "the group's result");
    assert_eq!(watch.result(2), None, "a clone of a group without steady state");
    // No group keeps one: no watch.
    assert!(Watch::of(&[(&plain, 0, false)]).unwrap().is_none());
}
