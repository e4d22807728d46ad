//! Rank tables (the cluster-information JSON of `HcclCommInitClusterInfo`): versions "1.0" and
//! "1.2" (string values, a server list), "2.0" (numbers, a rank list) and the legacy group-list
//! form without a version. A table is checked in full; every server it names must be this
//! machine (a loopback or local-interface address), since the emulator never connects to other
//! hosts. Local processes given the same file meet on a rendezvous named after the file's real
//! path and content.

use crate::error::*;
use crate::net;
use hccl_sys::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::net::IpAddr;

/// The longest path accepted, NUL included.
const PATH_MAX: usize = 4096;

/// A checked rank table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// The number of ranks.
    pub ranks: u32,
    /// Names the rendezvous: a hash of the real path and the content.
    pub key: [u8; 16],
    /// The servers: each one's id and address (loopback for a one-server table without one).
    pub servers: Vec<(String, IpAddr)>,
    /// The server of each rank.
    pub server_of: Vec<usize>,
    /// The `host_port` of rank 0's device, if the table gives it.
    pub host_port: Option<u16>,
}

impl Table {
    /// The address the rendezvous of this table listens on: rank 0's server, at its device's
    /// `host_port`, else at a port derived from the table's key (below the kernel's ephemeral
    /// range), which every process of the table computes alike.
    pub fn rendezvous(&self) -> std::net::SocketAddr {
        let ip = self.servers[self.server_of[0]].1;
        let k = u64::from_le_bytes(self.key[..8].try_into().expect("8 bytes"));
        let port = self.host_port.unwrap_or(20_000 + (k % 12_000) as u16);
        std::net::SocketAddr::new(ip, port)
    }
}

/// What a table says, before it is keyed.
#[derive(Debug, Default)]
struct Parsed {
    /// (rank id, server index) of every device.
    ranks: Vec<(u64, usize)>,
    /// Every server's id and address, if it names one.
    servers: Vec<(String, Option<IpAddr>)>,
    host_port: Option<u16>,
}

impl Parsed {
    fn server(&mut self, id: &str, addr: Option<IpAddr>) -> usize {
        if let Some(i) = self.servers.iter().position(|(s, _)| s == id) {
            return i;
        }
        self.servers
            .push((id.to_string(), addr.or_else(|| id.parse().ok())));
        self.servers.len() - 1
    }
}

