//! `random_num_task`: the CANN runtime's `built_in_task/1_random_num_task` sample in safe Rust.
//!
//! Five draws of 128 numbers by the built-in random task (`aclrtRandomNumAsync`, through
//! [`Scope::random`](ascendcl::Scope::random) and
//! [`Scope::dropout_bitmask`](ascendcl::Scope::dropout_bitmask)), all from one seeded state
//! whose device counter each task moves on: a normal distribution of `float`s, a truncated
//! normal of `bf16`s, a uniform one of `fp16`s and of `int32`s, and a dropout bitmask. The first
//! five results of each are printed as the reference prints them (16-bit floats as their bits),
//! and each draw is checked against its distribution: its range, and its mean and spread (or
//! its share of dropped bits). Drawn again from a reset state, the normal numbers repeat.

use sample_common::report;

use ascendcl::half::{bf16, f16};
use ascendcl::{Device, DeviceBuffer, Distribution, RandomElem, RandomState, Runtime, Stream};
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the random_num_task sample successfully.";
const FAIL: &str = "Run the random_num_task sample failed.";

/// Numbers per draw (`num` of the reference).
const NUM: usize = 128;
/// The seed of the reference.
const SEED: u64 = 0;

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// Draws `NUM` numbers of `dist` on `stream` from `state`.
fn draw<T: RandomElem + Default>(
    device: &Device,
    stream: &Stream,
    dist: Distribution<T>,
    state: &mut RandomState,
) -> Res<Vec<T>> {
    let mut out = DeviceBuffer::<T>::zeroed(device, NUM, ascendcl::MallocPolicy::HugeFirst)?;
    stream.scope(|s| s.random(&mut out, dist, state))?;
    Ok(out.copy_to_vec()?)
}

fn mean_and_spread(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Checks that `v` lies in `[lo, hi]`.
fn in_range(what: &str, v: &[f64], lo: f64, hi: f64) -> Res {
    match v.iter().find(|x| !(lo..=hi).contains(*x)) {
        None => Ok(()),
        Some(x) => Err(format!("{what}: {x} lies outside [{lo}, {hi}]").into()),
    }
}

/// Checks a sample mean and spread against a distribution's (loose bounds: 128 draws).
fn shaped(what: &str, v: &[f64], mean: f64, spread: (f64, f64)) -> Res {
    let (m, s) = mean_and_spread(v);
    // The standard error of the mean of 128 draws with spread 2 is 0.18: 0.8 is 4.5 of them.
    if (m - mean).abs() > 0.8 || !(spread.0..=spread.1).contains(&s) {
        return Err(format!(
            "{what}: mean {m:.3} and spread {s:.3}, expected about {mean} and within {spread:?}"
        )
        .into());
    }
    Ok(())
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    // The generator's counter: 16 bytes of device memory, zeroed.
    let mut state = RandomState::new(&device, SEED)?;

    println!("Gen normal distribution random num, data type: float ");
    let normal = draw(
        &device,
        &stream,
        Distribution::normal(3.0f32, 2.0),
        &mut state,
    )?;
    for (i, v) in normal.iter().take(5).enumerate() {
        println!("Random result[{i}] = {v:.6}");
    }
    let values: Vec<f64> = normal.iter().map(|&x| f64::from(x)).collect();
    shaped("normal(3, 2)", &values, 3.0, (1.4, 2.6))?;

    println!("\nGen truncated normal distribution random num, data type: BF16 ");
    let dist = Distribution::truncated_normal(bf16::from_f32(1.0), bf16::from_f32(2.0));
    let truncated = draw(&device, &stream, dist, &mut state)?;
    for (i, v) in truncated.iter().take(5).enumerate() {
        println!("Random result[{i}] = {:#x}", v.to_bits());
    }
    let values: Vec<f64> = truncated.iter().map(|x| f64::from(x.to_f32())).collect();
    // Within two standard deviations of the mean (bf16 rounds to 8 bits of mantissa).
    in_range("truncated normal(1, 2)", &values, -3.02, 5.02)?;
    shaped("truncated normal(1, 2)", &values, 1.0, (1.0, 2.2))?;

    println!("\nGen uniform distribution random num, data type: FP16 ");
    let dist = Distribution::uniform(f16::from_f32(1.0), f16::from_f32(2.0));
    let uniform_half = draw(&device, &stream, dist, &mut state)?;
    for (i, v) in uniform_half.iter().take(5).enumerate() {
        println!("Random result[{i}] = {:#x}", v.to_bits());
    }
    let values: Vec<f64> = uniform_half.iter().map(|x| f64::from(x.to_f32())).collect();
    in_range("uniform fp16 [1, 2)", &values, 1.0, 2.0)?;
    // A uniform spread over a width of 1 is 0.29.
    shaped("uniform fp16 [1, 2)", &values, 1.5, (0.2, 0.38))?;

    println!("\nGen uniform distribution random num, data type: INT32 ");
    let uniform_int = draw(
        &device,
        &stream,
        Distribution::uniform(1i32, 100),
        &mut state,
    )?;
    for (i, v) in uniform_int.iter().take(5).enumerate() {
        println!("Random result[{i}] = {v}");
    }
    let values: Vec<f64> = uniform_int.iter().map(|&x| f64::from(x)).collect();
    in_range("uniform int32 [1, 100)", &values, 1.0, 99.0)?;
    let (m, _) = mean_and_spread(&values);
    if !(35.0..=65.0).contains(&m) {
        return Err(format!("uniform int32 [1, 100): mean {m:.1}, expected about 50").into());
    }

    println!("\nGen dropout bitmask, output data type: UINT8 ");
    let ratio = 0.4f32;
    let mut mask = DeviceBuffer::<u8>::zeroed(&device, NUM / 8, ascendcl::MallocPolicy::HugeFirst)?;
    stream.scope(|s| s.dropout_bitmask(&mut mask, ratio, &mut state))?;
    let bits = mask.copy_to_vec()?;
    for (i, v) in bits.iter().take(5).enumerate() {
        println!("Random result[{i}] = {v}");
    }
    let dropped = bits.iter().map(|b| b.count_zeros()).sum::<u32>() as f64 / NUM as f64;
    if !(0.2..=0.6).contains(&dropped) {
        return Err(format!("dropout {ratio}: {dropped:.2} of the bits dropped").into());
    }

    // The same seed from the same counter gives the same numbers.
    state.reset()?;
    let again = draw(
        &device,
        &stream,
        Distribution::normal(3.0f32, 2.0),
        &mut state,
    )?;
    if again != normal {
        return Err("a reset state did not repeat the first draw".into());
    }
    if uniform_int.windows(2).all(|w| w[0] == w[1]) {
        return Err("the uniform draw is constant".into());
    }

    mask.free()?; // aclrtFree
    drop(state);
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    println!("Sample Run Successfully.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
