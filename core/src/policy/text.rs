//! A policy's text: C2SP tlog-policy lines read strictly (every limit
//! and rule of the format, the first line that breaks one named by its
//! number) and written back.

use super::{
    at, Group, Member, Policy, PolicyError, PolicyLog, PolicyWitness, POLICY_BYTES_MAX,
    POLICY_GROUPS_MAX, POLICY_LOGS_MAX, POLICY_WITNESSES_MAX,
};
use crate::cosignature::WitnessKey;
use crate::note::VerifierKey;

/// The items of a policy line: split on spaces and tabs (a byte scan:
/// a `char` pattern would cost the browser verifier its searcher).
fn fields(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, b) in line.bytes().enumerate().chain([(line.len(), b' ')]) {
        match (b == b' ' || b == b'\t', start) {
            (true, Some(s)) => {
                out.push(&line[s..i]);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

/// `text` followed by `what` (no `format!` on the verifier's path).
/// That line `n` may list one more of `what`, `len` being listed of at
/// most `max`.
fn room(n: usize, len: usize, max: usize, what: &str) -> Result<(), PolicyError> {
    if len == max {
        return Err(at(n, cat("too many ", what)));
    }
    Ok(())
}

fn cat(text: &str, what: &str) -> String {
    let mut out = String::with_capacity(text.len() + what.len());
    out.push_str(text);
    out.push_str(what);
    out
}

/// A threshold `k`: decimal digits only, from 1 to `n`.
fn threshold(text: &str, n: usize) -> Option<usize> {
    let mut k = 0usize;
    for b in text.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        k = k.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
    }
    (1..=n).contains(&k).then_some(k)
}

/// Every name a policy has defined so far, what it is, and whether a
/// group lists it.
type Names<'t> = Vec<(&'t str, Member, bool)>;

/// Where `name` is among the names defined so far.
fn find(names: &[(&str, Member, bool)], name: &str) -> Option<usize> {
    names.iter().position(|(x, _, _)| *x == name)
}

impl Policy {
    /// Reads tlog-policy text.
    ///
    /// # Errors
    /// The first line that breaks the format, a limit or a rule (a name
    /// defined twice or used before it is defined, a duplicate key, a
    /// threshold out of range, not exactly one quorum line), by number.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let mut p = Policy {
            logs: Vec::new(),
            witnesses: Vec::new(),
            groups: Vec::new(),
            quorum: None,
        };
        // Filled in place, so a failed line drops the policy once, here,
        // not at each of its returns (size of the browser verifier).
        p.read(text)?;
        Ok(p)
    }

    fn read(&mut self, text: &str) -> Result<(), PolicyError> {
        let p = self;
        if text.len() > POLICY_BYTES_MAX {
            return Err(at(0, "longer than 64 KiB"));
        }
        let mut names: Names<'_> = Vec::new();
        let mut quorum_seen = false;
        for (i, line) in text.split('\n').enumerate() {
            let n = i + 1;
            if line.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
                return Err(at(
                    n,
                    "control character (only tab and newline are allowed; CRLF line ends?)",
                ));
            }
            let f = fields(line);
            let Some(&keyword) = f.first() else {
                continue;
            };
            if keyword.starts_with('#') {
                continue;
            }
            // A witness or group name: not `none`, not defined before.
            if matches!(keyword, "witness" | "group") && f.len() > 1 {
                if f[1] == "none" {
                    return Err(at(n, "the name none is reserved"));
                }
                if find(&names, f[1]).is_some() {
                    return Err(at(n, cat(f[1], " is defined twice")));
                }
            }
            match (keyword, f.len()) {
                ("log", 2 | 3) => p.read_log(n, &f)?,
                ("witness", 3 | 4) => {
                    let member = p.read_witness(n, &f)?;
                    names.push((f[1], member, false));
                }
                ("group", k) if k >= 4 => {
                    let member = p.read_group(n, &f, &mut names)?;
                    names.push((f[1], member, false));
                }
                ("quorum", 2) => {
                    if quorum_seen {
                        return Err(at(n, "a second quorum line"));
                    }
                    quorum_seen = true;
                    p.read_quorum(n, f[1], &names)?;
                }
                ("log" | "witness" | "group" | "quorum", _) => {
                    return Err(at(n, cat(keyword, ": wrong number of items")))
                }
                _ => return Err(at(n, cat(keyword, ": unknown keyword"))),
            }
        }
        if !quorum_seen {
            return Err(at(
                0,
                "no quorum line (write `quorum none` to require no witness)",
            ));
        }
        Ok(())
    }

    /// The one `quorum` line's member: `none`, or a witness or group.
    fn read_quorum(&mut self, n: usize, name: &str, names: &Names<'_>) -> Result<(), PolicyError> {
        if name != "none" {
            let i = find(names, name).ok_or_else(|| {
                at(
                    n,
                    cat(
                        name,
                        " is not a witness or group defined on an earlier line",
                    ),
                )
            })?;
            self.quorum = Some(names[i].1);
        }
        Ok(())
    }

    /// A `log` line: `log <vkey> [<url>]`.
    fn read_log(&mut self, n: usize, f: &[&str]) -> Result<(), PolicyError> {
        let p = self;
        room(n, p.logs.len(), POLICY_LOGS_MAX, "logs")?;
        let key = VerifierKey::parse(f[1]).map_err(|e| at(n, cat("log key: ", &e.to_string())))?;
        let bytes = *key.key.as_bytes();
        if p.logs.iter().any(|l| l.key == bytes) {
            return Err(at(n, "the same log key is listed twice"));
        }
        p.logs.push(PolicyLog {
            vkey: f[1].to_owned(),
            origin: key.name.to_owned(),
            url: f.get(2).map(|u| (*u).to_owned()),
            key: bytes,
        });
        Ok(())
    }

    /// A `witness` line: `witness <name> <vkey> [<url>]`; the member it
    /// names.
    fn read_witness(&mut self, n: usize, f: &[&str]) -> Result<Member, PolicyError> {
        let p = self;
        room(n, p.witnesses.len(), POLICY_WITNESSES_MAX, "witnesses")?;
        let key = WitnessKey::parse(f[2]).map_err(|e| at(n, e.to_string()))?;
        if p.witnesses
            .iter()
            .any(|w| w.key.public_key() == key.public_key())
        {
            return Err(at(n, "the same witness key is listed twice"));
        }
        p.witnesses.push(PolicyWitness {
            name: f[1].to_owned(),
            key,
            url: f.get(3).map(|u| (*u).to_owned()),
        });
        Ok(Member::Witness(p.witnesses.len() - 1))
    }

    /// A `group` line: `group <name> <all|any|k> <member>...`, each member
    /// defined before (in `names`) and in no other group; the member it
    /// names.
    fn read_group(
        &mut self,
        n: usize,
        f: &[&str],
        names: &mut Names<'_>,
    ) -> Result<Member, PolicyError> {
        let p = self;
        room(n, p.groups.len(), POLICY_GROUPS_MAX, "groups")?;
        let listed = &f[3..];
        let k = match f[2] {
            "all" => listed.len(),
            "any" => 1,
            t => threshold(t, listed.len()).ok_or_else(|| {
                at(
                    n,
                    cat(t, " is not all, any or a number from 1 to the members"),
                )
            })?,
        };
        let mut members = Vec::with_capacity(listed.len());
        for m in listed {
            let Some(i) = find(names, m) else {
                return Err(at(
                    n,
                    cat(m, " is not a witness or group defined on an earlier line"),
                ));
            };
            if names[i].2 {
                return Err(at(n, cat(m, " is already a member of a group")));
            }
            names[i].2 = true;
            members.push(names[i].1);
        }
        p.groups.push(Group {
            name: f[1].to_owned(),
            spelled: f[2].to_owned(),
            threshold: k,
            members,
        });
        Ok(Member::Group(p.groups.len() - 1))
    }

    /// The policy as tlog-policy text: logs, witnesses, groups, quorum.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let url = |u: &Option<String>| u.as_ref().map_or(String::new(), |u| format!(" {u}"));
        for l in &self.logs {
            out.push_str(&format!("log {}{}\n", l.vkey, url(&l.url)));
        }
        for w in &self.witnesses {
            out.push_str(&format!(
                "witness {} {}{}\n",
                w.name,
                w.key.vkey(),
                url(&w.url)
            ));
        }
        for g in &self.groups {
            out.push_str(&format!("group {} {}", g.name, g.spelled));
            for m in &g.members {
                out.push(' ');
                out.push_str(self.member_name(*m));
            }
            out.push('\n');
        }
        out.push_str("quorum ");
        out.push_str(self.quorum.map_or("none", |m| self.member_name(m)));
        out.push('\n');
        out
    }

    /// The same witnesses and quorum, accepting exactly the logs `vkeys`
    /// (one log's published policy names only that log).
    ///
    /// # Errors
    /// A key that is not a log's verifier key, or a duplicate.
    pub fn with_logs(&self, vkeys: &[&str]) -> Result<Policy, PolicyError> {
        let mut text = String::new();
        for k in vkeys {
            text.push_str("log ");
            text.push_str(k);
            text.push('\n');
        }
        let mut rest = self.clone();
        rest.logs.clear();
        text.push_str(&rest.to_text());
        Policy::parse(&text)
    }
}
