//! What an `io` workload needs at its largest moment, for the checks made before anything is
//! created: groups run one after another, so threads, descriptors and memory are a group's;
//! the files stay until the workload ends, so bytes and files are the whole workload's.

use super::jobfile::JobDef;
use super::options::IoOptions;
use fsarena_workload::plain::cut;
use fsarena_workload::Footprint;
use std::collections::HashMap;

/// Bookkeeping per file while a group runs: its path three times (plan, clone, index), the
/// layout entry and the clone's open file state.
const PLAN_BYTES_PER_FILE: u64 = 512;
/// Bookkeeping per clone: its options, result, histograms and per-second series.
const PLAN_BYTES_PER_CLONE: u64 = 64 << 10;
/// The layout's buffer per layout thread.
const LAYOUT_BUFFER: u64 = 4 << 20;

/// Files a clone of `o` opens, each named once (`filename=` is one file shared by all).
fn files_per_clone(o: &IoOptions) -> u64 {
    if o.engine_caps().file_op.is_some() {
        // fio's file engines hold no file open (filecreate closes each it creates).
        0
    } else if o.filename.is_some() {
        1
    } else {
        u64::from(o.nrfiles)
    }
}

/// Bytes a clone holds while it runs: its buffers (one per queue slot), with `verify` its
/// written-block maps, and with a log file its bounded buffer of samples and log text.
fn clone_memory(o: &IoOptions) -> u64 {
    let files = files_per_clone(o);
    let bitmap = if o.verify {
        let blocks = o.file_size().unwrap_or(0).saturating_sub(o.offset) / o.min_bs().max(1);
        blocks.div_ceil(64).saturating_mul(8).saturating_mul(files)
    } else {
        0
    };
    let name = 64 + o.name.len() as u64;
    let logs = if super::iolog::LogOptions::of(&o.outputs).any() { super::iolog::LOG_MEMORY } else { 0 };
    o.max_bs()
        .saturating_mul(u64::from(o.queue_depth().depth))
        .saturating_add(bitmap)
        .saturating_add(logs)
        .saturating_add(PLAN_BYTES_PER_CLONE)
        .saturating_add(files.saturating_mul(PLAN_BYTES_PER_FILE + 3 * name))
}

/// The footprint of `jobs`, split in `groups`.
pub fn footprint(jobs: &[JobDef], groups: &[Vec<&JobDef>]) -> Footprint {
    let source = match jobs {
        [job] => {
            let o = &job.options;
            let clients = if o.clients > 1 { format!(", clients={}", o.clients) } else { String::new() };
            format!("io job '{}' (numjobs={}{clients}, nrfiles={})", cut(&o.name), o.numjobs, o.nrfiles)
        }
        jobs => format!("io workload of {} jobs", jobs.len()),
    };
    let layout_threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let mut fp = Footprint { source, ..Footprint::default() };
    for group in groups {
        // Every client runs numjobs clones.
        let clones: u64 = group.iter().map(|j| u64::from(j.options.clones())).sum();
        let open: u64 =
            group.iter().map(|j| u64::from(j.options.clones()).saturating_mul(files_per_clone(&j.options))).sum();
        let memory = group
            .iter()
            .map(|j| u64::from(j.options.clones()).saturating_mul(clone_memory(&j.options)))
            .fold(LAYOUT_BUFFER.saturating_mul(layout_threads), u64::saturating_add);
        fp.threads = fp.threads.max(clones.max(layout_threads.min(open)));
        fp.open_files = fp.open_files.max(open);
        fp.buffer_bytes = fp.buffer_bytes.max(memory);
    }
    // Files on the target: a shared `filename=` once at its largest; a job name's files once
    // (two sections with one name use the same files).
    let mut shared: HashMap<&str, u64> = HashMap::new();
    let mut named: HashMap<&str, (u64, u64)> = HashMap::new();
    // A diskless engine (null) lays out no file.
    for o in jobs.iter().map(|j| &j.options).filter(|o| !o.engine_caps().diskless) {
        // The last clone starts furthest in (offset_increment).
        let size = o.clone_offset(o.clones().saturating_sub(1)).saturating_add(o.file_size().unwrap_or(0));
        match &o.filename {
            Some(f) => {
                let e = shared.entry(f).or_default();
                *e = (*e).max(size);
            }
            None => {
                let e = named.entry(&o.name).or_default();
                let count = u64::from(o.clones()).saturating_mul(u64::from(o.nrfiles));
                *e = (e.0.max(count), e.1.max(size));
            }
        }
    }
    fp.files = shared.len() as u64 + named.values().map(|(n, _)| n).fold(0, |a: u64, n| a.saturating_add(*n));
    fp.bytes_on_target = shared
        .values()
        .copied()
        .chain(named.values().map(|(n, size)| n.saturating_mul(*size)))
        .fold(0, u64::saturating_add);
    fp
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::IoWorkload;
    use fsarena_core::Spec;
    use fsarena_workload::Workload;

    fn fp(spec: &str) -> fsarena_workload::Footprint {
        IoWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap().footprint()
    }

    #[test]
    fn numbers_follow_numjobs_nrfiles_and_shared_files() {
        let f = fp("io:rw=randread,bs=64k,size=8m,numjobs=100000,thread=1");
        assert_eq!((f.threads, f.open_files, f.files), (100_000, 100_000, 100_000));
        assert_eq!(f.bytes_on_target, 100_000 * (8 << 20));
        assert!(f.buffer_bytes > 100_000 * (64 << 10), "{f:?}");
        assert!(f.source.contains("numjobs=100000"), "{}", f.source);
        let f = fp("io:rw=write,size=8m,numjobs=4,nrfiles=1000");
        assert_eq!((f.open_files, f.files), (4000, 4000));
        assert_eq!(f.bytes_on_target, 4 * 1000 * ((8 << 20) / 1000));
        let shared = fp("io:rw=write,size=8m,numjobs=4,filename=data");
        assert_eq!((shared.files, shared.bytes_on_target), (1, 8 << 20));
        // offset_increment: the last clone's region ends furthest in the shared file.
        let quarters = fp("io:rw=write,size=1m,numjobs=4,filename=data,offset_increment=1m");
        assert_eq!((quarters.files, quarters.bytes_on_target), (1, 4 << 20));
        // a buffer per queue slot; the null engine puts nothing on the target
        let null = fp("io:ioengine=null,bs=1m,size=1t,iodepth=64");
        assert_eq!((null.files, null.bytes_on_target), (0, 0));
        assert!(null.buffer_bytes >= 64 << 20, "{null:?}");
        // A log file's samples are held in a bounded buffer per clone, counted whatever runs.
        let plain = fp("io:rw=write,size=8m,numjobs=10");
        let logged = fp("io:rw=write,size=8m,numjobs=10,write_lat_log=x,time_based=1,runtime=1h");
        assert_eq!(logged.buffer_bytes - plain.buffer_bytes, 10 * super::super::iolog::LOG_MEMORY);
    }

    #[test]
    fn groups_run_one_after_another() {
        let file = super::super::jobfile::parse_str(
            "[global]\nsize=1m\n[a]\nnumjobs=30\n[b]\nnumjobs=20\nstonewall\n[c]\nnumjobs=5\n",
            "t.fio",
        )
        .unwrap();
        let f = IoWorkload::from_job_file(file).footprint();
        // 30 in the first group, 20 + 5 in the second.
        assert_eq!(f.threads, 30);
        assert_eq!(f.files, 55);
    }
}
