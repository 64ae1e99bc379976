//! The text of filebench's workload model language (`.f` files): tokens, then statements with
//! the line each starts on. What the statements mean is [`super::model`]'s business.
//!
//! The language, as filebench's own lexer reads it: `#` starts a comment to the end of the
//! line; a statement ends at the end of its line unless the line ends with a comma (oltp.f
//! continues a flowop's attributes on the next line); `{` and `}` open and close a process's
//! or a thread's body, on the statement's line or on a line of their own; a statement is some
//! leading words (`define fileset`, `flowop openfile`, `set mode quit firstdone`, `run 60`)
//! and then attributes `key=value` or bare `key`, separated by commas. A value is a word, a
//! quoted string or a `$variable`; a word followed by `(` runs to its matching `)`, so
//! `cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)` is one value.

use fsarena_core::InputError;

/// One `key=value` (or bare `key`) of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// The key as written (`filesetname`, `$nfiles` in a `set`).
    pub key: String,
    /// The value as written, `None` for a bare key (`readonly`, `random`).
    pub value: Option<String>,
}

/// One statement: its leading words and its attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    /// The line it starts on (1-based).
    pub line: usize,
    /// The leading words: `["define", "fileset"]`, `["run", "60"]`, `["echo", "text"]`.
    pub words: Vec<String>,
    /// The attributes after the words, in order.
    pub attrs: Vec<Attr>,
}

/// What a file is made of, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A statement.
    Stmt(Stmt),
    /// `{` on this line.
    Open(usize),
    /// `}` on this line.
    Close(usize),
    /// A statement that does not parse: refused when the walk reaches it, so that an
    /// earlier statement refused by name (a randvar with a table) is what the user reads.
    Bad(InputError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Eq,
    Comma,
    Open,
    Close,
    End,
}

/// Splits `text` into tokens with their lines; `file` names the file in errors.
fn tokens(file: &str, text: &str) -> Result<Vec<(Tok, usize)>, InputError> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                out.push((Tok::End, line));
                line += 1;
            }
            c if c.is_whitespace() => {}
            '#' => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '=' => out.push((Tok::Eq, line)),
            ',' => out.push((Tok::Comma, line)),
            '{' => out.push((Tok::Open, line)),
            '}' => out.push((Tok::Close, line)),
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\n') | None => {
                            return Err(InputError::new(
                                "a quoted string is not closed on its line: expected a closing \"",
                            )
                            .at(format!("{file}:{line}")))
                        }
                        Some(c) => s.push(c),
                    }
                }
                out.push((Tok::Word(s), line));
            }
            c => {
                let mut w = String::from(c);
                let mut depth = i32::from(c == '(');
                while let Some(&n) = chars.peek() {
                    if depth == 0 && (n.is_whitespace() || "=,{}#\"".contains(n)) {
                        break;
                    }
                    if n == '\n' {
                        // A random variable's table spans lines: the word ends here and the
                        // statement is refused by what it is (a randvar), not by its syntax.
                        break;
                    }
                    depth += i32::from(n == '(') - i32::from(n == ')');
                    w.push(n);
                    chars.next();
                }
                out.push((Tok::Word(w), line));
            }
        }
    }
    out.push((Tok::End, line));
    Ok(out)
}

/// Parses a `.f` file's text into statements and braces.
pub fn parse(file: &str, text: &str) -> Result<Vec<Item>, InputError> {
    let toks = tokens(file, text)?;
    let mut items = Vec::new();
    let mut cur: Vec<(Tok, usize)> = Vec::new();
    for (tok, line) in toks {
        match tok {
            // A trailing comma continues the statement on the next line.
            Tok::End if matches!(cur.last(), Some((Tok::Comma, _))) => {}
            Tok::End => flush(file, &mut cur, &mut items),
            Tok::Open | Tok::Close => {
                flush(file, &mut cur, &mut items);
                items.push(if tok == Tok::Open { Item::Open(line) } else { Item::Close(line) });
            }
            t => cur.push((t, line)),
        }
    }
    Ok(items)
}

/// Turns the tokens of one statement into a [`Stmt`] (or an [`Item::Bad`]).
fn flush(file: &str, cur: &mut Vec<(Tok, usize)>, items: &mut Vec<Item>) {
    if let Err(e) = statement(file, cur, items) {
        items.push(Item::Bad(e));
    }
}

