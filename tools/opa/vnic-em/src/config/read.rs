// SPDX-License-Identifier: GPL-2.0

//! The file as written, read from the TOML document by hand rather than
//! by serde's derive: serde stops at the first key or type it does not
//! like and says so in its own words ("invalid type: map, expected a
//! sequence"). Here every unknown key (with the known one it is nearest),
//! every value of the wrong type and every missing key is an error at its
//! place, in the words of the file, and the reading goes on.

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::check::Checker;
use super::{RawConfig, RawEm, RawMacEntry, RawRc, RawVesw, RawVport, SInt};
use crate::suggest::did_you_mean;

type Val<'i> = Spanned<DeValue<'i>>;

/// What a value is, in the file's words.
fn kind(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number with a fraction",
        DeValue::Boolean(_) => "true or false",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "a list",
        DeValue::Table(_) => "a table",
    }
}

/// A TOML value as `toml::Value`, for the checks that take any
/// (`[em] sc2vl`).
fn to_value(v: &DeValue<'_>) -> toml::Value {
    match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_or_else(|_| toml::Value::String(i.to_string()), toml::Value::Integer),
        DeValue::Float(f) => toml::Value::Float(f.as_str().parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::Datetime(*d),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_value(x.get_ref())).collect()),
        DeValue::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, x)| (k.get_ref().to_string(), to_value(x.get_ref())))
                .collect(),
        ),
    }
}

/// One table being read: where it is and what it is called in messages.
struct Table<'t, 'i> {
    t: &'t DeTable<'i>,
    name: &'static str,
    span: Range<usize>,
}

impl<'t, 'i> Table<'t, 'i> {
    /// The value of `key`; a value the parser made up where it could not
    /// read one (an empty span, its syntax error reported) is absent.
    fn get(&self, key: &str) -> Option<&'t Val<'i>> {
        self.t.get(key).filter(|v| !v.span().is_empty())
    }
}

/// Reads the tables of the file into the `Raw` structs, its errors into
/// the checker.
struct Reader<'c, 'a> {
    c: &'c mut Checker<'a>,
}

impl Reader<'_, '_> {
    /// Every key of `t` not in `known` is an error, with the known key it
    /// is nearest or, if none is near, the list of them.
    fn keys(&mut self, t: &Table<'_, '_>, known: &[&str]) {
        for (k, _) in t.t.iter() {
            let key: &str = k.get_ref();
            if known.contains(&key) {
                continue;
            }
            let msg = match did_you_mean(key, known) {
                Some(s) => format!("unknown key `{key}` in {}: did you mean `{s}`?", t.name),
                None if t.span.is_empty() => format!(
                    "unknown table or key `{key}`: the file has [em], [[vesw]] and [[vport]]"
                ),
                None => format!(
                    "unknown key `{key}` in {} (its keys: {})",
                    t.name,
                    known.join(", ")
                ),
            };
            self.c.err(k.span(), msg);
        }
    }

    fn wrong(&mut self, key: &str, v: &Val<'_>, want: &str) {
        self.c.err(
            v.span(),
            format!("`{key}` must be {want}, not {}", kind(v.get_ref())),
        );
    }

