//! The 4108-byte `HcclRootInfo`: what `HcclGetRootInfo` writes and `HcclCommInitRootInfo`
//! reads.
//!
//! The first part has the fields the real library fills (host address, port, a NIC-deployment
//! value, the identifier that becomes the communicator's default name); the emulator's part
//! follows: a marker, the creating process's id, the device, and a random 128-bit id every rank
//! presents to the rendezvous (which listens at the host address and port). A root info without the marker (one from a real HCCL, or damaged) is
//! refused; one whose host is not this machine is refused with a message saying so.

use crate::error::*;
use crate::net;
use hccl_sys::*;
use std::net::IpAddr;

const IP: std::ops::Range<usize> = 0..64;
const PORT: usize = 64;
const NIC_DEPLOY: usize = 68;
const IDENT: std::ops::Range<usize> = 72..200;
const RANK: usize = 200;
const MARKER: &[u8; 8] = b"HCCLEMU1";
const MARK: std::ops::Range<usize> = 256..264;
const PID: usize = 264;
const DEVICE: usize = 268;
const ID: std::ops::Range<usize> = 272..288;

/// The decoded root info.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RootInfo {
    pub host: IpAddr,
    pub port: u32,
    /// The communicator's default name: `<ip>_<port>_<device>_<timestamp>`.
    pub identifier: String,
    pub pid: u32,
    pub device: i32,
    /// The rendezvous id: every rank presents it to the hub.
    pub id: [u8; 16],
}

impl RootInfo {
    /// Writes the 4108 bytes.
    pub fn encode(&self) -> HcclRootInfo {
        let mut b = [0u8; HCCL_ROOT_INFO_BYTES as usize];
        let ip = self.host.to_string();
        b[IP][..ip.len()].copy_from_slice(ip.as_bytes());
        b[PORT..PORT + 4].copy_from_slice(&self.port.to_le_bytes());
        b[NIC_DEPLOY..NIC_DEPLOY + 4].copy_from_slice(&0u32.to_le_bytes());
        let ident = self.identifier.as_bytes();
        let n = ident.len().min(IDENT.len() - 1);
        b[IDENT][..n].copy_from_slice(&ident[..n]);
        b[RANK..RANK + 4].copy_from_slice(&0u32.to_le_bytes());
        b[MARK].copy_from_slice(MARKER);
        b[PID..PID + 4].copy_from_slice(&self.pid.to_le_bytes());
        b[DEVICE..DEVICE + 4].copy_from_slice(&self.device.to_le_bytes());
        b[ID].copy_from_slice(&self.id);
        let mut info = HcclRootInfo {
            internal: [0; HCCL_ROOT_INFO_BYTES as usize],
        };
        for (d, s) in info.internal.iter_mut().zip(b) {
            *d = s as std::os::raw::c_char;
        }
        info
    }

    /// Reads and checks the 4108 bytes: the host first (an address that is not this machine is
    /// E_NOT_SUPPORT, whoever made the root info), then the emulator's marker (E_PARA).
    pub fn decode(info: &HcclRootInfo) -> R<RootInfo> {
        let b: Vec<u8> = info.internal.iter().map(|c| *c as u8).collect();
        let host_text = c_text(&b[IP]);
        let host = host_text.parse::<IpAddr>().map_err(|_| Fail {
            code: HCCL_E_PARA,
            msg: format!(
                "the root info's host address {host_text:?} is not an IP address (pass the bytes \
                 HcclGetRootInfo wrote, unchanged)"
            ),
        })?;
        if !net::is_local(host) {
            return fail(
                HCCL_E_NOT_SUPPORT,
                net::not_local("the root info's host", &host_text),
            );
        }
        if &b[MARK] != MARKER {
            return fail(
                HCCL_E_PARA,
                "the root info was not written by this emulator's HcclGetRootInfo (pass the \
                 bytes it wrote, unchanged, to every rank)",
            );
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        Ok(RootInfo {
            host,
            port: u32_at(PORT),
            identifier: c_text(&b[IDENT]),
            pid: u32_at(PID),
            device: u32_at(DEVICE) as i32,
            id: b[ID].try_into().expect("16 bytes"),
        })
    }
}

/// The text up to the first NUL.
fn c_text(b: &[u8]) -> String {
    let end = b.iter().position(|c| *c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Lower-case hexadecimal.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// 16 random bytes from the kernel.
pub(crate) fn random_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    let mut got = 0;
    while got < id.len() {
        // SAFETY: the buffer is valid for id.len() - got bytes from its offset.
        let r = unsafe { libc::getrandom(id[got..].as_mut_ptr().cast(), id.len() - got, 0) };
        if r <= 0 {
            // No entropy source: fall back on time and process id, unique enough per machine.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let mix = t ^ ((std::process::id() as u128) << 64);
            return mix.to_le_bytes();
        }
        got += r as usize;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RootInfo {
        RootInfo {
            host: "127.0.0.1".parse().unwrap(),
            port: 60001,
            identifier: "127.0.0.1_60001_1_1700000000000000".to_string(),
            pid: 4242,
            device: 1,
            id: [7; 16],
        }
    }

    #[test]
    fn round_trip() {
        let r = sample();
        assert_eq!(RootInfo::decode(&r.encode()).unwrap(), r);
    }

    #[test]
    fn a_foreign_host_is_refused_as_not_on_this_machine() {
        let mut r = sample();
        r.host = "203.0.113.9".parse().unwrap();
        let e = RootInfo::decode(&r.encode()).unwrap_err();
        assert_eq!(e.code, HCCL_E_NOT_SUPPORT);
        assert!(e.msg.contains("203.0.113.9") && e.msg.contains("not an address of this machine"));
    }

    #[test]
    fn zeroed_or_unmarked_bytes_are_refused() {
        let zero = HcclRootInfo {
            internal: [0; HCCL_ROOT_INFO_BYTES as usize],
        };
        assert_eq!(RootInfo::decode(&zero).unwrap_err().code, HCCL_E_PARA);
        let mut info = sample().encode();
        info.internal[MARK.start] = 0;
        assert_eq!(RootInfo::decode(&info).unwrap_err().code, HCCL_E_PARA);
    }
}
