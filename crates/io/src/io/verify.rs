//! fio's `verify=`: every written unit (the smallest block size) carries a header with its
//! own offset and a checksum, so a verify pass catches both corrupted and misplaced data.
//!
//! crc32c's header (little endian): magic `FSAV` (4 bytes), crc32c of the rest of the unit
//! (4), the unit's offset in the file's I/O region (8), the job's seed (8). The other
//! methods: magic `FSV` and a method byte (4), the pattern's length for `pattern` (4), the
//! offset (8), the seed (8), then the digest (crc64 8, md5 16, sha256 32; `meta` and
//! `pattern` none) of everything else in the unit; `pattern` fills the rest with the pattern.
//! The layout is fsarena's own: fio's I/O counts are matched, not its on-disk format.

use fsarena_engine::AlignedBuf;
use std::os::fd::BorrowedFd;
use std::path::Path;

const MAGIC: &[u8; 4] = b"FSAV";

/// fio's `verify=` methods.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum VerifyMethod {
    /// crc32c (also fio's `crc32c-intel`).
    #[default]
    Crc32c,
    /// CRC-64 (ECMA-182, as in xz).
    Crc64,
    /// MD5.
    Md5,
    /// SHA-256.
    Sha256,
    /// The header only: offset and seed.
    Meta,
    /// The unit holds `verify_pattern` repeated after the header.
    Pattern(Vec<u8>),
}

impl VerifyMethod {
    /// fio's name for it.
    pub fn fio_name(&self) -> &'static str {
        match self {
            Self::Crc32c => "crc32c",
            Self::Crc64 => "crc64",
            Self::Md5 => "md5",
            Self::Sha256 => "sha256",
            Self::Meta => "meta",
            Self::Pattern(_) => "pattern",
        }
    }

    /// Bytes of a unit the header takes: the smallest block size must hold it.
    pub fn header_len(&self) -> usize {
        24 + self.digest_len()
            + match self {
                Self::Pattern(p) => p.len(),
                _ => 0,
            }
    }

    fn digest_len(&self) -> usize {
        match self {
            Self::Crc64 => 8,
            Self::Md5 => 16,
            Self::Sha256 => 32,
            _ => 0,
        }
    }

    fn tag(&self) -> u8 {
        match self {
            Self::Crc32c => b'c',
            Self::Crc64 => b'6',
            Self::Md5 => b'm',
            Self::Sha256 => b's',
            Self::Meta => b'M',
            Self::Pattern(_) => b'p',
        }
    }

    fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            b'6' => Self::Crc64,
            b'm' => Self::Md5,
            b's' => Self::Sha256,
            b'M' => Self::Meta,
            b'p' => Self::Pattern(Vec::new()),
            _ => return None,
        })
    }

    /// The digest of `piece` outside its digest field: the header's offset and seed, and the
    /// data after the digest.
    fn digest(&self, piece: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        let (head, rest) = (&piece[8..24], &piece[24 + self.digest_len()..]);
        match self {
            Self::Crc64 => crc64(crc64(0, head), rest).to_le_bytes().to_vec(),
            Self::Md5 => md5::Md5::new().chain_update(head).chain_update(rest).finalize().to_vec(),
            Self::Sha256 => sha2::Sha256::new().chain_update(head).chain_update(rest).finalize().to_vec(),
            _ => Vec::new(),
        }
    }
}