    fn int_of(&mut self, key: &str, v: &Val<'_>) -> Option<SInt> {
        match v.get_ref() {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(x) => Some(Spanned::new(v.span(), x)),
                Err(_) => {
                    self.c
                        .err(v.span(), format!("`{key}` = {i} is too large a number"));
                    None
                }
            },
            _ => {
                self.wrong(key, v, "an integer (decimal or 0x hex)");
                None
            }
        }
    }

    fn int(&mut self, t: &Table<'_, '_>, key: &str) -> Option<SInt> {
        let v = t.get(key)?;
        self.int_of(key, v)
    }

    /// A key the table cannot go without.
    fn required<T>(&mut self, t: &Table<'_, '_>, key: &str, v: Option<T>) -> Option<T> {
        if v.is_none() && t.t.get(key).is_none() {
            self.c
                .err_absent(t.span.clone(), format!("{} needs `{key}`", t.name));
        }
        v
    }

    fn string(&mut self, t: &Table<'_, '_>, key: &str) -> Option<Spanned<String>> {
        let v = t.get(key)?;
        match v.get_ref() {
            DeValue::String(s) => Some(Spanned::new(v.span(), s.to_string())),
            _ => {
                self.wrong(key, v, "a string in quotes");
                None
            }
        }
    }

    fn boolean(&mut self, t: &Table<'_, '_>, key: &str) -> Option<bool> {
        let v = t.get(key)?;
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.wrong(key, v, "true or false");
                None
            }
        }
    }

    /// A list of integers; `None` if any item is not one (each reported).
    fn ints(&mut self, t: &Table<'_, '_>, key: &str) -> Option<Spanned<Vec<SInt>>> {
        let v = t.get(key)?;
        let DeValue::Array(a) = v.get_ref() else {
            self.wrong(key, v, "a list of integers ([1, 0x2])");
            return None;
        };
        let items: Vec<Option<SInt>> = a.iter().map(|x| self.int_of(key, x)).collect();
        let items: Option<Vec<SInt>> = items.into_iter().collect();
        items.map(|l| Spanned::new(v.span(), l))
    }

    /// A list of strings; `None` if any item is not one (each reported).
    fn strings(&mut self, t: &Table<'_, '_>, key: &str) -> Option<Spanned<Vec<Spanned<String>>>> {
        let v = t.get(key)?;
        let DeValue::Array(a) = v.get_ref() else {
            self.wrong(key, v, "a list of strings ([\"a\", \"b\"])");
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for x in a.iter() {
            match x.get_ref() {
                DeValue::String(s) => out.push(Spanned::new(x.span(), s.to_string())),
                _ => {
                    self.wrong(key, x, "a string in quotes");
                    ok = false;
                }
            }
        }
        ok.then(|| Spanned::new(v.span(), out))
    }

    /// A table written once: `[name]` or `name = { ... }`.
    fn table<'t, 'i>(
        &mut self,
        t: &Table<'t, 'i>,
        key: &str,
        name: &'static str,
        how: &str,
    ) -> Option<Table<'t, 'i>> {
        let v = t.get(key)?;
        match v.get_ref() {
            DeValue::Table(inner) => Some(Table {
                t: inner,
                name,
                span: v.span(),
            }),
            _ => {
                self.c
                    .err(v.span(), format!("`{key}` must be a table: write {how}"));
                None
            }
        }
    }

    /// The tables of an array of tables, `[[how]]`; `[how]` (one table) is
    /// an error that says to write `[[how]]`.
    fn tables<'t, 'i>(
        &mut self,
        t: &Table<'t, 'i>,
        key: &str,
        name: &'static str,
    ) -> Vec<Table<'t, 'i>> {
        let Some(v) = t.get(key) else {
            return Vec::new();
        };
        let bad = format!("`{key}` must be an array of tables: write {name}");
        let DeValue::Array(a) = v.get_ref() else {
            self.c.err(v.span(), bad);
            return Vec::new();
        };
        let mut out = Vec::new();
        for x in a.iter() {
            match x.get_ref() {
                DeValue::Table(inner) => out.push(Table {
                    t: inner,
                    name,
                    span: x.span(),
                }),
                _ => self.c.err(x.span(), bad.clone()),
            }
        }
        out
    }

    fn em(&mut self, t: &Table<'_, '_>) -> RawEm {
        self.keys(t, &["fabric_id", "trap_lid", "trap_sl", "sc2vl"]);
        RawEm {
            fabric_id: self.int(t, "fabric_id"),
            trap_lid: self.int(t, "trap_lid"),
            trap_sl: self.int(t, "trap_sl"),
            sc2vl: t
                .get("sc2vl")
                .map(|v| Spanned::new(v.span(), to_value(v.get_ref()))),
        }
    }

    fn rc(&mut self, t: &Table<'_, '_>) -> RawRc {
        const KEYS: [&str; 7] = [
            "default", "ipv4", "ipv4_udp", "ipv4_tcp", "ipv6", "ipv6_tcp", "ipv6_udp",
        ];
        self.keys(t, &KEYS);
        RawRc {
            default: self.int(t, "default"),
            ipv4: self.int(t, "ipv4"),
            ipv4_udp: self.int(t, "ipv4_udp"),
            ipv4_tcp: self.int(t, "ipv4_tcp"),
            ipv6: self.int(t, "ipv6"),
            ipv6_tcp: self.int(t, "ipv6_tcp"),
            ipv6_udp: self.int(t, "ipv6_udp"),
        }
    }

    fn mac_entry(&mut self, t: &Table<'_, '_>) -> Spanned<RawMacEntry> {
        self.keys(t, &["index", "mac", "mask", "dlid", "node", "source"]);
        let mac = self.string(t, "mac");
        let e = RawMacEntry {
            index: self.int(t, "index"),
            mac: self.required(t, "mac", mac),
            mask: self.string(t, "mask"),
            dlid: self.int(t, "dlid"),
            node: self.string(t, "node"),
            source: self.boolean(t, "source"),
        };
        Spanned::new(t.span.clone(), e)
    }

    fn vesw(&mut self, t: &Table<'_, '_>) -> Spanned<RawVesw> {
        self.keys(
            t,
            &[
                "id",
                "name",
                "fabric_id",
                "pkey",
                "eth_mtu",
                "unknown_ucast_dlids",
                "unknown_ucast_nodes",
                "default_ports",
                "unknown_mcast_dlid",
                "unknown_mcast_mgid",
                "routing_control",
                "mac_table_from_vports",
                "mac_table",
            ],
        );
        let id = self.int(t, "id");
        let pkey = self.int(t, "pkey");
        let rc = self.table(
            t,
            "routing_control",
            "routing_control",
            "routing_control = { ipv4 = 1, ... }",
        );
        let table = self.tables(t, "mac_table", "[[vesw.mac_table]]");
        let v = RawVesw {
            id: self.required(t, "id", id),
            name: self.string(t, "name"),
            fabric_id: self.int(t, "fabric_id"),
            pkey: self.required(t, "pkey", pkey),
            eth_mtu: self.int(t, "eth_mtu"),
            unknown_ucast_dlids: self.ints(t, "unknown_ucast_dlids"),
            unknown_ucast_nodes: self.strings(t, "unknown_ucast_nodes"),
            default_ports: self.ints(t, "default_ports"),
            unknown_mcast_dlid: self.int(t, "unknown_mcast_dlid"),
            unknown_mcast_mgid: self.string(t, "unknown_mcast_mgid"),
            routing_control: rc.map(|r| self.rc(&r)),
            mac_table_from_vports: self.boolean(t, "mac_table_from_vports"),
            mac_table: table.iter().map(|e| self.mac_entry(e)).collect(),
        };
        Spanned::new(t.span.clone(), v)
    }

    fn vport(&mut self, t: &Table<'_, '_>) -> Spanned<RawVport> {
        self.keys(
            t,
            &[
                "lid",
                "node",
                "vport",
                "vesw",
                "port_num",
                "mac",
                "enabled",
                "encap_slid",
                "pcp_sc_uc",
                "pcp_vl_uc",
                "pcp_sc_mc",
                "pcp_vl_mc",
                "non_vlan_sc_uc",
                "non_vlan_vl_uc",
                "non_vlan_sc_mc",
                "non_vlan_vl_mc",
            ],
        );
        let (vport, vesw) = (self.int(t, "vport"), self.int(t, "vesw"));
        let (port_num, mac) = (self.int(t, "port_num"), self.string(t, "mac"));
        let p = RawVport {
            lid: self.int(t, "lid"),
            node: self.string(t, "node"),
            vport: self.required(t, "vport", vport),
            vesw: self.required(t, "vesw", vesw),
            port_num: self.required(t, "port_num", port_num),
            mac: self.required(t, "mac", mac),
            enabled: self.boolean(t, "enabled"),
            encap_slid: self.int(t, "encap_slid"),
            pcp_sc_uc: self.ints(t, "pcp_sc_uc"),
            pcp_vl_uc: self.ints(t, "pcp_vl_uc"),
            pcp_sc_mc: self.ints(t, "pcp_sc_mc"),
            pcp_vl_mc: self.ints(t, "pcp_vl_mc"),
            non_vlan_sc_uc: self.int(t, "non_vlan_sc_uc"),
            non_vlan_vl_uc: self.int(t, "non_vlan_vl_uc"),
            non_vlan_sc_mc: self.int(t, "non_vlan_sc_mc"),
            non_vlan_vl_mc: self.int(t, "non_vlan_vl_mc"),
        };
        Spanned::new(t.span.clone(), p)
    }
}