/// Why a table is refused.
enum Bad {
    /// Malformed: E_INTERNAL, as the library reports an invalid file.
    Invalid(String),
    /// Names a server that is not this machine: E_NOT_SUPPORT.
    NotLocal(String),
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, Bad> {
    Err(Bad::Invalid(msg.into()))
}

/// Loads and checks the rank table at `path`.
pub(crate) fn load(path: &str) -> R<Table> {
    if path.len() + 1 > PATH_MAX {
        return fail(
            HCCL_E_PARA,
            format!(
                "the rank table path is {} bytes long (at most {} with its NUL)",
                path.len(),
                PATH_MAX
            ),
        );
    }
    let real = std::fs::canonicalize(path).map_err(|e| Fail {
        code: HCCL_E_INTERNAL,
        msg: format!("cannot resolve the rank table path {path:?}: {e}"),
    })?;
    let text = std::fs::read_to_string(&real).map_err(|e| Fail {
        code: HCCL_E_INTERNAL,
        msg: format!("cannot read the rank table {}: {e}", real.display()),
    })?;
    let parsed = parse(&text).map_err(|b| match b {
        Bad::Invalid(m) => Fail {
            code: HCCL_E_INTERNAL,
            msg: format!("the rank table {} is invalid: {m}", real.display()),
        },
        Bad::NotLocal(m) => Fail {
            code: HCCL_E_NOT_SUPPORT,
            msg: format!("the rank table {}: {m}", real.display()),
        },
    })?;
    let mut keyed = real.to_string_lossy().into_owned().into_bytes();
    keyed.push(0);
    keyed.extend_from_slice(text.as_bytes());
    let ranks = parsed.ranks.len() as u32;
    let mut server_of = vec![0; ranks as usize];
    for (r, s) in &parsed.ranks {
        server_of[*r as usize] = *s;
    }
    let servers = parsed
        .servers
        .into_iter()
        .map(|(id, addr)| {
            (
                id,
                addr.unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
            )
        })
        .collect();
    Ok(Table {
        ranks,
        key: hash128(&keyed),
        servers,
        server_of,
        host_port: parsed.host_port,
    })
}

/// Two FNV-1a 64-bit hashes with different offsets: stable across processes and builds.
fn hash128(b: &[u8]) -> [u8; 16] {
    let h = |mut h: u64| {
        for x in b {
            h ^= *x as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&h(0xcbf2_9ce4_8422_2325).to_le_bytes());
    k[8..].copy_from_slice(&h(0x84222325_cbf29ce4).to_le_bytes());
    k
}

/// Parses and checks a table.
fn parse(text: &str) -> Result<Parsed, Bad> {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return invalid(format!("not valid JSON: {e}")),
    };
    if !v.is_object() {
        return invalid("the top level is not a JSON object");
    }
    match v.get("version") {
        Some(Value::String(s)) if s == "1.0" || s == "1.2" => v1(&v, s == "1.2"),
        Some(Value::String(s)) if s == "2.0" => v2(&v),
        Some(Value::String(s)) if s == "1.1" => Err(Bad::NotLocal(
            "version 1.1 (heterogeneous clusters) is not supported by the emulator".to_string(),
        )),
        Some(other) => invalid(format!(
            "version {other} is not one of \"1.0\", \"1.2\", \"2.0\""
        )),
        None if v.get("group_list").is_some() => legacy(&v),
        None => invalid("no \"version\" (and no legacy \"group_list\")"),
    }
}

fn field<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Value, Bad> {
    v.get(key)
        .ok_or_else(|| Bad::Invalid(format!("{at} has no \"{key}\"")))
}

/// A 1.x value: an integer written as a JSON string.
fn str_int(v: &Value, key: &str, at: &str) -> Result<u64, Bad> {
    match field(v, key, at)? {
        Value::String(s) => s.parse::<u64>().map_err(|_| {
            Bad::Invalid(format!(
                "{at}: \"{key}\" is {s:?}, not a non-negative integer"
            ))
        }),
        other => invalid(format!(
            "{at}: \"{key}\" is {other}, not a string (version 1.x values are strings)"
        )),
    }
}

fn str_field<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, Bad> {
    match field(v, key, at)? {
        Value::String(s) => Ok(s),
        other => invalid(format!("{at}: \"{key}\" is {other}, not a string")),
    }
}

fn opt_ip(v: &Value, key: &str, at: &str) -> Result<Option<IpAddr>, Bad> {
    match v.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => s
            .parse::<IpAddr>()
            .map(Some)
            .map_err(|_| Bad::Invalid(format!("{at}: \"{key}\" {s:?} is not an IP address"))),
        Some(other) => invalid(format!("{at}: \"{key}\" is {other}, not a string")),
    }
}

fn array<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Vec<Value>, Bad> {
    match field(v, key, at)? {
        Value::Array(a) => Ok(a),
        other => invalid(format!("{at}: \"{key}\" is {other}, not an array")),
    }
}

/// Checks that the rank ids are 0..n, each once.
fn check_ranks(p: Parsed) -> Result<Parsed, Bad> {
    let ids: Vec<u64> = p.ranks.iter().map(|r| r.0).collect();
    let set: BTreeSet<u64> = ids.iter().copied().collect();
    if set.len() != ids.len() {
        return invalid("a rank_id appears more than once");
    }
    let n = ids.len() as u64;
    if let Some(bad) = set.iter().find(|r| **r >= n) {
        return invalid(format!(
            "rank_id {bad} is out of range: {n} ranks must be numbered 0 to {}",
            n.saturating_sub(1)
        ));
    }
    if n == 0 {
        return invalid("the table has no ranks");
    }
    Ok(p)
}

