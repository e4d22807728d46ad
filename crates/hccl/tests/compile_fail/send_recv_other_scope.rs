// A batch item is branded with its scope: the scope of another stream (not ordered with the
// first) cannot use it.
use hccl::{Collectives, Comm, SendRecv};

fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let comms = Comm::init_all(&[dev.clone()])?;
    let (a, b) = (dev.create_stream()?, dev.create_stream()?);
    let mut buf = dev.alloc_zeros::<i32>(4)?;
    hccl::scope(&a, |sa| {
        let item = SendRecv::recv(sa.claim(&mut buf), 1);
        hccl::scope(&b, |sb| sb.batch_send_recv(&comms[0], [item]))
    })
}
