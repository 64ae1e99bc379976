//! fio's reserved words in job-file values (`$pagesize`, `$mb_memory`, `$ncpus`) and the
//! arithmetic fio does on a value that held one (`size=$mb_memory/2`).
//!
//! fio 3.33 (options.c, `fio_keyword_replace`) replaces each word wherever it stands in the
//! `key=value` line; only when it replaced one, and the line holds `+`, `-`, `*` or `/` and
//! no `'`, does it pipe the value through `bc` (integer arithmetic: no size suffixes, `/`
//! truncates) — unless the line is 128 characters or longer or the value longer than 100,
//! which it leaves as it is. Without a word there is no arithmetic at all: `bs=4k*2` is read
//! as fio reads any size (the number and its suffix), and a value in parentheses, fio's
//! own expression syntax, is refused by fio 3.33 as Debian builds it (no `CONFIG_ARITHMETIC`)
//! and so by fsarena.

/// The machine's values of fio's reserved words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// `$pagesize`: the page size in bytes.
    pub pagesize: u64,
    /// `$mb_memory`: physical memory in MiB (rounded down).
    pub mb_memory: u64,
    /// `$ncpus`: CPUs configured (fio's `cpus_configured`, `_SC_NPROCESSORS_CONF`).
    pub ncpus: u64,
}

impl Host {
    /// This machine's values, read as fio reads them (sysconf).
    pub fn this_machine() -> Self {
        let conf = |name| {
            // SAFETY: sysconf has no preconditions.
            let n = unsafe { libc::sysconf(name) };
            u64::try_from(n).unwrap_or(0)
        };
        let pagesize = conf(libc::_SC_PAGESIZE);
        Self {
            pagesize,
            mb_memory: conf(libc::_SC_PHYS_PAGES).saturating_mul(pagesize) >> 20,
            ncpus: conf(libc::_SC_NPROCESSORS_CONF),
        }
    }
}

/// fio leaves a line this long (or longer) as it is, words replaced but not computed.
const MAX_COMPUTED_LINE: usize = 128;
/// ... and a value longer than this.
const MAX_COMPUTED_VALUE: usize = 100;

/// `line` (`key=value`, `${VAR}` already expanded) with fio's reserved words replaced and,
/// where fio computes it, the value computed. The error says why the value cannot be
/// computed; it quotes only the value's shape, never the line.
pub fn replace(line: &str, host: &Host) -> Result<String, String> {
    let words = [("$pagesize", host.pagesize), ("$mb_memory", host.mb_memory), ("$ncpus", host.ncpus)];
    if !words.iter().any(|(w, _)| line.contains(w)) {
        return Ok(line.to_string());
    }
    let mut out = line.to_string();
    for (word, value) in words {
        out = out.replace(word, &value.to_string());
    }
    let math = out.contains(['+', '-', '*', '/']) && !out.contains('\'');
    let Some((key, value)) = out.split_once('=') else { return Ok(out) };
    if !math || out.len() >= MAX_COMPUTED_LINE || value.len() > MAX_COMPUTED_VALUE {
        return Ok(out);
    }
    let number = compute(value).map_err(|m| format!("{}: {m}", key.trim()))?;
    Ok(format!("{key}={number}"))
}

/// Computes `text` as `bc` does with its default scale 0, on whole numbers only.
fn compute(text: &str) -> Result<u64, String> {
    let tokens = tokenize(text)?;
    let mut p = Parser { tokens: &tokens, at: 0 };
    let v = p.sum()?;
    if p.at != tokens.len() {
        return Err(unreadable());
    }
    u64::try_from(v).map_err(|_| "the value computes to a negative number: expected a size or count".to_string())
}

fn unreadable() -> String {
    "fio computes this value with bc after $pagesize, $mb_memory or $ncpus; fsarena reads whole numbers, + - * / % ^ and parentheses in it: expected e.g. size=$mb_memory/2".to_string()
}

fn too_large() -> String {
    "the value computes to more than 2^64-1".to_string()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Number(i128),
    Op(u8),
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' => i += 1,
            b'0'..=b'9' => {
                let end = bytes[i..].iter().position(|c| !c.is_ascii_digit()).map_or(bytes.len(), |n| i + n);
                let n: i128 = text[i..end].parse().map_err(|_| too_large())?;
                out.push(Token::Number(n));
                i = end;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'(' | b')' => {
                out.push(Token::Op(b));
                i += 1;
            }
            _ => return Err(unreadable()),
        }
    }
    Ok(out)
}

