// A stream created inside a group closure would be gone when the group waits for it.
use hccl::{Collectives, Comm, ReduceOp};

fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let comms = Comm::init_all(&[dev.clone()])?;
    let mut buf = dev.alloc_zeros::<f32>(4)?;
    hccl::group(|g| {
        let stream = dev.create_stream()?;
        g.on(&stream).all_reduce_in_place(&comms[0], &mut buf, ReduceOp::Sum)
    })
}