/// Checks that a server (named `id`, with an address if known) is this machine, when the table
/// has several servers (a one-server table is this machine by definition).
fn check_local(id: &str, addr: Option<IpAddr>, servers: usize) -> Result<(), Bad> {
    if servers <= 1 {
        return Ok(());
    }
    match addr.or_else(|| id.parse().ok()) {
        Some(ip) if net::is_local(ip) => Ok(()),
        Some(ip) => Err(Bad::NotLocal(net::not_local(
            &format!("server {id:?} has the address"),
            &ip.to_string(),
        ))),
        None => Err(Bad::NotLocal(format!(
            "server {id:?} of a {servers}-server table has no address (host_ip, or an IP address \
             as server_id) that shows it is this machine; the emulator runs every rank on this \
             machine and never connects to other hosts"
        ))),
    }
}

/// Versions 1.0 and 1.2.
fn v1(v: &Value, v12: bool) -> Result<Parsed, Bad> {
    match field(v, "status", "the table")? {
        Value::String(s) if s == "completed" => {}
        other => {
            return invalid(format!(
                "\"status\" is {other}, not \"completed\" (the table is not finished)"
            ));
        }
    }
    let count = str_int(v, "server_count", "the table")? as usize;
    let servers = array(v, "server_list", "the table")?;
    if servers.len() != count {
        return invalid(format!(
            "\"server_count\" is {count} but \"server_list\" has {} servers",
            servers.len()
        ));
    }
    let mut ids = HashSet::new();
    let mut p = Parsed::default();
    for (si, s) in servers.iter().enumerate() {
        let at = format!("server_list[{si}]");
        let id = str_field(s, "server_id", &at)?;
        if id.is_empty() || id.len() > 64 {
            return invalid(format!(
                "{at}: server_id {id:?} must have 1 to 64 characters"
            ));
        }
        if !ids.insert(id.to_string()) {
            return invalid(format!("{at}: server_id {id:?} appears twice"));
        }
        let host = opt_ip(s, "host_ip", &at)?;
        let devices = array(s, "device", &at)?;
        if devices.is_empty() {
            return invalid(format!("{at}: \"device\" is empty"));
        }
        let mut local_ranks = Vec::new();
        for (di, d) in devices.iter().enumerate() {
            let dat = format!("{at}.device[{di}]");
            str_int(d, "device_id", &dat)?;
            let ip = opt_ip(d, "device_ip", &dat)?;
            if ip.is_none() && count > 1 {
                return invalid(format!(
                    "{dat} has no \"device_ip\" (required in a multi-server table)"
                ));
            }
            let mut host_port = None;
            for port in ["device_port", "host_port"] {
                if d.get(port).is_some() {
                    let v = str_int(d, port, &dat)?;
                    if v == 0 || v > 65535 {
                        return invalid(format!("{dat}: \"{port}\" {v} is not a port"));
                    }
                    if port == "host_port" {
                        host_port = Some(v as u16);
                    }
                }
            }
            if v12 && d.get("super_device_id").is_some() {
                str_int(d, "super_device_id", &dat)?;
            }
            let rank = str_int(d, "rank_id", &dat)?;
            if rank == 0 {
                p.host_port = host_port;
            }
            local_ranks.push(rank);
        }
        let mut sorted = local_ranks.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[1] > w[0] + 1) {
            return invalid(format!(
                "{at}: the rank_ids of one server must be contiguous, got {local_ranks:?}"
            ));
        }
        check_local(id, host, count)?;
        let server = p.server(id, host);
        p.ranks.extend(local_ranks.into_iter().map(|r| (r, server)));
    }
    if v12 && let Some(pods) = v.get("super_pod_list") {
        let Value::Array(pods) = pods else {
            return invalid("\"super_pod_list\" is not an array");
        };
        for (pi, p) in pods.iter().enumerate() {
            let at = format!("super_pod_list[{pi}]");
            str_field(p, "super_pod_id", &at)?;
            for (i, s) in array(p, "server_list", &at)?.iter().enumerate() {
                let id = str_field(s, "server_id", &format!("{at}.server_list[{i}]"))?;
                if !ids.contains(id) {
                    return invalid(format!("{at} names server {id:?}, which is not listed"));
                }
            }
        }
    }
    check_ranks(p)
}

