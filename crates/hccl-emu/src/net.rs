//! Which addresses are this machine's: loopback (all of `127.0.0.0/8` and `::1`), and the
//! addresses of the interfaces of the network namespace the process runs in. The emulator runs
//! every rank on this machine: it listens and connects only there ([`listen`], [`connect`] are
//! its only ways onto the network), and refuses an address that is not local with a message
//! saying so.

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// The addresses of this machine's interfaces (from `getifaddrs`).
pub fn local_addresses() -> HashSet<IpAddr> {
    let mut set = HashSet::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list head we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return set;
    }
    let mut p = head;
    while !p.is_null() {
        // SAFETY: p is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*p };
        if !ifa.ifa_addr.is_null() {
            // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
            let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
            if family == libc::AF_INET {
                // SAFETY: family AF_INET: the address is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                set.insert(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))));
            } else if family == libc::AF_INET6 {
                // SAFETY: family AF_INET6: the address is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                set.insert(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
            }
        }
        p = ifa.ifa_next;
    }
    // SAFETY: head came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    set
}

/// Whether `ip` is this machine: a loopback address or one of its interfaces'.
pub fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || local_addresses().contains(&ip)
}

fn refuse(addr: IpAddr) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        not_local("the address", &addr.to_string()),
    )
}

/// Listens on `ip` (a port the kernel picks when `port` is 0); refuses an address that is not
/// this machine's.
pub fn listen(ip: IpAddr, port: u16) -> io::Result<TcpListener> {
    if !is_local(ip) {
        return Err(refuse(ip));
    }
    TcpListener::bind(SocketAddr::new(ip, port))
}

/// Connects to `addr` within `timeout`; refuses an address that is not this machine's.
pub fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    if !is_local(addr.ip()) {
        return Err(refuse(addr.ip()));
    }
    TcpStream::connect_timeout(&addr, timeout.max(Duration::from_millis(1)))
}

/// The message for an address that is not this machine.
pub(crate) fn not_local(what: &str, addr: &str) -> String {
    format!(
        "{what} {addr} is not an address of this machine: the emulator runs every rank on this \
         machine (loopback or a local interface) and never connects to other hosts; on a real \
         multi-server job this needs CANN and HCCL on each server"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_local_and_a_documentation_address_is_not() {
        assert!(is_local("127.0.0.1".parse().unwrap()));
        assert!(is_local("127.0.0.2".parse().unwrap()));
        assert!(is_local("::1".parse().unwrap()));
        // TEST-NET-3 (RFC 5737) is reserved for documentation: never a local interface.
        assert!(!is_local("203.0.113.7".parse().unwrap()));
        let far: SocketAddr = "203.0.113.7:80".parse().unwrap();
        let e = connect(far, Duration::from_millis(1)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("203.0.113.7"), "{e}");
        assert!(listen(far.ip(), 0).is_err());
    }
}
