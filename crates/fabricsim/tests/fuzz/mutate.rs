//! A seeded mutator of text inputs: byte flips, number and token replacements, key renames,
//! truncation and duplication of lines. The same seed gives the same mutant.

use fabricsim::rng::Rng;

/// Values a number or token is replaced by: the bounds and the values past them.
const NUMBERS: [&str; 24] = [
    "0",
    "-1",
    "1",
    "2",
    "7",
    "8",
    "255",
    "256",
    "65536",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e30",
    "-0.0",
    "0.5",
    "nan",
    "inf",
    "-inf",
    "1e-300",
    "3.7",
    "\"0B\"",
    "\"1e30s\"",
    "\"\"",
    "true",
];
const TOKENS: [&str; 10] = ["=", "[", "]", "[[x]]", "\"", "#", "\n", "x", "{", "[sim]\n"];

/// The mutant of `text` for case `seed`: one to three mutations.
pub fn mutate(text: &str, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(3) {
        s = match rng.below(7) {
            0 => flip_byte(&s, &mut rng),
            1 | 2 => replace_number(&s, &mut rng),
            3 => rename_key(&s, &mut rng),
            4 => truncate(&s, &mut rng),
            5 => duplicate_lines(&s, &mut rng),
            _ => insert_token(&s, &mut rng),
        };
    }
    s
}

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

/// A byte of the text replaced by another (kept valid UTF-8: ASCII in, ASCII out).
fn flip_byte(s: &str, rng: &mut Rng) -> String {
    let mut b = s.as_bytes().to_vec();
    if b.is_empty() {
        return s.to_string();
    }
    let i = rng.below(b.len() as u64) as usize;
    if b[i].is_ascii() {
        b[i] = (b[i] ^ (1 << rng.below(7))) & 0x7f;
    }
    String::from_utf8(b).unwrap_or_else(|_| s.to_string())
}

/// The spans of numbers (digits with `.`, `e`, `-`) in `s`.
fn numbers(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let j = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'-') {
                i += 1;
            }
            v.push((j, i));
        } else {
            i += 1;
        }
    }
    v
}

/// A number of the text (a value, a size with its unit, a time) replaced by a boundary value.
fn replace_number(s: &str, rng: &mut Rng) -> String {
    let spans = numbers(s);
    if spans.is_empty() {
        return insert_token(s, rng);
    }
    let (a, b) = spans[rng.below(spans.len() as u64) as usize];
    format!("{}{}{}", &s[..a], pick(rng, &NUMBERS), &s[b..])
}

/// The key of a `key = value` line renamed (a typo, or another key of the file).
fn rename_key(s: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let keyed: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains('=') && !lines[i].trim_start().starts_with('#'))
        .collect();
    if keyed.is_empty() {
        return flip_byte(s, rng);
    }
    let i = keyed[rng.below(keyed.len() as u64) as usize];
    let other = keyed[rng.below(keyed.len() as u64) as usize];
    let (_, v) = lines[i].split_once('=').unwrap();
    let k = if rng.below(2) == 0 {
        format!("{}x", lines[i].split_once('=').unwrap().0.trim())
    } else {
        lines[other].split_once('=').unwrap().0.trim().to_string()
    };
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[i] = format!("{k} ={v}");
    out.join("\n") + "\n"
}

fn truncate(s: &str, rng: &mut Rng) -> String {
    let mut n = rng.below(s.len() as u64 + 1) as usize;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].to_string()
}

/// A run of lines repeated after itself (a duplicated key or table, a repeated record).
fn duplicate_lines(s: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = s.lines().collect();
    if lines.is_empty() {
        return s.to_string();
    }
    let a = rng.below(lines.len() as u64) as usize;
    let b = (a + 1 + rng.below(4) as usize).min(lines.len());
    let mut out: Vec<&str> = lines[..b].to_vec();
    out.extend_from_slice(&lines[a..b]);
    out.extend_from_slice(&lines[b..]);
    out.join("\n") + "\n"
}

fn insert_token(s: &str, rng: &mut Rng) -> String {
    let mut i = rng.below(s.len() as u64 + 1) as usize;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    format!("{}{}{}", &s[..i], pick(rng, &TOKENS), &s[i..])
}