/// Parses the file and reads what it says, reporting into `c` every
/// syntax error the parser recovers from and every unknown key, value of
/// the wrong type and missing key; what is wrong is left out of the
/// result (`None`), for the checks to skip.
pub(super) fn read(c: &mut Checker<'_>) -> RawConfig {
    let src = c.src;
    let (doc, errors) = DeTable::parse_recoverable(src);
    // The first syntax error of a line is its cause; those after it on the
    // line are the parser finding its feet again.
    let mut lines = Vec::new();
    for e in &errors {
        let span = e.span().unwrap_or(0..0);
        let line = super::line_col(src, span.start).0;
        if !lines.contains(&line) {
            lines.push(line);
            c.err(span, e.message().trim().to_string());
        }
    }
    // A line the parser could not read may hold what seems missing.
    c.partial = !errors.is_empty();
    let top = Table {
        t: doc.get_ref(),
        name: "the file",
        span: 0..0,
    };
    let mut r = Reader { c };
    r.keys(&top, &["em", "vesw", "vport"]);
    let em = r.table(&top, "em", "[em]", "[em]");
    let vesws = r.tables(&top, "vesw", "[[vesw]]");
    let vports = r.tables(&top, "vport", "[[vport]]");
    RawConfig {
        em: em.map(|t| r.em(&t)),
        vesw: vesws.iter().map(|t| r.vesw(t)).collect(),
        vport: vports.iter().map(|t| r.vport(t)).collect(),
    }
}
