// A buffer created inside a group closure would be freed before the group's operations run.
use hccl::{Collectives, Comm, ReduceOp};

fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let comms = Comm::init_all(&[dev.clone()])?;
    let stream = dev.create_stream()?;
    hccl::group(|g| {
        let mut local = dev.alloc_zeros::<f32>(4)?;
        g.on(&stream).all_reduce_in_place(&comms[0], &mut local, ReduceOp::Sum)
    })
}