fn statement(file: &str, cur: &mut Vec<(Tok, usize)>, items: &mut Vec<Item>) -> Result<(), InputError> {
    let toks = std::mem::take(cur);
    let Some(&(_, line)) = toks.first() else { return Ok(()) };
    let err = |m: String| Err(InputError::new(m).at(format!("{file}:{line}")));
    let mut words = Vec::new();
    let mut i = 0;
    // Leading words: every word not followed by `=` or `,` before the first attribute.
    while let Some((Tok::Word(w), _)) = toks.get(i) {
        if matches!(toks.get(i + 1), Some((Tok::Eq | Tok::Comma, _))) {
            break;
        }
        words.push(w.clone());
        i += 1;
    }
    // Constructs refused by name (random variables, composite flowops) are not parsed
    // further: their attribute syntax is not this parser's to judge.
    if matches!(words.as_slice(), [d, k, ..] if d == "define" && (k == "randvar" || k == "flowop" || k == "composite"))
    {
        items.push(Item::Stmt(Stmt { line, words, attrs: Vec::new() }));
        return Ok(());
    }
    if words == ["set"]
        && toks.len() > i + 3
        && matches!(toks[i + 1].0, Tok::Eq)
        && matches!(toks[i + 3].0, Tok::Word(_))
    {
        return err("an expression in set is not supported yet: expected `set $NAME=VALUE` with one value".into());
    }
    let mut attrs = Vec::new();
    while i < toks.len() {
        let Some((Tok::Word(key), _)) = toks.get(i) else {
            return err("expected an attribute name (key=value) after the statement's words".into());
        };
        i += 1;
        let mut value = None;
        if matches!(toks.get(i), Some((Tok::Eq, _))) {
            match toks.get(i + 1) {
                Some((Tok::Word(v), _)) => value = Some(v.clone()),
                _ => return err("an attribute has no value after '=': expected key=VALUE".into()),
            }
            i += 2;
        }
        attrs.push(Attr { key: key.clone(), value });
        match toks.get(i) {
            None => {}
            Some((Tok::Comma, _)) => i += 1,
            Some(_) => return err("expected ',' between attributes".into()),
        }
    }
    if words.is_empty() {
        return err("a statement must start with a word such as define, set, flowop or run".into());
    }
    items.push(Item::Stmt(Stmt { line, words, attrs }));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stmts(text: &str) -> Vec<Item> {
        parse("t.f", text).unwrap()
    }

    #[test]
    fn statements_words_attributes_braces_and_continuations() {
        let items = stmts(
            "# comment\nset $x=cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)\n\
             define process name=p,instances=1\n{\n  thread name=t, memsize=10m,useism {\n\
             flowop read name=r,filesetname=f,\n    iosize=2k,random # tail\n  }\n}\nrun 60\necho \"hi there\"\n",
        );
        let Item::Stmt(set) = &items[0] else { panic!() };
        assert_eq!(set.line, 2);
        assert_eq!(set.attrs[0].value.as_deref(), Some("cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)"));
        assert_eq!(items[2], Item::Open(4));
        let Item::Stmt(th) = &items[3] else { panic!() };
        assert_eq!(th.attrs.iter().map(|a| a.key.as_str()).collect::<Vec<_>>(), ["name", "memsize", "useism"]);
        assert_eq!(items[4], Item::Open(5));
        let Item::Stmt(f) = &items[5] else { panic!() };
        assert_eq!((f.line, f.words.clone()), (6, vec!["flowop".to_string(), "read".to_string()]));
        assert_eq!(f.attrs.len(), 4);
        assert_eq!(f.attrs[3], Attr { key: "random".into(), value: None });
        let Item::Stmt(run) = &items[8] else { panic!() };
        assert_eq!(run.words, ["run", "60"]);
        let Item::Stmt(echo) = &items[9] else { panic!() };
        assert_eq!(echo.words, ["echo", "hi there"]);
    }

    #[test]
    fn broken_text_names_file_and_line() {
        let e = parse("my.f", "set $a=1\necho \"open\n").unwrap_err();
        assert_eq!(e.origin, "my.f:2");
        let Item::Bad(e) = &parse("my.f", "\n\nflowop read name=\n").unwrap()[0] else { panic!() };
        assert_eq!(e.origin, "my.f:3");
        assert!(e.message.contains("has no value"), "{}", e.message);
        assert!(!e.message.contains("name"), "nothing of the file is quoted: {}", e.message);
    }
}
