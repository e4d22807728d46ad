// The layout of a V-collective is borrowed for the whole scope (a group reads it when it ends):
// one built inside the scope closure does not live long enough.
use hccl::{Blocks, Collectives, Comm};

fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let comms = Comm::init_all(&[dev.clone()])?;
    let stream = dev.create_stream()?;
    let send = dev.alloc_zeros::<i32>(4)?;
    let mut recv = dev.alloc_zeros::<i32>(4)?;
    hccl::scope(&stream, |s| {
        let blocks = Blocks::packed(&[4])?;
        s.all_gather_v(&comms[0], &send, &mut recv, &blocks)
    })
}
