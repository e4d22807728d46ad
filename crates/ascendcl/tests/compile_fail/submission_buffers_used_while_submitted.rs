//! A buffer moved into a submission, read by the host before the submission gives it back:
//! refused (it was moved).
use ascendcl::Runtime;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let buf = dev.alloc_zeros::<u32>(4)?;
    let job = stream.submit(buf, |s, b| s.fill(b, 7));
    let seen = buf.copy_to_vec()?;
    job.wait()?;
    assert_eq!(seen, [7; 4]);
    Ok(())
}
