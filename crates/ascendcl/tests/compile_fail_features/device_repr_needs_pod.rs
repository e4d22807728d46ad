// `device_repr!` accepts `bytemuck::Pod` types only: a struct with padding (or a `bool`, or a
// reference) could hold bytes the device writes that are not a valid value of it.
#[repr(C)]
#[derive(Clone, Copy)]
struct Padded {
    tag: u8,
    value: u32,
}

ascendcl::device_repr!(Padded);

#[derive(Clone, Copy)]
struct Flag(bool);

ascendcl::device_repr!(Flag);

fn main() {}
