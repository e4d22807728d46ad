//! `bool`, `char` and references are not `DeviceRepr`: bytes written by the device could be
//! invalid values of them.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() {
    let rt = Runtime::new().unwrap();
    let dev = rt.device(0).unwrap();
    let _b = DeviceBuffer::<bool>::zeroed(&dev, 4, MallocPolicy::HugeFirst);
    let _c = DeviceBuffer::<char>::zeroed(&dev, 4, MallocPolicy::HugeFirst);
    let _r = DeviceBuffer::<&'static u8>::zeroed(&dev, 4, MallocPolicy::HugeFirst);
}