/// CRC-64/XZ (ECMA-182 polynomial, reflected), table-driven.
fn crc64(crc: u64, data: &[u8]) -> u64 {
    const POLY: u64 = 0xC96C_5795_D787_0F42;
    const TABLE: [u64; 256] = {
        let mut t = [0u64; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u64;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = !crc;
    for &b in data {
        c = TABLE[((c ^ u64::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Writes the header of every `unit`-sized piece of `buf` (going to `offset`) for `method`.
#[inline]
pub fn stamp_with(method: &VerifyMethod, buf: &mut [u8], offset: u64, unit: u64, seed: u64) {
    if *method == VerifyMethod::Crc32c {
        return stamp(buf, offset, unit, seed);
    }
    for (i, piece) in buf.chunks_mut(unit as usize).enumerate() {
        piece[0..3].copy_from_slice(&MAGIC[..3]);
        piece[3] = method.tag();
        piece[8..16].copy_from_slice(&(offset + i as u64 * unit).to_le_bytes());
        piece[16..24].copy_from_slice(&seed.to_le_bytes());
        if let VerifyMethod::Pattern(p) = method {
            piece[4..8].copy_from_slice(&(p.len() as u32).to_le_bytes());
            for (b, v) in piece[24..].iter_mut().zip(p.iter().cycle()) {
                *b = *v;
            }
        }
        let digest = method.digest(piece);
        piece[24..24 + digest.len()].copy_from_slice(&digest);
    }
}

/// Why a unit read back fails its check: the one error the data family's verify blocks give
/// another crate (crash's `verify` reads them back too). Displayed as the reports say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// No verify header: the block was never written, or something else overwrote it.
    NoHeader,
    /// A header of a method fsarena does not know.
    UnknownHeader,
    /// Shorter than its method's header.
    Short,
    /// crc32c's stored and computed checksums.
    Crc {
        /// In the header.
        stored: u32,
        /// Of the data read.
        computed: u32,
    },
    /// The data is not `verify_pattern` repeated.
    Pattern,
    /// A digest (md5, sha256, ...) differs: the method's fio name.
    Digest(&'static str),
    /// The header says the block belongs at another offset.
    Misplaced {
        /// The offset in the header.
        at: u64,
    },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoHeader => {
                f.write_str("no verify header (the block was never written, or was overwritten by something else)")
            }
            Self::UnknownHeader => f.write_str("unknown verify header"),
            Self::Short => f.write_str("unit shorter than its verify header"),
            Self::Crc { stored, computed } => {
                write!(f, "crc32c mismatch: stored {stored:08x}, computed {computed:08x}")
            }
            Self::Pattern => f.write_str("pattern mismatch: the data is not the verify_pattern repeated"),
            Self::Digest(name) => write!(f, "{name} mismatch"),
            Self::Misplaced { at } => write!(f, "block belongs at offset {at}: misplaced data"),
        }
    }
}

impl std::error::Error for Mismatch {}

/// Checks a unit of any method but crc32c (its header says which).
fn check_other(piece: &[u8]) -> Result<(), Mismatch> {
    let method = VerifyMethod::from_tag(piece[3]).ok_or(Mismatch::UnknownHeader)?;
    if piece.len() < method.header_len() {
        return Err(Mismatch::Short);
    }
    if let VerifyMethod::Pattern(_) = method {
        let len = u32::from_le_bytes([piece[4], piece[5], piece[6], piece[7]]) as usize;
        let body = &piece[24..];
        if len == 0 || len > body.len() || body.iter().enumerate().any(|(i, b)| *b != body[i % len]) {
            return Err(Mismatch::Pattern);
        }
        return Ok(());
    }
    let stored = &piece[24..24 + method.digest_len()];
    if method.digest(piece) != stored {
        return Err(Mismatch::Digest(method.fio_name()));
    }
    Ok(())
}

/// Writes the header of every `unit`-sized piece of `buf`, which goes to `offset`.
#[inline]
pub fn stamp(buf: &mut [u8], offset: u64, unit: u64, seed: u64) {
    for (i, piece) in buf.chunks_mut(unit as usize).enumerate() {
        piece[8..16].copy_from_slice(&(offset + i as u64 * unit).to_le_bytes());
        piece[16..24].copy_from_slice(&seed.to_le_bytes());
        let crc = crc32c::crc32c(&piece[8..]);
        piece[0..4].copy_from_slice(MAGIC);
        piece[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Marks the units of a write of `n` bytes at `offset` as written.
#[inline]
pub fn mark(written: &mut [u64], offset: u64, n: u64, unit: u64) {
    let first = offset / unit;
    for u in first..first + n / unit {
        if let Some(word) = written.get_mut((u / 64) as usize) {
            *word |= 1 << (u % 64);
        }
    }
}

/// Checks one unit read back from `offset`.
pub fn check(piece: &[u8], offset: u64) -> Result<(), Mismatch> {
    if piece.len() >= 24 && piece[0..3] == MAGIC[..3] && piece[3] != MAGIC[3] {
        check_other(piece)?;
    } else if &piece[0..4] != MAGIC {
        return Err(Mismatch::NoHeader);
    } else {
        let stored = u32::from_le_bytes([piece[4], piece[5], piece[6], piece[7]]);
        let computed = crc32c::crc32c(&piece[8..]);
        if stored != computed {
            return Err(Mismatch::Crc { stored, computed });
        }
    }
    let mut at = [0u8; 8];
    at.copy_from_slice(&piece[8..16]);
    let at = u64::from_le_bytes(at);
    if at != offset {
        return Err(Mismatch::Misplaced { at });
    }
    Ok(())
}

/// What a verify pass found: units checked, units that failed, the first failure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// Units read back and checked.
    pub units: u64,
    /// Units that failed the check.
    pub bad: u64,
    /// The first failure, naming file and offset.
    pub first: Option<String>,
}

impl Checked {
    /// Adds another pass's findings.
    pub fn add(&mut self, other: Checked) {
        self.units += other.units;
        self.bad += other.bad;
        if self.first.is_none() {
            self.first = other.first;
        }
    }
}

/// Reads back every written unit of a file region starting at `start` and checks it. As
/// fio's `verify_fatal=0` (its default) every unit is checked and the failures counted;
/// `fatal` stops at the first. An error reading is an `Err`.
pub fn check_file(
    file: BorrowedFd<'_>,
    path: &Path,
    start: u64,
    // The bitmap's unit (the smallest block), and the header's interval within it (fio's
    // verify_interval: a divisor of the unit).
    (unit, interval): (u64, u64),
    written: &[u64],
    align: usize,
    fatal: bool,
) -> Result<Checked, String> {
    let interval = if interval == 0 || !unit.is_multiple_of(interval) { unit } else { interval };
    // Runs of written units, each read at once (at most 1 MiB a read): a dense bitmap (the
    // pass after a job) is read in large reads, a sparse one (a verify_backlog of random
    // writes) reads only its units.
    let chunk_units = (1u64 << 20).div_ceil(unit).max(1);
    let total_units = written.len() as u64 * 64;
    let is_set = |x: u64| written[(x / 64) as usize] & (1 << (x % 64)) != 0;
    let mut buf = AlignedBuf::new((chunk_units.min(total_units.max(1)) * unit) as usize, align);
    let mut out = Checked::default();
    let mut u = 0;
    while u < total_units {
        if written[(u / 64) as usize] == 0 {
            u = (u / 64 + 1) * 64;
            continue;
        }
        if !is_set(u) {
            u += 1;
            continue;
        }
        let mut here = 1;
        while here < chunk_units && u + here < total_units && is_set(u + here) {
            here += 1;
        }
        let len = (here * unit) as usize;
        let got = read_full(file, &mut buf.as_mut_slice()[..len], start + u * unit)
            .map_err(|e| format!("verify: read of {} at offset {}: {e}", path.display(), start + u * unit))?;
        for x in u..u + here {
            let i = ((x - u) * unit) as usize;
            let off = x * unit;
            let piece = buf.as_slice().get(i..i + unit as usize).filter(|_| i + unit as usize <= got);
            out.units += 1;
            // Each interval's header is checked: a failure names the interval's offset.
            let outcome = piece.map_or_else(
                || Err(("file is shorter than what was written".to_string(), off)),
                |p| {
                    p.chunks(interval as usize).enumerate().try_for_each(|(k, sub)| {
                        let at = off + k as u64 * interval;
                        check(sub, at).map_err(|why| (why.to_string(), at))
                    })
                },
            );
            if let Err((why, at)) = outcome {
                out.bad += 1;
                out.first.get_or_insert_with(|| {
                    format!("verify failed in {} at offset {}: {why}", path.display(), start + at)
                });
                if fatal {
                    return Ok(out);
                }
            }
        }
        u += here;
    }
    Ok(out)
}

/// Reads `buf.len()` bytes at `offset`, or up to the end of the file: the bytes read.
fn read_full(file: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(done)
}

/// fio's `verify_state_save`: which units of each file a job wrote, so that a later
/// `verify_only` run with `verify_state_load` checks exactly those. Saved as
/// `local-JOBNAME-CLONE-verify.state` (fio's name) beside the job's files; the format is
/// fsarena's own (JSON).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifyState {
    /// The unit the bitmaps count in (the job's smallest block size).
    pub unit: u64,
    /// Per file, in the job's order: its path as the job names it and its bitmap.
    pub files: Vec<(std::path::PathBuf, Vec<u64>)>,
}

impl VerifyState {
    /// The most bytes the state of a clone with `files` of at most `file_size` bytes, counted
    /// in blocks of `unit`, takes as JSON: per file its path and a bitmap word per 64 blocks,
    /// each word at most 20 digits and a comma, with room to spare.
    pub fn largest(unit: u64, file_size: u64, files: &[std::path::PathBuf]) -> u64 {
        let blocks = file_size / unit.max(1);
        let per_file = blocks.div_ceil(64).saturating_add(1).saturating_mul(21);
        let names: u64 = files.iter().map(|f| 2 * f.as_os_str().len() as u64 + 64).sum();
        (files.len() as u64).saturating_mul(per_file).saturating_add(names).saturating_add(64 << 10)
    }

    /// The state file's name for clone `clone` of job `name`.
    pub fn file_name(name: &str, clone: u32) -> String {
        let safe: String = name.chars().map(|c| if c == '/' { '_' } else { c }).collect();
        format!("local-{safe}-{clone}-verify.state")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stamped_blocks_check_and_damage_is_caught() {
        let mut b = vec![7u8; 8192];
        stamp(&mut b, 40960, 4096, 9);
        assert!(check(&b[..4096], 40960).is_ok());
        assert!(check(&b[4096..], 45056).is_ok());
        assert!(check(&b[4096..], 40960).unwrap_err().to_string().contains("misplaced"));
        b[100] ^= 1;
        assert!(check(&b[..4096], 40960).unwrap_err().to_string().contains("crc32c mismatch"));
        assert!(check(&[0u8; 64], 0).unwrap_err().to_string().contains("no verify header"));
    }

    #[test]
    fn a_corrupted_file_fails_naming_file_and_offset() {
        let path = std::env::temp_dir().join(format!("fsarena-verify-{}", std::process::id()));
        let mut data = vec![3u8; 4 * 4096];
        stamp(&mut data, 0, 4096, 1);
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let file = std::os::fd::AsFd::as_fd(&file);
        let written = vec![0b1111u64];
        let clean = check_file(file, &path, 0, (4096, 4096), &written, 4096, false).unwrap();
        assert_eq!((clean.units, clean.bad, clean.first), (4, 0, None));
        data[2 * 4096 + 100] ^= 0xff;
        data[3 * 4096 + 100] ^= 0xff;
        std::fs::write(&path, &data).unwrap();
        // verify_fatal=0 (fio's default): every unit checked, both failures counted.
        let all = check_file(file, &path, 0, (4096, 4096), &written, 4096, false).unwrap();
        assert_eq!((all.units, all.bad), (4, 2));
        let err = all.first.unwrap();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("at offset 8192") && err.contains("crc32c"),
            "{err}"
        );
        // verify_fatal=1: the first failure ends the pass.
        let fatal = check_file(file, &path, 0, (4096, 4096), &written, 4096, true).unwrap();
        assert_eq!((fatal.units, fatal.bad), (3, 1));
        // units never written are not checked
        assert_eq!(check_file(file, &path, 0, (4096, 4096), &[0b0011u64], 4096, false).unwrap().bad, 0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn headers_every_verify_interval_name_the_damaged_interval() {
        // fio's verify_interval=512 in 64 KiB blocks: a header every 512 bytes, and damage in
        // the fourth interval of the second block is named at that interval's offset.
        let path = std::env::temp_dir().join(format!("fsarena-verify-interval-{}", std::process::id()));
        let mut data = vec![5u8; 2 * 65536];
        stamp_with(&VerifyMethod::Meta, &mut data, 0, 512, 3);
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let file = std::os::fd::AsFd::as_fd(&file);
        let clean = check_file(file, &path, 0, (65536, 512), &[0b11u64], 4096, false).unwrap();
        assert_eq!((clean.units, clean.bad), (2, 0));
        data[65536 + 3 * 512 + 8] ^= 0xff; // the interval's own offset, in its header
        std::fs::write(&path, &data).unwrap();
        let bad = check_file(file, &path, 0, (65536, 512), &[0b11u64], 4096, false).unwrap();
        assert_eq!(bad.bad, 1);
        // Checked a block at a time, meta reads only each block's first header: unseen.
        assert_eq!(check_file(file, &path, 0, (65536, 65536), &[0b11u64], 4096, false).unwrap().bad, 0);
        let at = 65536 + 3 * 512;
        assert!(bad.first.as_deref().unwrap_or_default().contains(&format!("at offset {at}:")), "{:?}", bad.first);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn every_method_checks_and_catches_damage() {
        assert_eq!(crc64(0, b"123456789"), 0x995D_C9BB_DF19_39FA); // CRC-64/XZ check value
        for method in [
            VerifyMethod::Crc64,
            VerifyMethod::Md5,
            VerifyMethod::Sha256,
            VerifyMethod::Meta,
            VerifyMethod::Pattern(vec![0xde, 0xad, 0xbe, 0xef]),
        ] {
            let mut b = vec![7u8; 8192];
            stamp_with(&method, &mut b, 4096, 4096, 5);
            assert!(check(&b[..4096], 4096).is_ok(), "{method:?}");
            assert!(check(&b[4096..], 8192).is_ok(), "{method:?}");
            assert!(check(&b[4096..], 4096).unwrap_err().to_string().contains("misplaced"), "{method:?}");
            if method != VerifyMethod::Meta {
                b[1000] ^= 1;
                let e = check(&b[..4096], 4096).unwrap_err().to_string();
                assert!(e.contains("mismatch") && e.contains(method.fio_name()), "{method:?}: {e}");
            }
        }
    }

    #[test]
    fn marks_whole_units() {
        let mut w = vec![0u64; 2];
        mark(&mut w, 4096 * 3, 8192, 4096);
        assert_eq!(w[0], 0b11000);
        mark(&mut w, 4096 * 64, 4096, 4096);
        assert_eq!(w[1], 1);
    }
}
