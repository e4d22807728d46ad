// A communicator is issued to by one thread at a time: an `Arc<Comm>` cannot reach another
// thread (share it as `Arc<Mutex<Comm>>`, or move the `Comm` itself).
use std::sync::Arc;

fn main() -> hccl::Result<()> {
    let rt = ascendcl::Runtime::new()?;
    let dev = rt.device(0)?;
    let info = hccl::RootInfo::new(&dev)?;
    let comm = Arc::new(hccl::Comm::init_root_info(&dev, 1, &info, 0, None)?);
    let other = Arc::clone(&comm);
    std::thread::spawn(move || other.rank()).join().unwrap();
    Ok(())
}