/// bc's grammar for these operators: `+ -` below `* / %` below `^` (right-associative)
/// below unary minus.
struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.at).copied()
    }

    fn eat(&mut self, op: u8) -> bool {
        let hit = self.peek() == Some(Token::Op(op));
        self.at += usize::from(hit);
        hit
    }

    fn sum(&mut self) -> Result<i128, String> {
        let mut v = self.product()?;
        loop {
            if self.eat(b'+') {
                v = v.checked_add(self.product()?).ok_or_else(too_large)?;
            } else if self.eat(b'-') {
                v = v.checked_sub(self.product()?).ok_or_else(too_large)?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<i128, String> {
        let mut v = self.power()?;
        loop {
            let op = match self.peek() {
                Some(Token::Op(op @ (b'*' | b'/' | b'%'))) => op,
                _ => return Ok(v),
            };
            self.at += 1;
            let rhs = self.power()?;
            v = match op {
                b'*' => v.checked_mul(rhs).ok_or_else(too_large)?,
                // bc truncates toward zero, as Rust does.
                _ if rhs == 0 => return Err("the value divides by zero".to_string()),
                b'/' => v / rhs,
                _ => v % rhs,
            };
        }
    }

    fn power(&mut self) -> Result<i128, String> {
        let base = self.unary()?;
        if !self.eat(b'^') {
            return Ok(base);
        }
        let exp = self.power()?;
        let exp = u32::try_from(exp).map_err(|_| unreadable())?;
        base.checked_pow(exp).ok_or_else(too_large)
    }

    fn unary(&mut self) -> Result<i128, String> {
        if self.eat(b'-') {
            return Ok(-self.unary()?);
        }
        match self.peek() {
            Some(Token::Number(n)) => {
                self.at += 1;
                Ok(n)
            }
            Some(Token::Op(b'(')) => {
                self.at += 1;
                let v = self.sum()?;
                if !self.eat(b')') {
                    return Err(unreadable());
                }
                Ok(v)
            }
            _ => Err(unreadable()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const HOST: Host = Host { pagesize: 4096, mb_memory: 24105, ncpus: 2 };

    #[test]
    fn words_are_replaced_and_computed_as_fio_33_does() {
        // Each pair checked against fio 3.33's "job options" on a machine with these values.
        for (line, want) in [
            ("size=$mb_memory/2", "size=12052"),
            ("size=(8*$mb_memory)", "size=192840"),
            ("size=$mb_memory", "size=24105"),
            ("bs=$pagesize*2", "bs=8192"),
            ("bs=$pagesize-1024", "bs=3072"),
            ("size=$mb_memory*1024*1024/4096", "size=6170880"),
            ("numjobs=$ncpus", "numjobs=2"),
            // No + - * /: no arithmetic, the rest is fio's reading of a size.
            ("size=$mb_memory^1", "size=24105^1"),
            ("bs=$pagesizek", "bs=4096k"),
            // A quote stops the arithmetic.
            ("bs=$pagesize'", "bs=4096'"),
            ("rw=read:$pagesize", "rw=read:4096"),
            // No word: nothing computed.
            ("bs=4k*2", "bs=4k*2"),
            ("size=2m/2", "size=2m/2"),
        ] {
            assert_eq!(replace(line, &HOST).unwrap(), want, "{line}");
        }
    }

    #[test]
    fn bc_precedence_and_refusals() {
        assert_eq!(compute("2+3*4").unwrap(), 14);
        assert_eq!(compute("2^3^2").unwrap(), 512);
        assert_eq!(compute("-2^2").unwrap(), 4);
        assert_eq!(compute("(7-3)%3").unwrap(), 1);
        assert_eq!(compute(" 9 / 2 ").unwrap(), 4);
        // fio's bc fails on these ("syntax error", "Divide by zero"): the job is refused.
        for bad in ["2k-4096", "4096/0", "2*4096 k", "(1", "1-2", "x*2", ""] {
            assert!(compute(bad).is_err(), "{bad}");
        }
        // Too long for fio to compute: left as it is.
        let long = format!("filename={}-$ncpus", "a".repeat(130));
        assert_eq!(replace(&long, &HOST).unwrap(), format!("filename={}-2", "a".repeat(130)));
    }
}
