//! `verify=crc32c`: every written unit (the smallest block size) carries a header with a
//! checksum and its own offset, so a verify pass catches both corrupted and misplaced data.
//!
//! Header layout (little endian): magic `FSAV` (4 bytes), crc32c of the rest of the unit
//! (4), the unit's offset in the file's I/O region (8), the job's seed (8).

use fsarena_engine::AlignedBuf;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const MAGIC: &[u8; 4] = b"FSAV";

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

/// Checks one unit read back from `offset`; the error says what is wrong.
pub fn check(piece: &[u8], offset: u64) -> Result<(), String> {
    if &piece[0..4] != MAGIC {
        return Err("no verify header (the block was never written, or was overwritten by something else)".into());
    }
    let stored = u32::from_le_bytes([piece[4], piece[5], piece[6], piece[7]]);
    let crc = crc32c::crc32c(&piece[8..]);
    if stored != crc {
        return Err(format!("crc32c mismatch: stored {stored:08x}, computed {crc:08x}"));
    }
    let mut at = [0u8; 8];
    at.copy_from_slice(&piece[8..16]);
    let at = u64::from_le_bytes(at);
    if at != offset {
        return Err(format!("block belongs at offset {at}: misplaced data"));
    }
    Ok(())
}

/// Reads back every written unit of a file region starting at `start` and checks it.
pub fn check_file(
    file: &File,
    path: &Path,
    start: u64,
    unit: u64,
    written: &[u64],
    align: usize,
) -> Result<(), String> {
    let chunk_units = (1u64 << 20).div_ceil(unit).max(1);
    let mut buf = AlignedBuf::new((chunk_units * unit) as usize, align);
    let total_units = written.len() as u64 * 64;
    let mut u = 0;
    while u < total_units {
        let here = chunk_units.min(total_units - u);
        let any = (u..u + here).any(|x| written[(x / 64) as usize] & (1 << (x % 64)) != 0);
        if any {
            let len = (here * unit) as usize;
            let got = file
                .read_at(&mut buf.as_mut_slice()[..len], start + u * unit)
                .map_err(|e| format!("verify: read of {} at offset {}: {e}", path.display(), start + u * unit))?;
            for x in u..u + here {
                if written[(x / 64) as usize] & (1 << (x % 64)) == 0 {
                    continue;
                }
                let i = ((x - u) * unit) as usize;
                let off = x * unit;
                let piece = buf.as_slice().get(i..i + unit as usize).filter(|_| i + unit as usize <= got);
                let outcome =
                    piece.map_or_else(|| Err("file is shorter than what was written".to_string()), |p| check(p, off));
                if let Err(why) = outcome {
                    return Err(format!("verify failed in {} at offset {}: {why}", path.display(), start + off));
                }
            }
        }
        u += here;
    }
    Ok(())
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
        assert!(check(&b[4096..], 40960).unwrap_err().contains("misplaced"));
        b[100] ^= 1;
        assert!(check(&b[..4096], 40960).unwrap_err().contains("crc32c mismatch"));
        assert!(check(&[0u8; 64], 0).unwrap_err().contains("no verify header"));
    }

    #[test]
    fn a_corrupted_file_fails_naming_file_and_offset() {
        let path = std::env::temp_dir().join(format!("fsarena-verify-{}", std::process::id()));
        let mut data = vec![3u8; 4 * 4096];
        stamp(&mut data, 0, 4096, 1);
        std::fs::write(&path, &data).unwrap();
        let file = File::open(&path).unwrap();
        let written = vec![0b1111u64];
        assert!(check_file(&file, &path, 0, 4096, &written, 4096).is_ok());
        data[2 * 4096 + 100] ^= 0xff;
        std::fs::write(&path, &data).unwrap();
        let err = check_file(&file, &path, 0, 4096, &written, 4096).unwrap_err();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("at offset 8192") && err.contains("crc32c"),
            "{err}"
        );
        // units never written are not checked
        assert!(check_file(&file, &path, 0, 4096, &[0b1011u64], 4096).is_ok());
        std::fs::remove_file(&path).unwrap();
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