fn num(v: &Value, key: &str, at: &str) -> Result<u64, Bad> {
    match field(v, key, at)? {
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            Bad::Invalid(format!(
                "{at}: \"{key}\" is {n}, not a non-negative integer"
            ))
        }),
        other => invalid(format!(
            "{at}: \"{key}\" is {other}, not a number (version 2.0 values are numbers)"
        )),
    }
}

/// Version 2.0 (Ascend 950).
fn v2(v: &Value) -> Result<Parsed, Bad> {
    let count = num(v, "rank_count", "the table")? as usize;
    let list = array(v, "rank_list", "the table")?;
    if list.len() != count {
        return invalid(format!(
            "\"rank_count\" is {count} but \"rank_list\" has {} ranks",
            list.len()
        ));
    }
    let mut ranks = Vec::new();
    let mut servers: BTreeSet<String> = BTreeSet::new();
    let mut server_ids = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let at = format!("rank_list[{i}]");
        ranks.push(num(r, "rank_id", &at)?);
        let mut server = String::from("0");
        num(r, "local_id", &at)?;
        num(r, "device_id", &at)?;
        if let Some(levels) = r.get("level_list") {
            let Value::Array(levels) = levels else {
                return invalid(format!("{at}: \"level_list\" is not an array"));
            };
            for (li, l) in levels.iter().enumerate() {
                let lat = format!("{at}.level_list[{li}]");
                let layer = num(l, "net_layer", &lat)?;
                let inst = str_field(l, "net_instance_id", &lat)?;
                str_field(l, "net_type", &lat)?;
                if layer == 0 {
                    servers.insert(inst.to_string());
                    server = inst.to_string();
                }
                if let Some(addrs) = l.get("rank_addr_list") {
                    let Value::Array(addrs) = addrs else {
                        return invalid(format!("{lat}: \"rank_addr_list\" is not an array"));
                    };
                    for (ai, a) in addrs.iter().enumerate() {
                        let aat = format!("{lat}.rank_addr_list[{ai}]");
                        str_field(a, "addr_type", &aat)?;
                        str_field(a, "addr", &aat)?;
                    }
                }
            }
        }
        server_ids.push(server);
    }
    for s in &servers {
        check_local(s, None, servers.len())?;
    }
    let mut p = Parsed::default();
    for (r, s) in ranks.into_iter().zip(server_ids) {
        let i = p.server(&s, None);
        p.ranks.push((r, i));
    }
    check_ranks(p)
}

/// The legacy group-list form (no version): ranks numbered in the order the devices appear.
fn legacy(v: &Value) -> Result<Parsed, Bad> {
    let groups = array(v, "group_list", "the table")?;
    let Some(g) = groups.first() else {
        return invalid("\"group_list\" is empty");
    };
    let instances = array(g, "instance_list", "group_list[0]")?;
    let mut n = 0u64;
    let mut p = Parsed::default();
    for (ii, inst) in instances.iter().enumerate() {
        let at = format!("group_list[0].instance_list[{ii}]");
        let id = str_field(inst, "server_id", &at)?;
        for (di, d) in array(inst, "devices", &at)?.iter().enumerate() {
            let dat = format!("{at}.devices[{di}]");
            str_int(d, "device_id", &dat)?;
            opt_ip(d, "device_ip", &dat)?;
            let server = p.server(id, None);
            p.ranks.push((n, server));
            n += 1;
        }
        let distinct: HashSet<&str> = instances
            .iter()
            .filter_map(|i| i.get("server_id").and_then(Value::as_str))
            .collect();
        check_local(id, None, distinct.len())?;
    }
    check_ranks(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_server(devices: &str) -> String {
        format!(
            r#"{{"version":"1.0","status":"completed","server_count":"1",
               "server_list":[{{"server_id":"node-a","device":[{devices}]}}]}}"#
        )
    }

    fn err(text: &str) -> String {
        match parse(text) {
            Err(Bad::Invalid(m)) => m,
            Err(Bad::NotLocal(m)) => format!("NOT LOCAL: {m}"),
            Ok(p) => panic!("accepted with {} ranks", p.ranks.len()),
        }
    }

    #[test]
    fn a_one_server_table_counts_its_ranks() {
        let t = one_server(
            r#"{"device_id":"0","device_ip":"192.168.1.1","rank_id":"0"},
               {"device_id":"1","rank_id":"1"}"#,
        );
        assert_eq!(parse(&t).ok().map(|p| p.ranks.len()), Some(2));
    }

    #[test]
    fn malformed_tables_are_explained() {
        assert!(err("[]").contains("not a JSON object"));
        assert!(err(r#"{"version":"3.0"}"#).contains("version"));
        let dup = one_server(r#"{"device_id":"0","rank_id":"0"},{"device_id":"1","rank_id":"0"}"#);
        assert!(err(&dup).contains("more than once"));
        let gap = one_server(r#"{"device_id":"0","rank_id":"0"},{"device_id":"1","rank_id":"2"}"#);
        assert!(err(&gap).contains("contiguous"));
        let num = one_server(r#"{"device_id":0,"rank_id":"0"}"#);
        assert!(err(&num).contains("not a string"));
        let unfinished =
            one_server(r#"{"device_id":"0","rank_id":"0"}"#).replace("completed", "initializing");
        assert!(err(&unfinished).contains("completed"));
    }

    #[test]
    fn multi_server_tables_must_name_this_machine() {
        let two = |a: &str, b: &str| {
            format!(
                r#"{{"version":"1.0","status":"completed","server_count":"2","server_list":[
                  {{"server_id":"{a}","device":[{{"device_id":"0","device_ip":"10.0.0.1","rank_id":"0"}}]}},
                  {{"server_id":"{b}","device":[{{"device_id":"0","device_ip":"10.0.0.2","rank_id":"1"}}]}}]}}"#
            )
        };
        // Two loopback addresses: both this machine.
        let p = parse(&two("127.0.0.1", "127.0.0.2")).ok().unwrap();
        assert_eq!(p.ranks, vec![(0, 0), (1, 1)]);
        assert_eq!(p.servers[1].1, Some("127.0.0.2".parse().unwrap()));
        let e = err(&two("127.0.0.1", "203.0.113.5"));
        assert!(
            e.starts_with("NOT LOCAL") && e.contains("203.0.113.5"),
            "{e}"
        );
        let e = err(&two("node-a", "node-b"));
        assert!(
            e.starts_with("NOT LOCAL") && e.contains("no address"),
            "{e}"
        );
    }

    #[test]
    fn version_2_uses_numbers() {
        let t = r#"{"version":"2.0","rank_count":2,"rank_list":[
            {"rank_id":0,"local_id":0,"device_id":0,"level_list":[{"net_layer":0,"net_instance_id":"s0","net_type":"TOPO_FILE_DESC","rank_addr_list":[{"addr_type":"IPV4","addr":"10.0.0.1","ports":["0/1"]}]}]},
            {"rank_id":1,"local_id":1,"device_id":1,"level_list":[{"net_layer":0,"net_instance_id":"s0","net_type":"TOPO_FILE_DESC"}]}]}"#;
        assert_eq!(parse(t).ok().map(|p| p.ranks.len()), Some(2));
        assert!(err(&t.replace("\"rank_count\":2", "\"rank_count\":\"2\"")).contains("number"));
    }

    #[test]
    fn the_legacy_form_numbers_devices_in_order() {
        let t = r#"{"group_count":"1","group_list":[{"group_name":"g","instance_count":"1","device_count":"3",
            "instance_list":[{"pod_name":"p","server_id":"127.0.0.1","devices":[
              {"device_id":"0","device_ip":"10.0.0.1"},{"device_id":"1","device_ip":"10.0.0.2"},{"device_id":"2","device_ip":"10.0.0.3"}]}]}]}"#;
        assert_eq!(parse(t).ok().map(|p| p.ranks.len()), Some(3));
    }
}
